import { ConformanceFailure } from '../../src/judge.ts';
import { randomUUID } from 'node:crypto';
import type { MomoWorld } from './world.ts';

/** What a partner does to get sandbox credentials (§4.5, §5.6). */
export async function registerApiUser(world: MomoWorld, userId: string = randomUUID()): Promise<void> {
  world.registeredUserId = userId;
  world.remember(await world.client.createApiUser(world.actor.product, userId, world.config.callbackHost));
}

export async function createKey(world: MomoWorld, userId = registeredUser(world)): Promise<void> {
  const response = world.remember(await world.client.createApiKey(world.actor.product, userId));
  const apiKey = (response.json as { apiKey?: unknown } | undefined)?.apiKey;
  if (typeof apiKey === 'string') world.harness.redactor.addBasicCredential(userId, apiKey);
}

export async function readApiUser(world: MomoWorld, userId = registeredUser(world)): Promise<void> {
  world.remember(await world.client.getApiUser(world.actor.product, userId));
}

/** The record read back must name the callback host the API user was registered with. */
export function expectApiUserRecord(world: MomoWorld): void {
  const record = world.expect({ status: 200, what: 'an API user reads back' }).json as { providerCallbackHost: string };
  if (record.providerCallbackHost !== world.config.callbackHost) {
    throw new ConformanceFailure(`get API user — §4.5 #16: providerCallbackHost is "${record.providerCallbackHost}", not the "${world.config.callbackHost}" it was registered with`);
  }
}

function registeredUser(world: MomoWorld): string {
  if (!world.registeredUserId) throw new Error('No API user was registered in this scenario.');
  return world.registeredUserId;
}
