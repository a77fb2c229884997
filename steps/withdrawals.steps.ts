import { When } from '@cucumber/cucumber';
import type { Party } from './support/parties.ts';
import { askToWithdraw } from './support/transactions.ts';
import type { MomoWorld } from './support/world.ts';

// Requests to withdraw beyond the spec: a collection partner asks a customer to cash out from their wallet.

When('the partner asks {party} to withdraw {amount}', async function (this: MomoWorld, party: Party, amount: string) {
  await askToWithdraw(this, party, amount, 1);
});

When(
  'the partner asks {party} to withdraw {amount} through the second version of the operation',
  async function (this: MomoWorld, party: Party, amount: string) {
    await askToWithdraw(this, party, amount, 2);
  },
);
