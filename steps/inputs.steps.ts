import { Given, Then, When } from '@cucumber/cucumber';
import {
  refundAnotherPayment,
  askWithInput,
  createAgainUnderItsReference,
  sendExactlyAgain,
  createAnother,
  createUnderEarlierExternalId,
  refundInParts,
  expectPartsRefusedOrAsAsked,
  createdAndEnded,
  createdAndEndedMeanwhile,
  createdUnderWay,
  underWayEnded,
  expectAcceptedAsValid,
  largeCreationEnded,
  expectRefusedOrKeptAsAsked,
  partialRefundEnded,
  expectEarlierUnchanged,
  expectRefusedAsDuplicateOfUpperCase,
  expectRefusedPreferablyAsInvalid,
  expectReferenceLeftFree,
  seeBalanceMoveWithFirst,
  createTwiceAtOnce,
  expectOneOfTwoTaken,
  expectEndedAndMovedOnce,
  createUnderOthersReference,
  expectRefusedAsOthersDuplicate,
} from './support/inputs.ts';
import type { Party } from './support/parties.ts';
import { expectMoneyMoved, expectMoneyMovedByEach } from './support/accounts.ts';
import { expectEarlierReadsAsAsked } from './support/status-records.ts';
import type { MomoWorld } from './support/world.ts';

// Every input of every creation (features/inputs.feature, generated from harness/checks/inputs.ts).

When('the partner asks for a {creation} with {input}', async function (this: MomoWorld, creation: string, input: string) {
  await askWithInput(this, creation, input);
});

When(
  'the partner asks for a {creation} with {input}, to be told at its callback address',
  async function (this: MomoWorld, creation: string, input: string) {
    await askWithInput(this, creation, input, true);
  },
);

When('the partner asks for a {creation} without {input}', async function (this: MomoWorld, creation: string, input: string) {
  await askWithInput(this, creation, input);
});

Then('it is refused as invalid, or its record reads back as asked', async function (this: MomoWorld) {
  await expectRefusedOrKeptAsAsked(this);
});

Then('it is refused, by our reading as invalid', function (this: MomoWorld) {
  expectRefusedPreferablyAsInvalid(this);
});

Then('a {creation} made right under the same reference id is accepted', async function (this: MomoWorld, creation: string) {
  await expectReferenceLeftFree(this, creation);
});

Then('it is accepted, and its record reads back as asked', async function (this: MomoWorld) {
  await expectAcceptedAsValid(this);
});

Given("the partner's {creation} with {party} has ended", async function (this: MomoWorld, creation: string, party: Party) {
  await createdAndEnded(this, creation, party);
});

When(
  'the partner asks for another {creation} under the external reference of the earlier one',
  async function (this: MomoWorld, creation: string) {
    await createUnderEarlierExternalId(this, creation);
  },
);

When('the partner refunds {amount} of that payment, then {amount} more', async function (this: MomoWorld, first: string, second: string) {
  await refundInParts(this, [first, second]);
});

Then('each refund is refused, or reads back as it was asked', async function (this: MomoWorld) {
  await expectPartsRefusedOrAsAsked(this);
});

When('the partner asks for another {creation}, with {party}', async function (this: MomoWorld, creation: string, party: Party) {
  await createAnother(this, creation, party);
});

When('the partner asks for another refund, of another payment', async function (this: MomoWorld) {
  await refundAnotherPayment(this);
});

Then('the earlier {creation} still reads as it was asked', async function (this: MomoWorld, _creation: string) {
  await expectEarlierReadsAsAsked(this);
});

When('the partner asks for a {creation} again under its reference id', async function (this: MomoWorld, creation: string) {
  await createAgainUnderItsReference(this, creation, false);
});

When('the partner sends the {creation} again exactly as it was', async function (this: MomoWorld, creation: string) {
  await sendExactlyAgain(this, creation);
});

When(
  'the partner asks for a {creation} with {party} twice at once, under one reference id',
  async function (this: MomoWorld, creation: string, party: Party) {
    await createTwiceAtOnce(this, creation, party);
  },
);

Then('one is accepted and the other refused as a duplicate', function (this: MomoWorld) {
  expectOneOfTwoTaken(this);
});

Then(
  'once it has ended, the balance has moved by what the {creation} called for, and no more',
  async function (this: MomoWorld, _creation: string) {
    await expectEndedAndMovedOnce(this);
  },
);

When("the other partner asks for a {creation} under the reference id of the partner's", async function (this: MomoWorld, creation: string) {
  await createUnderOthersReference(this, creation);
});

Then("it is refused, by our reading as a duplicate of the partner's", function (this: MomoWorld) {
  expectRefusedAsOthersDuplicate(this);
});

When(
  'the partner asks for a {creation} again under its reference id written in upper case',
  async function (this: MomoWorld, creation: string) {
    await createAgainUnderItsReference(this, creation, true);
  },
);

Then('it is refused, by our reading as a duplicate', function (this: MomoWorld) {
  expectRefusedAsDuplicateOfUpperCase(this);
});

Then('the earlier {creation} is unchanged', async function (this: MomoWorld, _creation: string) {
  await expectEarlierUnchanged(this);
});

Given(
  "the partner's {creation} with {party} has ended, telling its callback address",
  async function (this: MomoWorld, creation: string, party: Party) {
    await createdAndEnded(this, creation, party, { callback: true });
  },
);

When("the partner's {creation} of a large amount with {party} has ended", async function (this: MomoWorld, creation: string, party: Party) {
  await largeCreationEnded(this, creation, party);
});

Given("the partner's refund of {amount} of that payment has ended", async function (this: MomoWorld, amount: string) {
  await partialRefundEnded(this, amount);
});

When("the partner's {creation} with {party} is under way", async function (this: MomoWorld, creation: string, party: Party) {
  await createdUnderWay(this, creation, party);
});

When("the partner's {creation} with {party} has ended meanwhile", async function (this: MomoWorld, creation: string, party: Party) {
  await createdAndEndedMeanwhile(this, creation, party);
});

When("the partner's {creation} under way has ended too", async function (this: MomoWorld, _creation: string) {
  await underWayEnded(this);
});

Then('the balance has moved by what each {creation} called for', async function (this: MomoWorld, _creation: string) {
  await expectMoneyMovedByEach(this);
});

Then('the balance has moved by what the {creation} called for', async function (this: MomoWorld, _creation: string) {
  await expectMoneyMoved(this, 'last');
});

Then('the balance has moved by what the earlier {creation} called for, and no more', async function (this: MomoWorld, _creation: string) {
  await expectMoneyMoved(this, 'earlier');
});

Given('the partner has seen its balance move with a first {creation}', async function (this: MomoWorld, creation: string) {
  await seeBalanceMoveWithFirst(this, creation);
});
