import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { PREMISES } from '../../harness/checks/premises.ts';
import { settledAsAsked } from './status-records.ts';
import { randomUUID } from 'node:crypto';
import type { Account } from './harness.ts';
import type { MomoWorld } from './world.ts';
import { otherPartnerOf } from './status-records.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { bodyNotJsonRule, specCalls } from '../../harness/checks/every-operation.ts';
import { judgeRecordAsAsked, requestToPayOf } from './status-records.ts';

/** The delivery notification of a successful request to pay (§4.2 #3): enqueued once, refused when repeated soon after. */

/** Who notifies (the payment's own API user by default) and in which Language (none by default: the service's template). */
export interface NotifyOptions {
  account?: Account;
  language?: string;
}

export async function notifyDelivery(
  world: MomoWorld,
  referenceId: string = world.lastPayment.referenceId,
  message = 'Your order has been delivered. Thank you!',
  options: NotifyOptions = {},
): Promise<void> {
  const account = options.account ?? world.payment?.account ?? world.actor;
  const extra = options.language === undefined ? {} : { language: options.language };
  world.remember(
    await world.client.deliveryNotification(
      await world.bearer(account),
      referenceId,
      message,
      extra,
      world.payment?.product ?? account.product,
    ),
  );
  // A notification rests on the payment having ended as the scenario took it to (SUCCESSFUL, or not), and, where the
  // partner learnt that from a callback alone, on the callback having told it once it was so.
  world.restsOn = ['payment-settled-as-asked', 'callback-told-outcome'];
}

/** Another partner notifies delivery of this scenario's payment, which it does not own. */
export async function notifyDeliveryAsOther(world: MomoWorld): Promise<void> {
  await notifyDelivery(world, undefined, undefined, { account: otherPartnerOf(world) });
}

/** A delivery notification with a Language header (§4.1: an ISO 639-1 or 639-3 code). */
export async function notifyDeliveryInLanguage(world: MomoWorld, language: string): Promise<void> {
  await notifyDelivery(world, undefined, undefined, { language });
}

export async function notifyDeliveryOfUnknownPayment(world: MomoWorld): Promise<void> {
  await notifyDelivery(world, randomUUID());
}

export async function notifiedDelivery(world: MomoWorld): Promise<void> {
  await notifyDelivery(world);
  expectNotificationEnqueued(world);
}

/** 200 (§4.2 #3); beyond the spec, under disbursement and remittance, the 202 MTN's SDK docs captured there too. */
export function expectNotificationEnqueued(world: MomoWorld): void {
  const product = world.payment?.product ?? 'collection';
  world.expect({
    status: product === 'collection' ? 200 : [200, 202],
    // A message the scenario wrote to a bound the live service shows weighs as that observation.
    ...(world.rule ? { source: world.rule } : {}),
    what: 'a delivery notification for a successful payment is enqueued',
  });
}

export function expectTooManyNotifications(world: MomoWorld): void {
  // §4.2 #3 names the status, not the code; the body is still an error of set A (the contract checks it).
  world.expect({ status: 429, what: 'a repeated delivery notification soon after a successful one is refused (§8)' });
}

/**
 * A notification again, with another message: §8 counts attempts for the same id, whatever they say, so a cool-down
 * kept by message lets it through.
 */
export async function notifyDeliveryAgain(world: MomoWorld): Promise<void> {
  await notifyDelivery(world, undefined, 'Your second parcel has been delivered too.');
}

/**
 * The partner notifies again with an access token issued since: §4.2 #3's "too many attempts for the same ID" counts
 * the transaction's attempts, whoever's token carries them, so a server that keys its cool-down by token departs.
 */
export async function notifyDeliveryAgainWithNewToken(world: MomoWorld): Promise<void> {
  world.harness.renewToken(world.payment?.account ?? world.actor);
  await notifyDelivery(world, undefined, 'Your second parcel has been delivered too.');
}

/** Two delivery notifications for the scenario's payment sent at the same moment. */
export async function notifyTwiceAtOnce(world: MomoWorld): Promise<void> {
  const account = world.payment?.account ?? world.actor;
  const token = await world.bearer(account);
  const product = world.payment?.product ?? account.product;
  const send = (message: string) => world.client.deliveryNotification(token, world.lastPayment.referenceId, message, {}, product);
  world.notifiedTwice = await Promise.all([send('Your order has been delivered.'), send('Your order is at your door.')]);
  for (const answer of world.notifiedTwice) world.remember(answer);
  world.restsOn = ['payment-settled-as-asked'];
}

/**
 * Of two notifications sent at once, one is enqueued and the other refused as too many attempts (our reading,
 * REFUSALS notification-at-once-once): a warning unless --strict. One the careful client made again is not judged.
 */
export function expectOneOfTwoNotificationsEnqueued(world: MomoWorld): void {
  const answers = world.notifiedTwice;
  if (!answers) throw new Error('No two notifications were sent at once in this scenario.');
  if (answers.some((a) => a.retried !== undefined)) {
    world.log('One of the two notifications was sent again by the careful client: which the target took first cannot be told.');
    return;
  }
  const enqueued = answers.filter((a) => a.status === 200);
  const other = enqueued.length === 1 ? answers.find((a) => a !== enqueued[0])! : answers[1]!;
  world.expect({ status: 200, what: 'one of two delivery notifications sent at once is enqueued' }, enqueued[0] ?? answers[0]);
  world.expect(
    {
      status: 429,
      source: REFUSALS['notification-at-once-once'],
      what: 'the other of two delivery notifications sent at once is refused as too many attempts',
    },
    other,
  );
}

/** A repeated notification soon after a successful one, refused as too many attempts (§8): the scenario's setup. */
export async function repeatedNotificationRefused(world: MomoWorld): Promise<void> {
  await notifyDeliveryAgain(world);
  expectTooManyNotifications(world);
}

/**
 * A refusal as too many attempts lasts: a notification sent right after one refused with 429 is refused with 429 too
 * (a refusal neither resets nor clears the cool-down). The spec does not give the cool-down's length, so this is our
 * reading (REFUSALS notification-refusal-keeps-cooldown): a warning unless --strict.
 */
export function expectStillTooManyNotifications(world: MomoWorld): void {
  world.expect({
    status: 429,
    source: REFUSALS['notification-refusal-keeps-cooldown'],
    what: 'a delivery notification right after one refused as too many attempts is refused too',
  });
}

export function expectNotCompleted(world: MomoWorld): void {
  world.expect({
    status: 409,
    code: 'TRANSACTION_NOT_COMPLETED',
    what: 'only a successfully completed payment can be notified of delivery (§3)',
  });
}

/**
 * A delivery notification sent while the payment is still PENDING: refused as not completed (409), it is no attempt
 * (§8: 429 comes only after a successful attempt). That it was refused is the scenario's premise: a target whose
 * customer approves sooner enqueued it, and then a later one may rightly get 429. Refused otherwise than as not
 * completed, it departs.
 */
export async function notifyWhilePending(world: MomoWorld): Promise<void> {
  await notifyDelivery(world);
  const status = world.response?.status ?? 0;
  if (status === 409) world.held('notification-refused-while-pending');
  // Enqueued: the payment had succeeded by then (a target that approves sooner, or weather the careful client waited
  // out): the premise is seen not to hold, and what the next notification gets tells nothing of this case.
  else if (status >= 200 && status < 300)
    throw new PremiseNotHeld(
      'notification-refused-while-pending',
      `Premise not held, so not tested: ${PREMISES['notification-refused-while-pending'].statement}; it was enqueued (HTTP ${status}). ${PREMISES['notification-refused-while-pending'].unheld}`,
    );
  // Neither served (approved already) nor refused as not completed: a payment that is pending, or has just succeeded,
  // gets one or the other, and any other refusal departs from §4.2 #3.
  else expectNotCompleted(world);
}

/**
 * Waits for the scenario's payment to end as its customer answers, then notifies the customer of delivery: the answer
 * rests on the earlier notification's having been refused (notifyWhilePending).
 */
export async function notifyOnceSucceeded(world: MomoWorld): Promise<void> {
  await settledAsAsked(world);
  await notifyDelivery(world);
  world.restsOn = [...world.restsOn, 'notification-refused-while-pending'];
}

/**
 * A notification whose body lacks its message ({}): §2.13 gives the body as { notificationMessage } and does not say
 * the field is required, so that it is refused is our reading (a warning unless --strict).
 */
export async function notifyDeliveryWithoutMessage(world: MomoWorld): Promise<void> {
  world.rule = REFUSALS['notification-message-required'];
  const payment = world.lastPayment;
  world.remember(
    await world.client.deliveryNotification(await world.bearer(payment.account), payment.referenceId, undefined, {}, payment.product),
  );
}

/**
 * A delivery notification of the scenario's payment whose body is cut short, so that it is not JSON: refused as invalid
 * data (§4.2 #3: 400). It was no successful attempt, so it opens no window for 429 (§8).
 */
export async function notificationRefusedAsInvalid(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const call = specCalls().find((c) => c.id === 'deliveryNotification' && c.product === payment.product);
  if (!call) throw new Error(`No delivery notification is listed under ${payment.product} in the catalogue.`);
  world.remember(
    await world.client.invoke('deliveryNotification', payment.product, {
      authorization: await world.bearer(payment.account),
      params: { referenceId: payment.referenceId },
      rawBody: { text: '{"notificationMessage": ', contentType: 'application/json' },
    }),
  );
  world.expect({
    status: 400,
    source: bodyNotJsonRule(call),
    what: 'a delivery notification whose body is not JSON is refused as invalid',
  });
}

/**
 * Another partner's delivery notification of the scenario's payment, refused as not found (§4.2 #3: the payment is
 * not its own): no successful attempt of the payment's owner, so it opens no window for 429 (§8).
 */
export async function notificationRefusedToAnother(world: MomoWorld): Promise<void> {
  await notifyDeliveryAsOther(world);
  world.expect({ status: 404, what: "another partner's delivery notification of a payment it does not own is refused" });
}

/**
 * Another partner's notification of the payment while its owner's cool-down lasts is refused as not found (§4.2 #3).
 * A 429 instead departs only from our reading that whose the payment is comes before how recently it was notified
 * (REFUSALS notification-owner-before-cooldown); anything else departs from §4.2 #3 itself. That the cool-down still
 * lasted is seen after: the owner's notification again is 429; a target whose cool-down was over tested only the 404.
 */
export async function expectNotFoundDuringCooldown(world: MomoWorld): Promise<void> {
  const what = "another partner's notification is refused as not found while the owner's notification is recent";
  const answer = world.response;
  world.expect({ status: 404, ...(answer?.status === 429 ? { source: REFUSALS['notification-owner-before-cooldown'] } : {}), what });
  const again = await world.client.deliveryNotification(
    await world.bearer(world.lastPayment.account),
    world.lastPayment.referenceId,
    'Your order has been delivered.',
    {},
    world.lastPayment.product,
  );
  if (again.status !== 429)
    world.log(`The owner's notification again was answered ${again.status}, not 429: its cool-down was over, so only the 404 was tested.`);
}

/** The payment notified of its delivery still reads as it was asked: a notification tells the customer, it changes no record. */
export async function expectNotifiedPaymentUnchanged(world: MomoWorld): Promise<void> {
  await judgeRecordAsAsked(
    world,
    requestToPayOf(world),
    "after its delivery notification, the payment's record still shows what was asked",
  );
}
