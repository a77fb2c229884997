import { Given, When } from '@cucumber/cucumber';
import type { CallbackAddress } from './support/callbacks.ts';
import type { Party } from './support/parties.ts';
import { depositTheSecondWay, refundTheSecondWay, transfer, transferAgain } from './support/transactions.ts';
import type { MomoWorld } from './support/world.ts';

// Paying out beyond the spec: transfers under disbursement and remittance, and the second version of deposits and refunds.

When('the partner transfers {amount} to {party}', async function (this: MomoWorld, amount: string, party: Party) {
  await transfer(this, party, amount);
});

Given('the partner has transferred {amount} to {party}', async function (this: MomoWorld, amount: string, party: Party) {
  this.expect({ status: 202, what: 'a transfer is accepted' }, await transfer(this, party, amount));
});

When(
  'the partner transfers {amount} to {party} again, with the same reference',
  async function (this: MomoWorld, amount: string, party: Party) {
    await transferAgain(this, party, amount);
  },
);

When(
  'the partner transfers {amount} to {party}, to be told at {callback address}',
  async function (this: MomoWorld, amount: string, party: Party, callback: CallbackAddress) {
    await transfer(this, party, amount, { callback });
  },
);

When(
  'the partner deposits {amount} to {party} through the second version of the operation',
  async function (this: MomoWorld, amount: string, party: Party) {
    await depositTheSecondWay(this, party, amount);
  },
);

When('the partner refunds that payment in full through the second version of the operation', async function (this: MomoWorld) {
  await refundTheSecondWay(this);
});
