import type { PaymentBody } from '../../harness/client/momo-client.ts';
import { TRANSACTION_CHECKS } from '../../harness/checks/transactions.ts';
import type { Source } from '../../core/sources.ts';
import type { ReplayCheck } from './replay-plan.ts';
import type { ExplorationSession } from './session.ts';

/**
 * The fields of a record the replay compares, as the named checks of harness/checks/transactions.ts compare them:
 * the amount as the same decimal number, a party as the same party of its type, texts exactly; each with the weight
 * its source has in the run, and what a record without the field weighs.
 */

const TEXTS = ['externalId', 'payerMessage', 'payeeNote'] as const;

/** The fields sent that a status record echoes (record-echoes-request): a field it lacks rests on the live record's. */
export function echoChecks(
  session: ExplorationSession,
  sent: Partial<PaymentBody>,
  why: string,
  source: Source = TRANSACTION_CHECKS['record-echoes-request'].source,
): ReplayCheck[] {
  const weight = session.weightOf(source);
  const whenMissing = session.weightOf(TRANSACTION_CHECKS['record-echoes-request'].values.recordFields);
  return Object.entries(sent).flatMap(([field, value]): ReplayCheck[] =>
    value === undefined
      ? []
      : [{ kind: 'field', pointer: `/${field}`, value, compare: compareOf(field), weight, whenMissing, when: [200], why }],
  );
}

/** What a refused duplicate must leave as it was, where the record names it (refusal-changes-nothing). */
export function unchangedChecks(session: ExplorationSession, first: PaymentBody, why: string): ReplayCheck[] {
  const weight = session.weightOf(TRANSACTION_CHECKS['refusal-changes-nothing'].source);
  const fields = { amount: first.amount, ...Object.fromEntries(TEXTS.map((t) => [t, first[t]])) };
  return Object.entries(fields).flatMap(([field, value]): ReplayCheck[] =>
    value === undefined
      ? []
      : [{ kind: 'field', pointer: `/${field}`, value, compare: compareOf(field), weight, whenMissing: 'passes', when: [200], why }],
  );
}

function compareOf(field: string): 'amount' | 'party' | 'exact' {
  if (field === 'amount') return 'amount';
  return field === 'payer' || field === 'payee' ? 'party' : 'exact';
}
