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

/** A client's own bug: a flow that fails because the client, not the sandbox, departs from the API. */
export interface ClientBug {
  client: string;
  flow: string;
  /** The profiles it shows in (both when absent). */
  profiles?: readonly ProfileName[];
  /** What the client sends or expects, in a sentence. */
  what: string;
  /** The spec section, or the live observation, it contradicts. */
  contradicts: string;
  /** The exchange of the flow that shows it: its method, a pattern of its path, and the status it got. */
  evidence: { method: string; path?: RegExp; status?: number };
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
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
