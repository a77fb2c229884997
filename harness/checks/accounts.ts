import { sourceOfDifference, type ProfileName } from '../../core/profiles.ts';
import { decimalScale, formatUnits, sameDecimal, unitsAt } from '../../core/money.ts';
import { observed, reading, spec } from '../../core/sources.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';

/**
 * What a partner's accounts and its customers' are held to: a balance in the currency asked for, that follows the
 * payments; whether an account holder is active; and how user information writes gender.
 */
export const ACCOUNT_CHECKS = {
  'balance-in-currency': {
    title: "A balance is given in the currency asked for, or the partner's.",
    source: spec('§2.9, §4.2 #4'),
  },
  'balance-follows-payments': {
    title: "A successful payment credits the merchant's balance by its amount.",
    source: reading("the spec does not say when a balance moves; the reference sandbox's bookkeeping (@stateful)"),
  },
  'balance-of-the-account': {
    title: "The balance is the account's: read with a new access token of the same API user, it is the one just read.",
    source: spec('§2.9: availableBalance is the available balance of the account; §4.2 #4'),
  },
  'money-moves-once': {
    title:
      "A transaction moves its amount once: once it has ended, its owner's balance has moved by its amount if it succeeded, by nothing if it failed or was refused, and by nothing else (a balance that never moves is a target that keeps none, balance-follows-payments).",
    source: spec(
      '§2.2: amount is debited from the payer account; §4.3 #9, #10: a refund or deposit moves an amount from the owner’s account to a payee account; §2.9: availableBalance is the account’s',
    ),
  },
  'holder-status': {
    title:
      'The account-holder check says true for a registered, active holder and false otherwise, in a body the suite can read: a bare boolean, {"result": …}, or an object with one boolean member.',
    source: spec('§4.2 #8: true if the account holder is registered and active; false if it is not active or not found'),
    values: {
      testNumbers: observed(
        'real-api-notes, sandbox test numbers: ordinary numbers are registered, active holders; the SDKs document the others',
      ),
      shape: reading(
        '§4.2 #8 gives true or false and no format for the body: a bare boolean, the live {"result": …}, or one boolean member is what the suite can read',
      ),
    },
  },
  'gender-case': {
    title: 'gender is written in the case the profile expects.',
    source: spec('§2.11: gender is a string'),
    general: true,
  },
} as const satisfies Record<string, CheckDefinition>;

type AccountCheck = keyof typeof ACCOUNT_CHECKS;
const found = (name: AccountCheck, f: Found): Finding => findingOf(name, ACCOUNT_CHECKS[name], f);

export function currencyFindings(currency: unknown, expected: string): Finding[] {
  return currency === expected
    ? []
    : [found('balance-in-currency', { field: '/currency', expected: JSON.stringify(expected), received: quote(currency) })];
}

/** The balance now against the one before plus the amount, to the last decimal. */
export function balanceGrownFindings(now: string, before: string, amount: string): Finding[] {
  const sum = exactSum(now, before, amount);
  if ('unreadable' in sum) return [found('balance-follows-payments', sum.unreadable)];
  return sum.now === sum.expected
    ? []
    : [found('balance-follows-payments', { field: '/availableBalance', expected: JSON.stringify(sum.text), received: quote(now) })];
}

/**
 * The balance now and the one before plus a movement, at the largest scale among them, exactly: a balance the target
 * summed in floating point ("3.3000000000000003") is compared as it is, not rounded to a scale of ours.
 */
function exactSum(
  now: string,
  before: string,
  movement: string,
): { now: bigint; before: bigint; expected: bigint; text: string } | { unreadable: Found } {
  const scales = [now, before, movement].map(decimalScale);
  const bad = [now, before].find((_, i) => scales[i] === undefined);
  if (bad !== undefined || scales[2] === undefined)
    return { unreadable: { field: '/availableBalance', expected: 'a decimal amount', received: quote(bad ?? movement) } };
  const scale = Math.max(...(scales as number[]));
  const expected = unitsAt(before, scale) + unitsAt(movement, scale);
  return { now: unitsAt(now, scale), before: unitsAt(before, scale), expected, text: formatUnits(expected, scale) };
}

/**
 * The balance's movement since `before` against the one the scenario's transactions call for (signed: a credit is
 * positive). Moved as called for: nothing to say. Not moved at all: a target that keeps no balances (the live
 * sandbox's stays "0"), which the spec leaves open (balance-follows-payments, a reading), unless the scenario saw
 * this target move a balance by a transaction's amount (`balancesKept`). Moved by anything else: money moved that no
 * transaction calls for, or twice, or rounded (money-moves-once, definite).
 */
export function moneyMovedFindings(now: string, before: string, movement: string, balancesKept = false): Finding[] {
  const sum = exactSum(now, before, movement);
  if ('unreadable' in sum) return [found('money-moves-once', sum.unreadable)];
  if (sum.now === sum.expected) return [];
  const f = { field: '/availableBalance', expected: JSON.stringify(sum.text), received: quote(now) };
  // Not moved at all is a target that keeps no balances, unless the scenario saw this one keep them.
  return [found(sum.now === sum.before && !balancesKept ? 'balance-follows-payments' : 'money-moves-once', f)];
}

/**
 * What an account-holder answer says, when its shape can be read: a bare boolean, {"result": …} (the live one), or an
 * object with exactly one boolean member (the format is not shown, §4.2 #8). Undefined when it cannot be read.
 */
export function holderAnswer(body: unknown): { value: boolean; field: string } | undefined {
  if (typeof body === 'boolean') return { value: body, field: 'body' };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.result === 'boolean') return { value: record.result, field: '/result' };
  const booleans = Object.entries(record).filter(([, v]) => typeof v === 'boolean');
  return booleans.length === 1 ? { value: booleans[0]![1] as boolean, field: `/${booleans[0]![0]}` } : undefined;
}

/** §4.2 #8's answers to a valid id: what makes a holder the target does not know no error. */
export const HOLDER_ANSWERED = spec(
  '§4.2 #8: 200: true if the account holder is registered and active; false if it is not active or not found',
);

/** An answer whose true or false the suite can read (the format is not shown: one it cannot read is a warning in spec). */
export function holderReadableFindings(body: unknown): Finding[] {
  return holderAnswer(body) === undefined
    ? [
        found('holder-status', {
          field: 'body',
          expected: 'true or false, in a shape the suite can read',
          received: quote(body),
          source: ACCOUNT_CHECKS['holder-status'].values.shape,
        }),
      ]
    : [];
}

/**
 * The holder's status: true or false (§4.2 #8, definite), for the holder the test numbers make it (observed), in a
 * shape the suite can read (the format is not shown: one it cannot read is a warning, never a failure in spec).
 */
export function holderFindings(body: unknown, expected: boolean): Finding[] {
  const answer = holderAnswer(body);
  const values = ACCOUNT_CHECKS['holder-status'].values;
  if (answer === undefined)
    return [
      found('holder-status', {
        field: 'body',
        expected: `${expected}, in a shape the suite can read`,
        received: quote(body),
        source: values.shape,
      }),
    ];
  return answer.value === expected
    ? []
    : [
        found('holder-status', {
          field: answer.field,
          expected: String(expected),
          received: quote(answer.value),
          source: values.testNumbers,
        }),
      ];
}

/** gender in the case the profile expects: lower per our reading of §2.10–§2.11, upper on the live sandbox. */
export function genderCaseFindings(gender: unknown, expectedCase: 'lower' | 'upper', profile: ProfileName): Finding[] {
  const inCase = typeof gender !== 'string' || gender === (expectedCase === 'upper' ? gender.toUpperCase() : gender.toLowerCase());
  return inCase
    ? []
    : [
        found('gender-case', {
          field: '/gender',
          expected: `${expectedCase} case`,
          received: quote(gender),
          source: sourceOfDifference('genderCase', profile),
        }),
      ];
}

/** The balance read with a new token of the same API user against the one read just before with the old: the same amount. */
export function sameAccountFindings(withNewToken: unknown, justRead: string): Finding[] {
  return typeof withNewToken === 'string' && sameDecimal(withNewToken, justRead)
    ? []
    : [
        found('balance-of-the-account', {
          field: '/availableBalance',
          expected: `${quote(justRead)}, as read just before with the earlier token`,
          received: quote(withNewToken),
        }),
      ];
}
