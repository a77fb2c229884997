import type { OperationId } from '../../core/catalogue/operations.ts';
import { hostOf, pathOf } from '../../core/catalogue/routes.ts';
import type { Product } from '../../core/products.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { describeSource } from '../../core/sources.ts';
import type { Finding } from '../../harness/checks/index.ts';

/**
 * The shrunk sequence of an exploration as data a standalone replay runs (replay-script.ts): each call in the terms it
 * was made in (the product's key or none, the run's access token of a product or a registered API user's Basic
 * credential, the body as sent), never a secret, and what the exploration held its answer to. The ids the exploration
 * made are placeholders the replay fills with new ones of the same form: {{id:<name>:<UUID version>}}; a value an
 * answer gave (an API key) is {{kept:<name>}}.
 */

/**
 * What a departure of a replayed answer means: the departure the exploration found (a failure in its run), a premise
 * of the case that did not hold (the replay could not set the case up), or only a note (a warning in the run).
 */
export type ReplayWeight = 'departure' | 'premise' | 'note';

/** What the replay holds an answer to; `when`: only an answer of these statuses (a record's fields, a 409's code). */
export type ReplayCheck = { why: string; weight: ReplayWeight; when?: number[] } & (
  | { kind: 'status'; statuses: number[] }
  | { kind: 'not-status'; statuses: number[] }
  | { kind: 'code'; code: string }
  /** Every callback that came for the reference id carries what this answer (its status record) gives for each field. */
  | { kind: 'callbacks'; referenceId: string; fields: string[] }
  | {
      kind: 'field';
      /** A JSON pointer into the answer's body. */
      pointer: string;
      value: unknown;
      /** exact: the same JSON; amount: the same decimal number; party: the same party of its type (§2.1). */
      compare: 'exact' | 'amount' | 'party';
      /** What a body without the field weighs (the live record's fields are observations). */
      whenMissing: ReplayWeight | 'passes';
    }
);

export interface ReplayCall {
  /** The command of the sequence that made the call. */
  command: string;
  operation: OperationId;
  product: Product;
  method: 'GET' | 'POST';
  host: 'gateway' | 'provisioning';
  path: string;
  key: 'own' | 'none';
  /** none; the replay's access token of a product; or the Basic credential (its id and key) of an API user a call registered. */
  auth: 'none' | { bearer: Product } | { basic: { user: string; key: string } };
  referenceId?: string;
  /** It sends X-Target-Environment (MOMO_TARGET_ENVIRONMENT). */
  targetEnvironment: boolean;
  body?: unknown;
  /** A status query: a final status it reads stays final for the rest of the replay (§3). */
  statusQuery?: true;
  /** It gives X-Callback-Url on the replay's own receiver, for its reference id. */
  callback?: true;
  /** A value of the answer the calls after it send (an API key), by name and JSON pointer. */
  keep?: { name: string; pointer: string };
  checks: ReplayCheck[];
}

/** Where the replay provisions an API user of a product, makes its key and fetches its access token. */
export interface AccountPaths {
  user: { host: 'gateway' | 'provisioning'; path: string };
  key: { host: 'gateway' | 'provisioning'; path: string };
  token: { host: 'gateway' | 'provisioning'; path: string };
}

export interface ReplayPlan {
  /** How the replay introduces itself: the seed and path of the run that found it. */
  title: string;
  profile: ProfileName;
  targetEnvironment: string;
  callbackHost: string;
  /** What the exploration found, one line each, with its source. */
  findings: string[];
  /**
   * The findings of a kind the replay does not judge (a record against its schema, a secret given out): the replay
   * shows the last answer and says it could not judge it, rather than passing.
   */
  unjudged: string[];
  accounts: Partial<Record<Product, AccountPaths>>;
  calls: ReplayCall[];
}

/** The placeholder for a value the exploration made: the replay makes one of the same UUID version under the name. */
const placeholderOf = (value: string, name: string) => `{{id:${name}:${/^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])/i.exec(value)?.[1] ?? '4'}}}`;

/** The plan of a sequence: its calls with each value the exploration made replaced by a placeholder. */
export function replayPlanOf(
  sequence: { calls: readonly ReplayCall[]; generated: ReadonlyMap<string, string> },
  about: Omit<ReplayPlan, 'calls' | 'accounts'>,
): ReplayPlan {
  let text = JSON.stringify(sequence.calls);
  // Longest first, so that no value is replaced inside a longer one.
  for (const [value, name] of [...sequence.generated].sort(([a], [b]) => b.length - a.length))
    text = text.split(value).join(placeholderOf(value, name));
  const calls = JSON.parse(text) as ReplayCall[];
  const products = [...new Set(calls.flatMap((c) => (c.auth !== 'none' && 'bearer' in c.auth ? [c.auth.bearer] : [])))];
  return { ...about, accounts: Object.fromEntries(products.map((p) => [p, accountPathsOf(p)])), calls };
}

function accountPathsOf(product: Product): AccountPaths {
  // Without parameters pathOf leaves the {referenceId} placeholder, which the replay fills with its new API user's id.
  const at = (id: OperationId) => ({ host: hostOf(id, product), path: pathOf(id, product).replace('{referenceId}', '{{user}}') });
  return { user: at('createApiUser'), key: at('createApiKey'), token: at('createAccessToken') };
}

/** The checks whose departures the replay judges itself: statuses, codes, the fields of records, final statuses. */
const JUDGED_BY_REPLAY: ReadonlySet<string> = new Set([
  'status-code',
  'error-code',
  'record-echoes-request',
  'refusal-changes-nothing',
  'refund-to-payer',
  'balance-in-currency',
  'final-state-is-final',
  'callback-record',
]);

/** The findings of a departure the replay cannot judge standalone, as lines. */
export function unjudgedByReplay(findings: readonly Finding[]): string[] {
  return findings.filter((f) => !JUDGED_BY_REPLAY.has(f.check)).map(findingLine);
}

/** A finding as the replay's header says it: the check, its source, and the difference. */
export function findingLine(f: Finding): string {
  return `${f.check} (${describeSource(f.source)}): ${f.field !== undefined ? `${f.field}: ` : ''}expected ${f.expected}, got ${f.received}`;
}
