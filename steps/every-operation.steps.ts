import { Given, Then, When } from '@cucumber/cucumber';
import {
  expectNotServedWithoutKey,
  expectServedAsUsual,
  makeCallWithMediaTypeInCapitals,
  makeCallWithBodyNotJson,
  makeCallWithoutContentType,
  expectRefusedAsUnauthorizedWhereValid,
  makeCallInForeignEnvironment,
  makeCallWithCredentialForToken,
  makeCallWithExpiredToken,
  makeCallWithForgedToken,
  makeCallWithTokenForCredential,
  makeCallNamingUnknown,
  makeCallNamingMalformed,
  makeCallWithoutKey,
  prepareCall,
} from './support/every-operation.ts';
import type { MomoWorld } from './support/world.ts';

// Rules of every operation (features/every-operation.feature, generated from harness/checks/every-operation.ts).

Given('the partner has what {spec call} needs', async function (this: MomoWorld, call: string) {
  await prepareCall(this, call);
});

When('the partner asks for it without a subscription key', async function (this: MomoWorld) {
  await makeCallWithoutKey(this);
});

When('the partner asks for it in a target environment it may not use', async function (this: MomoWorld) {
  await makeCallInForeignEnvironment(this);
});

When('the partner asks for it with an access token whose signature was altered', async function (this: MomoWorld) {
  await makeCallWithForgedToken(this);
});

When('the partner asks for {spec call} naming one that was never made', async function (this: MomoWorld, call: string) {
  await makeCallNamingUnknown(this, call);
});

When('the partner asks for {spec call} naming a reference that is not a UUID', async function (this: MomoWorld, call: string) {
  await makeCallNamingMalformed(this, call);
});

When("the partner asks for it with its access token in place of its API user's credentials", async function (this: MomoWorld) {
  await makeCallWithTokenForCredential(this);
});

When("the partner asks for it with its API user's credentials in place of an access token", async function (this: MomoWorld) {
  await makeCallWithCredentialForToken(this);
});

When('the partner asks for it with an access token that has expired', async function (this: MomoWorld) {
  return makeCallWithExpiredToken(this);
});

Then('it is not served, and where nothing else is wrong refused as unauthorized', function (this: MomoWorld) {
  expectRefusedAsUnauthorizedWhereValid(this);
});

Then('it is not served, by our reading as unauthorized', function (this: MomoWorld) {
  expectNotServedWithoutKey(this);
});

When('the partner asks for it with a body that is not JSON', async function (this: MomoWorld) {
  await makeCallWithBodyNotJson(this);
});

When('the partner asks for it without naming the media type of its body', async function (this: MomoWorld) {
  await makeCallWithoutContentType(this);
});

Then('it is served as if it had named it', function (this: MomoWorld) {
  expectServedAsUsual(this, 'without Content-Type');
});

When('the partner asks for it naming the media type of its body in capitals', async function (this: MomoWorld) {
  await makeCallWithMediaTypeInCapitals(this);
});

Then('it is served as if it had named it in lower case', function (this: MomoWorld) {
  expectServedAsUsual(this, 'with its media type in capitals');
});
