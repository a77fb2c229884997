import { readFileSync } from 'node:fs';
import type { ProfileBehaviour } from '../core/profiles.ts';

/**
 * What happens to a payment whose payer (request to pay) or payee (deposit, refund) is a given MSISDN.
 * The built-in table is the public sandbox's test numbers (real-api-notes.md); a JSON file can replace
 * or extend it, keyed by MSISDN: {"46733123455": {"status": "FAILED", "reason": "PAYER_NOT_FOUND"}}.
 */
export interface Outcome {
  /** PENDING means the payer never answers: the transaction times out after the pending timeout. */
  status: 'SUCCESSFUL' | 'FAILED' | 'PENDING';
  reason?: string;
  /** How long the transaction stays PENDING before reaching `status`. */
  delayMs?: number;
}

export type OutcomeTable = ReadonlyMap<string, Outcome>;

export function builtInOutcomes(delayedSuccessMs: number): Map<string, Outcome> {
  return new Map<string, Outcome>([
    ['46733123450', { status: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' }],
    ['46733123451', { status: 'FAILED', reason: 'APPROVAL_REJECTED' }],
    ['46733123452', { status: 'FAILED', reason: 'EXPIRED' }],
    ['46733123453', { status: 'PENDING' }],
    ['46733123454', { status: 'SUCCESSFUL', delayMs: delayedSuccessMs }],
    // Documented by SDKs, not observed (real-api-notes: uncertain).
    ['46733123455', { status: 'FAILED', reason: 'PAYER_NOT_FOUND' }],
    ['46733123456', { status: 'FAILED', reason: 'PAYEE_NOT_ALLOWED_TO_RECEIVE' }],
    ['46733123457', { status: 'FAILED', reason: 'NOT_ALLOWED' }],
    ['46733123458', { status: 'FAILED', reason: 'NOT_ALLOWED_TARGET_ENVIRONMENT' }],
    ['46733123459', { status: 'FAILED', reason: 'INVALID_CALLBACK_URL_HOST' }],
    ['46733123460', { status: 'FAILED', reason: 'INVALID_CURRENCY' }],
    ['46733123461', { status: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' }],
    ['46733123462', { status: 'FAILED', reason: 'SERVICE_UNAVAILABLE' }],
    // 46733123463 (COULD_NOT_PERFORM_TRANSACTION) is left out: that code is in none of the spec's sets.
  ]);
}

export const SUCCESS_AT_ONCE: Outcome = { status: 'SUCCESSFUL' };

export function loadOutcomes(file: string | undefined, delayedSuccessMs: number): Map<string, Outcome> {
  const table = builtInOutcomes(delayedSuccessMs);
  if (!file) return table;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`--outcomes ${file}: cannot read it as JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`--outcomes ${file}: expected an object keyed by MSISDN, e.g. {"46733123455": {"status": "FAILED", "reason": "PAYER_NOT_FOUND"}}`);
  }
  for (const [msisdn, value] of Object.entries(parsed)) {
    table.set(msisdn.replace(/^\+/, ''), checkOutcome(file, msisdn, value));
  }
  return table;
}

function checkOutcome(file: string, msisdn: string, value: unknown): Outcome {
  const where = `--outcomes ${file}: entry "${msisdn}"`;
  if (!/^\+?[1-9]\d{6,14}$/.test(msisdn)) throw new Error(`${where} is not an E.164 MSISDN`);
  const v = value as Partial<Outcome> | null;
  if (typeof v !== 'object' || v === null) throw new Error(`${where} must be an object with status, reason and delayMs`);
  if (!['SUCCESSFUL', 'FAILED', 'PENDING'].includes(String(v.status))) throw new Error(`${where}: status must be SUCCESSFUL, FAILED or PENDING`);
  if (v.status === 'FAILED' && !(typeof v.reason === 'string' && /^[A-Z_]+\.?$/.test(v.reason))) throw new Error(`${where}: a FAILED outcome needs a reason code such as "PAYER_NOT_FOUND"`);
  if (v.delayMs !== undefined && !(Number.isInteger(v.delayMs) && v.delayMs >= 0 && v.delayMs <= 86_400_000)) throw new Error(`${where}: delayMs must be a whole number of ms up to 86400000`);
  const known = new Set(['status', 'reason', 'delayMs']);
  const extra = Object.keys(v).find((k) => !known.has(k));
  if (extra) throw new Error(`${where}: unknown field "${extra}" (allowed: status, reason, delayMs)`);
  return { status: v.status as Outcome['status'], ...(v.reason ? { reason: v.reason } : {}), ...(v.delayMs !== undefined ? { delayMs: v.delayMs } : {}) };
}

/** What the account-holder status operation answers for a holder. */
export type HolderAnswer =
  | { kind: 'status'; active: boolean }
  | { kind: 'error'; httpStatus: number; code: string; message: string };

export function accountHolderAnswer(idType: string, id: string, profile: ProfileBehaviour): HolderAnswer {
  if (idType !== 'msisdn') return { kind: 'status', active: true };
  const msisdn = id.replace(/^\+/, '');
  switch (msisdn) {
    case '46733123450':
      return profile.accountHolderErrors === 'documented'
        ? { kind: 'error', httpStatus: 404, code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' }
        : { kind: 'status', active: false };
    case '46733123451':
      return { kind: 'status', active: false };
    case '46733123452':
      return { kind: 'error', httpStatus: 500, code: 'NOT_ALLOWED', message: 'Authorization failed. Insufficient permissions.' };
    case '46733123453':
      return { kind: 'error', httpStatus: 500, code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', message: 'Access to target environment is forbidden.' };
    case '46733123454':
      return { kind: 'error', httpStatus: 500, code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred while processing.' };
    case '46733123455':
      return profile.accountHolderErrors === 'documented'
        ? { kind: 'error', httpStatus: 503, code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable, please try again later.' }
        : { kind: 'status', active: true };
    default:
      return { kind: 'status', active: true };
  }
}
