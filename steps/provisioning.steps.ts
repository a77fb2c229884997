import { Given, Then, When } from '@cucumber/cucumber';
import { randomUUID } from 'node:crypto';
import type { Product } from '../src/products.ts';
import { createKey, expectApiUserRecord, readApiUser, registerApiUser } from './support/provisioning.ts';
import type { MomoWorld } from './support/world.ts';

Given('a partner subscribed to {product}', async function (this: MomoWorld, product: Product) {
  await this.actAs(product);
});

Given('the partner has registered an API user', async function (this: MomoWorld) {
  await registerApiUser(this);
  this.expect({ status: 201, what: 'registering an API user' });
});

When('the partner registers an API user', async function (this: MomoWorld) {
  await registerApiUser(this);
});

When('the partner registers an API user with the same id', async function (this: MomoWorld) {
  await registerApiUser(this, this.registeredUserId);
});

When('the partner registers an API user with the id {string}', async function (this: MomoWorld, id: string) {
  await registerApiUser(this, id);
});

When('the partner creates an API key for it', async function (this: MomoWorld) {
  await createKey(this);
});

When('the partner asks for a key for an API user that does not exist', async function (this: MomoWorld) {
  await createKey(this, randomUUID());
});

When('the partner looks up an API user that does not exist', async function (this: MomoWorld) {
  await readApiUser(this, randomUUID());
});

Then('the API user reads back with its callback host', async function (this: MomoWorld) {
  await readApiUser(this);
  expectApiUserRecord(this);
});
