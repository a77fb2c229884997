import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { LightMyRequestResponse } from 'fastify';
import { buildSandbox, type Sandbox } from '../../sandbox/app.ts';
import { operationIdOf } from '../../sandbox/http/openapi.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { ClientReport } from '../../sandbox/client-report/client-report.ts';
import type { DataDirectoryOptions } from '../../sandbox/domain/journal.ts';
import { ManualClock } from '../../sandbox/domain/clock.ts';
import type { Product } from '../../core/products.ts';
import { resolveSettings, type SandboxSettings } from '../../sandbox/domain/settings.ts';
import { describeErrors, unknownFields, validatorFor } from '../../core/validation/schemas.ts';
import type { HeaderName } from '../../core/catalogue/headers.ts';
import type { Credential, OperationId } from '../../core/catalogue/operations.ts';
import { pathOf, routes, type PathParams } from '../../core/catalogue/routes.ts';

/** A route of the catalogue as the sandbox serves it: what the tests that sweep every operation need to know. */
export interface ServedOperation {
  /** The OpenAPI document's operationId, e.g. "collectionRequestToPay". */
  id: string;
  operation: OperationId;
  method: 'GET' | 'POST';
  /** The router's pattern, with :name for each path parameter. */
  url: string;
  product: Product | 'provisioning';
  credential: Credential;
  requiredHeaders: readonly HeaderName[];
  optionalHeaders: readonly HeaderName[];
  body?: { schema: string; mediaType: string };
}

/** Every route of the operation catalogue, as the sandbox serves it. */
export function servedOperations(): ServedOperation[] {
  return routes().map(({ operation: op, product, method, path }) => ({
    id: operationIdOf({ operation: op, product }),
    operation: op.id,
    method,
    url: path.replace(/\{([A-Za-z]+)\}/g, ':$1'),
    product: product ?? 'provisioning',
    credential: op.credential,
    requiredHeaders: op.headers.required,
    optionalHeaders: op.headers.optional,
    ...(op.request !== 'none' ? { body: { schema: op.request.schema, mediaType: op.request.mediaType } } : {}),
  }));
}

/** The path of an operation under a product, from the catalogue (path parameters filled in, percent-encoded). */
export function path(id: OperationId, product?: Product, params?: PathParams): string {
  return pathOf(id, product, params);
}

/**
 * The path of an operation with its parameters put in as they are, not percent-encoded: for a test that sends
 * a segment byte for byte (an already-encoded value, or one that is malformed on purpose).
 */
export function rawPath(id: OperationId, product: Product | undefined, params: PathParams): string {
  return pathOf(id, product).replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`The path of ${id} needs the parameter ${name}.`);
    return value;
  });
}

export const KEYS: Record<Product, string> = {
  collection: 'sandbox-collection-key',
  disbursement: 'sandbox-disbursement-key',
  remittance: 'sandbox-remittance-key',
};

/** Settings for tests: defaults, short delays, no logging; each test may override more. */
export function testSettings(overrides: Partial<SandboxSettings> = {}): SandboxSettings {
  return resolveSettings({
    overrides: {
      port: 0,
      logLevel: 'silent',
      delayedSuccessMs: 200,
      pendingTimeoutMs: 600,
      callbackTimeoutMs: 500,
      callbackRetryDelaysMs: [50, 100],
      consentIntervalSeconds: 1,
      ...overrides,
    },
  });
}

export interface TestSandbox extends Sandbox {
  clock: ManualClock;
  settings: SandboxSettings;
  call(options: CallOptions): Promise<LightMyRequestResponse>;
  /** Provisions an API user with a key under a product and returns its credentials and an access token. */
  provision(product: Product, options?: { providerCallbackHost?: string }): Promise<Caller>;
}

export interface Caller {
  product: Product;
  userId: string;
  apiKey: string;
  token: string;
  /** Headers of a business call: subscription key, Bearer token, target environment. */
  headers: Record<string, string>;
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  url: string;
  headers?: Record<string, string | undefined>;
  /** An object is sent as JSON; a string as it is. */
  payload?: unknown;
}

/**
 * A sandbox on a manual clock, driven through fastify.inject (no sockets unless a test listens). A test that
 * restarts one on its data directory gives the clock the first ran on, so that time goes on across the restart.
 */
export async function startSandbox(
  overrides: Partial<SandboxSettings> = {},
  options: {
    logger?: pino.Logger;
    plugins?: readonly SandboxPlugin[];
    clock?: ManualClock;
    dataDirectory?: DataDirectoryOptions;
    /** A client report made by the test, as the command makes it to hand its chaosApplied to the chaos plugin. */
    clientReport?: ClientReport;
  } = {},
): Promise<TestSandbox> {
  const settings = testSettings(overrides);
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 0, 1));
  const sandbox = await buildSandbox(settings, {
    clock,
    logger: options.logger ?? pino({ level: 'silent' }),
    plugins: options.plugins ?? [],
    ...(options.dataDirectory ? { dataDirectory: options.dataDirectory } : {}),
    ...(options.clientReport ? { clientReport: options.clientReport } : {}),
  });
  const call = (o: CallOptions) => {
    const headers = Object.fromEntries(Object.entries(o.headers ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const isObject = o.payload !== undefined && typeof o.payload !== 'string';
    if (isObject && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    return sandbox.app.inject({
      method: o.method,
      url: o.url,
      headers,
      ...(o.payload !== undefined ? { payload: isObject ? JSON.stringify(o.payload) : (o.payload as string) } : {}),
    });
  };
  const provision = async (product: Product, p: { providerCallbackHost?: string } = {}): Promise<Caller> => {
    const userId = randomUUID();
    const created = await call({
      method: 'POST',
      url: path('createApiUser'),
      headers: { 'ocp-apim-subscription-key': KEYS[product], 'x-reference-id': userId },
      payload: { providerCallbackHost: p.providerCallbackHost ?? '127.0.0.1' },
    });
    if (created.statusCode !== 201) throw new Error(`provisioning failed: ${created.statusCode} ${created.body}`);
    const key = await call({
      method: 'POST',
      url: path('createApiKey', undefined, { referenceId: userId }),
      headers: { 'ocp-apim-subscription-key': KEYS[product] },
    });
    const apiKey = (key.json() as { apiKey: string }).apiKey;
    const token = await call({
      method: 'POST',
      url: path('createAccessToken', product),
      headers: { 'ocp-apim-subscription-key': KEYS[product], authorization: basic(userId, apiKey) },
    });
    if (token.statusCode !== 200) throw new Error(`token failed: ${token.statusCode} ${token.body}`);
    const accessToken = (token.json() as { access_token: string }).access_token;
    return {
      product,
      userId,
      apiKey,
      token: accessToken,
      headers: { 'ocp-apim-subscription-key': KEYS[product], authorization: `Bearer ${accessToken}`, 'x-target-environment': 'sandbox' },
    };
  };
  return { ...sandbox, clock, settings, call, provision };
}

export type ListeningSandbox = TestSandbox & { port: number };

/** A test sandbox that listens on 127.0.0.1, on a free port, for tests that need a socket. */
export async function startListeningSandbox(overrides: Partial<SandboxSettings> = {}): Promise<ListeningSandbox> {
  const sandbox = await startSandbox(overrides);
  await sandbox.app.listen({ host: '127.0.0.1', port: 0 });
  return { ...sandbox, port: (sandbox.app.server.address() as AddressInfo).port };
}

/** Starts a sandbox for one test and closes it whatever happens. */
export async function withSandbox(overrides: Partial<SandboxSettings>, run: (sandbox: TestSandbox) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox(overrides);
  try {
    await run(sandbox);
  } finally {
    await sandbox.close();
  }
}

export function basic(userId: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}`;
}

/**
 * The body is exactly a record of the schema: valid, and without a field it does not name. The schemas that judge
 * a target's answers are open (an extra field is never a failure); the sandbox keeps its own shapes exact.
 */
export function assertSchema(name: string, body: unknown): void {
  const validate = validatorFor(name);
  if (!validate(body)) {
    throw new Error(`body does not match ${name}: ${describeErrors(validate.errors).join('; ')}\nbody: ${JSON.stringify(body)}`);
  }
  const unknown = unknownFields(name, body);
  if (unknown.length > 0) throw new Error(`body has fields ${name} does not name: ${unknown.join(', ')}\nbody: ${JSON.stringify(body)}`);
}

/** Polls until check returns a value, or fails after the deadline. */
export async function eventually<T>(check: () => Promise<T | undefined>, { timeoutMs = 3000, intervalMs = 20 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const payer = (partyId: string) => ({ partyIdType: 'MSISDN', partyId });

export function requestToPayBody(partyId = '46733123499', amount = '10', currency = 'EUR') {
  return { amount, currency, externalId: 'ext-1', payer: payer(partyId), payerMessage: 'Pay for goods', payeeNote: 'Thanks' };
}

const FORM = 'application/x-www-form-urlencoded';

/** bc-authorize under the caller's product with its access token (§4.2 #7), asking the ordinary test number's consent to `scope`. */
export function bcAuthorize(sandbox: TestSandbox, caller: Caller, scope = 'profile') {
  return sandbox.call({
    method: 'POST',
    url: path('bcAuthorize', caller.product),
    headers: { ...caller.headers, 'content-type': FORM },
    payload: `login_hint=ID:46733123499/MSISDN&scope=${scope}&access_type=offline`,
  });
}

/** The OAuth 2.0 token operation under the caller's product, with its Basic credential (§4.3 #11): a form of grant_type and the rest. */
export function consentToken(sandbox: TestSandbox, caller: Caller, form: string) {
  return sandbox.call({
    method: 'POST',
    url: path('createOAuthToken', caller.product),
    headers: {
      'ocp-apim-subscription-key': KEYS[caller.product],
      authorization: basic(caller.userId, caller.apiKey),
      'x-target-environment': 'sandbox',
      'content-type': FORM,
    },
    payload: form,
  });
}
