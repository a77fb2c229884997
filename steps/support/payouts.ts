import { codeOf } from '../../harness/client/momo-client.ts';
import { PREMISES } from '../../harness/checks/premises.ts';
import { fundsCoverFindings } from '../../harness/checks/transactions.ts';
import { quote } from '../../harness/checks/check.ts';
import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { expectMoneyMovedByEach, rememberBalance } from './accounts.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import { endedFailed, finalStatusRecord } from './status-records.ts';
import { deposit, depositMoreThanBalance } from './transactions.ts';
import type { MomoWorld, Payment } from './world.ts';

/**
 * Payouts the account must cover (§7 set B NOT_ENOUGH_FUNDS, §2.9), made together. What is judged rests on the
 * premise funds-checked: this target fails one payout larger than the balance, which the scenario sees first.
 */

/**
 * A deposit of more than the balance fails here (refused, or accepted and then FAILED): the premise funds-checked. One
 * that succeeds shows a target that overdraws, which the spec does not forbid: what follows is then not tested. The
 * balance is read again after it, for what comes next.
 */
export async function seeOverdraftFail(world: MomoWorld): Promise<void> {
  world.assume('funds-checked');
  if (!world.balancesKept)
    throw new PremiseNotHeld(
      'funds-checked',
      'The balance was not seen to move with a first deposit: whether payouts are covered cannot be told.',
    );
  await rememberBalance(world);
  const answer = await depositMoreThanBalance(world, ORDINARY_CUSTOMER);
  // Only a want of funds, said as such, shows the target checks them: another refusal (a limit of its own, invalid
  // data, weather) says nothing of funds.
  let said: unknown = codeOf(answer.json);
  if (answer.status === 202) said = reasonCode((await finalStatusRecord(world, world.lastPayment)).record);
  if (said !== 'NOT_ENOUGH_FUNDS')
    throw new PremiseNotHeld(
      'funds-checked',
      `A deposit of more than the balance was answered HTTP ${answer.status}${said === undefined ? '' : `, ${quote(said)}`}, not refused for want of funds: ${PREMISES['funds-checked'].unheld}`,
    );
  world.held('funds-checked');
  await rememberBalance(world);
}

/** The code a FAILED record gives as its reason, as a string or as {code}. */
function reasonCode(record: { reason?: unknown }): unknown {
  const { reason } = record;
  return typeof reason === 'object' && reason !== null ? (reason as { code?: unknown }).code : reason;
}

/** Two deposits, each of one unit more than half the balance, sent together to payees who answer as `party` does. */
export async function depositMoreThanHalfTwiceAtOnce(world: MomoWorld, party: Party): Promise<void> {
  if (world.balanceBefore === undefined) throw new Error('No balance was read in this scenario: read it in a Given step first.');
  // Whole units, which every target takes (some refuse more than two decimals).
  const whole = /^(\d+)(\.\d+)?$/.exec(world.balanceBefore)?.[1];
  if (whole === undefined)
    throw new PremiseNotHeld(
      'funds-checked',
      `The balance ${quote(world.balanceBefore)} is not a plain decimal: half of it cannot be told.`,
    );
  const amount = String(BigInt(whole) / 2n + 1n);
  await world.bearer(world.actor);
  const before = world.payments.length;
  const answers = await Promise.all([0, 1].map(() => deposit(world, party, amount)));
  const made = world.payments.slice(before);
  answers.forEach((answer, i) => {
    // Refused at once (for want of funds, §7 rule 5 leaving open which status goes with a code; or a limit of the
    // target's own): it moved nothing, and whether it should have been taken is other scenarios' to judge.
    if (answer.status !== 202) {
      world.log(`A deposit of ${amount} was refused at once: HTTP ${answer.status} ${quote(codeOf(answer.json) ?? '')}.`);
      world.payments.splice(world.payments.indexOf(made[i]!), 1);
    }
  });
}

/**
 * Each payout made since the balance was read has ended: not all succeeded if together they take more than it
 * (FUNDS_COVER_PAYOUTS_TOGETHER, a reading), and the balance has moved by what each moved as it ended.
 */
export async function expectPayoutsCovered(world: MomoWorld): Promise<void> {
  const balance = world.balanceBefore;
  if (balance === undefined) throw new Error('No balance was read in this scenario.');
  const payouts: Payment[] = world.payments.slice(world.paymentsBeforeBalance);
  if (payouts.length === 0) {
    world.log('Every deposit was refused at once for want of funds: nothing moved, and nothing overdrew the account.');
    return;
  }
  const ended = [];
  for (const payout of payouts) {
    const { response, record } = await finalStatusRecord(world, payout);
    payout.endedAs = endedFailed(record) ? 'FAILED' : 'SUCCESSFUL';
    ended.push({ amount: String(payout.body.amount), status: record.status, response });
  }
  world.check(
    'transaction-outcome',
    ended.at(-1)!.response,
    `${payouts.length} deposits made together take no more than the balance of ${balance}`,
    fundsCoverFindings(ended, balance),
  );
  await expectMoneyMovedByEach(world);
}
