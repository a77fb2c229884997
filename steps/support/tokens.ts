import { DeadlineExceededError } from '../../harness/eventually.ts';
import { AUTH_SCHEME_ANY_CASE } from '../../harness/checks/inputs.ts';
import { honouredFindings, notCachedFindings, tokenTypeFindings } from '../../harness/checks/credentials.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { sourceOfDifference } from '../../core/profiles.ts';
import { randomBytes } from 'node:crypto';
import { basicCredential, type ApiResponse } from '../../harness/client/momo-client.ts';
import type { Product } from '../../core/products.ts';
import type { ClientCall, MomoWorld } from './world.ts';
import { readAccount } from './accounts.ts';
import { registeredUser } from './provisioning.ts';
import { requestPayment } from './transactions.ts';
import type { CallbackAddress } from './callbacks.ts';
import type { Party } from './parties.ts';

/** What a partner does with its access tokens (§4.2 #1, §5.2–5.3, §7 rule 4, §8). */

/** The client sends no Authorization header when the credential is empty. */
const NO_CREDENTIAL = '';

/** Asks for an access token of a product (the partner's own by default) with a Basic credential (the partner's own by default). */
export async function askForToken(world: MomoWorld, options: { product?: Product; credential?: string } = {}): Promise<void> {
  const account = world.actor;
  const product = options.product ?? account.product;
  const asked = Date.now();
  const response = world.remember(await world.client.createAccessToken(product, options.credential ?? world.harness.basic(account)));
  // A token issued outside the cache may supersede the cache's (a service may revoke the one it replaced).
  if (response.status === 200) world.harness.noteIssued(product, account.userId, asked);
  const body = response.json as { access_token?: unknown; expires_in?: unknown } | undefined;
  if (response.status === 200 && typeof body?.access_token === 'string' && typeof body.expires_in === 'number') {
    world.accessToken = { account, accessToken: body.access_token, expiresIn: body.expires_in, receivedAt: Date.now() };
    world.harness.redactor.add(body.access_token, 'access token');
  }
}

export function askForTokenWithWrongKey(world: MomoWorld): Promise<void> {
  // 32 random hex characters, the form of a real key (real-api-notes), and not the partner's.
  return askForToken(world, { credential: basicCredential(world.actor.userId, randomBytes(16).toString('hex')) });
}

/**
 * The partner's API user id with the key of another API user of its product, a real one (§5 rule 2: the credential is
 * the API user ID and its API key, together): a service that looks a key up on its own, or a user by its key, takes it.
 */
export async function askForTokenWithAnotherUsersKey(world: MomoWorld): Promise<void> {
  const other = await world.harness.provision(world.actor.product);
  await askForToken(world, { credential: basicCredential(world.actor.userId, other.apiKey) });
}

/**
 * The partner's own API key with the case of each letter changed: another string, so another key (§5 rule 2: the
 * credential is the API user ID and its API key). A key without letters has no other case: the scenario is skipped.
 */
export async function askForTokenWithKeyInOtherCase(world: MomoWorld): Promise<string | undefined> {
  const { userId, apiKey } = world.actor;
  const swapped = apiKey.replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
  if (swapped === apiKey) {
    world.log('The API key has no letters, so no other case: skipped.');
    return 'skipped';
  }
  await askForToken(world, { credential: basicCredential(userId, swapped) });
  return undefined;
}

/**
 * The partner's own API key with its last character changed (to another of the same kind, digit or letter): a key that
 * agrees with the right one but for its end, which a server comparing only a prefix takes.
 */
export async function askForTokenWithKeyEndChanged(world: MomoWorld): Promise<void> {
  const { userId, apiKey } = world.actor;
  const last = apiKey.at(-1) ?? '';
  await askForToken(world, {
    credential: basicCredential(userId, `${apiKey.slice(0, -1)}${otherOfItsKind(last, /^[0-9a-f]+$/i.test(apiKey))}`),
  });
}

/** Another character of the same kind: a digit for a digit, a letter of the same case (a hex one in a hex key). */
function otherOfItsKind(c: string, hex: boolean): string {
  if (/[0-9]/.test(c)) return c === '9' ? '8' : String(Number(c) + 1);
  const lastLetter = hex ? 'f' : 'z';
  if (/[a-z]/.test(c)) return c === lastLetter ? String.fromCharCode(c.charCodeAt(0) - 1) : String.fromCharCode(c.charCodeAt(0) + 1);
  if (/[A-Z]/.test(c))
    return c === lastLetter.toUpperCase() ? String.fromCharCode(c.charCodeAt(0) - 1) : String.fromCharCode(c.charCodeAt(0) + 1);
  return c === '0' ? '1' : '0';
}

/** An access token for the API user this scenario registered, which has no key yet: its id with an empty key. */
export function askForTokenBeforeAnyKey(world: MomoWorld): Promise<void> {
  return askForToken(world, { credential: basicCredential(registeredUser(world), '') });
}

export function askForTokenWithoutCredentials(world: MomoWorld): Promise<void> {
  return askForToken(world, { credential: NO_CREDENTIAL });
}

/**
 * The token is the access-token record of §2.6 (the schema: a JWT and a whole, positive expires_in), and its
 * token_type is the profile's, in any case (RFC 6749 §5.1): "Bearer" by our reading of §5.3, the literal
 * "access_token" on the live sandbox (tokenType in core/profiles.ts).
 */
export function expectTokenIssued(world: MomoWorld): void {
  const what = 'an access token is issued to the API user of the product';
  const response = world.expect({ status: 200, what });
  const { token_type: tokenType } = response.json as { token_type: unknown };
  world.check('token-type', response, what, tokenTypeFindings(tokenType, world.harness.behaviour.tokenType, world.config.profile));
}

/**
 * What a token request refused for its credential gets, where the live answer to that credential was not recorded: the
 * spec's 401; on mtn-sandbox the live service's 500 for a failed login as well (tokenFailureStatus in core/profiles.ts).
 */
export function refusedTokenStatuses(world: MomoWorld): number | number[] {
  return world.config.profile === 'mtn-sandbox' ? [401, world.harness.behaviour.tokenFailureStatus] : 401;
}

/**
 * A failed token request: 401 with {error}, an error code, by §7 rule 4 (whatever the code: the spec names none).
 * The live sandbox answers a wrong API user or key with 500 {"error":"login_failed"} (tokenFailureStatus in
 * core/profiles.ts); what it answers a request without any credential was not recorded, so on mtn-sandbox that
 * takes the spec's 401 as well as the live 500.
 */
export function expectNoToken(world: MomoWorld): void {
  const { profile } = world.config;
  const sent = world.response?.exchange?.request.headers;
  const credential = sent && Object.keys(sent).some((name) => name.toLowerCase() === 'authorization') ? 'wrong' : 'none';
  const what = `a token request ${credential === 'none' ? 'without a credential' : 'with a wrong API key'} is refused`;
  if (profile === 'mtn-sandbox' && credential === 'wrong') {
    world.expect({
      status: world.harness.behaviour.tokenFailureStatus,
      code: 'login_failed',
      source: sourceOfDifference('tokenFailureStatus', profile),
      what,
    });
    return;
  }
  const source = sourceOfDifference('tokenFailureStatus', 'spec');
  world.expect({ status: refusedTokenStatuses(world), source, what });
}

/** An access token asked for with the Basic credential's scheme written another way ("basic"). */
export async function askForTokenWithScheme(world: MomoWorld, scheme: string): Promise<void> {
  world.rule = AUTH_SCHEME_ANY_CASE;
  await askForToken(world, { credential: world.harness.basic(world.actor).replace(/^Basic/, scheme) });
}

/** The token just issued opens the partner's account with the Bearer scheme written another way ("bearer"). */
export async function expectTokenOpensAccountWithScheme(world: MomoWorld, scheme: string): Promise<void> {
  const token = issuedToken(world);
  world.expect(
    { status: 200, source: AUTH_SCHEME_ANY_CASE, what: `the access token opens the account with its scheme written "${scheme}"` },
    await readAccount(world, token.account.product, `${scheme} ${token.accessToken}`),
  );
}

/** The token just issued opens its product's simplest business call (readAccount). */
export async function expectTokenOpensAccount(world: MomoWorld, product: Product): Promise<void> {
  const token = issuedToken(world);
  world.expect(
    { status: 200, what: `the access token opens the ${product} account it was issued for` },
    await readAccount(world, product, `Bearer ${token.accessToken}`),
  );
}

/**
 * The answer must forbid caches to keep the token. §5.3 makes these OAuth Bearer tokens, and OAuth
 * (RFC 6749 §5.1) requires "Cache-Control: no-store" on every answer that carries a token; the live
 * sandbox sends it too (real-api-notes).
 */
export function expectNotCached(world: MomoWorld): void {
  const what = 'an access token is issued, and not to be kept by caches';
  const response = world.expect({ status: 200, what });
  world.check('token-not-cached', response, what, notCachedFindings(response));
}

/** Presents the partner's own (cached) access token to another product's simplest business call. */
export async function presentTokenTo(world: MomoWorld, product: Product): Promise<void> {
  world.rule = REFUSALS['token-product'];
  world.remember(await readAccount(world, product, await world.bearer(), { renew: false }));
}

/** A Bearer credential of the access token with one character of its signature changed. */
export function forgedTokenOf(bearer: string): string {
  const [header, payload, signature] = bearer.slice('Bearer '.length).split('.');
  if (!header || !payload || !signature)
    throw new Error('The access token is not a JWT of three parts, so its signature cannot be altered.');
  // The first character, not the last: the last one of a base64url signature may carry only padding bits.
  const forged = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
  return `Bearer ${header}.${payload}.${forged}`;
}

/** Presents the partner's access token with one character of its signature changed. */
export async function presentForgedToken(world: MomoWorld): Promise<void> {
  world.remember(await readAccount(world, world.actor.product, forgedTokenOf(await world.bearer())));
}

/** Gets an access token of the partner's own, and sees it open the partner's account. */
export async function holdToken(world: MomoWorld): Promise<void> {
  await askForToken(world);
  expectTokenIssued(world);
  await expectTokenOpensAccount(world, world.actor.product);
}

/**
 * Waits until the held token's expires_in has passed, then presents it until it is refused, for a short while: a
 * server may allow for clock skew when it checks a token's expiry, as JWT libraries do, so one that honours a token a
 * few seconds past its expires_in is not failed for it; one that still honours it after that has not expired it.
 * A lifetime longer than the slow deadline (the live sandbox's 3600 s) cannot be waited for: the scenario is
 * skipped, saying so.
 */
const JWT_SECOND = 1_000;
/** How long past expires_in a token may still be honoured: a few seconds of clock skew, more for a long-lived token. */
const expiryLeewayMs = (lifetimeSeconds: number) => 5_000 + lifetimeSeconds * 100;

export async function presentExpiredToken(world: MomoWorld): Promise<string | undefined> {
  const token = issuedToken(world);
  return presentOnceExpired(world, token, () => readAccount(world, token.account.product, `Bearer ${token.accessToken}`));
}

/**
 * The partner uses its token for its product's simplest call (at most twice a second) through its life, then presents it
 * once expired: a token is valid for expires_in seconds from its issue (§2.6), however often it is used. The uses
 * within its life are not judged here (every other scenario does).
 */
export async function presentTokenUsedAllAlong(world: MomoWorld): Promise<string | undefined> {
  const token = issuedToken(world);
  const present = () => readAccount(world, token.account.product, `Bearer ${token.accessToken}`);
  const expiresAt = token.receivedAt + token.expiresIn * 1000;
  if (expiresAt + JWT_SECOND - Date.now() > world.config.slowOutcomeTimeoutMs)
    return skipLongLifetime(world, token.expiresIn, 'using an access token until it expires');
  await world
    .eventually(
      `the access token used until its expires_in of ${token.expiresIn} s has passed`,
      async () => {
        if (Date.now() >= expiresAt) return true;
        await present();
        return undefined;
      },
      { slow: true, readsTarget: true },
    )
    .catch((error: unknown) => {
      // A slow last use ran past the deadline: the token has been used all along either way, and is presented next.
      if (!(error instanceof DeadlineExceededError)) throw error;
    });
  return presentOnceExpired(world, token, present);
}

/**
 * Waits until a token's expires_in has passed, then makes the call with it until it is refused or the leeway is over:
 * the last answer is what the Then step judges. A lifetime the run cannot wait for skips the scenario, saying so.
 */
export async function presentOnceExpired(
  world: MomoWorld,
  token: { expiresIn: number; receivedAt: number },
  present: () => Promise<ApiResponse>,
): Promise<string | undefined> {
  // JWT expiry is in whole seconds (RFC 7519 NumericDate), so a token may live up to a second past expires_in.
  const expiresAt = token.receivedAt + token.expiresIn * 1000 + JWT_SECOND;
  const leewayMs = expiryLeewayMs(token.expiresIn);
  if (expiresAt - Date.now() > world.config.slowOutcomeTimeoutMs) {
    return skipLongLifetime(world, token.expiresIn, 'waiting for an access token to expire');
  }
  await world.eventually(
    `the access token's expires_in of ${token.expiresIn} s has passed`,
    async () => (Date.now() >= expiresAt ? true : undefined),
    { slow: true },
  );
  const refusedBy = expiresAt + leewayMs;
  await world.eventually(
    `the access token refused within ${leewayMs} ms past its expires_in`,
    async () => {
      const response = world.remember(await present());
      return response.status < 200 || response.status > 299 || Date.now() >= refusedBy ? true : undefined;
    },
    { slow: true, readsTarget: true },
  );
  return undefined;
}

/**
 * How long before its expires_in the partner uses its token to ask for a payment decided after a while: long enough
 * that a server whose expiry rounds down, or whose clock is a little ahead, still takes the token; short enough that
 * a payment decided after a while (the embedded sandbox's 1.5 s, an independent server's 2 s) ends once it has expired.
 */
const ASK_BEFORE_EXPIRY_MS = 1_500;

/**
 * The partner asks for a payment with the token it holds as the token runs out, to be told at its callback address:
 * what it asked for is the transaction's, not the token's (§6: a callback is sent to the address the creation gave),
 * so the callback comes even though the token has expired when the payment ends. The token is the one the partner's
 * client holds (no other is issued meanwhile, which a service may take to revoke it). A lifetime the run cannot wait
 * for skips the scenario, saying so.
 */
export async function requestPaymentAsTokenRunsOut(
  world: MomoWorld,
  party: Party,
  amount: string,
  callback: CallbackAddress,
): Promise<string | undefined> {
  const bearer = await world.bearer();
  const held = world.harness.tokens.heldAs(bearer.replace(/^Bearer /, ''));
  if (!held) throw new Error("The partner's access token is not the one its client holds.");
  const lifetimeSeconds = Math.round((held.expiresAt - held.issuedAt) / 1000);
  const askAt = held.expiresAt - ASK_BEFORE_EXPIRY_MS;
  if (askAt - Date.now() > world.config.slowOutcomeTimeoutMs)
    return skipLongLifetime(world, lifetimeSeconds, 'asking for a payment as an access token runs out');
  await world.eventually(
    `${ASK_BEFORE_EXPIRY_MS} ms before the access token's expires_in of ${lifetimeSeconds} s`,
    async () => (Date.now() >= askAt ? true : undefined),
    { slow: true },
  );
  await requestPayment(world, party, amount, { callback, call: { authorization: bearer } });
  return undefined;
}

const CALL_EVERY_MS = 1000;

/**
 * A client that takes its token from the harness's cache (fetched once, renewed before it expires)
 * makes its product's simplest business call once a second for one token lifetime and a second more.
 */
export async function callThroughALifetime(world: MomoWorld): Promise<string | undefined> {
  const account = world.actor;
  // The lifetime, as the client learns it: from a token answer.
  await askForToken(world);
  expectTokenIssued(world);
  const lifetimeSeconds = issuedToken(world).expiresIn;
  const periodMs = lifetimeSeconds * 1000 + CALL_EVERY_MS;
  if (periodMs + 2 * CALL_EVERY_MS > world.config.slowOutcomeTimeoutMs) {
    return skipLongLifetime(world, lifetimeSeconds, 'calling for longer than a token lives');
  }
  const calls: ClientCall[] = [];
  world.clientCalls = calls;
  const started = Date.now();
  let lastCallAt = Number.NEGATIVE_INFINITY;
  await world.eventually(
    `a call each second for ${periodMs} ms`,
    async () => {
      if (Date.now() - lastCallAt >= CALL_EVERY_MS) {
        lastCallAt = Date.now();
        const credential = await world.bearer(account);
        calls.push({ atMs: lastCallAt - started, credential, response: await readAccount(world, account.product, credential) });
      }
      return Date.now() - started >= periodMs ? calls : undefined;
    },
    { slow: true },
  );
  return undefined;
}

export function expectNoCallRefused(world: MomoWorld): void {
  const calls = clientCalls(world);
  const findings = honouredFindings(calls.map((c) => ({ atMs: c.atMs, status: c.response.status })));
  const shown = calls.find((c) => c.response.status >= 400 && c.response.status < 500)?.response ?? calls.at(-1)!.response;
  world.check('token-honoured-until-expiry', shown, 'a client that renews its token before expires_in passes is never refused', findings);
}

export function expectTokenRenewed(world: MomoWorld): void {
  const calls = clientCalls(world);
  const tokens = new Set(calls.map((c) => c.credential)).size;
  if (tokens < 2) {
    throw new Error(
      `The token cache (harness/client/token-cache.ts) used ${tokens} access token for ${calls.length} calls over ${calls.at(-1)?.atMs ?? 0} ms, longer than one lifetime: it did not renew its token.`,
    );
  }
}

function skipLongLifetime(world: MomoWorld, lifetimeSeconds: number, what: string): string {
  world.log(
    `Skipped: the target's access tokens live ${lifetimeSeconds} s, longer than the slow deadline of ${world.config.slowOutcomeTimeoutMs / 1000} s (MOMO_SLOW_OUTCOME_TIMEOUT_MS), so ${what} cannot be done within this run.`,
  );
  return 'skipped';
}

function issuedToken(world: MomoWorld) {
  if (!world.accessToken) throw new Error('No access token was issued in this scenario.');
  return world.accessToken;
}

function clientCalls(world: MomoWorld): ClientCall[] {
  if (!world.clientCalls) throw new Error('No client calls were made in this scenario.');
  return world.clientCalls;
}
