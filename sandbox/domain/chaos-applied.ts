import type { OperationId } from '../../core/catalogue/operations.ts';

/**
 * One adverse condition that the sandbox's spec-legal chaos (--chaos) applied, as the client report
 * (--client-report) is told of it, so that it can say how the client coped. The chaos plugin takes a listener
 * for these; the client report's recorder is that listener when both are on.
 */
export interface ChaosApplied {
  /** The chaos condition's name as --chaos takes it, e.g. "latency" or "cut-after-store". */
  condition: string;
  /** When, in ms since the epoch, by the sandbox's clock. */
  at: number;
  /** Fastify's id of the request it was applied to; absent for a callback or a pending outcome. */
  requestId?: string;
  operationId?: OperationId;
  /** The API user the request authenticated as, or the transaction belongs to; never a key or a token. */
  apiUserId?: string;
  /** The X-Reference-Id of the transaction it concerns, if any. */
  referenceId?: string;
  /** What it did, in a few words: "answered 503", "cut the connection after storing the payment". */
  detail: string;
}

export type ChaosListener = (applied: ChaosApplied) => void;
