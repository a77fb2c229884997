import { isDeepStrictEqual } from 'node:util';
import { observed, reading, spec } from '../../core/sources.ts';
import type { RunStrictness } from '../../core/sources.ts';
import { namedPart } from '../../core/validation/schemas.ts';
import { recordFindings } from './answers.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';

/**
 * Callbacks (§6): a transaction or consent request that gave X-Callback-Url gets a callback there, there only, once,
 * carrying its status record. The spec says a callback is sent there and nothing of its payload, timing or retries;
 * the live service is documented to send the status record once the transaction is final (real-api-notes).
 */
export const CALLBACK_CHECKS = {
  'callback-arrives': {
    title: 'A transaction or consent request that gave X-Callback-Url gets a callback there once it is final.',
    source: spec('§6: the service is to send a callback to the server there'),
    values: {
      timing: observed(
        'real-api-notes, callbacks: sent to X-Callback-Url when the transaction reaches a final state [documented]; §6 gives no time',
      ),
    },
  },
  'callback-once': {
    title: 'A transaction whose callback the receiver answered 200 gets no second callback.',
    source: reading(
      '§6 leaves retries "not shown"; real-api-notes is uncertain whether the service retries; a second callback after a 200 makes a careless listener act twice',
    ),
  },
  'callback-after-final': {
    title: 'A callback comes once the transaction is final: read when the callback has come, its status is no longer PENDING.',
    source: observed('real-api-notes, callbacks: sent to X-Callback-Url when the transaction reaches a final state [documented]'),
  },
  'callback-record': {
    title: "The callback carries the transaction's status record, the same as the status query gives.",
    source: observed('real-api-notes, callbacks: "Body: the same record as the status GET" [documented]'),
    general: true,
  },
  'callback-solicited': {
    title: 'A callback goes only to the exact X-Callback-Url a transaction gave.',
    source: spec('§6: the service sends a callback to the server at the address given in X-Callback-Url'),
    general: true,
  },
  'callback-labelled-json': {
    title: "A callback's body is labelled as the JSON it is: its Content-Type is application/json (or a +json type).",
    source: reading(
      "§6 does not show a callback's headers; its body is the status record (real-api-notes), a JSON document as every payload of §4 is, and RFC 9110 §8.3 has a sender label the body it sends: one labelled otherwise, or not at all, is dropped by a listener that parses by its label",
    ),
  },
  'consent-callback-own-request': {
    title: 'A consent callback that names an auth_req_id names the request it answers.',
    source: reading(
      "§6 does not show a consent callback's payload; CIBA Core §10.2 has the ping callback carry the auth_req_id of the request it is about, so that one naming another request is our reading of a departure",
    ),
  },
  'consent-callback-after-answer': {
    title: 'A consent callback comes once the customer has answered: the consent redeemed on it is no longer pending.',
    source: reading(
      "§6 does not show when a consent callback comes; CIBA Core §10.2 has the ping callback sent once the end user's authentication is done, so that a consent redeemed at once on it is still pending is our reading of a departure",
    ),
  },
} as const satisfies Record<string, CheckDefinition>;

type CallbackCheck = keyof typeof CALLBACK_CHECKS;
const found = (name: CallbackCheck, f: Found): Finding => findingOf(name, CALLBACK_CHECKS[name], f);

/** More than one callback for a transaction, the receiver having answered 200 to the first. */
export function onceFindings(count: number, quietMs: number, methods: readonly string[]): Finding[] {
  return count > 1
    ? [
        found('callback-once', {
          field: 'callbacks',
          expected: 'one, the receiver having answered 200',
          received: `${count} within ${quietMs} ms, by ${methods.join(', ')}`,
        }),
      ]
    : [];
}

/**
 * The callback's body against the status record's schema. §6 does not show the payload: each departure rests on the
 * live service's documentation that it is the status record (the check's rule, observed) besides its own source.
 */
export function callbackRecordFindings(schema: string, body: unknown, run: RunStrictness): Finding[] {
  return recordFindings(schema, body, run).map((f) =>
    f.advisory
      ? f
      : found('callback-record', {
          ...(f.field !== undefined ? { field: f.field } : {}),
          expected: f.expected,
          received: f.received,
          source: f.source,
        }),
  );
}

/**
 * The callback's record against the final record the status query gives, on what the record names: one finding per
 * field that differs (a field one of them lacks included), so that the report says which.
 */
export function sameAsStatusFindings(schema: string, callback: unknown, record: unknown): Finding[] {
  const ours = namedPart(schema, callback);
  const theirs = namedPart(schema, record);
  if (!isObject(ours) || !isObject(theirs))
    return isDeepStrictEqual(ours, theirs)
      ? []
      : [found('callback-record', { field: 'callback body', expected: quote(record), received: quote(callback) })];
  const fields = [...new Set([...Object.keys(theirs), ...Object.keys(ours)])];
  return fields
    .filter((field) => !isDeepStrictEqual(ours[field], theirs[field]))
    .map((field) =>
      found('callback-record', {
        field: `/${field}`,
        expected: theirs[field] === undefined ? 'none, as the status query gives' : `${quote(theirs[field])}, as the status query gives`,
        received: ours[field] === undefined ? 'none' : quote(ours[field]),
      }),
    );
}

/** A callback's Content-Type against the JSON its body is: application/json or a +json type, any case, any parameters. */
export function labelledJsonFindings(contentType: string | undefined): Finding[] {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[\w.-]+\+json$/.test(mediaType)
    ? []
    : [
        found('callback-labelled-json', {
          field: 'Content-Type',
          expected: 'application/json',
          received: contentType === undefined ? 'none' : quote(contentType),
        }),
      ];
}

/** The status a transaction read in once its callback had come: PENDING says the callback came before the outcome. */
export function calledBackWhenFinalFindings(status: unknown): Finding[] {
  return status === 'PENDING'
    ? [found('callback-after-final', { field: '/status', expected: 'the final status its callback told of', received: quote(status) })]
    : [];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Callbacks that went elsewhere than the URL a transaction gave (another path under it, a query) or that nobody asked for. */
export function solicitedFindings(elsewhere: readonly string[], expected: string): Finding[] {
  return elsewhere.length === 0
    ? []
    : [found('callback-solicited', { field: 'callback URL', expected, received: `${elsewhere.length}: ${elsewhere.join(', ')}` })];
}

/** The auth_req_id each consent callback names, when it names one, against the consent request's own. */
export function consentCallbackFindings(bodies: readonly unknown[], authReqId: string): Finding[] {
  return bodies.flatMap((body) => {
    const named = (body as { auth_req_id?: unknown } | undefined)?.auth_req_id;
    return named === undefined || named === authReqId
      ? []
      : [found('consent-callback-own-request', { field: '/auth_req_id', expected: quote(authReqId), received: quote(named) })];
  });
}

/** A consent redeemed at once on its callback answered that the customer has not answered yet (CIBA Core §11). */
export function pingBeforeAnswerFindings(pollError: unknown): Finding[] {
  // slow_down is about the pace of polls (a redemption at once may be sooner than the interval), not the answer.
  if (pollError !== 'authorization_pending') return [];
  return [
    found('consent-callback-after-answer', {
      field: '/error',
      expected: 'the consent token, the customer having answered when the callback came',
      received: quote(pollError),
    }),
  ];
}
