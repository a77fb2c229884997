import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { behaviourOf } from '../core/profiles.ts';
import { CallbackDestinations } from './domain/callback-destinations.ts';
import { CallbackSender } from './domain/callbacks.ts';
import { systemClock, type Clock } from './domain/clock.ts';
import { InMemoryLedger } from './domain/ledger.ts';
import { loadOutcomes } from './domain/outcomes.ts';
import { PaymentEngine } from './domain/payments.ts';
import { openSandboxData, type Recovery, type SandboxData } from './domain/persistence.ts';
import type { DataDirectoryOptions } from './domain/journal.ts';
import type { SandboxPlugin } from './domain/plugins.ts';
import type { SandboxSettings } from './domain/settings.ts';
import { SandboxState } from './domain/state.ts';
import { TokenAuthority } from './domain/tokens.ts';
import { ClientReport } from './client-report/client-report.ts';
import {
  answerClientError,
  checkingIntervalMs,
  type ConnectionDeadlines,
  enforceConnectionDeadlines,
} from './http/connection-deadlines.ts';
import { catalogueGuards, fixedPathRoutes, installBodyParsers, installErrorHandling, routeValidator } from './http/guards.ts';
import { sendBadRequest } from './http/replies.ts';
import { refuseUnframedRequests } from './http/framing.ts';
import { LONGEST_PATH_PARAMETER, MAX_PARAM_LENGTH, serveCatalogue } from './http/serving.ts';
import { accessTokenHandlers } from './routes/access-tokens.ts';
import { accountHandlers } from './routes/accounts.ts';
import { consentHandlers } from './routes/consent.ts';
import { registerMeta } from './routes/meta.ts';
import { paymentHandlers } from './routes/payments.ts';
import { provisioningHandlers } from './routes/provisioning.ts';
import type { SandboxComponents, SandboxContext } from './domain/context.ts';

export type { SandboxComponents, SandboxContext };

export interface Sandbox {
  app: FastifyInstance;
  context: SandboxContext;
  /** The sandbox's own log: callbacks, refusals, errors, and each request at debug level. */
  log: FastifyBaseLogger;
  /** The connections the sandbox watches for its deadlines (sandbox/http/connection-deadlines.ts). */
  connections: ConnectionDeadlines;
  /** The client report, when the sandbox keeps one (--client-report). */
  clientReport?: ClientReport;
  /** With --data: the directory its state is kept in, what a start read back from it, and a failure to write it. */
  data: { path: string; recovered: Recovery; failure: Promise<Error> } | undefined;
  close(): Promise<void>;
}

export interface SandboxOptions {
  clock?: Clock;
  /** A logger to use instead of building one from settings.logLevel (tests pass a silent or capturing one). */
  logger?: FastifyBaseLogger;
  /** Plugins at the sandbox's edges, e.g. deliberate faults (sandbox-quality/faults); none for a faithful sandbox. */
  plugins?: readonly SandboxPlugin[];
  /**
   * The client report to keep, made by the caller (who may hand its chaosApplied to a chaos plugin); otherwise
   * the sandbox makes one when settings.clientReport names a folder.
   */
  clientReport?: ClientReport;
  /** How the data directory (settings.dataDir) is kept: tests start new generations sooner. */
  dataDirectory?: DataDirectoryOptions;
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

/** Whether the log's level takes a line per request; Fastify then has the log, and announces where it listens. */
export function logsEachRequest(log: FastifyBaseLogger): boolean {
  return log.level === 'debug' || log.level === 'trace';
}

export async function buildSandbox(given: SandboxSettings, options: SandboxOptions = {}): Promise<Sandbox> {
  // First: a folder it cannot write stops the start before anything is built.
  const clientReport = options.clientReport ?? (given.clientReport === undefined ? undefined : new ClientReport(given.clientReport));
  const clock = options.clock ?? systemClock;
  const log: FastifyBaseLogger = options.logger ?? pino({ level: given.logLevel, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' } });
  // Taken first, so that a directory that cannot be used stops the start before anything else is made.
  const data = given.dataDir === undefined ? undefined : openSandboxData(given, log, options.dataDirectory);
  // Without a configured secret, the data directory's signs the tokens, so they stay valid across restarts.
  const settings = data && !given.jwtSecret ? { ...given, jwtSecret: data.tokenSecret } : given;
  try {
    return await assemble(settings, clock, log, options, data, clientReport);
  } catch (error) {
    data?.release();
    throw error;
  }
}

async function assemble(
  settings: SandboxSettings,
  clock: Clock,
  log: FastifyBaseLogger,
  options: SandboxOptions,
  data: SandboxData | undefined,
  clientReport: ClientReport | undefined,
): Promise<Sandbox> {
  const app = serverOf(settings, log);
  // First of all hooks: a request without a trustworthy length is answered before any route or plugin sees it.
  refuseUnframedRequests(app);
  const connections = enforceConnectionDeadlines(app.server, settings, log);
  data?.holdAnswers(app);
  app.setValidatorCompiler(({ schema, httpPart }) => routeValidator(schema, httpPart, settings.strict));
  installBodyParsers(app);
  // The client report first: its hooks see each request as the client sent it, before another plugin changes it.
  const plugins = [...(clientReport ? [clientReport.plugin] : []), ...(options.plugins ?? [])];
  const context = contextOf(settings, clock, log, plugins, data);
  serveApi(app, context, plugins);
  forgetAndCloseWithApp(app, context, data);
  // Compiles every route's validators now, so a bad schema fails the start rather than a request.
  try {
    await app.ready();
    const recovered = data?.recover(context);
    return {
      app,
      context,
      log,
      connections,
      ...(clientReport ? { clientReport } : {}),
      data: data && { path: data.path, recovered: recovered!, failure: data.failure },
      close: () => app.close(),
    };
  } catch (error) {
    data?.release();
    await app.close();
    throw error;
  }
}

/** Fastify with the sandbox's bounds: body size, deadlines for slow callers, connections, path segments. */
function serverOf(settings: SandboxSettings, log: FastifyBaseLogger): FastifyInstance {
  // Fastify given a logger gives every request a child logger and two response listeners, even when request
  // logging is off: together about a tenth of a request to pay's CPU (docs/performance.md). So Fastify gets the
  // log only at the levels that log each request; the sandbox's own lines go to the log directly.
  const app = Fastify({
    ...(logsEachRequest(log) ? { loggerInstance: log } : { logger: false }),
    bodyLimit: 64 * 1024,
    // Slow or stalled callers (one byte a second, a body that stops halfway) would otherwise hold a connection
    // and its buffers for ever. Node looks for overdue requests every connectionsCheckingInterval, so it is kept
    // well under the timeouts; enforceConnectionDeadlines covers what Node's checks leave out.
    http: {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(settings),
    },
    requestTimeout: settings.requestTimeoutMs,
    clientErrorHandler: answerClientError,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Clients send the subscription key on every call; request ids in logs tie a failure to its request.
    requestIdHeader: false,
    // Errors the router raises before any route runs (a malformed URL, a path segment too long) get the same body as the rest.
    frameworkErrors: (error, request, reply) => {
      const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const path = request.url.length > 120 ? `${request.url.slice(0, 120)}…` : request.url;
      const problem =
        status === 414
          ? `has a path segment longer than any path parameter may be (${LONGEST_PATH_PARAMETER} characters)`
          : 'is not a valid URL (check its percent-encoding)';
      return sendBadRequest(reply, `${request.method} ${path} ${problem}.`, status);
    },
  });
  app.server.maxConnections = settings.maxConnections;
  return app;
}

/** The sandbox's components, each built from the ones before it as the plugins left them. */
function contextOf(
  settings: SandboxSettings,
  clock: Clock,
  log: FastifyBaseLogger,
  plugins: readonly SandboxPlugin[],
  data: SandboxData | undefined,
): SandboxContext {
  const profile = behaviourOf(settings.profile);
  const outcomes = loadOutcomes(settings.outcomesFile, settings.delayedSuccessMs);
  let components = { clock } as SandboxComponents;
  const build = <K extends keyof SandboxComponents>(name: K, make: () => SandboxComponents[K]) => {
    components = { ...components, [name]: make() };
    for (const plugin of plugins) {
      const wrapped = plugin.wrap?.[name]?.(components[name] as never, { settings, profile, log, components });
      if (wrapped) components = { ...components, [name]: wrapped };
    }
  };
  build('clock', () => clock);
  build('state', () => new SandboxState(settings, components.clock));
  build('ledger', () => new InMemoryLedger({ openingBalance: settings.openingBalance, currencies: settings.currencies }));
  build('tokens', () => new TokenAuthority(settings.jwtSecret, components.clock));
  const destinations = new CallbackDestinations(settings.callbackHosts);
  build('callbacks', () => {
    const sender = new CallbackSender(
      { timeoutMs: settings.callbackTimeoutMs, retryDelaysMs: settings.callbackRetryDelaysMs, destinations },
      log,
      components.clock,
    );
    return data ? data.deferringCallbacks(sender) : sender;
  });
  build(
    'payments',
    () => new PaymentEngine(components.state, components.ledger, outcomes, settings, components.clock, components.callbacks, log),
  );
  return { ...components, settings, profile, destinations, log };
}

/** The plugins, then the catalogue's operations behind their guards, and the sandbox's own routes. */
function serveApi(app: FastifyInstance, context: SandboxContext, plugins: readonly SandboxPlugin[]): void {
  const changing = plugins.filter((plugin) => !plugin.observesOnly);
  if (changing.length > 0) context.log.warn({ plugins: changing.map((p) => p.name) }, 'started with plugins that change its behaviour');
  const fixed = fixedPathRoutes(app);
  // Before the guards: a plugin's request hooks see a request as the client sent it.
  for (const plugin of plugins) plugin.install?.(app, context);
  const guards = catalogueGuards(context);
  installErrorHandling(app, context.log, fixed);
  serveCatalogue(
    app,
    {
      ...provisioningHandlers(context),
      ...accessTokenHandlers(context),
      ...paymentHandlers(context),
      ...accountHandlers(context),
      ...consentHandlers(context),
    },
    guards,
  );
  registerMeta(app, context);
}

/** Records past their retention are forgotten as time goes; on close, callbacks and timers stop, then the state is kept. */
function forgetAndCloseWithApp(app: FastifyInstance, context: SandboxContext, data: SandboxData | undefined): void {
  const sweeper = setInterval(() => context.state.forgetExpired(), Math.min(10_000, context.settings.retentionMaxAgeMs));
  sweeper.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    await context.callbacks.close();
    for (const store of Object.values(context.state.transactions)) for (const tx of store.values()) tx.timer?.cancel();
    // Last: what the steps above settled is written before the directory is let go.
    await data?.close();
  });
}
