import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HEADERS } from '../../core/catalogue/headers.ts';
import type {
  CredentialOf,
  Operation,
  OperationId,
  OptionalHeaderOf,
  PathParamsOf,
  RequestSchemaOf,
  RequiredHeaderOf,
} from '../../core/catalogue/operations.ts';
import type { RequestBodies } from '../../core/catalogue/request-bodies.generated.ts';
import { routes, type Route } from '../../core/catalogue/routes.ts';
import type { Product } from '../../core/products.ts';
import { schemaId } from '../../core/schema-ids.ts';
import { schemaDocuments } from '../../core/validation/schemas.ts';
import type { ApiUser } from '../domain/state.ts';
import type { TokenClaims } from '../domain/tokens.ts';
import type { OperationReply } from './replies.ts';

/** The body of an operation's request, typed from its JSON Schema (core/catalogue/request-bodies.generated.ts). */
export type BodyOf<Id extends OperationId> =
  RequestSchemaOf<Id> extends keyof RequestBodies ? RequestBodies[RequestSchemaOf<Id>] : undefined;

/** The headers of an operation the route's schema holds a request to: a required one is there, an optional one may be. */
export type HeadersOf<Id extends OperationId> = { [Name in RequiredHeaderOf<Id>]: string } & { [Name in OptionalHeaderOf<Id>]?: string };

/** Whether every operation of Ids takes one of these credentials. */
type EveryTakes<Ids extends OperationId, Credentials> = [Exclude<CredentialOf<Ids>, Credentials>] extends [never] ? true : false;

/**
 * What the guards (sandbox/http/guards.ts) have set on a request of one of the operations Ids before its handler runs:
 * the product of its subscription key, always; its caller, when every one of them takes a credential; its token's
 * claims, when every one of them takes a token.
 */
export type AdmittedState<Ids extends OperationId> = { keyProduct: Product } & AdmittedCaller<Ids> & AdmittedClaims<Ids>;

type AdmittedCaller<Ids extends OperationId> = EveryTakes<Ids, 'basic' | 'bearer' | 'consent'> extends true ? { caller: ApiUser } : unknown;

type AdmittedClaims<Ids extends OperationId> = EveryTakes<Ids, 'bearer' | 'consent'> extends true ? { claims: TokenClaims } : unknown;

/**
 * A request to an operation as its handler sees it: the route's schemas validated its body, path parameters and
 * headers, and the guards admitted it.
 */
export type RequestOf<Id extends OperationId> = FastifyRequest<{ Body: BodyOf<Id>; Params: PathParamsOf<Id>; Headers: HeadersOf<Id> }> &
  AdmittedState<Id>;

export type Handler<Id extends OperationId> = (request: RequestOf<Id>, reply: OperationReply<Id>) => unknown;

/** An operation's handler under a product (undefined for provisioning, which any product's key opens). */
export type OperationHandler<Id extends OperationId> = (product: Product | undefined) => Handler<Id>;

/** The sandbox's handlers: one for every operation of the catalogue, each typed from it. */
export type RouteHandlers = { [Id in OperationId]: OperationHandler<Id> };

declare module 'fastify' {
  // Set by the guards (sandbox/http/guards.ts) on the requests they admit; declared with decorateRequest (serveCatalogue).
  // Optional here, for any request; a handler's request (RequestOf) has those its operation's guards set (AdmittedState).
  interface FastifyRequest {
    /** The API user behind the Bearer token or the Basic credential, set for operations that take one. */
    caller?: ApiUser;
    claims?: TokenClaims;
    /** The product whose subscription key the request carried. */
    keyProduct?: Product;
    /** The route's operation and product, set by the first guard; absent on no route of the catalogue. */
    servedRoute?: ServedRoute;
  }
  interface FastifyContextConfig {
    /** The catalogue operation a route serves, and under which product. */
    route?: ServedRoute;
    mediaType?: string;
  }
}

/**
 * The checks of sandbox/http/guards.ts each route runs: `onArrival` as its request arrives (the subscription key,
 * the caller, the body's media type), `onValidated` once its headers and body are validated (the target
 * environment). Each returns the reply when it answered, and the request goes no further.
 */
export interface RouteGuards {
  onArrival(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
  onValidated(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
}

/** What a request's route knows of itself: its operation and the product it is served under. */
export interface ServedRoute {
  operation: Operation<OperationId>;
  /** Undefined for an operation any product's key opens (provisioning). */
  product: Product | undefined;
}

/**
 * Registers the sandbox's handlers on every route of the operation catalogue: the method, path, header, path
 * parameter and body schemas all come from the operation's entry, so the sandbox serves exactly what the
 * catalogue defines. It refuses to start a sandbox that leaves an operation of the catalogue without a handler,
 * or that has a handler for none.
 */
export function serveCatalogue(app: FastifyInstance, handlers: RouteHandlers, guards: RouteGuards): void {
  for (const field of ['caller', 'claims', 'keyProduct', 'servedRoute'] as const) app.decorateRequest(field, undefined);
  for (const route of routes()) register(app, route, handlerOf(handlers, route), guards);
}

/**
 * A route's handler, for Fastify, which knows requests only as FastifyRequest: the route's schemas (below) hold the
 * body and path parameters to the operation's, which is what Handler<Id> takes them to be.
 */
function handlerOf<Id extends OperationId>(
  handlers: RouteHandlers,
  route: Route & { operation: { id: Id } },
): (request: FastifyRequest, reply: FastifyReply) => unknown {
  return handlers[route.operation.id](route.product) as (request: FastifyRequest, reply: FastifyReply) => unknown;
}

function register(
  app: FastifyInstance,
  route: Route,
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown,
  guards: RouteGuards,
): void {
  const { operation } = route;
  const { required, optional } = operation.headers;
  const schema: Record<string, object> = {};
  if (required.length + optional.length > 0) {
    schema.headers = {
      type: 'object',
      required: [...required],
      properties: Object.fromEntries([...required, ...optional].map((h) => [h, HEADERS[h].schema])),
    };
  }
  if (operation.params) schema.params = { type: 'object', required: Object.keys(operation.params), properties: operation.params };
  if (operation.request !== 'none') schema.body = { $ref: schemaId(operation.request.schema) };
  const served: ServedRoute = { operation, product: route.product };
  app.route({
    method: route.method,
    url: route.path.replace(/\{([A-Za-z]+)\}/g, ':$1'),
    schema,
    config: { route: served, mediaType: operation.request === 'none' ? undefined : operation.request.mediaType },
    onRequest: (request, reply, done) => {
      if (!guards.onArrival(served, request, reply)) done();
    },
    // The last check in the handler rather than a preHandler hook: Fastify runs no hook stage for it.
    handler: (request, reply) => guards.onValidated(served, request, reply) ?? handler(request, reply),
  });
}

/**
 * The longest value any path parameter of the catalogue may take (its schema's maxLength, or its longest enum value, in characters), so
 * the router refuses no segment the OpenAPI document allows. Every path parameter must state one or the other; a start with
 * a parameter that does not fails, naming it.
 */
function longestPathParameter(): number {
  let longest = 0;
  for (const { operation } of routes()) {
    for (const [name, schema] of Object.entries(operation.params ?? {})) {
      const ref = (schema as { $ref?: string }).$ref;
      const resolved = ref === undefined ? schema : schemaDocuments.find((doc) => doc.$id === ref);
      const { maxLength: stated, enum: values } = (resolved ?? {}) as { maxLength?: unknown; enum?: unknown[] };
      const maxLength =
        typeof stated === 'number'
          ? stated
          : values?.every((v) => typeof v === 'string')
            ? Math.max(...values.map((v) => v.length))
            : undefined;
      if (typeof maxLength !== 'number')
        throw new Error(
          `The path parameter ${name} of ${operation.id} states no maxLength nor enum (core/catalogue/operations.ts or its schema); the router needs one to bound the segment.`,
        );
      longest = Math.max(longest, maxLength);
    }
  }
  return longest;
}

/**
 * The router's bound on a decoded path segment, in UTF-16 code units: JSON Schema's maxLength counts code points,
 * and a code point beyond the Basic Multilingual Plane takes two code units.
 */
export const LONGEST_PATH_PARAMETER = longestPathParameter();
export const MAX_PARAM_LENGTH = 2 * LONGEST_PATH_PARAMETER;
