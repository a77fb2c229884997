import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OPERATIONS, type TransactionStore } from '../../core/catalogue/operations.ts';
import { PRODUCTS, type Product } from '../../core/products.ts';
import type { ChaosApplied, ChaosListener } from '../domain/chaos-applied.ts';
import type { CallbackAttempt, CallbackSink } from '../domain/callbacks.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { SandboxPlugin } from '../domain/plugins.ts';
import { type ApiUser, idKey } from '../domain/state.ts';
import { basicCredentialOf } from '../http/credentials.ts';
import { renderClientReportHtml } from './html.ts';
import { renderClientReportJunit } from './client-report-junit.ts';
import {
  fingerprintOfBody,
  fingerprintOfTransaction,
  type KnownSecret,
  type ObservedExchange,
  type Principal,
  type StoredRecord,
} from './observed.ts';
import { Recorder } from './recorder.ts';
import { buildDocument, type ClientReportDocument } from './report.ts';

/** The files the report is written to, in its folder. */
export const CLIENT_REPORT_FILES = { json: 'client-report.json', html: 'client-report.html', junit: 'client-report.junit.xml' } as const;

/** The meta routes of the report (no subscription key): the report as JSON, and writing it to its folder now. */
export const CLIENT_REPORT_ROUTES = { read: '/client-report', write: '/client-report/write' } as const;

/** Answers kept whatever their status: those a rule reads (bc-authorize's interval). */
const ANSWERS_READ: ReadonlySet<string> = new Set(['bcAuthorize']);
const BODY_CHARS = 64 * 1024;
/** Requests answered lately, for a chaos condition told after its request's answer. */
const RECENT_REQUESTS = 256;
/** Requests being answered that the report follows; past it, the oldest is let go (the connections bound them first). */
const PENDING_REQUESTS = 4096;

/** A request being answered: what the hooks saw of it so far. */
interface Pending {
  request: FastifyRequest;
  at: number;
  body?: unknown;
  responseBody?: string;
  challenge?: string;
  chaos: ChaosApplied[];
}

/**
 * The client report (--client-report, MOMO_SANDBOX_CLIENT_REPORT): a plugin at the sandbox's edges that watches
 * every request and answer (Fastify hooks), every callback attempt (it wraps the callback sink) and every chaos
 * condition applied (chaosApplied, a ChaosListener), judges them by the rules of rules.ts for each client, and
 * writes what it found to its folder as HTML, JSON and JUnit when the sandbox closes and on
 * POST /client-report/write. A sandbox without it has none of this installed.
 */
export class ClientReport {
  readonly dir: string;
  readonly plugin: SandboxPlugin;
  private readonly recorder = new Recorder();
  private readonly pending = new Map<string, Pending>();
  private readonly recent = new Map<string, Principal>();
  private readonly callbackClients = new WeakMap<object, Principal>();
  private context: SandboxContext | undefined;
  /** Why the report could not be written when the sandbox closed, if it could not. */
  closingError: Error | undefined;
  private configuredSecrets: KnownSecret[] = [];
  private productOfKey = new Map<string, Product>();

  /** Checks that the folder can be written, making it if need be: a sandbox that could not write its report does not start. */
  constructor(dir: string) {
    this.dir = resolve(dir);
    try {
      mkdirSync(this.dir, { recursive: true });
      accessSync(this.dir, constants.W_OK);
    } catch (error) {
      throw new Error(
        `--client-report (MOMO_SANDBOX_CLIENT_REPORT) names "${dir}", which is not a folder the sandbox can write (${(error as Error).message}); name another.`,
      );
    }
    this.plugin = {
      name: 'client report',
      observesOnly: true,
      wrap: { callbacks: (sink) => this.watchCallbacks(sink) },
      install: (app, context) => this.install(app, context),
    };
  }

  /** A ChaosListener (sandbox/domain/chaos-applied.ts): each condition the chaos plugin applied to a client. */
  readonly chaosApplied: ChaosListener = (told) => {
    const context = this.context;
    if (!context) return;
    // A condition on a transaction (long-pending, a callback's) comes as the creation that made it is being answered:
    // it belongs to that request, which is then not the client's retry, and whose answer says what the client was told.
    const creation = told.requestId === undefined ? this.creationInFlight(told.referenceId, told.apiUserId) : undefined;
    const applied: ChaosApplied = creation ? { ...told, requestId: creation.request.id } : told;
    const pending = applied.requestId === undefined ? undefined : this.pending.get(applied.requestId);
    pending?.chaos.push(applied);
    const user = applied.apiUserId === undefined ? undefined : context.state.apiUsers.get(idKey(applied.apiUserId));
    const principal =
      (user && apiUserPrincipal(user)) ??
      (pending && this.principalOf(pending.request)) ??
      (applied.requestId === undefined ? undefined : this.recent.get(applied.requestId)) ??
      NO_CLIENT;
    const operation = applied.operationId === undefined ? undefined : OPERATIONS[applied.operationId];
    const store = operation?.store ?? operation?.reads;
    const stored = store && applied.referenceId !== undefined ? this.storedTransaction(store, applied.referenceId) : undefined;
    this.recorder.chaos({ principal, applied, inFlight: pending !== undefined, store, stored });
  };

  /** The creation being answered that makes the API user's transaction with this X-Reference-Id, if one is. */
  private creationInFlight(referenceId: string | undefined, apiUserId: string | undefined): Pending | undefined {
    if (referenceId === undefined || apiUserId === undefined) return undefined;
    for (const pending of this.pending.values()) {
      const { request } = pending;
      const header = request.headers['x-reference-id'];
      const creates = request.routeOptions.config.route?.operation.store !== undefined && request.caller?.id === apiUserId;
      if (creates && typeof header === 'string' && idKey(header) === idKey(referenceId)) return pending;
    }
    return undefined;
  }

  /** The report as it stands. */
  document(): ClientReportDocument {
    const { settings, clock } = this.requireContext();
    return buildDocument(this.recorder, { profile: settings.profile, strict: settings.strict }, clock.now());
  }

  /**
   * Writes the report's three files to its folder (each whole, or not at all) and gives their paths. Writes run one
   * after another: two at once (a POST while the sandbox closes) would share the files' temporary names.
   */
  write(): Promise<string[]> {
    const written = this.writing.then(() => this.writeNow());
    this.writing = written.catch(() => undefined);
    return written;
  }

  private writing: Promise<unknown> = Promise.resolve();

  private async writeNow(): Promise<string[]> {
    const report = this.document();
    const files: [string, string][] = [
      [CLIENT_REPORT_FILES.json, `${JSON.stringify(report, null, 2)}\n`],
      [CLIENT_REPORT_FILES.html, renderClientReportHtml(report)],
      [CLIENT_REPORT_FILES.junit, renderClientReportJunit(report)],
    ];
    const written: string[] = [];
    for (const [name, content] of files) {
      const path = join(this.dir, name);
      await writeFile(`${path}.partial`, content);
      await rename(`${path}.partial`, path);
      written.push(path);
    }
    return written;
  }

  private requireContext(): SandboxContext {
    if (!this.context) throw new Error('The client report is not installed in a sandbox.');
    return this.context;
  }

  private install(app: FastifyInstance, context: SandboxContext): void {
    this.context = context;
    this.productOfKey = new Map(PRODUCTS.map((product) => [context.settings.subscriptionKeys[product], product]));
    this.configuredSecrets = PRODUCTS.map((product) => ({ value: context.settings.subscriptionKeys[product], kind: 'subscription key' }));

    app.addHook('onRequest', (request, reply, done) => {
      // The sandbox's own routes (health, the OpenAPI document, this report) are no client's use of the API.
      if (request.routeOptions.config.route === undefined && !request.is404) return done();
      this.pending.set(request.id, { request, at: context.clock.now(), chaos: [] });
      if (this.pending.size > PENDING_REQUESTS) this.pending.delete(this.pending.keys().next().value as string);
      // An answer the client never got: it closed the connection, or a chaos condition cut it.
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) this.finish(request, undefined);
      });
      done();
    });
    app.addHook('preValidation', (request, _reply, done) => {
      const pending = this.pending.get(request.id);
      // A copy: validation drops the fields a schema does not list, in place.
      if (pending && request.body !== undefined) pending.body = structuredClone(request.body);
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const pending = this.pending.get(request.id);
      const operation = request.routeOptions.config.route?.operation.id;
      if (pending && (reply.statusCode >= 400 || (operation !== undefined && ANSWERS_READ.has(operation)))) {
        pending.responseBody =
          typeof payload === 'string'
            ? payload.slice(0, BODY_CHARS)
            : Buffer.isBuffer(payload)
              ? payload.toString('utf8', 0, BODY_CHARS)
              : undefined;
        const challenge = reply.getHeader('www-authenticate');
        if (typeof challenge === 'string') pending.challenge = challenge;
      }
      done(null, payload);
    });
    app.addHook('onResponse', (request, reply, done) => {
      this.finish(request, reply.statusCode);
      done();
    });

    app.get(CLIENT_REPORT_ROUTES.read, async () => this.document());
    app.post(CLIENT_REPORT_ROUTES.write, async () => ({ written: await this.write() }));
    app.addHook('onClose', async () => {
      try {
        await this.write();
      } catch (error) {
        this.closingError = error as Error;
        this.requireContext().log.error({ err: error, dir: this.dir }, 'the client report could not be written');
      }
    });
  }

  private finish(request: FastifyRequest, status: number | undefined): void {
    const pending = this.pending.get(request.id);
    if (!pending) return;
    this.pending.delete(request.id);
    const exchange = this.exchangeOf(pending, status);
    this.recent.set(request.id, exchange.principal);
    if (this.recent.size > RECENT_REQUESTS) this.recent.delete(this.recent.keys().next().value as string);
    this.recorder.exchange(exchange);
  }

  private exchangeOf(pending: Pending, status: number | undefined): ObservedExchange {
    const { settings } = this.requireContext();
    const { request } = pending;
    const route = request.routeOptions.config.route;
    const operation = route?.operation;
    const params = (request.params ?? {}) as Record<string, string>;
    const header = request.headers['x-reference-id'];
    const createsWithId = operation?.headers.required.includes('x-reference-id') ?? false;
    const referenceId = createsWithId ? (typeof header === 'string' ? header : undefined) : params.referenceId;
    const store: TransactionStore | 'apiuser' | undefined =
      operation?.id === 'createApiUser' || operation?.id === 'createApiKey' || operation?.id === 'getApiUser'
        ? 'apiuser'
        : (operation?.store ?? operation?.reads);
    const principal = this.principalOf(request);
    return {
      requestId: request.id,
      at: pending.at,
      principal,
      method: request.method,
      url: request.url,
      ...(operation ? { operation: operation.id } : {}),
      ...(route?.product ? { product: route.product } : {}),
      headers: request.headers,
      secrets: this.secretsOf(request, pending.body),
      params,
      ...(pending.body !== undefined ? { body: pending.body } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(pending.responseBody !== undefined ? { responseBody: pending.responseBody } : {}),
      ...(pending.challenge !== undefined ? { challenge: pending.challenge } : {}),
      ...(referenceId !== undefined ? { referenceId } : {}),
      ...(createsWithId && store && pending.body !== undefined ? { fingerprint: fingerprintOfBody(store, pending.body) } : {}),
      ...(referenceId !== undefined && store ? { stored: this.storedRecord(store, referenceId) } : {}),
      ...(operation?.id === 'createAccessToken' && status === 200
        ? { tokenExpiresAt: pending.at + settings.tokenLifetimeSeconds * 1000 }
        : {}),
      ...(pending.chaos.length > 0 ? { chaos: pending.chaos } : {}),
    };
  }

  private storedRecord(store: TransactionStore | 'apiuser', referenceId: string): StoredRecord | undefined {
    if (store !== 'apiuser') return this.storedTransaction(store, referenceId);
    const user = this.requireContext().state.apiUsers.get(idKey(referenceId));
    return user && { fingerprint: fingerprintOfBody('apiuser', { providerCallbackHost: user.providerCallbackHost })! };
  }

  private storedTransaction(store: TransactionStore, referenceId: string): StoredRecord | undefined {
    const tx = this.requireContext().state.transactions[store].get(idKey(referenceId));
    return tx && { fingerprint: fingerprintOfTransaction(tx), status: tx.status };
  }

  /**
   * Whom a request is of: the API user the guards admitted, else the one its credential names (a refused key or
   * token is still that user's doing), else the subscription key it sent, named by its product and a short hash.
   */
  private principalOf(request: FastifyRequest): Principal {
    const user = request.caller ?? this.userOfCredential(request.headers.authorization);
    if (user) return apiUserPrincipal(user);
    const key = subscriptionKeyOf(request);
    if (key === undefined) return NO_KEY;
    const product = this.productOfKey.get(key);
    // Keys the sandbox does not know are one client: a caller sending many junk keys must not fill the report's clients.
    if (product === undefined) return UNKNOWN_KEY;
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 8);
    return {
      id: `key:${product ?? 'unknown'}:${hash}`,
      kind: 'subscription-key',
      label: `${product ?? 'unknown'} key #${hash}`,
      ...(product ? { product } : {}),
    };
  }

  private userOfCredential(authorization: string | undefined): ApiUser | undefined {
    const { state } = this.requireContext();
    const basic = basicCredentialOf(authorization);
    if (basic) return state.apiUsers.get(idKey(basic.userId));
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    const payload = token?.split('.')[1];
    if (!payload) return undefined;
    try {
      const { sub } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown };
      return typeof sub === 'string' ? state.apiUsers.get(idKey(sub)) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The secrets a request may carry: the sandbox's keys, and what the client sent as its own credentials. */
  private secretsOf(request: FastifyRequest, body: unknown): KnownSecret[] {
    const secrets = [...this.configuredSecrets];
    const key = subscriptionKeyOf(request);
    if (key !== undefined && !this.productOfKey.has(key)) secrets.push({ value: key, kind: 'subscription key' });
    const { authorization } = request.headers;
    const basic = basicCredentialOf(authorization);
    if (basic) {
      secrets.push({ value: basic.apiKey, kind: 'API key' });
      secrets.push({ value: Buffer.from(`${basic.userId}:${basic.apiKey}`).toString('base64'), kind: 'Basic credential' });
    }
    const credential = /^(?:Bearer|Basic)\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (credential) secrets.push({ value: credential, kind: /^Basic/i.test(authorization!) ? 'Basic credential' : 'access token' });
    if (request.caller?.apiKey) secrets.push({ value: request.caller.apiKey, kind: 'API key' });
    const refresh = (body as { refresh_token?: unknown } | undefined)?.refresh_token;
    if (typeof refresh === 'string') secrets.push({ value: refresh, kind: 'refresh token' });
    return secrets;
  }

  /** The callback sink as it was, with each callback's client noted as it is sent and each attempt's end told to the report. */
  private watchCallbacks(sink: CallbackSink): CallbackSink {
    sink.observe?.((attempt) => this.callbackAttempt(attempt));
    const noted = (context: Record<string, string>) => {
      const principal = this.callbackClient(context);
      if (principal) this.callbackClients.set(context, principal);
    };
    return {
      send: (url, method, body, context) => {
        noted(context);
        sink.send(url, method, body, context);
      },
      sendLater: (delayMs, url, method, body, context) => {
        noted(context);
        sink.sendLater(delayMs, url, method, body, context);
      },
      settled: () => sink.settled(),
      close: () => sink.close(),
      observe: (observer) => sink.observe?.(observer),
    };
  }

  private callbackAttempt(attempt: CallbackAttempt): void {
    const context = this.context;
    if (!context) return;
    const principal = this.callbackClients.get(attempt.context) ?? this.callbackClient(attempt.context) ?? NO_CLIENT;
    const user = principal.kind === 'api-user' ? context.state.apiUsers.get(principal.id.slice(API_USER.length)) : undefined;
    this.recorder.callback({
      at: context.clock.now(),
      principal,
      secrets: user?.apiKey ? [...this.configuredSecrets, { value: user.apiKey, kind: 'API key' }] : this.configuredSecrets,
      attempt,
      timeoutMs: context.settings.callbackTimeoutMs,
    });
  }

  /** The client a callback is for: the owner of its transaction, or of its consent request. */
  private callbackClient(callback: Readonly<Record<string, string>>): Principal | undefined {
    const context = this.context;
    if (!context) return undefined;
    const { state } = context;
    const { kind, referenceId, authReqId } = callback;
    const owner =
      authReqId !== undefined
        ? state.consentRequests.get(idKey(authReqId))?.apiUserId
        : kind !== undefined && referenceId !== undefined && kind in state.transactions
          ? state.transactions[kind as TransactionStore].get(idKey(referenceId))?.apiUserId
          : undefined;
    const user = owner === undefined ? undefined : state.apiUsers.get(owner);
    return user && apiUserPrincipal(user);
  }
}

const API_USER = 'api-user:';
const NO_KEY: Principal = { id: 'no-key', kind: 'no-key', label: 'requests without a subscription key' };
const NO_CLIENT: Principal = { id: 'no-client', kind: 'no-key', label: 'events of no known client' };
const UNKNOWN_KEY: Principal = { id: 'key:unknown', kind: 'subscription-key', label: 'subscription keys the sandbox does not know' };

function apiUserPrincipal(user: ApiUser): Principal {
  return { id: `${API_USER}${user.id}`, kind: 'api-user', label: `API user ${user.id} (${user.product})`, product: user.product };
}

function subscriptionKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['ocp-apim-subscription-key'] ?? (request.query as Record<string, unknown> | undefined)?.['subscription-key'];
  return typeof key === 'string' && key.length > 0 ? key : undefined;
}
