import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { ajv, ajvOverSchemas } from '../../core/validation/schemas.ts';
import type { SandboxContext } from '../domain/context.ts';
import type { SandboxSettings } from '../domain/settings.ts';
import { StoreFullError } from '../domain/store.ts';
import type { HeaderName } from '../../core/catalogue/headers.ts';
import { matchRoute } from '../../core/catalogue/match.ts';
import type { TargetEnvironmentId } from '../../core/catalogue/operations.ts';
import { routes } from '../../core/catalogue/routes.ts';
import { authenticateBasic } from './credentials.ts';
import type { RouteGuards, ServedRoute } from './serving.ts';
import {
  frameworkErrorMessage,
  sendBadRequest,
  sendBusinessError,
  sendGatewayError,
  sendOAuthError,
  validationMessage,
  type OperationReply,
} from './replies.ts';

/**
 * What every request passes before an operation's handler runs: the gateway, the caller, the body's media
 * type, the target environment, in the order the live gateway applies them; the JSON parser; and the answers
 * to what goes wrong.
 */

/**
 * Route validators by the text of their schema, shared by every sandbox of the process. Ajv caches a compiled
 * schema by its object, and each build makes new objects: every sandbox built (the tests, the fuzzer's
 * episodes) compiled each route again, about 100 ms, and Ajv kept every copy (0.27 MB a sandbox).
 * A validator holds no state between calls (Fastify reads its errors right after calling it).
 *
 * A body's fields that its schema does not list are dropped before it is validated (never stored, never echoed),
 * unless the sandbox is strict, which refuses them (STRICT_READINGS.unknownFields).
 */
const routeValidators = new Map<string, ValidateFunction>();
let lenientAjv: ReturnType<typeof ajvOverSchemas> | undefined;

export function routeValidator(schema: unknown, part: string | undefined, strict: boolean): ValidateFunction {
  const lenient = part === 'body' && !strict;
  const key = `${lenient ? 'lenient' : 'strict'} ${JSON.stringify(schema)}`;
  let validate = routeValidators.get(key);
  if (!validate) {
    const compile = () =>
      (lenient ? (lenientAjv ??= ajvOverSchemas({ removeAdditional: true, readings: 'ignore' })) : ajv).compile(schema as object);
    routeValidators.set(key, (validate = compiledOnFirstCall(compile)));
  }
  return validate;
}

/**
 * A validator compiled when it first validates, not when its route is registered: compiling every route's
 * schemas took most of the sandbox's start (docs/benchmarks.md, Start-up), and a run calls some routes never.
 * Fastify reads `errors` right after the call, so the compiled validator's errors are copied onto this one.
 */
function compiledOnFirstCall(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/**
 * The checks every operation shares, in the order the live gateway applies them, for serveCatalogue to put on
 * each route (sandbox/http/serving.ts): as a request arrives, its subscription key, its caller and its body's
 * media type; once its headers and body are validated, its target environment. Each check returns the reply when
 * it answered, and the request goes no further.
 */
export function catalogueGuards(context: SandboxContext): RouteGuards {
  const guards = new CatalogueGuards(context);
  return {
    onArrival: (route, request, reply) => {
      request.servedRoute = route;
      guards.dropEmptyOptionalHeaders(route, request);
      const keyProduct = guards.subscriptionKey(route, request, reply);
      if (keyProduct === undefined) return reply;
      request.keyProduct = keyProduct;
      return guards.caller(route, request, reply, keyProduct) ?? guards.mediaType(route, request, reply);
    },
    onValidated: (route, request, reply) => guards.targetEnvironment(route, request, reply),
  };
}

class CatalogueGuards {
  private readonly productByKey: ReadonlyMap<string, Product>;

  constructor(private readonly context: SandboxContext) {
    this.productByKey = new Map(PRODUCTS.map((p) => [context.settings.subscriptionKeys[p], p]));
  }

  /** An optional header sent empty says nothing: it counts as absent (unless strict, when its schema refuses it). */
  dropEmptyOptionalHeaders(route: ServedRoute, request: FastifyRequest): void {
    if (this.context.settings.strict) return;
    for (const name of route.operation.headers.optional) if (request.headers[name] === '') delete request.headers[name];
  }

  /**
   * The gateway: a subscription key of the operation's product (any product's for provisioning), in the header, or
   * in the subscription-key query parameter the provider's definitions give as its alternative. The product whose key
   * it is, or undefined once the gateway's 401 is sent.
   */
  subscriptionKey(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): Product | undefined {
    const key =
      request.headers['ocp-apim-subscription-key'] ?? (request.query as Record<string, unknown> | undefined)?.['subscription-key'];
    if (typeof key !== 'string' || key.length === 0) {
      sendGatewayError(reply, 'missing');
      return undefined;
    }
    // The route's own product's key is the usual one: compared first, it needs no lookup.
    const keyProduct =
      route.product !== undefined && key === this.context.settings.subscriptionKeys[route.product]
        ? route.product
        : this.productByKey.get(key);
    if (!keyProduct || (route.product !== undefined && keyProduct !== route.product)) {
      sendGatewayError(reply, 'invalid');
      return undefined;
    }
    return keyProduct;
  }

  /**
   * The caller: a Basic credential of an API user of this product (before the target environment, so a wrong
   * credential hears 401, not NOT_ALLOWED_TARGET_ENVIRONMENT), or a Bearer token for a known API user; of this
   * product, if strict (STRICT_READINGS.tokenProduct).
   */
  caller(route: ServedRoute, request: FastifyRequest, reply: FastifyReply, keyProduct: Product): FastifyReply | undefined {
    const { operation } = route;
    const { settings, state, tokens } = this.context;
    if (operation.credential === 'basic') {
      const user = authenticateBasic(this.context, request, reply, operation.callerOfAnyProduct === undefined ? keyProduct : undefined);
      if (!user) return reply;
      request.caller = user;
    }
    if (operation.credential === 'bearer' || operation.credential === 'consent') {
      const token = bearerToken(request.headers.authorization);
      if (!token) return sendOAuthError(reply, 401, 'invalid_token', { description: SEND_BEARER });
      const check = tokens.check(
        token,
        settings.strict ? keyProduct : undefined,
        operation.credential === 'consent' ? 'consent' : 'access',
      );
      // A token with white space in it is no token (the authority refuses it unread): say how to send one.
      if (!check.ok)
        return sendOAuthError(reply, 401, 'invalid_token', { description: WHITE_SPACE.test(token) ? SEND_BEARER : check.description });
      const caller = state.apiUsers.get(check.claims.sub);
      if (!caller) return sendOAuthError(reply, 401, 'invalid_token', { description: 'The API user of this token no longer exists.' });
      request.caller = caller;
      request.claims = check.claims;
    }
    return undefined;
  }

  /**
   * The body's media type. Where an operation defines none, one that comes is read and ignored (the parsers drop
   * it), unless the sandbox is strict. An omitted Content-Type means the operation's own; a form operation takes
   * JSON with the same fields too, unless strict.
   */
  mediaType(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const { operation } = route;
    const { strict } = this.context.settings;
    const { headers } = request;
    const contentLength = headers['content-length'];
    const hasBody = (contentLength !== undefined && contentLength !== '0') || headers['transfer-encoding'] !== undefined;
    if (operation.request === 'none') {
      return hasBody && strict
        ? sendBadRequest(reply, `${capitalised(operation.label)} takes no body; send the request without one.`)
        : undefined;
    }
    if (!hasBody) return undefined;
    const contentType = headers['content-type'];
    if (contentType === undefined) {
      headers['content-type'] = operation.request.mediaType;
      return undefined;
    }
    if (contentType === operation.request.mediaType) return undefined;
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (mediaType === operation.request.mediaType || (!strict && mediaType === 'application/json')) return undefined;
    return sendBadRequest(
      reply,
      `Content-Type "${contentType}" is not accepted by this operation; send ${operation.request.mediaType}.`,
      415,
    );
  }

  /**
   * The target environment, once the headers are known to be well formed. It answers only on the operations that
   * require the header (servesTargetEnvironment), whose every one documents the answer.
   */
  targetEnvironment(route: ServedRoute, request: FastifyRequest, reply: OperationReply<TargetEnvironmentId>): FastifyReply | undefined {
    if (servesTargetEnvironment(route, request, this.context.settings)) return undefined;
    const allowed = this.context.settings.targetEnvironments;
    const environment = headerOf(request, 'x-target-environment');
    return sendBusinessError(
      reply,
      500,
      'NOT_ALLOWED_TARGET_ENVIRONMENT',
      `Access to target environment "${environment}" is forbidden; this sandbox serves ${allowed.join(', ')}.`,
    );
  }
}

/** Whether the sandbox serves a request's target environment: its operation takes none, or it names one of --target-environments. */
export function servesTargetEnvironment(route: ServedRoute, request: FastifyRequest, settings: SandboxSettings): boolean {
  if (!route.operation.headers.required.includes('x-target-environment')) return true;
  const environment = headerOf(request, 'x-target-environment');
  return environment !== undefined && settings.targetEnvironments.includes(environment);
}

/**
 * A header of the catalogue as a request carries it, or undefined. Node joins a repeated header of these names into
 * one string, so a value that is not one is none of theirs.
 */
export function headerOf(request: Pick<FastifyRequest, 'headers'>, name: HeaderName): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const BEARER = 'Bearer ';
const SEND_BEARER = 'Send Authorization: Bearer <access token>.';
const OPEN_BRACE = 0x7b;
const REFUSE_PROTOTYPE_KEYS = { protoAction: 'error', constructorAction: 'error' } as const;
const WHITE_SPACE = /\s/;

/**
 * The token of an Authorization header of the Bearer scheme (its name in any case), or undefined. Only the scheme
 * is read here; the token authority refuses a token with white space in it before anything else.
 */
function bearerToken(authorization: unknown): string | undefined {
  if (typeof authorization !== 'string' || authorization.length <= BEARER.length) return undefined;
  const scheme = authorization.slice(0, BEARER.length);
  return scheme === BEARER || scheme.toLowerCase() === 'bearer ' ? authorization.slice(BEARER.length) : undefined;
}

const capitalised = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1)}`;

/** Whether the request's operation defines no body, so that one sent is read and dropped rather than parsed. */
function definesNoBody(request: FastifyRequest): boolean {
  return (request.servedRoute ?? request.routeOptions.config.route)?.operation.request === 'none';
}

/**
 * The body parsers: JSON (as Fastify parses it, but saying which key was refused rather than that the JSON is
 * invalid), form-encoded (repeated parameters become arrays, which the schemas refuse), and anything else. On an
 * operation that defines no body, whatever comes is read and dropped: the guard has refused it already when the
 * sandbox is strict, and an empty body under Content-Type: application/json is what MTN's own SDKs send.
 */
export function installBodyParsers(app: FastifyInstance): void {
  const fail = (done: (error: Error | null, body?: unknown) => void, message: string, statusCode = 400) =>
    done(Object.assign(new Error(message), { statusCode, code: 'MOMO_INVALID_BODY' }), undefined);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (definesNoBody(request)) return done(null, undefined);
    const text = body as string;
    // A body that opens an object is not blank, and needs no trimmed copy to say so.
    if (text.charCodeAt(0) !== OPEN_BRACE && text.trim() === '')
      return fail(done, 'The body is empty, but Content-Type says application/json; send a JSON object.');
    try {
      done(null, secureJson.parse(text, undefined, REFUSE_PROTOTYPE_KEYS));
    } catch (error) {
      const message = (error as Error).message;
      fail(
        done,
        /prototype/i.test(message)
          ? 'The body contains a "__proto__" or "constructor.prototype" key, which is refused; remove it.'
          : `The body is not valid JSON (${message}).`,
      );
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    if (definesNoBody(request)) return done(null, undefined);
    const form: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(body as string)) {
      const earlier = form[name];
      form[name] = earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value];
    }
    done(null, form);
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, _body, done) => {
    if (definesNoBody(request)) return done(null, undefined);
    const expected = request.routeOptions.config.mediaType ?? 'application/json';
    fail(done, `Content-Type "${request.headers['content-type'] ?? ''}" is not accepted by this operation; send ${expected}.`, 415);
  });
}

export function installErrorHandling(app: FastifyInstance, log: FastifyBaseLogger, fixed: FixedPathRoutes): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply) => {
    if (error.validation) return sendBadRequest(reply, validationMessage(error));
    if (error instanceof StoreFullError) {
      log.warn(
        { reqId: request.id, store: error.storeName, limit: error.limit, maxEntries: error.maxEntries },
        'store full; refusing a creation',
      );
      reply.header('retry-after', '10');
      const remedy =
        error.limit === 'bytes'
          ? 'a larger --retention-max-bytes (within the heap: docs/sandbox.md, "Reliability")'
          : 'a larger --retention-max-entries';
      return sendBusinessError(
        reply,
        503,
        'SERVICE_UNAVAILABLE',
        `${error.message}; retry later, or start the sandbox with ${remedy} (or, for transactions, a shorter --retention-max-age-ms).`,
      );
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendBadRequest(reply, frameworkErrorMessage(error, request), status);
    log.error({ reqId: request.id, err: error }, 'unexpected error');
    return sendBusinessError(
      reply,
      500,
      'INTERNAL_PROCESSING_ERROR',
      'An internal error occurred while processing; the sandbox log has the details.',
    );
  });

  // A request no route serves is answered as it arrives, before anything reads its body: Fastify parses the body
  // of a request by its method before the not-found handler runs, so a QUERY without Content-Type (400), or a POST
  // with a media type no parser takes (415), would be refused for its form rather than its method. Fastify needs a
  // not-found handler as well; the hook has answered before it would run.
  app.register(async (unserved) => {
    unserved.addHook('onRequest', async (request, reply) => answerUnserved(fixed, request, reply));
    unserved.setNotFoundHandler((request, reply) => answerUnserved(fixed, request, reply));
  });
}

export type FixedPathRoutes = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The methods of every route registered from now on at a path without parameters (/health, /v1_0/apiuser), by path:
 * called before anything registers a route (a plugin's own, such as the client report's), so that every one counts.
 */
export function fixedPathRoutes(app: FastifyInstance): FixedPathRoutes {
  const methods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (/[:*]/.test(route.url)) return;
    const path = withoutTrailingSlash(route.url);
    for (const method of [route.method].flat()) methods.set(path, (methods.get(path) ?? new Set()).add(method));
  });
  return methods;
}

const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/** 405 with Allow for a method a known path does not take (QUERY included), 404 for a path the sandbox does not know. */
function answerUnserved(fixed: FixedPathRoutes, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]!;
  const allowed = allowedMethods(fixed, path);
  if (allowed.length > 0) {
    reply.header('allow', allowed.join(', '));
    return sendBadRequest(reply, `${request.method} is not served at ${path}; it takes ${allowed.join(', ')}.`, 405);
  }
  return sendBadRequest(reply, `No operation ${request.method} ${path}. GET /openapi.json lists every operation this sandbox serves.`, 404);
}

const DECLARED_METHODS = [...new Set(routes().map((route) => route.method))];

/**
 * The methods served at a path: the catalogue's, matched on its path templates, and those of every route at a
 * fixed path (the sandbox's own, /health and /openapi.json, too), with HEAD wherever GET is; none: an unknown path.
 */
function allowedMethods(fixed: FixedPathRoutes, path: string): string[] {
  const served = new Set([
    ...DECLARED_METHODS.filter((method) => matchRoute(method, path) !== undefined),
    ...(fixed.get(withoutTrailingSlash(path)) ?? []),
  ]);
  if (served.has('GET')) served.add('HEAD');
  return [...served];
}
