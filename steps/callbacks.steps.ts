import { Given, Then, When } from '@cucumber/cucumber';
import {
  askAgainToBeToldElsewhere,
  type CallbackAddress,
  expectCallbackForEachPayment,
  expectCallbackHostRefused,
  expectUserinfoHostRefused,
  expectNoUnsolicitedCallbacks,
  expectOneCallbackWithStatusRecord,
  expectOnlyTheFirstAddressCalledBack,
  expectEveryCallbackAtItsAddressIsItsRecord,
  expectRetryCarriesRecord,
  requestPaymentsToOneAddress,
  expectNotToldAgain,
  toldOfSuccessByCallback,
} from './support/callbacks.ts';
import type { Party } from './support/parties.ts';
import { deposit, refundPayment, requestPayment } from './support/transactions.ts';
import { requestPaymentAsTokenRunsOut } from './support/tokens.ts';
import type { MomoWorld } from './support/world.ts';

// Being told the outcome at a callback address instead of asking for it (§6).

When(
  'the partner requests {amount} from {party}, to be told at {callback address}',
  async function (this: MomoWorld, amount: string, party: Party, callback: CallbackAddress) {
    await requestPayment(this, party, amount, { callback });
  },
);

When(
  'the partner requests {amount} from {party} as its access token runs out, to be told at {callback address}',
  async function (this: MomoWorld, amount: string, party: Party, callback: CallbackAddress) {
    return requestPaymentAsTokenRunsOut(this, party, amount, callback);
  },
);

When(
  'the partner requests {amount} from {party}, to be told at {callback address}, writing its header names in lower case',
  async function (this: MomoWorld, amount: string, party: Party, callback: CallbackAddress) {
    await requestPayment(this, party, amount, { callback, call: { headerNamesInLowerCase: true } });
  },
);

When(
  'the partner deposits {amount} to {party}, to be told at {callback address}',
  async function (this: MomoWorld, amount: string, party: Party, callback: CallbackAddress) {
    await deposit(this, party, amount, { callback });
  },
);

When(
  'the partner refunds that payment in full, to be told at {callback address}',
  async function (this: MomoWorld, callback: CallbackAddress) {
    await refundPayment(this, undefined, { callback });
  },
);

Given('its callback has told the partner it succeeded, and the partner read nothing', async function (this: MomoWorld) {
  await toldOfSuccessByCallback(this);
});

Then('it is not told again, though its address answered with no content', async function (this: MomoWorld) {
  await expectNotToldAgain(this);
});

Then("exactly one callback arrives, carrying the payment's/deposit's/refund's/transfer's status record", async function (this: MomoWorld) {
  await expectOneCallbackWithStatusRecord(this);
});

When(
  'the partner requests {amount} and then {amount} from {party}, to be told of both at one callback address',
  async function (this: MomoWorld, first: string, second: string, party: Party) {
    await requestPaymentsToOneAddress(this, party, [first, second]);
  },
);

Then('a callback arrives at that address for each payment, carrying its status record', async function (this: MomoWorld) {
  await expectCallbackForEachPayment(this);
});

When(
  'the partner asks for {amount} again under the same reference, to be told at an address of its own',
  async function (this: MomoWorld, amount: string) {
    await askAgainToBeToldElsewhere(this, amount);
  },
);

Then('the first is called back at its address, and the refused request at none', async function (this: MomoWorld) {
  await expectOnlyTheFirstAddressCalledBack(this);
});

Then('no callback arrives that nobody asked for', function (this: MomoWorld) {
  expectNoUnsolicitedCallbacks(this);
});

Then('it is refused because the callback host is not the one registered', function (this: MomoWorld) {
  expectCallbackHostRefused(this);
});

Then('it is refused, as invalid or for its host', function (this: MomoWorld) {
  expectUserinfoHostRefused(this);
});

Then(
  "a callback told again carries the payment's/deposit's/refund's/transfer's status record, if one is told again",
  async function (this: MomoWorld) {
    await expectRetryCarriesRecord(this);
  },
);

Then("every callback at the payment's address, however late, carries its status record", async function (this: MomoWorld) {
  await expectEveryCallbackAtItsAddressIsItsRecord(this);
});
