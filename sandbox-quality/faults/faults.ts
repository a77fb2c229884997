import { randomBytes, randomUUID } from 'node:crypto';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { StrictReading } from '../../core/profiles.ts';
import type { ExtraSetting } from '../../sandbox/domain/settings.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { Ledger } from '../../sandbox/domain/ledger.ts';
import { basicCredentialOf } from '../../sandbox/http/credentials.ts';
import { TRANSACTIONS } from '../../core/catalogue/routes.ts';
import { idKey, type Transaction, type TransactionKind } from '../../sandbox/domain/state.ts';
import { TokenAuthority } from '../../sandbox/domain/tokens.ts';
import {
  answerInstead,
  bearerOf,
  is,
  isRecord,
  onRequests,
  pluginCatalogue,
  reissue,
  rewriteAnswers,
  routeOf,
  transactionCallbacks,
  unverifiedClaims,
  type AnswerRewrite,
} from './edges.ts';

/**
 * Deliberate faults: realistic ways a MoMo server departs from the API, which the reference sandbox can be
 * started with (--deviations, MOMO_SANDBOX_DEVIATIONS) to show that the conformance suite catches each one
 * (`npm run mutation`), or to let a provider's developers see what a failing certification run looks like.
 *
 * Each fault is a plugin at the sandbox's edges (sandbox/plugins.ts): it rewrites answers on their way out,
 * changes requests on their way in, or wraps a component (the ledger, the token authority, the callback sink,
 * the payments, the state) as the sandbox builds it. The sandbox's own code knows nothing of them, and a
 * sandbox started without faults installs none of this.
 */

/** The feature file whose scenarios are meant to catch a fault. */
export type FeatureName = 'provisioning' | 'tokens' | 'collection' | 'disbursement' | 'remittance' | 'consent' | 'errors' | 'inputs';

export interface Fault {
  feature: FeatureName;
  /** One line: what the server does wrong. */
  summary: string;
  plugin: Omit<SandboxPlugin, 'name'>;
  /**
   * The strict reading the fault breaks, when it breaks one: only a sandbox with the strict readings on
   * shows it, and only a run with --strict can catch it (npm run mutation runs it so).
   */
  reading?: StrictReading;
  /**
   * The kind of rule it breaks, when not a definite one of the spec (core/sources.ts): an observation of the live
   * service, which only the mtn-sandbox profile holds a target to; or a reading, which only a --strict run does.
   * npm run mutation runs each fault in the run that can catch it. 'observed reading': a rule the live service
   * keeps on one operation, which we read onto another (no-store on the consent token): only mtn-sandbox --strict.
   */
  breaks?: 'observed' | 'reading' | 'observed reading';
}

/** The profile and strictness of the conformance run that can catch a fault: where its rule weighs as a failure. */
export function runCatching(fault: Fault): { profile: 'spec' | 'mtn-sandbox'; strict: boolean } {
  return {
    profile: fault.breaks === 'observed' || fault.breaks === 'observed reading' ? 'mtn-sandbox' : 'spec',
    strict: fault.reading !== undefined || fault.breaks === 'reading' || fault.breaks === 'observed reading',
  };
}

type Json = Record<string, unknown>;

const STATUS_QUERIES = TRANSACTIONS.map((t) => t.status);
const CREATIONS = TRANSACTIONS.map((t) => t.create);
/** How long callback-late holds a callback back: beyond a client's default wait (MOMO_POLL_TIMEOUT_MS, 10 s). */
const LATE_CALLBACK_MS = 30_000;

/** What consent-poll-slowed-beyond-interval wants beyond the interval the consent request announced. */
const SLOWED_BEYOND_MS = 2_000;

/** A fault that only rewrites answers. */
const answer = (feature: FeatureName, summary: string, rewrite: AnswerRewrite, breaks?: Fault['breaks']): Fault => ({
  feature,
  summary,
  plugin: { install: (app, context) => rewriteAnswers(app, context, rewrite) },
  ...(breaks ? { breaks } : {}),
});

/** The transaction a request names by its referenceId path parameter, of the kind its operation reads. */
function namedTransaction(
  request: { params: unknown },
  operation: OperationId,
  state: { transactions: Record<TransactionKind, { get(key: string): Transaction | undefined }> },
): Transaction | undefined {
  const kind = operation === 'deliveryNotification' ? 'requesttopay' : TRANSACTIONS.find((t) => t.status === operation)?.store;
  const referenceId = (request.params as { referenceId?: string }).referenceId;
  return kind && referenceId ? state.transactions[kind].get(idKey(referenceId)) : undefined;
}

/** A creation under a reference id already used goes through: the first record is dropped first. */
const idReused = (feature: FeatureName, summary: string, operation: OperationId, kind: TransactionKind | 'apiUser'): Fault => ({
  feature,
  summary,
  plugin: {
    install: (app, context) =>
      onRequests(app, context, 'preHandler', [operation], (request, { state }) => {
        const id = idKey(request.headers['x-reference-id'] as string);
        if (kind === 'apiUser') state.apiUsers.delete(id);
        else state.transactions[kind].delete(id);
      }),
  },
});

/** The postings credit-posted-on-status-read holds back, by the ledger it wrapped: its status-read hook posts them. */
const postedOnRead = new WeakMap<Ledger, { post(user: string): void }>();

/** A ledger that answers as the given one, except for what `changed` replaces. */
const ledgerWith =
  (changed: Partial<Ledger>) =>
  (ledger: Ledger): Ledger => ({
    accepts: (currency) => ledger.accepts(currency),
    balance: (user, product, currency) => ledger.balance(user, product, currency),
    covers: (user, product, currency, amount) => ledger.covers(user, product, currency, amount),
    credit: (user, product, currency, amount) => ledger.credit(user, product, currency, amount),
    debit: (user, product, currency, amount) => ledger.debit(user, product, currency, amount),
    moved: () => ledger.moved(),
    ...changed,
  });

const definitions = {
  // provisioning.feature
  'api-user-created-200': answer('provisioning', 'Creating an API user answers 200 instead of 201 Created.', (a) => {
    if (is(a, 'createApiUser', 201)) a.status = 200;
  }),
  'api-user-id-reused': idReused(
    'provisioning',
    'A reused API user id is accepted (201) and replaces the first API user instead of 409 RESOURCE_ALREADY_EXIST.',
    'createApiUser',
    'apiUser',
  ),
  'api-user-id-not-validated': answer(
    'provisioning',
    'An API user id that is not a UUID v4 is accepted (201) instead of refused with 400.',
    (a) => {
      if (is(a, 'createApiUser', 400) && /X-Reference-Id/i.test(String((a.body as Json | undefined)?.message))) {
        a.status = 201;
        a.body = undefined;
      }
    },
  ),
  'api-key-missing': answer('provisioning', 'Creating an API key answers 201 with an empty object, without apiKey.', (a) => {
    if (is(a, 'createApiKey', 201)) a.body = {};
  }),
  'api-key-for-unknown-user': answer(
    'provisioning',
    'An API key is created (201) for an API user that does not exist instead of 404 RESOURCE_NOT_FOUND.',
    (a) => {
      if (is(a, 'createApiKey', 404)) {
        a.status = 201;
        a.body = { apiKey: randomBytes(16).toString('hex') };
      }
    },
  ),
  'api-user-record-without-host': answer(
    'provisioning',
    'The API user record reads back without its providerCallbackHost.',
    (a) => {
      if (is(a, 'getApiUser', 200) && isRecord(a.body)) delete a.body.providerCallbackHost;
    },
    'observed',
  ),
  'api-user-read-latest': {
    feature: 'provisioning',
    summary: 'Reading an API user answers the callback host of the latest API user registered, not the one its path names.',
    plugin: {
      install: (app, context) => {
        let latest: unknown;
        rewriteAnswers(app, context, (a) => {
          if (is(a, 'createApiUser', 201)) latest = (a.request.body as Json | undefined)?.providerCallbackHost;
          if (is(a, 'getApiUser', 200) && isRecord(a.body) && latest !== undefined) a.body.providerCallbackHost = latest;
        });
      },
    },
  },
  'api-user-record-discloses-key': answer('provisioning', "The API user record gives out the user's API key.", (a, { state }) => {
    if (!is(a, 'getApiUser', 200) || !isRecord(a.body)) return;
    const id = (a.request.params as { referenceId?: string }).referenceId;
    const apiKey = id ? state.apiUsers.get(idKey(id))?.apiKey : undefined;
    if (apiKey) a.body.apiKey = apiKey;
  }),

  // tokens.feature
  'token-never-expires': {
    feature: 'tokens',
    summary: 'An access token is accepted after its expires_in has passed.',
    plugin: {
      // The token authority is given a clock that stops when the sandbox starts: no token it issues ever ages.
      wrap: { tokens: (_tokens, { settings, components }) => new TokenAuthority(settings.jwtSecret, stoppedAt(components.clock!.now())) },
    },
  },
  'token-opens-other-products': {
    feature: 'tokens',
    reading: 'tokenProduct',
    summary: 'An access token of one product opens the operations of another product.',
    plugin: {
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.product !== undefined && route.credential !== 'basic',
          (request, ctx, route) => {
            const token = bearerOf(request);
            const claims = token ? ctx.tokens.claimsOf(token) : undefined;
            if (claims && claims.prd !== route.product && ctx.tokens.secondsLeft(claims) > 0)
              request.headers.authorization = `Bearer ${reissue(ctx, claims, { prd: route.product! })}`;
          },
        ),
    },
  },
  'token-signature-not-checked': {
    feature: 'tokens',
    summary: 'A bearer token whose signature is wrong (forged) is accepted: the server decodes it without verifying it.',
    plugin: {
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.credential === 'bearer' || route.credential === 'consent',
          (request, ctx) => {
            const token = bearerOf(request);
            if (!token || ctx.tokens.claimsOf(token)) return;
            const claims = unverifiedClaims(token);
            if (claims && ctx.tokens.secondsLeft(claims) > 0) request.headers.authorization = `Bearer ${reissue(ctx, claims, {})}`;
          },
        ),
    },
  },
  'token-wrong-api-key-accepted': {
    feature: 'tokens',
    summary: 'An access token is issued for a known API user whatever API key comes with it.',
    plugin: {
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.credential === 'basic',
          (request, { state }) => {
            const credential = basicCredentialOf(request.headers.authorization);
            const user = credential ? state.apiUsers.get(idKey(credential.userId)) : undefined;
            if (credential && user?.apiKey)
              request.headers.authorization = `Basic ${Buffer.from(`${credential.userId}:${user.apiKey}`).toString('base64')}`;
          },
        ),
    },
  },
  'token-for-other-product-user': answer(
    'tokens',
    'An API user provisioned for one product gets an access token of another product.',
    (a, context) => {
      if (!is(a, 'createAccessToken', 500) || (a.body as Json | undefined)?.code !== 'NOT_ALLOWED_TARGET_ENVIRONMENT' || !a.product) return;
      const credential = basicCredentialOf(a.request.headers.authorization);
      const user = credential ? context.state.apiUsers.get(idKey(credential.userId)) : undefined;
      if (!user) return;
      a.status = 200;
      a.body = {
        access_token: context.tokens.issue({ sub: user.id, prd: a.product, use: 'access' }, context.settings.tokenLifetimeSeconds),
        token_type: context.profile.tokenType,
        expires_in: context.settings.tokenLifetimeSeconds,
      };
      a.reply.header('cache-control', 'no-store');
    },
    'observed',
  ),
  'token-cacheable': answer(
    'tokens',
    'The token answer lacks Cache-Control: no-store, so caches on the way may keep the token.',
    (a) => {
      if (a.operation === 'createAccessToken') a.reply.removeHeader('cache-control');
    },
    'observed',
  ),
  'token-expires-in-string': answer('tokens', 'expires_in of an access token is a string ("3600") instead of an integer.', (a) => {
    if (is(a, 'createAccessToken', 200) && isRecord(a.body)) a.body.expires_in = String(a.body.expires_in);
  }),

  // collection.feature
  'payment-stays-pending': {
    feature: 'collection',
    breaks: 'observed',
    summary: 'Payments never leave PENDING: no outcome, no timeout.',
    plugin: { wrap: { payments: (payments) => ({ begin: () => undefined, statusRecord: (tx) => payments.statusRecord(tx) }) } },
  },
  'callback-missing': {
    feature: 'collection',
    breaks: 'observed',
    summary: 'No callback is sent to X-Callback-Url when a transaction is final.',
    plugin: { wrap: { callbacks: transactionCallbacks(() => undefined) } },
  },
  'callback-duplicated': {
    feature: 'collection',
    breaks: 'reading',
    summary: 'The callback is sent twice although the receiver answered 200 the first time.',
    plugin: {
      wrap: {
        callbacks: transactionCallbacks((sink, url, method, body, context) => {
          sink.send(url, method, body, context);
          sink.sendLater(100, url, method, body, context);
        }),
      },
    },
  },
  'callback-late': {
    feature: 'collection',
    breaks: 'observed',
    summary: 'The callback is sent 30 s after the transaction is final, later than a client waits by default (MOMO_POLL_TIMEOUT_MS, 10 s).',
    plugin: {
      wrap: {
        callbacks: transactionCallbacks((sink, url, method, body, context) => sink.sendLater(LATE_CALLBACK_MS, url, method, body, context)),
      },
    },
  },
  'callback-disagrees-with-status': {
    feature: 'collection',
    breaks: 'observed',
    summary: 'The callback body says FAILED (APPROVAL_REJECTED) for a transaction whose status query says SUCCESSFUL.',
    plugin: {
      wrap: {
        callbacks: transactionCallbacks((inner, url, method, body, context) => {
          if (!isRecord(body)) return inner.send(url, method, body, context);
          inner.send(
            url,
            method,
            body.status === 'SUCCESSFUL'
              ? { ...body, status: 'FAILED', reason: 'APPROVAL_REJECTED' }
              : { ...body, status: 'SUCCESSFUL', reason: undefined },
            context,
          );
        }),
      },
    },
  },
  'callback-retried-empty': {
    feature: 'collection',
    breaks: 'observed',
    summary: "A callback the partner's address refused is sent again with an empty body instead of the status record.",
    plugin: {
      wrap: {
        callbacks: (sink, { settings }) =>
          transactionCallbacks((inner, url, method, body, context) => {
            // The first delivery is made here, so that what follows a refusal is this fault's: the same address, no body.
            const retry = () => inner.sendLater(settings.callbackRetryDelaysMs[0] ?? 200, url, method, undefined, context);
            fetch(url, {
              method,
              body: JSON.stringify(body),
              headers: { 'content-type': 'application/json' },
              signal: AbortSignal.timeout(settings.callbackTimeoutMs),
            }).then(
              (response) => (response.ok ? undefined : retry()),
              () => retry(),
            );
          })(sink),
      },
    },
  },
  'payment-address-called-again': {
    feature: 'collection',
    breaks: 'observed',
    summary:
      "After a payment's delivery notification or refund, a notice that is not its record is posted to the payment's callback address.",
    plugin: {
      install: (app, context) =>
        rewriteAnswers(app, context, (a, { state, callbacks }) => {
          const referenceId = is(a, 'deliveryNotification', 200)
            ? (a.request.params as { referenceId?: string }).referenceId
            : is(a, 'refund', 202)
              ? ((a.request.body as Json | undefined)?.referenceIdToRefund as string | undefined)
              : undefined;
          const payment = referenceId ? state.transactions.requesttopay.get(idKey(referenceId)) : undefined;
          if (payment?.callbackUrl)
            callbacks.sendLater(100, payment.callbackUrl, payment.callbackMethod, { notice: a.operation, referenceId }, { kind: 'notice' });
        }),
    },
  },
  'callback-to-other-path': {
    feature: 'collection',
    summary: 'The callback goes to another path than the X-Callback-Url given: the URL with "/notify" after it.',
    plugin: {
      wrap: { callbacks: transactionCallbacks((sink, url, method, body, context) => sink.send(`${url}/notify`, method, body, context)) },
    },
  },
  'final-state-reverts': {
    feature: 'collection',
    summary: 'A transaction that read SUCCESSFUL or FAILED reads PENDING again on the next GET.',
    plugin: {
      install: (app, context) => {
        const readFinal = new Set<string>();
        rewriteAnswers(app, context, (a) => {
          if (!is(a, STATUS_QUERIES, 200) || !isRecord(a.body) || (a.body.status !== 'SUCCESSFUL' && a.body.status !== 'FAILED')) return;
          const id = (a.request.params as { referenceId?: string }).referenceId ?? '';
          if (!readFinal.has(id)) {
            readFinal.add(id);
            return;
          }
          const { financialTransactionId: _, reason: __, ...pending } = a.body;
          a.body = { ...pending, status: 'PENDING' };
        });
      },
    },
  },
  'callback-host-not-checked': {
    feature: 'collection',
    summary:
      "An X-Callback-Url on another host than the API user's providerCallbackHost is accepted instead of 500 INVALID_CALLBACK_URL_HOST.",
    plugin: {
      // The caller is taken to have registered whatever host the callback names.
      install: (app, context) =>
        onRequests(app, context, 'preHandler', CREATIONS, (request) => {
          const url = request.headers['x-callback-url'];
          if (typeof url !== 'string' || !request.caller || !URL.canParse(url)) return;
          request.caller = { ...request.caller, providerCallbackHost: new URL(url).hostname };
        }),
    },
    // §6 leaves which hosts a service rejects to it; that the host must be providerCallbackHost is the live service's.
    breaks: 'observed',
  },
  'payment-readable-by-others': {
    feature: 'collection',
    summary: "Any API user can read another API user's transaction by its reference id.",
    plugin: {
      // The request is served as if its owner had made it.
      install: (app, context) =>
        onRequests(app, context, 'preHandler', [...STATUS_QUERIES, 'deliveryNotification'], (request, { state }, route) => {
          const tx = namedTransaction(request, route.operation, state);
          if (tx && request.caller && tx.apiUserId !== request.caller.id)
            request.caller = state.apiUsers.get(tx.apiUserId) ?? { ...request.caller, id: tx.apiUserId };
        }),
    },
  },
  'notification-repeat-allowed': {
    feature: 'collection',
    summary: 'Delivery notifications for the same payment are accepted back to back instead of 429.',
    plugin: {
      install: (app, context) =>
        onRequests(app, context, 'preHandler', ['deliveryNotification'], (request, { state }, route) => {
          const tx = namedTransaction(request, route.operation, state);
          if (tx) delete tx.lastNotificationAt;
        }),
    },
  },
  'notification-refusal-clears-cooldown': {
    feature: 'collection',
    breaks: 'reading',
    summary: 'A delivery notification refused with 429 clears the cool-down, so the attempt right after it is accepted (200).',
    plugin: {
      install: (app, context) =>
        rewriteAnswers(app, context, (a, { state }) => {
          if (!is(a, 'deliveryNotification', 429)) return;
          const tx = namedTransaction(a.request, a.operation, state);
          if (tx) delete tx.lastNotificationAt;
        }),
    },
  },
  'notification-of-unfinished-payment': answer(
    'collection',
    'A delivery notification for a payment that is not SUCCESSFUL is accepted (200) instead of 409 TRANSACTION_NOT_COMPLETED.',
    (a) => {
      if (is(a, 'deliveryNotification', 409) && (a.body as Json | undefined)?.code === 'TRANSACTION_NOT_COMPLETED') {
        a.status = 200;
        a.body = undefined;
      }
    },
  ),
  'failure-reason-free-text': answer(
    'collection',
    'A FAILED status gives its reason as a free-text sentence instead of a failure-reason code.',
    (a) => {
      if (is(a, STATUS_QUERIES, 200) && isRecord(a.body) && a.body.reason !== undefined)
        a.body.reason = 'The payment could not be completed.';
    },
    'observed',
  ),
  'callback-host-of-latest-user': {
    feature: 'collection',
    summary:
      "An X-Callback-Url is checked against the providerCallbackHost of the API user registered last, not the caller's: once another registers, the caller's own host is refused.",
    plugin: {
      install: (app, context) => {
        let latestHost: string | undefined;
        rewriteAnswers(app, context, (a) => {
          if (is(a, 'createApiUser', 201)) latestHost = (a.request.body as Json | undefined)?.providerCallbackHost as string | undefined;
        });
        onRequests(app, context, 'preHandler', CREATIONS, (request) => {
          if (request.caller && latestHost !== undefined) request.caller = { ...request.caller, providerCallbackHost: latestHost };
        });
      },
    },
    // That the host is the calling API user's own is the live service's (§6 leaves which hosts are refused open).
    breaks: 'observed',
  },
  'notification-needs-status-read': {
    feature: 'collection',
    // That the callback told a success once the payment was so is the live service's (§6 shows no payload).
    breaks: 'observed',
    summary:
      'A delivery notification is refused (409 TRANSACTION_NOT_COMPLETED) until its payment has been read once, even when its callback told the partner it succeeded.',
    plugin: {
      install: (app, context) => {
        const read = new Set<string>();
        onRequests(app, context, 'preHandler', ['getRequestToPayStatus'], (request) => {
          read.add(idKey((request.params as { referenceId?: string }).referenceId ?? ''));
        });
        answerInstead(app, context, ['deliveryNotification'], (request) => {
          const id = idKey((request.params as { referenceId?: string }).referenceId ?? '');
          if (read.has(id) || !context.state.transactions.requesttopay.get(id)) return undefined;
          return {
            status: 409,
            body: { code: 'TRANSACTION_NOT_COMPLETED', message: 'The transaction has not been completed yet.' },
          };
        });
      },
    },
  },
  'notification-cooldown-before-owner': {
    feature: 'collection',
    breaks: 'reading',
    summary:
      "Another partner's delivery notification for a payment whose owner notified it a moment ago is 429, not 404: the cool-down is checked before whose payment it is.",
    plugin: {
      install: (app, context) =>
        answerInstead(app, context, ['deliveryNotification'], (request) => {
          const tx = namedTransaction(request, 'deliveryNotification', context.state);
          const cooling =
            tx?.lastNotificationAt !== undefined && context.clock.now() - tx.lastNotificationAt < context.settings.notificationCooldownMs;
          if (!tx || !cooling || !request.caller || tx.apiUserId === request.caller.id) return undefined;
          return { status: 429, body: { code: 'NOT_ALLOWED', message: 'Too many delivery notifications for this transaction recently.' } };
        }),
    },
  },
  'credit-posted-on-status-read': {
    feature: 'collection',
    // That the callback told a success once the payment was so is the live service's (§6 shows no payload).
    breaks: 'observed',
    summary:
      "A transaction's money moves only when its owner next reads a status: a partner told by the callback alone sees a balance without it.",
    plugin: {
      install: (app, context) =>
        onRequests(app, context, 'preHandler', STATUS_QUERIES, (request) => {
          if (request.caller) postedOnRead.get(context.ledger)?.post(request.caller.id);
        }),
      wrap: {
        ledger: (ledger) => {
          const held = new Map<string, (() => void)[]>();
          const hold = (user: string, move: () => void) => void held.set(user, [...(held.get(user) ?? []), move]);
          const wrapped = ledgerWith({
            credit: (user, product, currency, amount) => hold(user, () => ledger.credit(user, product, currency, amount)),
            debit: (user, product, currency, amount) => hold(user, () => ledger.debit(user, product, currency, amount)),
          })(ledger);
          postedOnRead.set(wrapped, {
            post: (user) => {
              for (const move of held.get(user) ?? []) move();
              held.delete(user);
            },
          });
          return wrapped;
        },
      },
    },
  },
  'balance-not-credited': {
    feature: 'collection',
    breaks: 'reading',
    summary: "A successful request to pay does not credit the merchant's collection balance.",
    plugin: {
      wrap: {
        ledger: (ledger) =>
          ledgerWith({
            credit: (user, product, currency, amount) =>
              product === 'collection' ? undefined : ledger.credit(user, product, currency, amount),
          })(ledger),
      },
    },
  },
  'account-holder-kind-any-case': {
    feature: 'collection',
    summary: 'An upper-case account holder id type (MSISDN) is accepted instead of refused with 400.',
    plugin: {
      // Before validation, which would refuse the upper-case type.
      install: (app, context) =>
        onRequests(app, context, 'preValidation', ['accountHolderActive'], (request) => {
          const params = request.params as { accountHolderIdType?: string };
          if (typeof params.accountHolderIdType === 'string') params.accountHolderIdType = params.accountHolderIdType.toLowerCase();
        }),
    },
  },
  'account-holder-result-string': answer(
    'collection',
    'The account holder status gives result as a string ("true") instead of a boolean.',
    (a) => {
      if (is(a, 'accountHolderActive', 200) && isRecord(a.body)) a.body.result = String(a.body.result);
    },
    // §4.2 #8 gives true or false and no format for the body: {"result": <boolean>} is the live service's.
    'observed',
  ),

  // disbursement.feature
  'deposit-id-reused': idReused(
    'disbursement',
    'A reused deposit reference id is accepted (202) instead of 409 RESOURCE_ALREADY_EXIST.',
    'deposit',
    'deposit',
  ),
  'payouts-funded-when-accepted': (() => {
    // The payouts found covered when accepted, by API user, product, currency and amount: each is then debited at
    // settlement without a second look, whatever was paid out meanwhile.
    const coveredWhenAccepted = new Map<string, number>();
    const keyOf = (user: string, product: string, currency: string, amountMinor: bigint) => `${user}|${product}|${currency}|${amountMinor}`;
    let books: Ledger | undefined;
    return {
      feature: 'disbursement',
      summary:
        'A payout is checked against the balance when it is accepted, not when it is carried out: two deposits accepted together that each fit the balance both succeed and overdraw it.',
      plugin: {
        wrap: {
          ledger: (ledger) => {
            books = ledger;
            return ledgerWith({
              covers: (user, product, currency, amountMinor) => {
                const key = keyOf(user, product, currency, amountMinor);
                const waiting = coveredWhenAccepted.get(key) ?? 0;
                if (waiting === 0) return ledger.covers(user, product, currency, amountMinor);
                coveredWhenAccepted.set(key, waiting - 1);
                return true;
              },
            })(ledger);
          },
          payments: (payments) => ({
            begin: (tx: Transaction, now?: number) => {
              if (tx.kind !== 'requesttopay' && books?.covers(tx.apiUserId, tx.product, tx.currency, tx.amountMinor)) {
                const key = keyOf(tx.apiUserId, tx.product, tx.currency, tx.amountMinor);
                coveredWhenAccepted.set(key, (coveredWhenAccepted.get(key) ?? 0) + 1);
              }
              payments.begin(tx, now);
            },
            statusRecord: (tx: Transaction) => payments.statusRecord(tx),
          }),
        },
      },
      breaks: 'reading',
    } satisfies Fault;
  })(),
  'deposit-overdraws': {
    feature: 'disbursement',
    summary: 'A deposit larger than the disbursement balance succeeds instead of failing with NOT_ENOUGH_FUNDS.',
    plugin: { wrap: { ledger: ledgerWith({ covers: () => true }) } },
    // The spec shows no status record and does not name its final states (§2.5, §3): FAILED and its reason are live.
    breaks: 'observed',
  },
  'refund-of-unknown-payment-succeeds': {
    feature: 'disbursement',
    summary: 'A refund naming a request to pay that does not exist succeeds.',
    plugin: {
      // The server makes up the request to pay it was asked to refund: a successful one, large enough, that no API user owns.
      install: (app, context) =>
        onRequests(app, context, 'preHandler', ['refund'], (request, { state, clock }) => {
          const body = request.body as { referenceIdToRefund?: string; currency?: string };
          if (!body.referenceIdToRefund || !body.currency) return;
          const id = idKey(body.referenceIdToRefund);
          if (state.transactions.requesttopay.has(id)) return;
          const now = clock.now();
          try {
            state.transactions.requesttopay.add(id, {
              kind: 'requesttopay',
              referenceId: id,
              apiUserId: 'made-up',
              product: 'collection',
              targetEnvironment: request.headers['x-target-environment'] as string,
              amountMinor: 10n ** 18n,
              amount: '100000000000000',
              currency: body.currency,
              status: 'SUCCESSFUL',
              completedAt: now,
              refundedMinor: 0n,
              callbackMethod: 'PUT',
            });
          } catch {
            // A full store: the refund then fails as it would without the fault.
          }
        }),
    },
    // That such a refund ends FAILED rests on the live service's names of final states (§3 does not show them).
    breaks: 'observed',
  },
  'deposit-status-amount-number': answer(
    'disbursement',
    'The deposit status record gives amount as a number instead of a string.',
    (a) => {
      if (is(a, 'getDepositStatus', 200) && isRecord(a.body)) a.body.amount = Number(a.body.amount);
    },
    'observed',
  ),

  // remittance.feature
  'remittance-balance-without-currency': answer('remittance', 'The remittance balance record lacks its currency.', (a) => {
    if (is(a, 'getBalance', 200) && a.product === 'remittance' && isRecord(a.body)) delete a.body.currency;
  }),
  'remittance-target-environment-ignored': {
    feature: 'remittance',
    summary: 'Remittance operations serve any X-Target-Environment instead of 500 NOT_ALLOWED_TARGET_ENVIRONMENT.',
    plugin: {
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.product === 'remittance',
          (request, { settings }) => {
            if (request.headers['x-target-environment'] !== undefined)
              request.headers['x-target-environment'] = settings.targetEnvironments[0]!;
          },
        ),
    },
  },

  // consent.feature
  'user-info-with-access-token': {
    feature: 'consent',
    summary: "User information is given for an ordinary access token, without the customer's consent.",
    plugin: {
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.credential === 'consent',
          (request, ctx) => {
            const token = bearerOf(request);
            const claims = token ? ctx.tokens.claimsOf(token) : undefined;
            if (claims?.use === 'access' && ctx.tokens.secondsLeft(claims) > 0)
              request.headers.authorization = `Bearer ${reissue(ctx, claims, { use: 'consent' })}`;
          },
        ),
    },
  },
  'consent-redeemable-twice': {
    feature: 'consent',
    breaks: 'reading',
    summary: 'An auth_req_id can be redeemed for a consent token more than once.',
    plugin: {
      // Redeeming is the only way a consent request is deleted; retention forgets expired ones on its own.
      wrap: {
        state: (state) => {
          state.consentRequests.delete = () => undefined;
          return state;
        },
      },
    },
  },
  'consent-scope-widened': answer(
    'consent',
    "A consent token's scope holds scopes that were not asked for (all_info and openid besides profile).",
    (a) => {
      if (!is(a, 'createOAuthToken', 200) || !isRecord(a.body) || typeof a.body.scope !== 'string') return;
      a.body.scope = [...new Set([...a.body.scope.split(' '), 'all_info', 'openid'])].join(' ');
    },
  ),
  'consent-scope-not-checked': {
    feature: 'consent',
    breaks: 'reading',
    summary: 'bc-authorize accepts a scope the service does not offer (it grants one it offers instead) rather than 400 UNSUPPORTED_SCOPE.',
    plugin: {
      install: (app, context) =>
        onRequests(app, context, 'preHandler', ['bcAuthorize'], (request, { settings }) => {
          const form = request.body as { scope?: string };
          if (typeof form.scope === 'string')
            form.scope = form.scope
              .split(' ')
              .map((s) => (s === '' || settings.scopes.includes(s) ? s : settings.scopes[0]!))
              .join(' ');
        }),
    },
  },
  'consent-refresh-refused': answer(
    'consent',
    'A refresh token is refused (invalid_grant) while the consent still lasts.',
    (a) => {
      if (is(a, 'createOAuthToken', 200) && (a.request.body as { grant_type?: string } | undefined)?.grant_type === 'refresh_token') {
        a.status = 400;
        a.body = { error: 'invalid_grant' };
      }
    },
    'reading',
  ),

  'consent-refresh-token-not-kept': answer(
    'consent',
    'A refresh grant gives a new refresh token that the server does not keep, so refreshing with it is refused (invalid_grant).',
    (a) => {
      if (!is(a, 'createOAuthToken', 200) || !isRecord(a.body)) return;
      if ((a.request.body as { grant_type?: string } | undefined)?.grant_type === 'refresh_token') a.body.refresh_token = randomUUID();
    },
  ),
  'consent-token-cacheable': answer(
    'consent',
    'The consent token answer lacks Cache-Control: no-store, so caches on the way may keep the token and its refresh token.',
    (a) => {
      if (a.operation === 'createOAuthToken') a.reply.removeHeader('cache-control');
    },
    'observed reading',
  ),
  'consent-pinged-before-decision': {
    feature: 'consent',
    breaks: 'reading',
    summary:
      "The consent request's ping callback is sent at once, before the customer has decided, so redeeming on it is authorization_pending.",
    plugin: {
      wrap: {
        callbacks: (sink) => ({
          send: (url, method, body, context) => sink.send(url, method, body, context),
          sendLater: (delayMs, url, method, body, context) =>
            context.kind === 'bc-authorize' ? sink.send(url, method, body, context) : sink.sendLater(delayMs, url, method, body, context),
          settled: () => sink.settled(),
          close: () => sink.close(),
          observe: (observer) => sink.observe?.(observer),
        }),
      },
    },
  },
  'consent-poll-slowed-beyond-interval': {
    feature: 'consent',
    breaks: 'reading',
    summary: 'The token operation answers slow_down to a CIBA poll less than interval + 2 s after the last poll of its auth_req_id.',
    plugin: {
      install: (app, context) => {
        const lastPoll = new Map<string, number>();
        answerInstead(app, context, ['createOAuthToken'], (request, { clock, settings }) => {
          const form = request.body as { grant_type?: string; auth_req_id?: string } | undefined;
          if (form?.grant_type !== 'urn:openid:params:grant-type:ciba' || !form.auth_req_id) return undefined;
          const now = clock.now();
          const last = lastPoll.get(form.auth_req_id);
          lastPoll.set(form.auth_req_id, now);
          return last !== undefined && now - last < settings.consentIntervalSeconds * 1000 + SLOWED_BEYOND_MS
            ? { status: 400, body: { error: 'slow_down' } }
            : undefined;
        });
      },
    },
  },

  // errors.feature
  'payment-reference-reused': idReused(
    'errors',
    'A reused request-to-pay reference id is accepted (202) and makes a second payment instead of 409.',
    'requestToPay',
    'requesttopay',
  ),
  'exact-repeat-accepted': {
    feature: 'inputs',
    summary:
      'A creation sent again exactly as it was, under its reference id, is taken as a retry (202, nothing new) instead of 409 RESOURCE_ALREADY_EXIST.',
    plugin: {
      install: (app, context) => {
        const firstBodies = new Map<string, string>();
        rewriteAnswers(app, context, (a) => {
          if (!CREATIONS.includes(a.operation)) return;
          const id = idKey(String(a.request.headers['x-reference-id']));
          const body = JSON.stringify(a.request.body);
          if (a.status === 202) firstBodies.set(id, body);
          else if (a.status === 409 && firstBodies.get(id) === body) {
            a.status = 202;
            a.body = undefined;
          }
        });
      },
    },
  },
  'email-party-lower-cased': {
    feature: 'inputs',
    breaks: 'observed',
    summary: 'A party identified by an e-mail address is given back in lower case, not as it was sent.',
    plugin: {
      install: (app, context) =>
        rewriteAnswers(app, context, (a) => {
          if (!is(a, STATUS_QUERIES, 200) || !isRecord(a.body)) return;
          for (const role of ['payer', 'payee']) {
            const party = a.body[role];
            if (isRecord(party) && party.partyIdType === 'EMAIL' && typeof party.partyId === 'string')
              a.body[role] = { ...party, partyId: party.partyId.toLowerCase() };
          }
        }),
    },
  },
  'duplicate-race': {
    feature: 'inputs',
    summary:
      'A creation looks for its reference id and stores it with a wait between, unlocked: two sent at once under one id are both accepted (202) and both carried out.',
    plugin: {
      install: (app, { state }) => {
        const beingHandled = new Set<string>();
        app.addHook('preHandler', async (request) => {
          const route = routeOf(request);
          const kind = route && TRANSACTIONS.find((t) => t.create === route.operation)?.store;
          if (!kind) return;
          const id = idKey(String(request.headers['x-reference-id']));
          if (!beingHandled.has(id)) {
            beingHandled.add(id);
            setTimeout(() => beingHandled.delete(id), 200).unref();
            return;
          }
          // The first is stored meanwhile; this one, which looked before it was, writes over it.
          await new Promise((resolve) => setTimeout(resolve, 20));
          state.transactions[kind].delete(id);
        });
      },
    },
  },
  'reference-ids-per-user': {
    feature: 'inputs',
    summary:
      'A creation under a reference id another API user used is accepted (202) and kept apart: reference ids are one space per API user.',
    plugin: {
      install: (app, context) =>
        onRequests(app, context, 'preHandler', CREATIONS, (request, { state }, route) => {
          const kind = TRANSACTIONS.find((t) => t.create === route.operation)!.store;
          const id = idKey(request.headers['x-reference-id'] as string);
          const earlier = state.transactions[kind].get(id);
          const caller = unverifiedClaims(bearerOf(request) ?? '')?.sub;
          if (earlier && caller !== undefined && earlier.apiUserId !== caller) state.transactions[kind].delete(id);
        }),
    },
    breaks: 'reading',
  },
  'payment-body-not-validated': answer(
    // Scoped runs take the feature that sends every invalid body: features/inputs.feature.
    'inputs',
    'Request-to-pay bodies are not validated: a malformed one is accepted (202) instead of 400.',
    (a) => {
      if (is(a, 'requestToPay', 400) && /body/.test(String((a.body as Json | undefined)?.message))) {
        a.status = 202;
        a.body = undefined;
      }
    },
  ),
  'currency-not-checked': {
    feature: 'errors',
    summary: 'Payments (and balances) in a currency the service does not take are accepted instead of 500 INVALID_CURRENCY.',
    plugin: { wrap: { ledger: ledgerWith({ accepts: () => true }) } },
    // That the target refuses MOMO_REFUSED_CURRENCY is the live service's (it takes only EUR) unless the run is told so:
    // in the spec profile a target that takes it is not tested, naming the setting.
    breaks: 'observed',
  },
  'gateway-key-not-enforced': {
    feature: 'errors',
    summary: "The gateway lets calls through without a subscription key, or with another product's key.",
    plugin: {
      // Whatever key came, or none: the call goes through as the operation's product (collection for provisioning).
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          () => true,
          (request, { settings }, route) => {
            const keys = settings.subscriptionKeys;
            const given = request.headers['ocp-apim-subscription-key'];
            const known = Object.values(keys).includes(given as string);
            if (route.product !== undefined) request.headers['ocp-apim-subscription-key'] = keys[route.product];
            else if (!known) request.headers['ocp-apim-subscription-key'] = keys.collection;
          },
        ),
    },
  },
  'duplicate-code-misspelled': answer(
    'errors',
    'A duplicate reference id is refused with code RESOURCE_ALREADY_EXISTS, which is not in the code set (RESOURCE_ALREADY_EXIST).',
    (a) => {
      if (a.status === 409 && isRecord(a.body) && a.body.code === 'RESOURCE_ALREADY_EXIST') a.body.code = 'RESOURCE_ALREADY_EXISTS';
    },
  ),
  'unknown-payment-is-500': answer(
    'errors',
    'Reading a payment that does not exist answers 500 INTERNAL_PROCESSING_ERROR instead of 404 RESOURCE_NOT_FOUND.',
    (a) => {
      if (is(a, STATUS_QUERIES, 404)) {
        a.status = 500;
        a.body = { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred.' };
      }
    },
    'observed',
  ),
  'bearer-token-not-required': {
    feature: 'errors',
    summary: 'Business operations called without an access token are accepted instead of 401.',
    plugin: {
      // A server that falls back to some merchant of the product when no token comes.
      install: (app, context) =>
        onRequests(
          app,
          context,
          'onRequest',
          (route) => route.credential === 'bearer' && route.product !== undefined,
          (request, { state, tokens }, route) => {
            if (bearerOf(request)) return;
            const fallback = [...state.apiUsers.values()].find((user) => user.product === route.product);
            if (fallback)
              request.headers.authorization = `Bearer ${tokens.issue({ sub: fallback.id, prd: route.product!, use: 'access' }, 60)}`;
          },
        ),
    },
  },
  'json-labelled-text-plain': answer('errors', 'JSON bodies are sent with Content-Type: text/plain.', (a) => {
    if (a.body !== undefined && a.contentType?.startsWith('application/json')) a.contentType = 'text/plain; charset=utf-8';
  }),
} satisfies Record<string, Fault>;

export type FaultName = keyof typeof definitions;

export const FAULTS: Readonly<Record<FaultName, Fault>> = definitions;
const catalogue = pluginCatalogue(FAULTS, 'a deliberate deviation', 'list-deviations');
export const FAULT_NAMES = catalogue.names;
export const isFaultName = catalogue.isName;
/** The faults named (each once) as sandbox plugins; throws, naming it, on a name that is no fault. */
export const faultPlugins = catalogue.plugins;

/** A clock that says the same moment for ever. */
function stoppedAt(moment: number) {
  return { now: () => moment };
}

/** A comma-separated list of names, as --deviations and MOMO_SANDBOX_DEVIATIONS give them. */
export function faultNamesOf(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The sandbox command's setting that names the faults to start with. */
export const DEVIATIONS_SETTING: ExtraSetting = {
  flag: 'deviations',
  env: 'MOMO_SANDBOX_DEVIATIONS',
  type: 'string',
  fallback: '',
  describe:
    'Comma-separated deliberate deviations from the API, to see the conformance suite fail (see --list-deviations); none by default.',
};

export const LIST_DEVIATIONS_SETTING: ExtraSetting = {
  flag: 'list-deviations',
  type: 'boolean',
  fallback: '',
  describe: 'Lists the deliberate deviations a sandbox can be started with, by the feature file that catches each.',
};

/** The catalogue as text, by feature, for --list-deviations and the docs. */
export function faultsText(): string {
  const byFeature = new Map<FeatureName, FaultName[]>();
  for (const name of FAULT_NAMES) byFeature.set(FAULTS[name].feature, [...(byFeature.get(FAULTS[name].feature) ?? []), name]);
  const width = Math.max(...FAULT_NAMES.map((n) => n.length));
  const lines = [
    `${FAULT_NAMES.length} deliberate deviations; start the sandbox with --deviations <name>[,<name>...] (MOMO_SANDBOX_DEVIATIONS).`,
  ];
  for (const [feature, names] of byFeature) {
    lines.push('', `features/${feature}.feature:`);
    for (const name of names) lines.push(`  ${name.padEnd(width)}  ${FAULTS[name].summary}`);
  }
  return lines.join('\n');
}
