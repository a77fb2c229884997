import { Given, Then, When } from '@cucumber/cucumber';
import type { Product } from '../core/products.ts';
import {
  askForToken,
  askForTokenWithWrongKey,
  askForTokenWithAnotherUsersKey,
  askForTokenWithKeyInOtherCase,
  askForTokenWithKeyEndChanged,
  askForTokenWithoutCredentials,
  askForTokenBeforeAnyKey,
  askForTokenWithScheme,
  expectTokenOpensAccountWithScheme,
  callThroughALifetime,
  expectNoCallRefused,
  expectNoToken,
  expectNotCached,
  expectTokenIssued,
  expectTokenOpensAccount,
  expectTokenRenewed,
  holdToken,
  presentExpiredToken,
  presentTokenUsedAllAlong,
  presentForgedToken,
  presentTokenTo,
} from './support/tokens.ts';
import type { MomoWorld } from './support/world.ts';

Given('the partner holds an access token that opens its account', async function (this: MomoWorld) {
  await holdToken(this);
});

When('the partner asks for an access token', async function (this: MomoWorld) {
  await askForToken(this);
});

When('the partner asks for an access token, writing its scheme {string}', async function (this: MomoWorld, scheme: string) {
  await askForTokenWithScheme(this, scheme);
});

Then("the access token opens the partner's account with its scheme written {string}", async function (this: MomoWorld, scheme: string) {
  await expectTokenOpensAccountWithScheme(this, scheme);
});

When('the partner asks for an access token with a wrong API key', async function (this: MomoWorld) {
  await askForTokenWithWrongKey(this);
});

When("the partner asks for an access token with another API user's API key", async function (this: MomoWorld) {
  await askForTokenWithAnotherUsersKey(this);
});

When('the partner asks for an access token with its API key with the case of its letters changed', async function (this: MomoWorld) {
  return askForTokenWithKeyInOtherCase(this);
});

When('the partner asks for an access token with its API key with its last character changed', async function (this: MomoWorld) {
  await askForTokenWithKeyEndChanged(this);
});

When('the partner asks for an access token for that API user with an empty key', async function (this: MomoWorld) {
  await askForTokenBeforeAnyKey(this);
});

When('the partner asks for an access token without credentials', async function (this: MomoWorld) {
  await askForTokenWithoutCredentials(this);
});

When('the partner asks for a {product} access token', async function (this: MomoWorld, product: Product) {
  await askForToken(this, { product });
});

When('the partner presents its access token to {product}', async function (this: MomoWorld, product: Product) {
  await presentTokenTo(this, product);
});

When('the partner presents an access token whose signature was altered', async function (this: MomoWorld) {
  await presentForgedToken(this);
});

When('the partner presents the access token after it has expired', async function (this: MomoWorld) {
  return presentExpiredToken(this);
});

When('the partner uses the access token until it has expired, and then once more', async function (this: MomoWorld) {
  return presentTokenUsedAllAlong(this);
});

When("the partner's client calls once a second for longer than a token lives", async function (this: MomoWorld) {
  return callThroughALifetime(this);
});

Then('an access token is issued', function (this: MomoWorld) {
  expectTokenIssued(this);
});

Then('no access token is issued', function (this: MomoWorld) {
  expectNoToken(this);
});

Then("the access token opens the partner's {product} account", async function (this: MomoWorld, product: Product) {
  await expectTokenOpensAccount(this, product);
});

Then('the answer tells caches not to keep it', function (this: MomoWorld) {
  expectNotCached(this);
});

Then("none of the client's calls was refused", function (this: MomoWorld) {
  expectNoCallRefused(this);
});

Then('the client renewed its access token on the way', function (this: MomoWorld) {
  expectTokenRenewed(this);
});
