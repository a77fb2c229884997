import { isDeepStrictEqual } from 'node:util';
import { consistently } from '../../harness/eventually.ts';
import { ConformanceFailure, judgeRecord } from '../../harness/judging/judge.ts';
import { currentRecord, statusSchemaOf } from './payments.ts';
import type { MomoWorld } from './world.ts';

/**
 * Callbacks (§6): the URL a transaction gives in X-Callback-Url, and what the harness's receiver heard.
 * Each transaction gets its own URL on the receiver, so a callback is tied to its transaction by where it
 * arrived. The live service sends the status record once the transaction is final (real-api-notes).
 */
const SECTION = '§6';

/** A URL on the receiver, at the host the API user was registered with (config.callbackHost). */
export function ownCallbackUrl(world: MomoWorld, referenceId: string): string {
  return world.harness.receiver.urlFor(referenceId);
}

/** A URL on a host other than the API user's providerCallbackHost: the service must refuse it. */
export function foreignCallbackUrl(world: MomoWorld, referenceId: string): string {
  const host = world.config.callbackHost === 'callbacks.example.org' ? 'callbacks.example.net' : 'callbacks.example.org';
  return `http://${host}/callbacks/${referenceId}`;
}

export function expectCallbackHostRefused(world: MomoWorld): void {
  world.expect({ status: 500, code: 'INVALID_CALLBACK_URL_HOST', what: 'a callback URL whose host is not the API user\'s providerCallbackHost is refused (§6)' });
}

/**
 * Exactly one callback arrives for the transaction, its body is a status record (the schema of its
 * status query) and equals the record the status query gives once the transaction is final.
 */
export async function expectOneCallbackWithStatusRecord(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  const slow = Boolean(payment.party?.slow);
  const callbacks = await world.eventually(`a callback for ${payment.kind} ${payment.referenceId} at ${payment.callbackUrl}`, async () => {
    const received = receiver.callbacksFor(payment.referenceId);
    return received.length > 0 ? received : undefined;
  }, { slow });
  const what = `the callback of a ${payment.kind}`;
  // A duplicate would come later: the target's retries must stop once the receiver answered 200.
  await consistently(() => {
    const count = receiver.callbacksFor(payment.referenceId).length;
    if (count > 1) throw new ConformanceFailure(`${what} — ${SECTION}: expected: exactly one callback for a transaction whose receiver answered 200\n  received: ${count} callbacks within ${world.config.callbackQuietMs} ms`);
  }, { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs });
  if (callbacks.length !== 1) {
    throw new ConformanceFailure(`${what} — ${SECTION}: expected: exactly one callback for a transaction whose receiver answered 200\n  received: ${callbacks.length} callbacks, by ${callbacks.map((c) => c.method).join(', ')}`);
  }
  const callback = callbacks[0]!;
  judgeRecord(`${what} carries its status record`, SECTION, statusSchemaOf(payment), callback.body ?? callback.rawBody, world.harness.redactor);
  const { response, record } = await currentRecord(world, payment);
  if (!isDeepStrictEqual(callback.body, record)) {
    const redact = (value: unknown) => world.harness.redactor.text(JSON.stringify(value));
    throw new ConformanceFailure([
      `${what} — ${SECTION}, ${response.operation.section}: the callback carries the same record as the status query`,
      `  expected: ${redact(record)}`,
      `  received: ${redact(callback.body)}`,
    ].join('\n'));
  }
}

/** Nothing arrived that no transaction asked for: to an unknown id or to a path that is not a callback URL. */
export function expectNoUnsolicitedCallbacks(world: MomoWorld): void {
  const unsolicited = world.harness.receiver.unsolicited();
  if (unsolicited.length > 0) {
    const described = unsolicited.map((c) => `${c.method} ${c.path} ${world.harness.redactor.text(c.rawBody)}`).join('; ');
    throw new ConformanceFailure(`callbacks — ${SECTION}: a callback goes only to the X-Callback-Url a transaction gave\n  expected: no unsolicited callbacks\n  received: ${unsolicited.length}: ${described}`);
  }
}
