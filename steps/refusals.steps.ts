import { When, Then } from '@cucumber/cucumber';
import type { Party } from './support/parties.ts';
import {
  checkHolderInForbiddenEnvironment,
  depositInForeignCurrency,
  depositWithoutToken,
  expectCurrencyRefused,
  expectFirstPaymentUnchanged,
  expectGatewayRefusal,
  expectOAuthRefusal,
  lookUpBasicInfoWithForgedToken,
  notifyDeliveryWithLongMessage,
  readBalanceInCurrency,
  readBalanceInForeignCurrency,
  notifyDeliveryWithMessage,
  expectForeignBalanceRefusedOrInIt,
  readBalanceWithKeyMistake,
  readStatusInForbiddenEnvironment,
  readUnknownWithForgedToken,
  readAsTheOtherKind,
  refundInForeignCurrency,
  refundWithoutToken,
  requestInForeignCurrency,
  requestReusingReference,
} from './support/refusals.ts';
import type { MomoWorld } from './support/world.ts';
import { expectRefusedCreationSilent } from './support/callbacks.ts';

// Calls the service must refuse (§7): bad data, unknown currencies, missing keys and tokens, forbidden environments.

When('the partner requests {amount} in a currency the service does not take', async function (this: MomoWorld, amount: string) {
  await requestInForeignCurrency(this, amount);
});

When(
  'the partner deposits {amount} to {party} in a currency the service does not take',
  async function (this: MomoWorld, amount: string, party: Party) {
    await depositInForeignCurrency(this, amount, party);
  },
);

When('the partner refunds that payment in a currency the service does not take', async function (this: MomoWorld) {
  await refundInForeignCurrency(this);
});

When(
  'the partner requests {amount} in a currency the service does not take, to be told at its callback address',
  async function (this: MomoWorld, amount: string) {
    await requestInForeignCurrency(this, amount, true);
  },
);

When(
  'the partner deposits {amount} to {party} in a currency the service does not take, to be told at its callback address',
  async function (this: MomoWorld, amount: string, party: Party) {
    await depositInForeignCurrency(this, amount, party, true);
  },
);

When(
  'the partner refunds that payment in a currency the service does not take, to be told at its callback address',
  async function (this: MomoWorld) {
    await refundInForeignCurrency(this, true);
  },
);

Then('nothing arrives at its callback address', async function (this: MomoWorld) {
  await expectRefusedCreationSilent(this);
});

When('the partner deposits {amount} to {party} without an access token', async function (this: MomoWorld, amount: string, party: Party) {
  await depositWithoutToken(this, amount, party);
});

When('the partner refunds that payment without an access token', async function (this: MomoWorld) {
  await refundWithoutToken(this);
});

When(
  'the partner notifies the customer of delivery with a message {notification message}',
  async function (this: MomoWorld, phrase: string) {
    await notifyDeliveryWithMessage(this, phrase);
  },
);

When('the partner notifies the customer of delivery with a message longer than 160 characters', async function (this: MomoWorld) {
  await notifyDeliveryWithLongMessage(this);
});

When('the partner reads its balance in a currency the service does not take', async function (this: MomoWorld) {
  await readBalanceInForeignCurrency(this);
});

Then('the currency is refused, or the balance is given in it', function (this: MomoWorld) {
  expectForeignBalanceRefusedOrInIt(this);
});

When('the partner reads its balance in the currency {string}', async function (this: MomoWorld, currency: string) {
  await readBalanceInCurrency(this, currency);
});

When('the partner requests {amount} again, reusing the reference of that payment', async function (this: MomoWorld, amount: string) {
  await requestReusingReference(this, amount);
});

When('the partner reads its balance {key mistake}', async function (this: MomoWorld, mistake: string) {
  await readBalanceWithKeyMistake(this, mistake);
});

When('the partner reads that payment/deposit/refund in a target environment it may not use', async function (this: MomoWorld) {
  await readStatusInForbiddenEnvironment(this);
});

When('the partner checks an account holder in a target environment it may not use', async function (this: MomoWorld) {
  await checkHolderInForbiddenEnvironment(this);
});

When("the partner looks up a customer's basic information with a forged access token", async function (this: MomoWorld) {
  await lookUpBasicInfoWithForgedToken(this);
});

When('the partner reads a payment that does not exist with a forged access token', async function (this: MomoWorld) {
  await readUnknownWithForgedToken(this);
});

When("the partner reads a deposit under the refund's reference id", async function (this: MomoWorld) {
  await readAsTheOtherKind(this, 'refund');
});

When("the partner reads a refund under the deposit's reference id", async function (this: MomoWorld) {
  await readAsTheOtherKind(this, 'deposit');
});

Then('the currency is refused', async function (this: MomoWorld) {
  await expectCurrencyRefused(this);
});

Then('the first payment is unchanged', async function (this: MomoWorld) {
  await expectFirstPaymentUnchanged(this);
});

Then('the gateway refuses it', function (this: MomoWorld) {
  expectGatewayRefusal(this);
});

Then('it is refused as unauthorized, with an error code', function (this: MomoWorld) {
  expectOAuthRefusal(this);
});
