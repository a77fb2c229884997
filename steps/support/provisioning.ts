import { basicCredential } from '../../harness/client/momo-client.ts';
import { apiUserUnchangedFindings, callbackHostFindings, targetEnvironmentFindings } from '../../harness/checks/transactions.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { acceptedAs } from '../../harness/client/momo-client.ts';
import { randomUUID } from 'node:crypto';
import type { MomoWorld } from './world.ts';

/** What a partner does to get sandbox credentials (§4.5, §5.6). */
export async function registerApiUser(world: MomoWorld, userId?: string): Promise<void> {
  world.registeredUserId = userId ?? randomUUID();
  const extra = userId === undefined ? {} : { reusesReference: true };
  world.remember(await world.client.createApiUser(world.actor.product, world.registeredUserId, world.config.callbackHost, extra));
}

/** Registers an API user, which must be created: the premise of scenarios about what comes next. */
export async function haveRegisteredApiUser(world: MomoWorld): Promise<void> {
  await registerApiUser(world);
  world.expect({ status: 201, what: 'registering an API user' });
}

/** Registers an API user again, with the id of the one this scenario registered. */
export async function registerSameApiUser(world: MomoWorld): Promise<void> {
  await registerApiUser(world, registeredUser(world));
}

/** The host a second registration under a used id names: another than the run's, so that a refused one that wrote it shows. */
const ANOTHER_CALLBACK_HOST = 'partner-two.example.com';

/** Registers an API user again under the id of the one this scenario registered, with another callback host. */
export async function registerSameApiUserWithAnotherHost(world: MomoWorld): Promise<void> {
  const userId = registeredUser(world);
  world.remember(await world.client.createApiUser(world.actor.product, userId, ANOTHER_CALLBACK_HOST, { reusesReference: true }));
}

/**
 * Another API user of the partner, under an id of its own and with another callback host (§4.5 #14: 201): the one the
 * scenario registered first stays the one its later steps name.
 */
export async function registerAnotherApiUser(world: MomoWorld): Promise<void> {
  const first = registeredUser(world);
  await registerUserOfAnotherHost(world);
  world.registeredUserId = first;
}

/**
 * An API user of another partner, registered after the partner's own with another callback host: the host a callback
 * address is held to is the calling API user's own (real-api-notes, callbacks, observed), not the latest registered.
 */
export async function registerUserOfAnotherHost(world: MomoWorld): Promise<void> {
  const response = world.remember(await world.client.createApiUser(world.actor.product, randomUUID(), ANOTHER_CALLBACK_HOST));
  world.expect({ status: 201, what: 'another API user, with another callback host, is created' }, response);
}

/** The caller's own callback host taken after another API user registered another (observed: callback-host-own-taken). */
export function expectOwnCallbackHostTaken(world: MomoWorld): void {
  world.expect({
    status: 202,
    source: REFUSALS['callback-host-own-taken'],
    what: "a callback address on the caller's own host is taken after another API user registered another host",
  });
}

/**
 * The API user registered first, read after the partner's next one: §4.5 #16 reads the API user its path names, so it
 * shows its own callback host, not the latest registration's (definite: §4.5 #16 plus the record naming the host,
 * observed); and, where the record names one, the sandbox target environment (observed).
 */
export async function expectFirstApiUserReadsAsRegistered(world: MomoWorld): Promise<void> {
  await readApiUser(world);
  const what = "the API user registered first reads back with its own callback host after the partner's next one";
  const response = world.expect({ status: 200, what: 'the API user registered first reads back' });
  const record = response.json as { providerCallbackHost?: unknown; targetEnvironment?: unknown } | undefined;
  world.check('record-echoes-request', response, what, [
    ...callbackHostFindings(record, world.config.callbackHost, ANOTHER_CALLBACK_HOST),
    ...targetEnvironmentFindings(record),
  ]);
}

/** After a refused second registration, the first API user is as it was: its callback host, and its key still gets a token. */
export async function expectApiUserUnchanged(world: MomoWorld): Promise<void> {
  await readApiUser(world);
  const what = 'a registration refused as a duplicate changed nothing of the API user';
  const response = world.expect({ status: 200, what: 'the API user still reads back' });
  world.check(
    'refusal-changes-nothing',
    response,
    what,
    apiUserUnchangedFindings(response.json as { providerCallbackHost?: unknown }, world.config.callbackHost),
  );
}

/** Registers an API user whose providerCallbackHost is a JSON number, not the string §2.12 gives. */
export async function registerApiUserWithNumericCallbackHost(world: MomoWorld): Promise<void> {
  world.rule = REFUSALS['callback-host-string'];
  const userId = randomUUID();
  world.registeredUserId = userId;
  world.remember(
    await world.client.createApiUser(world.actor.product, userId, world.config.callbackHost, { body: { providerCallbackHost: 1270001 } }),
  );
}

/** Registers an API user whose body has no providerCallbackHost (§2.12: the field is the whole body). */
export async function registerApiUserWithoutCallbackHost(world: MomoWorld): Promise<void> {
  // §2.12 names the field, not that it is required: the live sandbox's 400 is an observation.
  world.rule = REFUSALS['callback-host-required'];
  const userId = randomUUID();
  world.registeredUserId = userId;
  world.remember(await world.client.createApiUser(world.actor.product, userId, world.config.callbackHost, { body: {} }));
}

export async function createKey(world: MomoWorld, userId = registeredUser(world)): Promise<void> {
  const response = world.remember(await world.client.createApiKey(world.actor.product, userId));
  const apiKey = (response.json as { apiKey?: unknown } | undefined)?.apiKey;
  if (typeof apiKey === 'string') world.harness.redactor.addBasicCredential(userId, apiKey, world.actor.product);
}

/** A key made for the API user this scenario registered (§4.5 #15: 201 with the key). */
export async function createdKey(world: MomoWorld): Promise<void> {
  await createKey(world);
  world.expect({ status: 201, what: 'an API key is created' });
}

/**
 * The key the last answer gave gets its API user an access token (§5.2: the credential is the API user id and its
 * key): a key given out that opens nothing was not made, whether it was the user's first or a later one (§4.5 #15
 * answers a second request for a key as the first, 201).
 */
export async function expectKeyGetsToken(world: MomoWorld): Promise<void> {
  const apiKey = (world.response?.json as { apiKey?: unknown } | undefined)?.apiKey;
  if (typeof apiKey !== 'string') throw new Error('No API key was given in the last answer: see the step before.');
  const userId = registeredUser(world);
  world.remember(await world.client.createAccessToken(world.actor.product, basicCredential(userId, apiKey)));
  const token = (world.response?.json as { access_token?: unknown } | undefined)?.access_token;
  if (typeof token === 'string') world.harness.redactor.add(token, 'access token');
  world.expect({ status: 200, what: 'the key just made gets its API user an access token' });
}

/** Asks for a key for an API user id no one registered. */
export function createKeyForUnknownUser(world: MomoWorld): Promise<void> {
  return createKey(world, randomUUID());
}

export async function readApiUser(world: MomoWorld, userId = registeredUser(world)): Promise<void> {
  world.remember(await world.client.getApiUser(world.actor.product, userId));
}

/** Looks up an API user id no one registered. */
export function readUnknownApiUser(world: MomoWorld): Promise<void> {
  return readApiUser(world, randomUUID());
}

/**
 * Reads back the API user this scenario registered. The spec does not show the record (§4.5 #16); where it names
 * providerCallbackHost, that is the host it was registered with (§2.12), and the live sandbox's names it (observed).
 */
export async function expectApiUserReadsBack(world: MomoWorld): Promise<void> {
  await readApiUser(world);
  const what = 'an API user reads back with its callback host';
  const response = world.expect({ status: 200, what });
  world.check(
    'record-echoes-request',
    response,
    what,
    callbackHostFindings(response.json as { providerCallbackHost?: unknown } | undefined, world.config.callbackHost),
  );
}

/**
 * Reads back the API user after its key was made: the record, whatever it holds, must not give the key away
 * (secret-not-disclosed, which the harness checks on every answer). Records are open, so this is the one guard
 * against a record that discloses the key it should not.
 */
export async function expectApiUserKeepsItsKey(world: MomoWorld): Promise<void> {
  await readApiUser(world);
  world.expect({ status: 200, what: 'an API user with a key reads back, without the key' });
}

/**
 * The API user whose registration was refused reads back as unknown: nothing was created. A follow-up of a refusal:
 * when the registration was not refused (the step before weighed that by the rule it rests on), there is nothing
 * here to check.
 */
export async function expectApiUserNotRegistered(world: MomoWorld): Promise<void> {
  const registration = world.response;
  if (registration && (registration.status < 300 || registration.createdEarlier)) {
    world.log(`Not checked that no API user was left behind: the registration was accepted (${acceptedAs(registration)}), not refused.`);
    return;
  }
  await readApiUser(world);
  world.expect({ status: 404, code: 'RESOURCE_NOT_FOUND', what: 'a refused registration leaves no API user behind (§7 rule 2)' });
}

export function registeredUser(world: MomoWorld): string {
  if (!world.registeredUserId) throw new Error('No API user was registered in this scenario.');
  return world.registeredUserId;
}

/**
 * The partner makes another API key for its own API user (§4.5 #15), and uses it from now on: a fresh partner's, which
 * no other scenario shares (the first key may stop working: the spec does not say).
 */
export async function createOwnKeyAgain(world: MomoWorld): Promise<void> {
  const response = world.remember(await world.client.createApiKey(world.actor.product, world.actor.userId));
  world.expect({ status: 201, what: 'another API key is made for the API user' });
  const apiKey = (response.json as { apiKey?: unknown } | undefined)?.apiKey;
  if (typeof apiKey === 'string') world.actor.apiKey = apiKey;
}
