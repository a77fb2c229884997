import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';

/**
 * How the harness behaves as a careful client (the one its own client report asks partners to be): what it retries,
 * how long it waits, and when a retry's answer says an earlier attempt had done the work. The live service has
 * frequent transient 500s and 503s and slow periods (real-api-notes, observed); a retry corrects them, and what a
 * retry corrected is an observation of the target's availability, never a failure to conform.
 */

/** How many times, and within how long, a call is made again. */
export interface RetryPolicy {
  /** Calls in all, the first included. */
  attempts: number;
  /** The time all of a call's attempts and waits may take, in ms. */
  budgetMs: number;
  /** The first wait; each next one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 5, budgetMs: 20_000, baseDelayMs: 200, maxDelayMs: 2_000 };

/** What is safe to do again after a call whose outcome is unknown. */
export type Repeatability =
  /** A read: again whenever it got no answer or a transient one. */
  | 'read'
  /** A creation under a reference id the caller made (or a token): again, and a 409 then says the earlier attempt created it. */
  | 'keyed'
  /** Anything else (a delivery notification, an API key, a consent): again only when the answer said nothing was done. */
  | 'once';

/**
 * What is safe to repeat of an operation, from the catalogue: reads, creations keyed by X-Reference-Id, tokens; the
 * rest once. A creation sent without its reference id (a scenario about the missing header) has no key: once.
 */
export function repeatabilityOf(id: OperationId, referenceSent = true): Repeatability {
  const op = OPERATIONS[id];
  if (op.method === 'GET') return 'read';
  if (op.headers.required.includes('x-reference-id')) return referenceSent ? 'keyed' : 'once';
  if (id === 'createAccessToken') return 'keyed';
  return 'once';
}

/** The codes of a 5xx that mean "nothing was done, ask again": not an answer to the request itself. */
const TRANSIENT_CODES = new Set(['INTERNAL_PROCESSING_ERROR', 'SERVICE_UNAVAILABLE']);

/** A gateway's answers that the target could not serve the request now: they say nothing of the API. */
export const UNAVAILABLE_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * Whether an answer says the target could not serve the request now, and that nothing was done: a gateway's 502, 503
 * or 504, or a 500 whose body is no answer of the API (no code, or INTERNAL_PROCESSING_ERROR, or SERVICE_UNAVAILABLE).
 * A 500 with a code of the case (NOT_ALLOWED_TARGET_ENVIRONMENT, INVALID_CURRENCY, login_failed) is an answer.
 */
export function isTransientAnswer(status: number, json: unknown): boolean {
  if (UNAVAILABLE_STATUSES.has(status)) return true;
  if (status !== 500) return false;
  const body = json as { code?: unknown; error?: unknown } | undefined;
  const code = body?.code ?? body?.error;
  return code === undefined || (typeof code === 'string' && TRANSIENT_CODES.has(code));
}

/**
 * Whether a transient answer may be asked again for a call of this repeatability. A read or a keyed creation: always
 * (a creation made again says by its 409 that it was done). A call that is safe only once (a delivery notification, a
 * consent, an API key): only when the answer says the request was not carried out, a 503 or a 500 with the API's own
 * INTERNAL_PROCESSING_ERROR or SERVICE_UNAVAILABLE; a gateway's 502 or 504, or a 500 that says nothing, may come after
 * the work was done, and the answer stands.
 */
export function mayAskAgain(status: number, json: unknown, repeatable: Repeatability): boolean {
  if (!isTransientAnswer(status, json)) return false;
  if (repeatable !== 'once' || status === 503) return true;
  const body = json as { code?: unknown; error?: unknown } | undefined;
  const code = body?.code ?? body?.error;
  return status === 500 && typeof code === 'string' && TRANSIENT_CODES.has(code);
}

/** The wait a Retry-After header asks for, in ms (delta-seconds or an HTTP-date, RFC 9110 §10.2.3); undefined without one. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before attempt `next` (2, 3, …): Retry-After when the target gave one, else an exponential backoff. */
export function delayBefore(next: number, policy: RetryPolicy, retryAfter?: number): number {
  if (retryAfter !== undefined) return retryAfter;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (next - 2));
}

/** One attempt of a call that was made again, as the availability report shows it. */
export interface AttemptOutcome {
  /** The status it got, or the transport error it met. */
  status?: number;
  code?: string;
  error?: string;
  /** How long the client waited before the next attempt, in ms. */
  waitedMs?: number;
  /** The token was refused, and the next attempt carried a new one: no weather. */
  renewedToken?: true;
}

/** A call the careful client made more than once (or renewed the token of): every attempt, and how it ended. */
export interface RetriedCall {
  operation: OperationId;
  product: string;
  /** How messages name the call: "request to pay (collection)". */
  label: string;
  attempts: AttemptOutcome[];
  /**
   * answered: the last attempt got an answer the step judges; created-earlier: a creation made again was refused as a
   * duplicate, so an earlier attempt had created it; renewed: a refused token was renewed and the call made again;
   * gave-up: the attempts or their time ran out, and the last answer (or error) stands.
   */
  outcome: 'answered' | 'created-earlier' | 'renewed' | 'gave-up';
  /** After the same transient answer at every attempt, whether the target answered another call (its balance) then. */
  targetAnsweredOthers?: boolean;
}

/** How an attempt met the weather, as messages name it: "500 INTERNAL_PROCESSING_ERROR", "no answer (…)". */
export function attemptText(attempt: AttemptOutcome): string {
  return attempt.status !== undefined
    ? `${attempt.status}${attempt.code ? ` ${attempt.code}` : ''}`
    : `no answer (${attempt.error ?? 'cut'})`;
}

/**
 * Whether a call ran out of attempts in weather: it gave up on a transient answer after attempts that met different
 * things (a cut, a 503, a 500), or met the same one every time while the target answered no other call either (an
 * outage). That last answer is the weather's, not the target's to the request: the call could not be tested. The same
 * transient answer at every attempt while the target answers other calls is its steady answer to that request (a
 * server that answers an unknown payment with 500 every time), and is judged as one.
 */
export function gaveUpInWeather(call: RetriedCall | undefined): boolean {
  if (call?.outcome !== 'gave-up') return false;
  if (call.targetAnsweredOthers === false) return true;
  return new Set(call.attempts.filter((a) => !a.renewedToken).map(attemptText)).size > 1;
}

/**
 * The attempts of one call so far, and what they allow next: the wait before another attempt within the policy's
 * attempts and time, whether an earlier attempt may have done the work, and how the call ended. The client makes the
 * attempts; this keeps their account.
 */
export class CallAttempts {
  readonly repeatable: Repeatability;
  private readonly made: AttemptOutcome[] = [];
  private readonly started = Date.now();
  /** The token was renewed once already: a second refusal is the answer. */
  renewed = false;
  /** An earlier attempt may have done the work: it got no answer, or an answer that does not say. */
  private maybeDone = false;

  constructor(
    private readonly operation: { id: OperationId; product: string; label: string },
    private readonly policy: RetryPolicy,
    referenceSent = true,
  ) {
    this.repeatable = repeatabilityOf(operation.id, referenceSent);
  }

  get count(): number {
    return this.made.length;
  }

  /** The wait before one more attempt (after the current one), or undefined when the attempts or the time are spent. */
  nextWait(retryAfter?: number): number | undefined {
    const next = this.made.length + 2;
    const delay = delayBefore(next, this.policy, retryAfter);
    return next <= this.policy.attempts && Date.now() - this.started + delay <= this.policy.budgetMs ? delay : undefined;
  }

  /** An attempt that met weather (no answer, or a transient one), to be made again after `waitedMs`. */
  metWeather(attempt: AttemptOutcome): void {
    this.made.push(attempt);
    this.maybeDone = true;
  }

  /** An attempt whose token was refused, to be made again at once with a new one. */
  renewedToken(code: string | undefined): void {
    this.made.push({ status: 401, ...(code ? { code } : {}), waitedMs: 0, renewedToken: true });
    this.renewed = true;
  }

  /** How the call ended with `last`; a creation made again and refused 409 was created by an earlier attempt. */
  outcomeOf(last: { status: number; json: unknown }, reusesReference: boolean): RetriedCall['outcome'] {
    if (this.repeatable === 'keyed' && last.status === 409 && this.maybeDone && !reusesReference) return 'created-earlier';
    if (isTransientAnswer(last.status, last.json)) return 'gave-up';
    return this.renewed && this.made.length === 1 ? 'renewed' : 'answered';
  }

  /** Whether every attempt, `last` too, met the same answer (a renewal aside). */
  steadyWith(last: AttemptOutcome): boolean {
    return new Set([...this.made, last].filter((a) => !a.renewedToken).map(attemptText)).size === 1;
  }

  /** The call as the availability report tells it. */
  told(outcome: RetriedCall['outcome'], last: AttemptOutcome, answeredOthers?: boolean): RetriedCall {
    const { id, product, label } = this.operation;
    return {
      operation: id,
      product,
      label,
      attempts: [...this.made, last],
      outcome,
      ...(answeredOthers === undefined ? {} : { targetAnsweredOthers: answeredOthers }),
    };
  }
}

/** What one scenario saw of the target's availability: its calls by operation, and the calls made again. */
export interface ScenarioAvailability {
  calls: Record<string, number>;
  retried: RetriedCall[];
}

/** The media type of a scenario's attachment that holds its ScenarioAvailability. */
export const AVAILABILITY_MEDIA_TYPE = 'application/vnd.momo.availability+json';

/** The availability of a run, by operation (as messages name it): calls, made again, and how those ended. */
export interface OperationAvailability {
  operation: string;
  calls: number;
  retried: number;
  outcomes: Partial<Record<RetriedCall['outcome'], number>>;
  /** What the attempts before the last one met, and how often: "500 INTERNAL_PROCESSING_ERROR", "no answer". */
  met: Record<string, number>;
}

/** The run's availability, an operation a row, from every scenario's: what the reports show of the weather met. */
export function availabilityOf(scenarios: readonly ScenarioAvailability[]): OperationAvailability[] {
  const rows = new Map<string, OperationAvailability>();
  const row = (operation: string) =>
    rows.get(operation) ?? rows.set(operation, { operation, calls: 0, retried: 0, outcomes: {}, met: {} }).get(operation)!;
  for (const scenario of scenarios) {
    for (const [label, calls] of Object.entries(scenario.calls)) row(label).calls += calls;
    for (const call of scenario.retried) {
      const r = row(call.label);
      r.retried += 1;
      r.outcomes[call.outcome] = (r.outcomes[call.outcome] ?? 0) + 1;
      for (const a of call.attempts.slice(0, -1)) {
        const what = a.status !== undefined ? `${a.status}${a.code ? ` ${a.code}` : ''}` : 'no answer';
        r.met[what] = (r.met[what] ?? 0) + 1;
      }
    }
  }
  return [...rows.values()]
    .filter((r) => r.calls > 0 || r.retried > 0)
    .sort((a, b) => b.retried - a.retried || a.operation.localeCompare(b.operation));
}
