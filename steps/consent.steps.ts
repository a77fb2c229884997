import { Given, Then, When } from '@cucumber/cucumber';
import {
  askForConsent,
  askForUnofferedScope,
  askForUnnamedAccessType,
  expectAccessTypeRefused,
  expectAlreadyRedeemed,
  expectUnofferedScopeRefused,
  expectBasicInfo,
  expectConsentCallback,
  expectConsentTokenLifetime,
  expectPending,
  haveAskedForConsent,
  haveAskedForConsentToTwoScopes,
  expectNoConsentToken,
  letConsentTokenAge,
  letConsentRequestAge,
  expectWrongKeyRefusedAsFailedTokenRequest,
  redeemWithWrongKey,
  holdConsentToken,
  lookUpBasicInfo,
  readUserInfo,
  readUserInfoWithAccessToken,
  redeemAtOnce,
  redeemConsent,
  redeemOnceConsented,
  refreshConsentToken,
  expectConsentTokenNotCached,
  refreshWithoutCredential,
  expectRedeemedOnCallback,
  expectRefreshWithoutCredentialRefused,
  requestPaymentWithConsentToken,
  redeemWithOtherGrant,
  expectGrantRefused,
  askAgainForAnotherScope,
  expectConsentEndsWhenItDid,
  beGivenAnotherCustomersConsent,
  expectOwnCustomerRead,
  expectRefreshedAgainAtOnce,
  pollAtIntervalUntilGranted,
} from './support/consent.ts';
import { expectRefusedConsentSilent } from './support/callbacks.ts';
import type { MomoWorld } from './support/world.ts';

Given('the partner completes consent within its own product', function (this: MomoWorld) {
  this.consentWithinProduct = true;
});

Given('the partner has asked a customer for consent to their profile', async function (this: MomoWorld) {
  await haveAskedForConsent(this);
});

Given('the partner has asked a customer for consent to their profile and their identity', async function (this: MomoWorld) {
  await haveAskedForConsentToTwoScopes(this);
});

When('the partner redeems the consent with a wrong API key', async function (this: MomoWorld) {
  await redeemWithWrongKey(this);
});

Then('no consent token is given', function (this: MomoWorld) {
  expectNoConsentToken(this);
});

Then('the wrong key is refused as a failed token request', function (this: MomoWorld) {
  return expectWrongKeyRefusedAsFailedTokenRequest(this);
});

Given('the partner has asked a customer for consent to their profile, for online access', async function (this: MomoWorld) {
  await haveAskedForConsent(this, { accessType: 'online' });
});

Given(
  'the partner has asked a customer for consent to their profile, valid for {int} seconds',
  async function (this: MomoWorld, seconds: number) {
    await haveAskedForConsent(this, { validForSeconds: seconds });
  },
);

When('the partner asks a customer for consent to their profile, to be told at its callback address', async function (this: MomoWorld) {
  await haveAskedForConsent(this, { callback: true });
});

When(
  'the partner asks a customer for consent to their profile, to be told at another host than it registered',
  async function (this: MomoWorld) {
    await askForConsent(this, { callback: 'another host' });
  },
);

Given("the partner holds a consent token for a customer's profile", async function (this: MomoWorld) {
  await holdConsentToken(this);
});

When(
  'the partner asks a customer for consent to their profile, for an access type the spec does not name',
  async function (this: MomoWorld) {
    await askForUnnamedAccessType(this);
  },
);

Then('the access type is refused, by our reading', function (this: MomoWorld) {
  expectAccessTypeRefused(this);
});

When('the partner asks a customer for consent to a scope the service does not offer', async function (this: MomoWorld) {
  await askForUnofferedScope(this);
});

When(
  'the partner asks a customer for consent to a scope the service does not offer, to be told at its callback address',
  async function (this: MomoWorld) {
    await askForUnofferedScope(this, true);
  },
);

Then("nothing arrives at the consent request's callback address", async function (this: MomoWorld) {
  await expectRefusedConsentSilent(this);
});

When('the partner redeems the consent at once', async function (this: MomoWorld) {
  await redeemAtOnce(this);
});

When('the partner redeems the consent once the customer has consented', async function (this: MomoWorld) {
  await redeemOnceConsented(this);
});

When('the partner redeems the same consent again', async function (this: MomoWorld) {
  await redeemConsent(this);
});

Given("the partner has since been given another customer's consent to their profile", async function (this: MomoWorld) {
  await beGivenAnotherCustomersConsent(this);
});

Then('the consent token reads the same customer as before', async function (this: MomoWorld) {
  await expectOwnCustomerRead(this);
});

Then('the answer tells caches not to keep it, by our reading', function (this: MomoWorld) {
  expectConsentTokenNotCached(this);
});

When('the partner refreshes the consent token again without its credential', async function (this: MomoWorld) {
  await refreshWithoutCredential(this);
});

Then('it is refused as a failed token request', function (this: MomoWorld) {
  expectRefreshWithoutCredentialRefused(this);
});

Given('the partner has refreshed the consent token', async function (this: MomoWorld) {
  await refreshConsentToken(this, { atOnce: true });
});

When('the partner refreshes the consent token', async function (this: MomoWorld) {
  return refreshConsentToken(this);
});

When("the partner asks for a customer's user information with its access token", async function (this: MomoWorld) {
  await readUserInfoWithAccessToken(this);
});

When("the partner looks up a customer's basic information", async function (this: MomoWorld) {
  await lookUpBasicInfo(this);
});

Then('the customer has not answered yet', function (this: MomoWorld) {
  expectPending(this);
});

Then(
  'polling at the announced interval, the partner is given the consent token without being told to slow down',
  async function (this: MomoWorld) {
    await pollAtIntervalUntilGranted(this);
  },
);

Given("the partner has read the customer's user information with it", async function (this: MomoWorld) {
  await readUserInfo(this);
});

When("some seconds of the consent token's life have passed", async function (this: MomoWorld) {
  await letConsentTokenAge(this);
});

When("much of the consent request's life has passed", async function (this: MomoWorld) {
  await letConsentRequestAge(this);
});

Then("the partner reads the customer's user information with the consent token", async function (this: MomoWorld) {
  await readUserInfo(this);
});

Then('the consent redeemed at once on it gives its token, by our reading', async function (this: MomoWorld) {
  await expectRedeemedOnCallback(this);
});

Then('a callback arrives at the callback address once the customer has answered', async function (this: MomoWorld) {
  await expectConsentCallback(this);
});

Then('the consent token is valid for an hour', function (this: MomoWorld) {
  expectConsentTokenLifetime(this, 3600);
});

Then('the scope is refused as not offered', function (this: MomoWorld) {
  expectUnofferedScopeRefused(this);
});

Then('the consent is refused as already redeemed', function (this: MomoWorld) {
  expectAlreadyRedeemed(this);
});

Then("the customer's basic information is returned", function (this: MomoWorld) {
  expectBasicInfo(this);
});

When('the partner asks a customer to pay with the consent token as its credential', async function (this: MomoWorld) {
  await requestPaymentWithConsentToken(this);
});

When('the partner redeems the consent with another grant type', async function (this: MomoWorld) {
  await redeemWithOtherGrant(this);
});

Then('no consent token is issued for that grant', function (this: MomoWorld) {
  expectGrantRefused(this);
});

Then('the consent still ends when it did', function (this: MomoWorld) {
  expectConsentEndsWhenItDid(this);
});

Then('the consent is refreshed again at once with the refresh token the refresh gave', async function (this: MomoWorld) {
  await expectRefreshedAgainAtOnce(this);
});

Given('the partner has since asked the customer for consent to another scope', async function (this: MomoWorld) {
  await askAgainForAnotherScope(this);
});
