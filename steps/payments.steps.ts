import { Given, Then, When } from '@cucumber/cucumber';
import type { Party } from './support/parties.ts';
import {
  deposit,
  depositAccepted,
  depositAgain,
  depositMoreThanBalance,
  expectRefundOfUnknownPaymentFails,
  refundAgain,
  refundedPayment,
  refundPayment,
  refundUnknownPayment,
  refundDeposit,
  requestPayment,
  settledPayment,
  settledPaymentThroughCollection,
} from './support/transactions.ts';
import {
  expectNotCompleted,
  expectNotificationEnqueued,
  expectTooManyNotifications,
  notifiedDelivery,
  notifyDelivery,
  notifyDeliveryWithoutMessage,
  notifyDeliveryAsOther,
  notifyDeliveryInLanguage,
  notifyDeliveryOfUnknownPayment,
  notifyOnceSucceeded,
  notifyWhilePending,
  notificationRefusedAsInvalid,
  notificationRefusedToAnother,
  expectNotifiedPaymentUnchanged,
  expectStillTooManyNotifications,
  repeatedNotificationRefused,
  notifyDeliveryAgain,
  notifyDeliveryAgainWithNewToken,
  expectNotFoundDuringCooldown,
  notifyTwiceAtOnce,
  expectOneOfTwoNotificationsEnqueued,
} from './support/delivery-notifications.ts';
import {
  expectNotCreated,
  expectOutcome,
  expectRecordAsAsked,
  expectRefundToPayer,
  expectRefundedPaymentUnchanged,
  expectStillPending,
  expectSuccessWithTransactionId,
  readStatusAsOther,
  lookMeanwhile,
} from './support/status-records.ts';
import { depositMoreThanHalfTwiceAtOnce, expectPayoutsCovered, seeOverdraftFail } from './support/payouts.ts';
import { ownCallbackUrl } from './support/callbacks.ts';
import type { MomoWorld } from './support/world.ts';

// Requests to pay, deposits and refunds, their outcome as the status record tells it, and delivery notifications.

When('the partner requests {amount} from {party}', async function (this: MomoWorld, amount: string, party: Party) {
  await requestPayment(this, party, amount);
});

Given('{party} has paid the partner {amount}', async function (this: MomoWorld, party: Party, amount: string) {
  await settledPayment(this, party, amount);
});

When('{party} pays the partner {amount}', async function (this: MomoWorld, party: Party, amount: string) {
  await settledPayment(this, party, amount);
});

Given('{party} has paid the partner {amount} through collection', async function (this: MomoWorld, party: Party, amount: string) {
  await settledPaymentThroughCollection(this, party, amount);
});

Given('a payment of {amount} by {party} has failed', async function (this: MomoWorld, amount: string, party: Party) {
  await settledPayment(this, party, amount);
});

When('the partner deposits {amount} to {party}', async function (this: MomoWorld, amount: string, party: Party) {
  await deposit(this, party, amount);
});

Given('the partner has deposited {amount} to {party}', async function (this: MomoWorld, amount: string, party: Party) {
  await depositAccepted(this, party, amount);
});

When(
  'the partner deposits {amount} to {party} again, with the same reference',
  async function (this: MomoWorld, amount: string, party: Party) {
    await depositAgain(this, party, amount);
  },
);

When('the partner deposits more than its balance to {party}', async function (this: MomoWorld, party: Party) {
  await depositMoreThanBalance(this, party);
});

Given('the partner has seen a deposit of more than its balance fail', async function (this: MomoWorld) {
  await seeOverdraftFail(this);
});

When('the partner deposits more than half its balance to {party}, twice at once', async function (this: MomoWorld, party: Party) {
  await depositMoreThanHalfTwiceAtOnce(this, party);
});

Then('the deposits do not all succeed, and the balance has moved by what each called for', async function (this: MomoWorld) {
  await expectPayoutsCovered(this);
});

When('the partner refunds that payment in full', async function (this: MomoWorld) {
  await refundPayment(this);
});

Given('the partner has refunded a payment of {amount} by {party}', async function (this: MomoWorld, amount: string, party: Party) {
  await refundedPayment(this, party, amount);
});

When('the partner refunds that payment again, with the same reference', async function (this: MomoWorld) {
  await refundAgain(this);
});

When('the partner refunds {amount} of that deposit, as if it were a payment', async function (this: MomoWorld, amount: string) {
  await refundDeposit(this, amount);
});

When('the partner refunds {amount} of a payment that does not exist', async function (this: MomoWorld, amount: string) {
  await refundUnknownPayment(this, amount);
});

When('another partner looks up the payment', async function (this: MomoWorld) {
  await readStatusAsOther(this);
});

Then('the payment/deposit/refund/transfer/withdrawal ends {status}', async function (this: MomoWorld, status: string) {
  await expectOutcome(this, status);
});

Then(
  'the payment/deposit/refund/transfer/withdrawal ends {status} because {code}',
  async function (this: MomoWorld, status: string, reason: string) {
    await expectOutcome(this, status, reason);
  },
);

Then('the payment ends SUCCESSFUL with a financial transaction id', async function (this: MomoWorld) {
  await expectSuccessWithTransactionId(this);
});

Then('the payment is still PENDING', async function (this: MomoWorld) {
  await expectStillPending(this);
});

Then(
  'the payment/deposit/refund/transfer/withdrawal record shows the amount as {amount} and the rest as asked',
  async function (this: MomoWorld, amount: string) {
    await expectRecordAsAsked(this, amount);
  },
);

Then('the refund goes back to the customer who paid', async function (this: MomoWorld) {
  await expectRefundToPayer(this);
});

Then('the payment it refunded still reads as it was asked', async function (this: MomoWorld) {
  await expectRefundedPaymentUnchanged(this);
});

// Ends FAILED with RESOURCE_NOT_FOUND, or is refused at once with a code of set B: see the function.
Then('the refund fails because the payment is not found', async function (this: MomoWorld) {
  await expectRefundOfUnknownPaymentFails(this);
});

Then('no payment/deposit/refund was created', async function (this: MomoWorld) {
  await expectNotCreated(this);
});

When('the partner notifies the customer of delivery', async function (this: MomoWorld) {
  await notifyDelivery(this);
});

Given('the partner has notified the customer of delivery', async function (this: MomoWorld) {
  await notifiedDelivery(this);
});

When('the partner notifies the customer of delivery without a message', async function (this: MomoWorld) {
  await notifyDeliveryWithoutMessage(this);
});

Given("the partner's delivery notification whose body is not JSON has been refused", async function (this: MomoWorld) {
  await notificationRefusedAsInvalid(this);
});

Given("another partner's delivery notification of the payment has been refused", async function (this: MomoWorld) {
  await notificationRefusedToAnother(this);
});

Then('the payment still reads as it was asked', async function (this: MomoWorld) {
  await expectNotifiedPaymentUnchanged(this);
});

Then("it is refused as not found, even while the owner's notification is recent", async function (this: MomoWorld) {
  await expectNotFoundDuringCooldown(this);
});

When('the partner notifies the customer of delivery again', async function (this: MomoWorld) {
  await notifyDeliveryAgain(this);
});

When('the partner notifies the customer of delivery again, with an access token issued since', async function (this: MomoWorld) {
  await notifyDeliveryAgainWithNewToken(this);
});

Then('the partner looks at the payment/deposit meanwhile', async function (this: MomoWorld) {
  await lookMeanwhile(this);
});

When('the partner notifies the customer of delivery twice at once', async function (this: MomoWorld) {
  await notifyTwiceAtOnce(this);
});

Then('one is enqueued and the other refused as too many attempts, by our reading', function (this: MomoWorld) {
  expectOneOfTwoNotificationsEnqueued(this);
});

When('the partner notifies the customer of delivery in {language}', async function (this: MomoWorld, language: string) {
  await notifyDeliveryInLanguage(this, language);
});

When('another partner notifies the customer of delivery', async function (this: MomoWorld) {
  await notifyDeliveryAsOther(this);
});

When('the partner notifies delivery of a payment that does not exist', async function (this: MomoWorld) {
  await notifyDeliveryOfUnknownPayment(this);
});

Then('the notification is enqueued', function (this: MomoWorld) {
  expectNotificationEnqueued(this);
});

Then('it is refused as too many attempts', function (this: MomoWorld) {
  expectTooManyNotifications(this);
});

Given("the partner's repeated notification has been refused as too many attempts", async function (this: MomoWorld) {
  await repeatedNotificationRefused(this);
});

Then('it is still refused as too many attempts, by our reading', function (this: MomoWorld) {
  expectStillTooManyNotifications(this);
});

Given('the partner has notified the customer of delivery while the payment was pending', async function (this: MomoWorld) {
  await notifyWhilePending(this);
});

When('the partner notifies the customer of delivery once the payment has succeeded', async function (this: MomoWorld) {
  await notifyOnceSucceeded(this);
});

Then('it is refused as not completed', function (this: MomoWorld) {
  expectNotCompleted(this);
});

Given(
  '{party} has paid the partner {amount}, telling its callback address',
  async function (this: MomoWorld, party: Party, amount: string) {
    await settledPayment(this, party, amount, { callback: ownCallbackUrl });
  },
);

Given(
  '{party} has paid the partner {amount} through collection, telling its callback address',
  async function (this: MomoWorld, party: Party, amount: string) {
    await settledPayment(this, party, amount, { callback: ownCallbackUrl, account: await this.harness.account('collection') });
  },
);
