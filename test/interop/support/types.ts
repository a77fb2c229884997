import type { ProfileName } from '../../../core/profiles.ts';
import type { Product } from '../../../core/products.ts';

/** What a client's flows are given: where the sandbox answers, its keys, and an API user when the client cannot make one. */
export interface InteropEnv {
  /** http://127.0.0.1:<port> of the recording proxy in front of the sandbox. */
  baseUrl: string;
  /** 127.0.0.1:<port>, for clients that take a host rather than a URL. */
  host: string;
  profile: ProfileName;
  keys: Record<Product, string>;
  /** A fresh API user of a product, made by the harness's own client, for a client that has no provisioning of its own. */
  apiUser(product: Product): Promise<{ userId: string; apiKey: string }>;
  /** The host callbacks may name: the API users are registered with it. */
  callbackHost: string;
  /** A listener that answers every callback 200 at once, on callbackHost: for a client that registers a URL. */
  callbackUrl: string;
}

/** One thing a client can do end to end; it throws when the client does not get what the API promises. */
export type Flow = (env: InteropEnv) => Promise<void>;

export interface InteropClient {
  /** The npm package. */
  name: string;
  /** Prepares the process before the client is loaded (environment it reads at load, a host it hard-codes). */
  prepare?(env: InteropEnv): void | Promise<void>;
  flows: Record<string, Flow>;
}

/**
 * A finding of the sandbox's client report (sandbox/client-report) that a flow raised: one that came first, or
 * came again, while the flow ran. What the client did is the report's, its first exchange redacted.
 */
export interface FlowFinding {
  rule: string;
  name: string;
  severity: 'violation' | 'practice';
  stake?: string;
  /** The report's client: "API user …" or "collection key #…". */
  client: string;
  detail: string;
  /** The rule's source, in words. */
  source: string;
  fix: string;
  exchange: { method: string; target: string; status?: number; requestBody?: string; responseBody?: string };
}

/**
 * What the interop suite knows of a client's bug beyond what the sandbox finds: where in the client's code it
 * comes from, and what a user of the client can do meanwhile. The sandbox finds the bug (its rule); this only
 * explains it, and a note whose rule no run of the client finds any more is stale.
 */
export interface ClientNote {
  client: string;
  rule: string;
  /** What the client does, in its own code, that the rule finds. */
  what: string;
  /** What a user of the client can do meanwhile, if anything. */
  workaround?: string;
}

/** A flow's outcome, with the exchanges it made (recorded by the proxy). */
export interface FlowResult {
  client: string;
  flow: string;
  profile: ProfileName;
  /** Whether the sandbox had the strict readings on (--strict). */
  strict: boolean;
  ok: boolean;
  error?: string;
  exchanges: { method: string; path: string; status: number; requestBody: string; responseBody: string }[];
  /** What the sandbox's client report found while the flow ran. */
  findings: FlowFinding[];
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
