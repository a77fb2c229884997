import { Given, Then, When } from '@cucumber/cucumber';
import type { Product } from '../core/products.ts';
import {
  actAsNewPartner,
  checkAccountHolder,
  checkHolderId,
  expectActiveHolder,
  expectBalanceGrownBy,
  expectBalanceInCurrency,
  expectInactiveHolder,
  expectUnregisteredHolder,
  expectHolderAnswered,
  introduceOtherPartner,
  readBalance,
  readBalanceInCurrency,
  readBalanceInForbiddenEnvironment,
  rememberBalance,
  expectBalanceUnmoved,
} from './support/accounts.ts';
import type { Party } from './support/parties.ts';
import type { MomoWorld } from './support/world.ts';

// Partners with an API user of their own, balances, and the status of account holders.

Given('a new partner subscribed to {product}', async function (this: MomoWorld, product: Product) {
  await actAsNewPartner(this, product);
});

Given('another new partner subscribed to {product}', async function (this: MomoWorld, product: Product) {
  await introduceOtherPartner(this, product);
});

Then('its balance has not moved', async function (this: MomoWorld) {
  await expectBalanceUnmoved(this);
});

When('the partner reads its balance', async function (this: MomoWorld) {
  await readBalance(this);
});

Given('the partner has read its balance', async function (this: MomoWorld) {
  await rememberBalance(this);
});

When('the partner reads its balance in its own currency', async function (this: MomoWorld) {
  await readBalanceInCurrency(this);
});

When('the partner reads its balance in a target environment it may not use', async function (this: MomoWorld) {
  await readBalanceInForbiddenEnvironment(this);
});

Then("the balance is given in the partner's currency", function (this: MomoWorld) {
  expectBalanceInCurrency(this);
});

Then('the balance has grown by {amount}', async function (this: MomoWorld, amount: string) {
  await expectBalanceGrownBy(this, amount);
});

When('the partner checks whether {party} is an active account holder', async function (this: MomoWorld, party: Party) {
  await checkAccountHolder(this, party);
});

When('the partner checks {party}, naming the kind of id in upper case', async function (this: MomoWorld, party: Party) {
  await checkAccountHolder(this, party, 'MSISDN');
});

When(
  'the partner checks whether the holder of {id kind} {string} is an active account holder',
  async function (this: MomoWorld, idType: string, id: string) {
    await checkHolderId(this, idType, id);
  },
);

Then('the account holder is active', function (this: MomoWorld) {
  expectActiveHolder(this);
});

Then('the account holder is reported inactive', function (this: MomoWorld) {
  expectInactiveHolder(this);
});

Then('whether the holder is active is answered true or false', function (this: MomoWorld) {
  expectHolderAnswered(this);
});

Then('the account holder is reported not registered', function (this: MomoWorld) {
  expectUnregisteredHolder(this);
});
