import { readFileSync } from 'node:fs';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { BusinessErrorValueOf } from '../../core/catalogue/operations.ts';
import { TEST_NUMBERS, testNumberOf, type HolderStatus, type PaymentOutcome } from '../../core/test-numbers.ts';

/**
 * What happens to a payment whose payer (request to pay) or payee (deposit, refund) is a given MSISDN.
 * The built-in table is the public sandbox's test numbers (core/test-numbers.ts); a JSON file can replace
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

/** The test numbers of core/test-numbers.ts as the sandbox plays them; a delayed outcome takes `delayedSuccessMs`. */
export function builtInOutcomes(delayedSuccessMs: number): Map<string, Outcome> {
  return new Map(
    Object.values(TEST_NUMBERS)
      .filter((n) => n !== TEST_NUMBERS.ordinary)
      .map(({ msisdn, payment }) => {
        const { status, reason, delayed } = payment as PaymentOutcome;
        return [msisdn, { status, ...(reason ? { reason } : {}), ...(delayed ? { delayMs: delayedSuccessMs } : {}) }];
      }),
  );
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
    throw new Error(
      `--outcomes ${file}: expected an object keyed by MSISDN, e.g. {"46733123455": {"status": "FAILED", "reason": "PAYER_NOT_FOUND"}}`,
    );
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
  if (!['SUCCESSFUL', 'FAILED', 'PENDING'].includes(String(v.status)))
    throw new Error(`${where}: status must be SUCCESSFUL, FAILED or PENDING`);
  if (v.status === 'FAILED' && !(typeof v.reason === 'string' && /^[A-Z_]+\.?$/.test(v.reason)))
    throw new Error(`${where}: a FAILED outcome needs a reason code such as "PAYER_NOT_FOUND"`);
  if (v.delayMs !== undefined && !(Number.isInteger(v.delayMs) && v.delayMs >= 0 && v.delayMs <= 86_400_000))
    throw new Error(`${where}: delayMs must be a whole number of ms up to 86400000`);
  const known = new Set(['status', 'reason', 'delayMs']);
  const extra = Object.keys(v).find((k) => !known.has(k));
  if (extra) throw new Error(`${where}: unknown field "${extra}" (allowed: status, reason, delayMs)`);
  return {
    status: v.status as Outcome['status'],
    ...(v.reason ? { reason: v.reason } : {}),
    ...(v.delayMs !== undefined ? { delayMs: v.delayMs } : {}),
  };
}

/** What the account-holder check answers: the holder's status, or an error whose status and code the operation documents. */
export type AccountHolderAnswer = HolderStatus | ({ kind: 'error'; message: string } & BusinessErrorValueOf<'accountHolderActive'>);

/** What the account-holder check answers for a holder: by its test number for an MSISDN, else active. */
export function accountHolderAnswer(idType: string, id: string, profile: ProfileBehaviour): AccountHolderAnswer {
  if (idType !== 'msisdn') return { kind: 'status', active: true };
  const entry = testNumberOf(id);
  return entry ? entry.holder[profile.accountHolderErrors] : { kind: 'status', active: true };
}
