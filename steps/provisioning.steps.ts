import { Given, Then, When } from '@cucumber/cucumber';
import type { Product } from '../core/products.ts';
import {
  createKey,
  createdKey,
  expectKeyGetsToken,
  createKeyForUnknownUser,
  expectApiUserKeepsItsKey,
  expectApiUserNotRegistered,
  expectApiUserReadsBack,
  haveRegisteredApiUser,
  readApiUser,
  readUnknownApiUser,
  registerApiUser,
  registerApiUserWithoutCallbackHost,
  registerApiUserWithNumericCallbackHost,
  registerSameApiUser,
  registerSameApiUserWithAnotherHost,
  expectApiUserUnchanged,
  registerAnotherApiUser,
  registerUserOfAnotherHost,
  expectOwnCallbackHostTaken,
  expectFirstApiUserReadsAsRegistered,
  createOwnKeyAgain,
} from './support/provisioning.ts';
import type { MomoWorld } from './support/world.ts';

// Partners, and the API users and keys they get through sandbox provisioning (§4.5).

Given('a partner subscribed to {product}', async function (this: MomoWorld, product: Product) {
  await this.actAs(product);
});

Given('the partner has registered an API user', async function (this: MomoWorld) {
  await haveRegisteredApiUser(this);
});

When('the partner registers an API user', async function (this: MomoWorld) {
  await registerApiUser(this);
});

When('the partner registers an API user with the same id', async function (this: MomoWorld) {
  await registerSameApiUser(this);
});

When('the partner registers an API user with the same id and another callback host', async function (this: MomoWorld) {
  await registerSameApiUserWithAnotherHost(this);
});

Then('the API user that was registered first is unchanged', async function (this: MomoWorld) {
  await expectApiUserUnchanged(this);
});

Given('another API user has been registered since, with another callback host', async function (this: MomoWorld) {
  await registerUserOfAnotherHost(this);
});

Then("it is accepted, as the live service holds a callback to the caller's own host", function (this: MomoWorld) {
  expectOwnCallbackHostTaken(this);
});

When('the partner registers another API user, with another callback host', async function (this: MomoWorld) {
  await registerAnotherApiUser(this);
});

Then('the API user registered first still reads as it was registered', async function (this: MomoWorld) {
  await expectFirstApiUserReadsAsRegistered(this);
});

When('the partner registers an API user with the id {string}', async function (this: MomoWorld, id: string) {
  await registerApiUser(this, id);
});

When('the partner registers an API user with its callback host given as a number, not a string', async function (this: MomoWorld) {
  await registerApiUserWithNumericCallbackHost(this);
});

When('the partner registers an API user without a callback host', async function (this: MomoWorld) {
  await registerApiUserWithoutCallbackHost(this);
});

When('the partner creates an API key for it', async function (this: MomoWorld) {
  await createKey(this);
});

Given('the partner has created an API key for it', async function (this: MomoWorld) {
  await createdKey(this);
});

When('the partner creates another API key for its own API user', async function (this: MomoWorld) {
  await createOwnKeyAgain(this);
});

When('the partner creates another API key for it', async function (this: MomoWorld) {
  await createKey(this);
});

Then('that key gets the API user an access token', async function (this: MomoWorld) {
  await expectKeyGetsToken(this);
});

When('the partner asks for a key for an API user that does not exist', async function (this: MomoWorld) {
  await createKeyForUnknownUser(this);
});

When('the partner asks for a key for the API user {string}', async function (this: MomoWorld, id: string) {
  await createKey(this, id);
});

When('the partner looks up an API user that does not exist', async function (this: MomoWorld) {
  await readUnknownApiUser(this);
});

When('the partner looks up the API user {string}', async function (this: MomoWorld, id: string) {
  await readApiUser(this, id);
});

Then('the API user reads back with its callback host', async function (this: MomoWorld) {
  await expectApiUserReadsBack(this);
});

Then('no API user was registered', async function (this: MomoWorld) {
  await expectApiUserNotRegistered(this);
});

Then('the API user reads back without giving its key away', async function (this: MomoWorld) {
  await expectApiUserKeepsItsKey(this);
});
