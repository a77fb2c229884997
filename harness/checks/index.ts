import { ANSWER_CHECKS } from './answers.ts';
import { TRANSACTION_CHECKS } from './transactions.ts';
import { CREDENTIAL_CHECKS } from './credentials.ts';
import { CONSENT_CHECKS } from './consent.ts';
import { CALLBACK_CHECKS } from './callbacks.ts';
import { ACCOUNT_CHECKS } from './accounts.ts';
import type { CheckDefinition } from './check.ts';

/**
 * Every check the harness makes, by name, gathered from its families: each thing it judges about a target is one of
 * these, as Schemathesis's checks.py has one function per check. A family (harness/checks/<family>.ts) keeps each
 * check's name, rule and source, the sources of the values it compares with, its premises, and the function that
 * makes it, together; the judge, the steps and the reports take them from here. A finding's source decides its weight:
 * only a definite one fails a target in the spec profile (core/sources.ts), and a finding is no stronger than the
 * weakest source under it (harness/checks/check.ts).
 */
export const CHECKS = {
  ...ANSWER_CHECKS,
  ...TRANSACTION_CHECKS,
  ...CREDENTIAL_CHECKS,
  ...CONSENT_CHECKS,
  ...CALLBACK_CHECKS,
  ...ACCOUNT_CHECKS,
} as const satisfies Record<string, CheckDefinition>;

export type CheckName = keyof typeof CHECKS;

export const CHECK_NAMES = Object.keys(CHECKS) as CheckName[];

/** The family each check belongs to, by the module that defines it: for the reports and the tests. */
export const FAMILIES: Readonly<Record<string, readonly CheckName[]>> = {
  answers: Object.keys(ANSWER_CHECKS) as CheckName[],
  transactions: Object.keys(TRANSACTION_CHECKS) as CheckName[],
  credentials: Object.keys(CREDENTIAL_CHECKS) as CheckName[],
  consent: Object.keys(CONSENT_CHECKS) as CheckName[],
  callbacks: Object.keys(CALLBACK_CHECKS) as CheckName[],
  accounts: Object.keys(ACCOUNT_CHECKS) as CheckName[],
};

/**
 * Whether a check holds of every answer of its operation, whatever the case (a record's schema, a secret kept),
 * rather than of the case a scenario sets up (the status a duplicate gets): a failure of it fails every requirement
 * that cites it, not only those of the scenario that found it.
 */
export function isGeneral(check: CheckName): boolean {
  return 'general' in CHECKS[check];
}

export * from './check.ts';

import { findingOf, type Finding } from './check.ts';
import type { Source } from '../../core/sources.ts';

/** A finding of a check by its name: what a family's own functions make; for tools and tests that stand outside a family. */
export function finding(check: CheckName, found: Parameters<typeof findingOf>[2]): Finding {
  return findingOf(check, CHECKS[check], found);
}

/**
 * A state a check waits for did not come within the run's deadline. The spec gives no time for any of them, so it
 * weighs as `timing` says (the live service's pace, an observation, by default).
 */
export function deadlineFinding(
  check: CheckName,
  wait: { description: string; timeoutMs: number; setting: string; last: string; timing: Source },
): Finding {
  return findingOf(check, CHECKS[check], {
    expected: `${wait.description} within ${wait.timeoutMs} ms (${wait.setting})`,
    received: wait.last,
    source: wait.timing,
  });
}
