import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Deliberate non-conformances the reference sandbox can be started with (--deviations, MOMO_SANDBOX_DEVIATIONS).
 * Each is a realistic way a MoMo server departs from the API. `npm run mutation` runs the conformance suite
 * once per deviation to show the suite catches every one; a provider's developers can use them to see what a
 * failing certification run looks like.
 *
 * A deviation either rewrites answers on their way out (`answer`), when what a client sees is all there is to
 * it, or changes behaviour where the sandbox decides (sandbox code asks `deviations.has(name)`), when state,
 * timing or callbacks are involved.
 */

/** The feature file whose scenarios are meant to catch a deviation. */
export type FeatureName = 'provisioning' | 'tokens' | 'collection' | 'disbursement' | 'remittance' | 'consent' | 'errors';

/** An answer about to be sent, which an `answer` deviation may change. */
export interface OutgoingAnswer {
  /** The sandbox operation id, e.g. "collection.requestToPay". */
  readonly operation: string;
  readonly request: FastifyRequest;
  status: number;
  /** The parsed JSON body, or undefined when there is none. */
  body: unknown;
  contentType: string | undefined;
}

interface DeviationDefinition {
  feature: FeatureName;
  /** One line: what the server does wrong. */
  summary: string;
  answer?: (answer: OutgoingAnswer) => void;
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const is = (answer: OutgoingAnswer, operation: string | RegExp, status: number) =>
  answer.status === status && (typeof operation === 'string' ? answer.operation === operation : operation.test(answer.operation));

const definitions = {
  // provisioning.feature
  'api-user-created-200': {
    feature: 'provisioning',
    summary: 'Creating an API user answers 200 instead of 201 Created.',
    answer: (a) => { if (is(a, 'provisioning.createApiUser', 201)) a.status = 200; },
  },
  'api-user-id-reused': {
    feature: 'provisioning',
    summary: 'A reused API user id is accepted (201) and replaces the first API user instead of 409 RESOURCE_ALREADY_EXIST.',
  },
  'api-user-id-not-validated': {
    feature: 'provisioning',
    summary: 'An API user id that is not a UUID v4 is accepted (201) instead of refused with 400.',
    answer: (a) => { if (is(a, 'provisioning.createApiUser', 400) && /X-Reference-Id/i.test(String((a.body as Json | undefined)?.message))) { a.status = 201; a.body = undefined; } },
  },
  'api-key-missing': {
    feature: 'provisioning',
    summary: 'Creating an API key answers 201 with an empty object, without apiKey.',
    answer: (a) => { if (is(a, 'provisioning.createApiKey', 201)) a.body = {}; },
  },
  'api-key-for-unknown-user': {
    feature: 'provisioning',
    summary: 'An API key is created (201) for an API user that does not exist instead of 404 RESOURCE_NOT_FOUND.',
    answer: (a) => { if (is(a, 'provisioning.createApiKey', 404)) { a.status = 201; a.body = { apiKey: randomBytes(16).toString('hex') }; } },
  },
  'api-user-record-without-host': {
    feature: 'provisioning',
    summary: 'The API user record reads back without its providerCallbackHost.',
    answer: (a) => { if (is(a, 'provisioning.getApiUser', 200) && isRecord(a.body)) delete a.body.providerCallbackHost; },
  },

  // tokens.feature
  'token-never-expires': {
    feature: 'tokens',
    summary: 'An access token is accepted after its expires_in has passed.',
  },
  'token-opens-other-products': {
    feature: 'tokens',
    summary: 'An access token of one product opens the operations of another product.',
  },
  'token-signature-not-checked': {
    feature: 'tokens',
    summary: 'A bearer token whose signature is wrong (forged) is accepted: the server decodes it without verifying it.',
  },
  'token-wrong-api-key-accepted': {
    feature: 'tokens',
    summary: 'An access token is issued for a known API user whatever API key comes with it.',
  },
  'token-for-other-product-user': {
    feature: 'tokens',
    summary: 'An API user provisioned for one product gets an access token of another product.',
  },
  'token-cacheable': {
    feature: 'tokens',
    summary: 'The token answer lacks Cache-Control: no-store, so caches on the way may keep the token.',
  },
  'token-expires-in-string': {
    feature: 'tokens',
    summary: 'expires_in of an access token is a string ("3600") instead of an integer.',
    answer: (a) => { if (is(a, /\.createAccessToken$/, 200) && isRecord(a.body)) a.body.expires_in = String(a.body.expires_in); },
  },

  // collection.feature
  'payment-stays-pending': {
    feature: 'collection',
    summary: 'Payments never leave PENDING: no outcome, no timeout.',
  },
  'callback-missing': {
    feature: 'collection',
    summary: 'No callback is sent to X-Callback-Url when a transaction is final.',
  },
  'callback-duplicated': {
    feature: 'collection',
    summary: 'The callback is sent twice although the receiver answered 200 the first time.',
  },
  'callback-late': {
    feature: 'collection',
    summary: 'The callback is sent 30 s after the transaction is final, later than a client waits by default (MOMO_POLL_TIMEOUT_MS, 10 s).',
  },
  'callback-disagrees-with-status': {
    feature: 'collection',
    summary: 'The callback body says FAILED (APPROVAL_REJECTED) for a transaction whose status query says SUCCESSFUL.',
  },
  'callback-host-not-checked': {
    feature: 'collection',
    summary: 'An X-Callback-Url on another host than the API user\'s providerCallbackHost is accepted instead of 500 INVALID_CALLBACK_URL_HOST.',
  },
  'payment-readable-by-others': {
    feature: 'collection',
    summary: 'Any API user can read another API user\'s transaction by its reference id.',
  },
  'notification-repeat-allowed': {
    feature: 'collection',
    summary: 'Delivery notifications for the same payment are accepted back to back instead of 429.',
  },
  'notification-of-unfinished-payment': {
    feature: 'collection',
    summary: 'A delivery notification for a payment that is not SUCCESSFUL is accepted (200) instead of 409 TRANSACTION_NOT_COMPLETED.',
  },
  'status-record-extra-field': {
    feature: 'collection',
    summary: 'Status records carry a field the spec does not define ("progress").',
    answer: (a) => { if (is(a, /\.get(RequestToPay|Deposit|Refund)Status$/, 200) && isRecord(a.body)) a.body.progress = a.body.status === 'PENDING' ? 50 : 100; },
  },
  'failure-reason-free-text': {
    feature: 'collection',
    summary: 'A FAILED status gives its reason as a free-text sentence instead of a failure-reason code.',
    answer: (a) => { if (is(a, /\.get(RequestToPay|Deposit|Refund)Status$/, 200) && isRecord(a.body) && a.body.reason !== undefined) a.body.reason = 'The payment could not be completed.'; },
  },
  'balance-not-credited': {
    feature: 'collection',
    summary: 'A successful request to pay does not credit the merchant\'s collection balance.',
  },
  'account-holder-kind-any-case': {
    feature: 'collection',
    summary: 'An upper-case account holder id type (MSISDN) is accepted instead of refused with 400.',
  },
  'account-holder-result-string': {
    feature: 'collection',
    summary: 'The account holder status gives result as a string ("true") instead of a boolean.',
    answer: (a) => { if (is(a, /\.validateAccountHolderStatus$/, 200) && isRecord(a.body)) a.body.result = String(a.body.result); },
  },

  // disbursement.feature
  'deposit-id-reused': {
    feature: 'disbursement',
    summary: 'A reused deposit reference id is accepted (202) instead of 409 RESOURCE_ALREADY_EXIST.',
  },
  'deposit-overdraws': {
    feature: 'disbursement',
    summary: 'A deposit larger than the disbursement balance succeeds instead of failing with NOT_ENOUGH_FUNDS.',
  },
  'refund-of-unknown-payment-succeeds': {
    feature: 'disbursement',
    summary: 'A refund naming a request to pay that does not exist succeeds.',
  },
  'deposit-status-amount-number': {
    feature: 'disbursement',
    summary: 'The deposit status record gives amount as a number instead of a string.',
    answer: (a) => { if (is(a, 'disbursement.getDepositStatus', 200) && isRecord(a.body)) a.body.amount = Number(a.body.amount); },
  },

  // remittance.feature
  'remittance-balance-without-currency': {
    feature: 'remittance',
    summary: 'The remittance balance record lacks its currency.',
    answer: (a) => { if (is(a, 'remittance.getAccountBalance', 200) && isRecord(a.body)) delete a.body.currency; },
  },
  'remittance-target-environment-ignored': {
    feature: 'remittance',
    summary: 'Remittance operations serve any X-Target-Environment instead of 500 NOT_ALLOWED_TARGET_ENVIRONMENT.',
  },

  // consent.feature
  'user-info-with-access-token': {
    feature: 'consent',
    summary: 'User information is given for an ordinary access token, without the customer\'s consent.',
  },
  'consent-redeemable-twice': {
    feature: 'consent',
    summary: 'An auth_req_id can be redeemed for a consent token more than once.',
  },
  'consent-before-approval': {
    feature: 'consent',
    summary: 'A consent token is issued before the customer answered (no authorization_pending).',
  },
  'consent-scope-not-checked': {
    feature: 'consent',
    summary: 'bc-authorize accepts a scope the service does not offer instead of 400 UNSUPPORTED_SCOPE.',
  },
  'consent-refresh-refused': {
    feature: 'consent',
    summary: 'A refresh token is refused (invalid_grant) while the consent still lasts.',
  },

  // errors.feature
  'payment-reference-reused': {
    feature: 'errors',
    summary: 'A reused request-to-pay reference id is accepted (202) and makes a second payment instead of 409.',
  },
  'payment-body-not-validated': {
    feature: 'errors',
    summary: 'Request-to-pay bodies are not validated: a malformed one is accepted (202) instead of 400.',
    answer: (a) => { if (is(a, 'collection.requestToPay', 400) && /body/.test(String((a.body as Json | undefined)?.message))) { a.status = 202; a.body = undefined; } },
  },
  'currency-not-checked': {
    feature: 'errors',
    summary: 'Payments in a currency the service does not take are accepted instead of 500 INVALID_CURRENCY.',
  },
  'gateway-key-not-enforced': {
    feature: 'errors',
    summary: 'The gateway lets calls through without a subscription key, or with another product\'s key.',
  },
  'duplicate-code-misspelled': {
    feature: 'errors',
    summary: 'A duplicate reference id is refused with code RESOURCE_ALREADY_EXISTS, which is not in the code set (RESOURCE_ALREADY_EXIST).',
    answer: (a) => { if (a.status === 409 && isRecord(a.body) && a.body.code === 'RESOURCE_ALREADY_EXIST') a.body.code = 'RESOURCE_ALREADY_EXISTS'; },
  },
  'unknown-payment-is-500': {
    feature: 'errors',
    summary: 'Reading a payment that does not exist answers 500 INTERNAL_PROCESSING_ERROR instead of 404 RESOURCE_NOT_FOUND.',
    answer: (a) => { if (is(a, /\.get(RequestToPay|Deposit|Refund)Status$/, 404)) { a.status = 500; a.body = { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred.' }; } },
  },
  'bearer-token-not-required': {
    feature: 'errors',
    summary: 'Business operations called without an access token are accepted instead of 401.',
  },
  'json-labelled-text-plain': {
    feature: 'errors',
    summary: 'JSON bodies are sent with Content-Type: text/plain.',
    answer: (a) => { if (a.body !== undefined && a.contentType?.startsWith('application/json')) a.contentType = 'text/plain; charset=utf-8'; },
  },
} satisfies Record<string, DeviationDefinition>;

export type DeviationName = keyof typeof definitions;

export const DEVIATIONS: Readonly<Record<DeviationName, DeviationDefinition>> = definitions;
export const DEVIATION_NAMES = Object.keys(definitions) as DeviationName[];

export function isDeviationName(name: string): name is DeviationName {
  return Object.hasOwn(definitions, name);
}

/** The deviations a sandbox was started with; empty for a faithful one. */
export class Deviations {
  private readonly active: ReadonlySet<DeviationName>;

  constructor(names: readonly DeviationName[] = []) {
    this.active = new Set(names);
  }

  has(name: DeviationName): boolean {
    return this.active.has(name);
  }

  get names(): DeviationName[] {
    return [...this.active];
  }

  /** Rewrites answers for the active `answer` deviations; a faithful sandbox gets no hook at all. */
  install(app: FastifyInstance): void {
    const rewrites = this.names.map((name) => DEVIATIONS[name].answer).filter((f): f is NonNullable<typeof f> => f !== undefined);
    if (this.has('account-holder-kind-any-case')) {
      // Before validation, which would refuse the upper-case type.
      app.addHook('preValidation', (request, _reply, done) => {
        const params = request.params as { accountHolderIdType?: string };
        if (typeof params.accountHolderIdType === 'string') params.accountHolderIdType = params.accountHolderIdType.toLowerCase();
        done();
      });
    }
    if (this.has('token-cacheable')) {
      app.addHook('onSend', (request, reply, payload, done) => {
        if (request.routeOptions.config.operation?.id.endsWith('.createAccessToken')) reply.removeHeader('cache-control');
        done(null, payload);
      });
    }
    if (rewrites.length === 0) return;
    app.addHook('onSend', (request, reply, payload, done) => {
      const operation = request.routeOptions.config.operation;
      if (!operation || (payload !== null && payload !== undefined && typeof payload !== 'string')) return done(null, payload);
      const contentType = reply.getHeader('content-type') as string | undefined;
      const text = typeof payload === 'string' ? payload : '';
      let body: unknown;
      try {
        body = text === '' ? undefined : contentType?.startsWith('application/json') ? JSON.parse(text) : text;
      } catch {
        return done(null, payload);
      }
      const answer: OutgoingAnswer = { operation: operation.id, request, status: reply.statusCode, body, contentType };
      for (const rewrite of rewrites) rewrite(answer);
      reply.code(answer.status);
      if (answer.contentType !== contentType && answer.contentType) reply.header('content-type', answer.contentType);
      if (answer.body === undefined) reply.removeHeader('content-type');
      done(null, answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  }
}

/** The catalogue as text, by feature, for --list-deviations and the docs. */
export function deviationsText(): string {
  const byFeature = new Map<FeatureName, DeviationName[]>();
  for (const name of DEVIATION_NAMES) byFeature.set(DEVIATIONS[name].feature, [...(byFeature.get(DEVIATIONS[name].feature) ?? []), name]);
  const width = Math.max(...DEVIATION_NAMES.map((n) => n.length));
  const lines = [`${DEVIATION_NAMES.length} deliberate deviations; start the sandbox with --deviations <name>[,<name>...] (MOMO_SANDBOX_DEVIATIONS).`];
  for (const [feature, names] of byFeature) {
    lines.push('', `features/${feature}.feature:`);
    for (const name of names) lines.push(`  ${name.padEnd(width)}  ${DEVIATIONS[name].summary}`);
  }
  return lines.join('\n');
}
