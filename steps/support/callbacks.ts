import { isDeepStrictEqual } from 'node:util';
import { consistently } from '../../harness/eventually.ts';
import { quote, recordFindings } from '../../harness/judging/judge.ts';
import { finding } from '../../harness/judging/checks.ts';
import { observed, spec } from '../../core/sources.ts';
import { namedPart } from '../../core/validation/schemas.ts';
import { finalStatusRecord, statusSchemaOf } from './status-records.ts';
import type { MomoWorld } from './world.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';

/**
 * Callbacks (§6): the URL a transaction gives in X-Callback-Url, and what the harness's receiver heard.
 * Each transaction gets its own URL on the receiver, so a callback is tied to its transaction by exactly where
 * it arrived. The spec says a callback is sent there and nothing of its payload, timing or retries; the live
 * service is documented to send the status record once the transaction is final (real-api-notes).
 */
const SECTION = '§6';

/** When the live service sends a callback: once the transaction is final; the spec gives no time. */
const CALLBACK_TIMING = observed(
  'real-api-notes, callbacks: sent to X-Callback-Url when the transaction reaches a final state [documented]; §6 gives no time',
);

/** A URL on the receiver, at the host the API user was registered with (config.callbackHost). */
export function ownCallbackUrl(world: MomoWorld, referenceId: string): string {
  return world.harness.receiver.urlFor(referenceId);
}

/** A URL on a host other than the API user's providerCallbackHost: the service must refuse it. */
export function foreignCallbackUrl(world: MomoWorld, referenceId: string): string {
  const host = world.config.callbackHost === 'callbacks.example.org' ? 'callbacks.example.net' : 'callbacks.example.org';
  return `http://${host}/callbacks/${referenceId}`;
}

/**
 * §6 names the code of a callback host the service rejects, INVALID_CALLBACK_URL_HOST, and no status: any refusal
 * (400 or 500) carrying the code conforms; the live sandbox answers 500 (observed).
 */
export function expectCallbackHostRefused(world: MomoWorld): void {
  const what = "a callback URL whose host is not the API user's providerCallbackHost is refused";
  const response = world.expect({
    status: [400, 500],
    code: 'INVALID_CALLBACK_URL_HOST',
    source: spec('§6: a callback host that the service rejects gives code INVALID_CALLBACK_URL_HOST'),
    what,
  });
  world.check(
    'status-code',
    response,
    what,
    response.status === 500
      ? []
      : [
          finding('status-code', {
            field: 'status',
            expected: '500',
            received: String(response.status),
            source: observed('real-api-notes, callbacks: the creation fails with 500 INVALID_CALLBACK_URL_HOST [observed]'),
          }),
        ],
  );
}

/**
 * A callback arrives at exactly the URL the transaction gave, once; it is the transaction's status record and
 * equals what the status query gives once the transaction is final.
 */
export async function expectOneCallbackWithStatusRecord(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  const slow = Boolean(payment.party?.slow);
  const where = `callback of a ${payment.kind} — ${SECTION}: a callback arrives at ${payment.callbackUrl}`;
  const callbacks = await world.awaitState(
    'callback-arrives',
    `a callback for ${payment.kind} ${payment.referenceId}`,
    async () => {
      const received = receiver.callbacksFor(payment.referenceId);
      if (received.length > 0) return received;
      try {
        expectNoneElsewhere(world, payment.referenceId, where, payment.create, payment.product);
      } catch (failure) {
        // Sent elsewhere is a departure seen now: it ends the wait, which would otherwise take it for "not yet".
        throw Object.assign(failure as Error, { fatal: true });
      }
      return undefined;
    },
    { slow, timing: CALLBACK_TIMING, where, operation: payment.create, product: payment.product },
  );
  // A duplicate would come later: the target's retries should stop once the receiver answered 200.
  await consistently(
    () => {
      const count = receiver.callbacksFor(payment.referenceId).length;
      world.harness.conclude({
        header: where,
        operation: payment.create,
        product: payment.product,
        checks: ['callback-once'],
        findings:
          count > 1
            ? [
                finding('callback-once', {
                  field: 'callbacks',
                  expected: 'one, the receiver having answered 200',
                  received: `${count} within ${world.config.callbackQuietMs} ms, by ${callbacks.map((c) => c.method).join(', ')}`,
                }),
              ]
            : [],
      });
    },
    { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs },
  );
  const callback = callbacks[0]!;
  const body = callback.body ?? callback.rawBody;
  world.harness.conclude({
    header: `${where}, carrying its status record`,
    operation: payment.create,
    product: payment.product,
    checks: ['callback-record'],
    findings: recordFindings(statusSchemaOf(payment), body, world.harness).map((f) => ({
      ...f,
      check: 'callback-record' as const,
      source: f.source.kind === 'spec' ? CALLBACK_RECORD : f.source,
    })),
    received: quote(body),
  });
  // Compared, on what the record names, with the final record the status query gives (the callback comes once the
  // transaction is final; the query may lag a moment): a field one of them adds (records are open) is no difference.
  const { response, record } = await finalStatusRecord(world, payment);
  const schema = statusSchemaOf(payment);
  const same = isDeepStrictEqual(namedPart(schema, callback.body), namedPart(schema, record));
  world.check(
    'callback-record',
    response,
    'the callback carries the same record as the status query',
    same ? [] : [finding('callback-record', { field: 'callback body', expected: quote(record), received: quote(callback.body) })],
  );
}

/** The callback's payload is not shown in §6: that it is the status record is the live service's, documented. */
const CALLBACK_RECORD = observed(
  'real-api-notes, callbacks: "Body: the same record as the status GET" [documented]; §6 does not show the payload',
);

/** A callback that did arrive, but not at the exact URL given (another path under it, a query): §6's own rule. */
function expectNoneElsewhere(world: MomoWorld, referenceId: string, where: string, operation: OperationId, product: Product): void {
  const id = referenceId.toLowerCase();
  const elsewhere = world.harness.receiver.unsolicited().filter((c) => c.path.toLowerCase().includes(id));
  world.harness.conclude({
    header: where,
    operation,
    product,
    checks: ['callback-solicited'],
    findings:
      elsewhere.length === 0
        ? []
        : [
            finding('callback-solicited', {
              field: 'callback URL',
              expected: 'the X-Callback-Url given, exactly',
              received: elsewhere.map((c) => `${c.method} ${world.harness.redactor.text(c.path)}`).join(', '),
            }),
          ],
  });
}

/** Nothing arrived that no transaction asked for: to an unknown id, or to a path that is not exactly a callback URL. */
export function expectNoUnsolicitedCallbacks(world: MomoWorld): void {
  const unsolicited = world.harness.receiver.unsolicited();
  const described = unsolicited.map((c) => `${c.method} ${c.path} ${c.rawBody}`).join('; ');
  world.harness.conclude({
    header: `callbacks — ${SECTION}: a callback goes only to the X-Callback-Url a transaction gave`,
    operation: world.payment?.create ?? 'requestToPay',
    product: world.payment?.product ?? 'collection',
    checks: ['callback-solicited'],
    findings:
      unsolicited.length === 0
        ? []
        : [
            finding('callback-solicited', {
              field: 'callbacks',
              expected: 'none that no transaction asked for',
              received: `${unsolicited.length}: ${world.harness.redactor.text(described)}`,
            }),
          ],
  });
}
