import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import secureJson from 'secure-json-parse';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajv } from '../core/schemas.ts';
import { CallbackSender } from './callbacks.ts';
import { Deviations } from '../sandbox-quality/faults/faults.ts';
import { systemClock, type Clock } from './clock.ts';
import { frameworkErrorMessage, sendBadRequest, sendBusinessError, sendGatewayError, sendOAuthError, validationMessage } from './http.ts';
import { OperationCatalogue, type OperationSpec } from './operations.ts';
import { loadOutcomes } from './outcomes.ts';
import { PaymentEngine } from './payments.ts';
import { PRODUCTS, type Product } from '../core/products.ts';
import { behaviourOf, type ProfileBehaviour } from '../core/profiles.ts';
import type { SandboxSettings } from './settings.ts';
import { SandboxState, type ApiUser } from './state.ts';
import { StoreFullError } from './store.ts';
import { TokenAuthority, type TokenClaims } from './tokens.ts';
import { registerProvisioning } from './routes/provisioning.ts';
import { registerAccessTokens } from './routes/access-tokens.ts';
import { registerPayments } from './routes/payments.ts';
import { registerAccounts } from './routes/accounts.ts';
import { registerConsent } from './routes/consent.ts';
import { registerMeta } from './routes/meta.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API user behind the Bearer token, set for operations that take one. */
    caller: ApiUser | null;
    claims: TokenClaims | null;
    /** The product whose subscription key the request carried. */
    keyProduct: Product | null;
  }
  interface FastifyContextConfig {
    operation?: OperationSpec;
    mediaType?: string;
  }
}

/** What every route module works with. */
export interface SandboxContext {
  settings: SandboxSettings;
  profile: ProfileBehaviour;
  clock: Clock;
  state: SandboxState;
  tokens: TokenAuthority;
  payments: PaymentEngine;
  callbacks: CallbackSender;
  catalogue: OperationCatalogue;
  /** Deliberate non-conformances this sandbox was started with (none by default). */
  deviations: Deviations;
}

export interface Sandbox {
  app: FastifyInstance;
  context: SandboxContext;
  close(): Promise<void>;
}

export interface SandboxOptions {
  clock?: Clock;
  /** A logger to use instead of building one from settings.logLevel (tests pass a silent or capturing one). */
  logger?: FastifyBaseLogger;
}

/** Secrets that must never reach a log line, wherever a serializer might put them. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["ocp-apim-subscription-key"]',
  'headers.authorization',
  'headers["ocp-apim-subscription-key"]',
  'apiKey',
  'access_token',
  'refresh_token',
];

export async function buildSandbox(settings: SandboxSettings, options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger }
      : { logger: { level: settings.logLevel, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' } } }),
    bodyLimit: 64 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Clients send the subscription key on every call; request ids in logs tie a failure to its request.
    requestIdHeader: false,
    // Errors the router raises before any route runs (a malformed URL, a path segment too long) get the same body as the rest.
    frameworkErrors: (error, request, reply) => {
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const path = request.url.length > 120 ? `${request.url.slice(0, 120)}…` : request.url;
      const problem = status === 414 ? 'has a path segment longer than 200 characters' : 'is not a valid URL (check its percent-encoding)';
      return sendBadRequest(reply, `${request.method} ${path} ${problem}.`, status);
    },
    // Two log lines per request would cost a load test more than the request itself; debug turns them on.
    logController: new LogController({ disableRequestLogging: settings.logLevel !== 'debug' && settings.logLevel !== 'trace' }),
  });
  app.setValidatorCompiler(({ schema }) => routeValidator(schema));
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  installJsonParser(app);

  const profile = behaviourOf(settings.profile);
  const state = new SandboxState(settings, clock);
  const deviations = new Deviations(settings.deviations);
  const callbacks = new CallbackSender({ timeoutMs: settings.callbackTimeoutMs, retryDelaysMs: settings.callbackRetryDelaysMs }, app.log);
  const outcomes = loadOutcomes(settings.outcomesFile, settings.delayedSuccessMs);
  const payments = new PaymentEngine(state, outcomes, settings, profile, clock, callbacks, app.log, deviations);
  const tokens = new TokenAuthority(settings.jwtSecret, clock, deviations);
  const catalogue = new OperationCatalogue(app);
  const context: SandboxContext = { settings, profile, clock, state, tokens, payments, callbacks, catalogue, deviations };
  if (deviations.names.length > 0) app.log.warn({ deviations: deviations.names }, 'started with deliberate deviations from the API');
  deviations.install(app);

  installGuards(app, context);
  installErrorHandling(app);

  registerProvisioning(context);
  registerAccessTokens(context);
  registerPayments(context);
  registerAccounts(context);
  registerConsent(context);
  registerMeta(app, context);

  const sweeper = setInterval(() => state.forgetExpired(), Math.min(10_000, settings.retentionMaxAgeMs));
  sweeper.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await callbacks.close();
    for (const store of Object.values(state.transactions)) for (const tx of store.values()) clearTimeout(tx.timer);
  });

  // Compiles every route's validators now, so a bad schema fails the start rather than a request.
  await app.ready();
  return { app, context, close: () => app.close() };
}

/**
 * Route validators by the text of their schema, shared by every sandbox of the process. Ajv caches a compiled
 * schema by its object, and each build makes new objects: every sandbox built (the tests, the fuzzer's
 * episodes) compiled each route again, about 100 ms, and Ajv kept every copy (0.27 MB a sandbox).
 * A validator holds no state between calls (Fastify reads its errors right after calling it).
 */
const routeValidators = new Map<string, ValidateFunction>();

function routeValidator(schema: unknown): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = routeValidators.get(key);
  if (!validate) routeValidators.set(key, validate = ajv.compile(schema as object));
  return validate;
}

/** The checks every operation shares, in the order the live gateway applies them. */
function installGuards(app: FastifyInstance, context: SandboxContext): void {
  const { settings, state, tokens, deviations } = context;
  const productByKey = new Map<string, Product>(PRODUCTS.map((p) => [settings.subscriptionKeys[p], p]));
  const allowedEnvironments = new Set(settings.targetEnvironments);

  app.decorateRequest('caller', null);
  app.decorateRequest('claims', null);
  app.decorateRequest('keyProduct', null);

  // Callback-style hooks: the request path is the sandbox's hot path, and they spare a promise per request.
  // A guard that answers returns the reply; the request goes on only when none did.
  const admit = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const operation = request.routeOptions.config.operation;
    if (!operation) return undefined;

    // 1. The gateway: a subscription key of the operation's product.
    const key = request.headers['ocp-apim-subscription-key'];
    if (deviations.has('gateway-key-not-enforced')) {
      // Whatever key came, or none: the call goes through as the operation's product.
      request.keyProduct = operation.product !== 'provisioning' ? operation.product : (typeof key === 'string' && productByKey.get(key)) || 'collection';
    } else {
      if (typeof key !== 'string' || key.length === 0) return sendGatewayError(reply, 'missing');
      const keyProduct = productByKey.get(key);
      if (!keyProduct || (operation.product !== 'provisioning' && keyProduct !== operation.product)) {
        return sendGatewayError(reply, 'invalid');
      }
      request.keyProduct = keyProduct;
    }
    const keyProduct = request.keyProduct;

    // 2. The caller: a Bearer token of this product, for a known API user.
    if (operation.credential === 'bearer' || operation.credential === 'consent') {
      const authorization = request.headers.authorization;
      const token = typeof authorization === 'string' && /^Bearer [^\s]+$/i.test(authorization) ? authorization.slice(7) : undefined;
      if (!token && deviations.has('bearer-token-not-required')) {
        // A server that falls back to some merchant of the product when no token comes.
        const fallback = [...state.apiUsers.values()].find((user) => user.product === keyProduct);
        if (fallback) {
          request.caller = fallback;
          return undefined;
        }
      }
      if (!token) return sendOAuthError(reply, 401, 'invalid_token', { description: 'Send Authorization: Bearer <access token>.' });
      let check = tokens.check(token, keyProduct, operation.credential === 'consent' ? 'consent' : 'access');
      if (!check.ok && operation.credential === 'consent' && deviations.has('user-info-with-access-token')) check = tokens.check(token, keyProduct, 'access');
      if (!check.ok) return sendOAuthError(reply, 401, 'invalid_token', { description: check.description });
      const caller = state.apiUsers.get(check.claims.sub);
      if (!caller) return sendOAuthError(reply, 401, 'invalid_token', { description: 'The API user of this token no longer exists.' });
      request.caller = caller;
      request.claims = check.claims;
    }

    // 3. The body: none where none is allowed; an omitted Content-Type means the operation's own.
    const hasBody = (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0')
      || request.headers['transfer-encoding'] !== undefined;
    if (operation.noBody && hasBody) return sendBadRequest(reply, `${operation.summary} takes no body; send the request without one.`);
    if (operation.body && hasBody) {
      const contentType = request.headers['content-type'];
      if (contentType === undefined) {
        request.headers['content-type'] = operation.body.mediaType;
      } else if (contentType.split(';')[0]!.trim().toLowerCase() !== operation.body.mediaType) {
        return sendBadRequest(reply, `Content-Type "${contentType}" is not accepted by this operation; send ${operation.body.mediaType}.`, 415);
      }
    }
    return undefined;
  };

  // 4. The target environment, once the headers are known to be well formed.
  const environmentAllowed = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const operation = request.routeOptions.config.operation;
    if (!operation?.requiredHeaders?.includes('x-target-environment')) return undefined;
    const environment = request.headers['x-target-environment'] as string;
    if (allowedEnvironments.has(environment)) return undefined;
    if (operation.product === 'remittance' && deviations.has('remittance-target-environment-ignored')) return undefined;
    return sendBusinessError(reply, 500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', `Access to target environment "${environment}" is forbidden; this sandbox serves ${[...allowedEnvironments].join(', ')}.`);
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (!admit(request, reply)) done();
  });
  app.addHook('preHandler', (request, reply, done) => {
    if (!environmentAllowed(request, reply)) done();
  });
}

/** JSON bodies parsed as Fastify does, but saying which key was refused rather than that the JSON is invalid. */
function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    const fail = (message: string) => done(Object.assign(new Error(message), { statusCode: 400, code: 'MOMO_INVALID_JSON' }), undefined);
    if (text.trim() === '') return fail('The body is empty, but Content-Type says application/json; send a JSON object.');
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const message = (error as Error).message;
      fail(/prototype/i.test(message)
        ? 'The body contains a "__proto__" or "constructor.prototype" key, which is refused; remove it.'
        : `The body is not valid JSON (${message}).`);
    }
  });
}

function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply) => {
    if (error.validation) return sendBadRequest(reply, validationMessage(error));
    if (error instanceof StoreFullError) {
      request.log.warn({ store: error.storeName, maxEntries: error.maxEntries }, 'store full; refusing a creation');
      reply.header('retry-after', '10');
      return sendBusinessError(reply, 503, 'SERVICE_UNAVAILABLE', `${error.message}; retry later, or start the sandbox with a larger --retention-max-entries (or, for transactions, a shorter --retention-max-age-ms).`);
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendBadRequest(reply, frameworkErrorMessage(error, request), status);
    request.log.error({ err: error }, 'unexpected error');
    return sendBusinessError(reply, 500, 'INTERNAL_PROCESSING_ERROR', 'An internal error occurred while processing; the sandbox log has the details.');
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    return sendBadRequest(reply, `No operation ${request.method} ${path}. GET /openapi.json lists every operation this sandbox serves.`, 404);
  });
}
