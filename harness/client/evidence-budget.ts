import type { Exchange } from './momo-client.ts';

/**
 * How much evidence a target can make the reports hold. Each exchange is written into every report (cucumber's
 * HTML, JSON and messages, the certification's JSON and page, the bundle of them all), so a body of 10 MB would
 * be 50 MB of reports, and a run of such answers more than a reader, a CI server or verify can take. A body is
 * kept up to EVIDENCE_BODY_CHARS, saying where it was cut and how long it was; the run's exchanges are kept up
 * to a budget (MOMO_EVIDENCE_BUDGET_BYTES), after which each is recorded as omitted, with its call and outcome.
 */

/** How much of one body the evidence keeps: far more than any answer of the API, and bounded whatever a target sends. */
export const EVIDENCE_BODY_CHARS = 32 * 1024;

/** How a body was read: its length in bytes, and whether the target sent more than the harness reads. */
export interface BodyRead {
  bytes: number;
  /** Set when the body exceeded MOMO_MAX_RESPONSE_BYTES: the limit, which is also how much was read. */
  exceededLimit?: number;
}

/** Set on a body the evidence does not hold whole: what is shown, how long it was, and whether the harness read it all. */
export interface BodyCut {
  /** Characters of the (redacted) body the evidence keeps. */
  keptCharacters: number;
  /** Characters of the redacted body as read. */
  characters: number;
  /** Bytes of the body as read. */
  bytes: number;
  /** The body exceeded MOMO_MAX_RESPONSE_BYTES (this many bytes): the target sent more, which was not read. */
  exceededLimit?: number;
}

/** A (redacted) body as the evidence keeps it: whole, or cut with a last line that says where and why. */
export function bodyForEvidence(redacted: string, read: BodyRead): { body: string; bodyCut?: BodyCut } {
  const cut = redacted.length > EVIDENCE_BODY_CHARS;
  if (!cut && read.exceededLimit === undefined) return { body: redacted };
  // A cut between the two halves of a surrogate pair would leave a lone one, which no report can hold.
  const end = cut && isHighSurrogate(redacted.charCodeAt(EVIDENCE_BODY_CHARS - 1)) ? EVIDENCE_BODY_CHARS - 1 : EVIDENCE_BODY_CHARS;
  const kept = cut ? redacted.slice(0, end) : redacted;
  const notes = [
    ...(cut
      ? [
          `cut after ${kept.length} of ${redacted.length} characters (${read.bytes} bytes): the evidence keeps ${size(EVIDENCE_BODY_CHARS)} of a body`,
        ]
      : []),
    ...(read.exceededLimit !== undefined
      ? [`the body exceeded ${size(read.exceededLimit)} (MOMO_MAX_RESPONSE_BYTES): the harness read that much of it and no further`]
      : []),
  ];
  return {
    body: `${kept}\n… [${notes.join('; ')}]`,
    bodyCut: {
      keptCharacters: kept.length,
      characters: redacted.length,
      bytes: read.bytes,
      ...(read.exceededLimit !== undefined ? { exceededLimit: read.exceededLimit } : {}),
    },
  };
}

/**
 * The evidence one worker may record: its share of the run's budget. An exchange is kept whole while it fits;
 * one that does not is recorded as omitted: its call and its outcome, and why the rest is missing.
 */
export class EvidenceBudget {
  private spent = 0;
  /** Exchanges recorded as omitted so far. */
  omitted = 0;

  /** `bytes`: this worker's share; `described`: the budget as the omitted exchanges name it, e.g. "32 MiB, shared by 2 workers". */
  constructor(
    readonly bytes: number,
    private readonly described: string = size(bytes),
  ) {}

  admit(exchange: Exchange): Exchange {
    const bytes = Buffer.byteLength(JSON.stringify(exchange));
    if (this.spent + bytes <= this.bytes) {
      this.spent += bytes;
      return exchange;
    }
    this.omitted += 1;
    const outcome = exchange.response
      ? `HTTP ${exchange.response.status} in ${exchange.response.durationMs} ms`
      : `no response: ${exchange.transportError ?? 'unknown'}`;
    return {
      operation: exchange.operation,
      request: { method: exchange.request.method, url: exchange.request.url, headers: {} },
      omitted: `${outcome}; not recorded: the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES, ${this.described}) was spent, so only the call and its outcome are kept`,
    };
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** A size in the unit a person reads: "1 MiB", "32 KiB", "900 bytes". */
export function size(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
