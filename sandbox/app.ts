import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import secureJson from 'secure-json-parse';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajv } from '../core/schemas.ts';
import { CallbackSender, type CallbackSink } from './callbacks.ts';
import { systemClock, type Clock } from './clock.ts';
import { frameworkErrorMessage, sendBadRequest, sendBusinessError, sendGatewayError, sendOAuthError, validationMessage } from './http.ts';
import { CatalogueRoutes, type ServedRoute } from './serving.ts';
import { InMemoryLedger, type Ledger } from './ledger.ts';
import { loadOutcomes } from './outcomes.ts';
import { PaymentEngine, type Payments } from './payments.ts';
import type { SandboxPlugin } from './plugins.ts';
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
    /** The catalogue operation a route serves, and under which product. */
    route?: ServedRoute;
    mediaType?: string;
  }
}

/**
 * The parts of the sandbox that the routes and guards work through. A plugin (plugins.ts) may wrap or replace
 * them before anything takes them: that is where a deliberate fault changes the sandbox, never inside its code.
 */
export interface SandboxComponents {
  clock: Clock;
  state: SandboxState;
  ledger: Ledger;
  tokens: TokenAuthority;
  callbacks: CallbackSink;
  payments: Payments;
}

/** What every route module works with. */
export interface SandboxContext extends SandboxComponents {
  settings: SandboxSettings;
  profile: ProfileBehaviour;
  routes: CatalogueRoutes;
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
  /** Plugins at the sandbox's edges, e.g. deliberate faults (sandbox-quality/faults); none for a faithful sandbox. */
  plugins?: readonly SandboxPlugin[];
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
  const plugins = options.plugins ?? [];
  const outcomes = loadOutcomes(settings.outcomesFile, settings.delayedSuccessMs);
  // Each component is built from the ones before it as the plugins left them.
  let components = { clock } as SandboxComponents;
  const build = <K extends keyof SandboxComponents>(name: K, make: () => SandboxComponents[K]) => {
    components = { ...components, [name]: make() };
    for (const plugin of plugins) {
      const wrapped = plugin.wrap?.[name]?.(components[name] as never, { settings, profile, components });
      if (wrapped) components = { ...components, [name]: wrapped };
    }
  };
  build('clock', () => clock);
  build('state', () => new SandboxState(settings, components.clock));
  build('ledger', () => new InMemoryLedger({ openingBalance: settings.openingBalance, currencies: settings.currencies }));
  build('tokens', () => new TokenAuthority(settings.jwtSecret, components.clock));
  build('callbacks', () => new CallbackSender({ timeoutMs: settings.callbackTimeoutMs, retryDelaysMs: settings.callbackRetryDelaysMs }, app.log));
  build('payments', () => new PaymentEngine(components.state, components.ledger, outcomes, settings, profile, components.clock, components.callbacks, app.log));
  const context: SandboxContext = { ...components, settings, profile, routes: new CatalogueRoutes(app) };
  if (plugins.length > 0) app.log.warn({ plugins: plugins.map((p) => p.name) }, 'started with plugins that change its behaviour');
  // Before the guards: a plugin's request hooks see a request as the client sent it.
  for (const plugin of plugins) plugin.install?.(app, context);

  installGuards(app, context);
  installErrorHandling(app);

  registerProvisioning(context);
  registerAccessTokens(context);
  registerPayments(context);
  registerAccounts(context);
  registerConsent(context);
  context.routes.ensureComplete();
  registerMeta(app, context);

  const sweeper = setInterval(() => context.state.forgetExpired(), Math.min(10_000, settings.retentionMaxAgeMs));
  sweeper.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await context.callbacks.close();
    for (const store of Object.values(context.state.transactions)) for (const tx of store.values()) clearTimeout(tx.timer);
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
  const { settings, state, tokens } = context;
  const productByKey = new Map<string, Product>(PRODUCTS.map((p) => [settings.subscriptionKeys[p], p]));
  const allowedEnvironments = new Set(settings.targetEnvironments);

  app.decorateRequest('caller', null);
  app.decorateRequest('claims', null);
  app.decorateRequest('keyProduct', null);

  // Callback-style hooks: the request path is the sandbox's hot path, and they spare a promise per request.
  // A guard that answers returns the reply; the request goes on only when none did.
  const admit = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const route = request.routeOptions.config.route;
    if (!route) return undefined;
    const { operation } = route;

    // 1. The gateway: a subscription key of the operation's product (any product's for provisioning).
    const key = request.headers['ocp-apim-subscription-key'];
    if (typeof key !== 'string' || key.length === 0) return sendGatewayError(reply, 'missing');
    const keyProduct = productByKey.get(key);
    if (!keyProduct || (route.product !== undefined && keyProduct !== route.product)) return sendGatewayError(reply, 'invalid');
    request.keyProduct = keyProduct;

    // 2. The caller: a Bearer token of this product, for a known API user.
    if (operation.credential === 'bearer' || operation.credential === 'consent') {
      const authorization = request.headers.authorization;
      const token = typeof authorization === 'string' && /^Bearer [^\s]+$/i.test(authorization) ? authorization.slice(7) : undefined;
      if (!token) return sendOAuthError(reply, 401, 'invalid_token', { description: 'Send Authorization: Bearer <access token>.' });
      const check = tokens.check(token, keyProduct, operation.credential === 'consent' ? 'consent' : 'access');
      if (!check.ok) return sendOAuthError(reply, 401, 'invalid_token', { description: check.description });
      const caller = state.apiUsers.get(check.claims.sub);
      if (!caller) return sendOAuthError(reply, 401, 'invalid_token', { description: 'The API user of this token no longer exists.' });
      request.caller = caller;
      request.claims = check.claims;
    }

    // 3. The body: none where none is allowed; an omitted Content-Type means the operation's own.
    const hasBody = (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0')
      || request.headers['transfer-encoding'] !== undefined;
    if (operation.request === 'none' && hasBody) return sendBadRequest(reply, `${capitalised(operation.label)} takes no body; send the request without one.`);
    if (operation.request !== 'none' && hasBody) {
      const contentType = request.headers['content-type'];
      if (contentType === undefined) {
        request.headers['content-type'] = operation.request.mediaType;
      } else if (contentType.split(';')[0]!.trim().toLowerCase() !== operation.request.mediaType) {
        return sendBadRequest(reply, `Content-Type "${contentType}" is not accepted by this operation; send ${operation.request.mediaType}.`, 415);
      }
    }
    return undefined;
  };

  // 4. The target environment, once the headers are known to be well formed.
  const environmentAllowed = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const operation = request.routeOptions.config.route?.operation;
    if (!operation?.headers.required.includes('x-target-environment')) return undefined;
    const environment = request.headers['x-target-environment'] as string;
    if (allowedEnvironments.has(environment)) return undefined;
    return sendBusinessError(reply, 500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', `Access to target environment "${environment}" is forbidden; this sandbox serves ${[...allowedEnvironments].join(', ')}.`);
  };

  app.addHook('onRequest', (request, reply, done) => {
    if (!admit(request, reply)) done();
  });
  app.addHook('preHandler', (request, reply, done) => {
    if (!environmentAllowed(request, reply)) done();
  });
}

const capitalised = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`;

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
