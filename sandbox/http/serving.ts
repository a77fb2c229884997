import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HEADERS } from '../../core/catalogue/headers.ts';
import type { Operation, OperationId } from '../../core/catalogue/operations.ts';
import { routes, type Route } from '../../core/catalogue/routes.ts';
import type { Product } from '../../core/products.ts';
import { schemaId } from '../../core/schema-ids.ts';
import { schemaDocuments } from '../../core/validation/schemas.ts';
import type { ApiUser } from '../domain/state.ts';
import type { TokenClaims } from '../domain/tokens.ts';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** The handlers a route module serves: for each operation, its handler under a product (undefined for provisioning). */
export type RouteHandlers = Partial<Record<OperationId, (product: Product | undefined) => Handler>>;

declare module 'fastify' {
  // Set by the guards (sandbox/http/guards.ts) on the requests they admit, not declared with decorateRequest:
  // Fastify's Request sets each declared field with a store of a varying key, four megamorphic stores a request.
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
 * The checks of sandbox/http/guards.ts each route runs: `admit` as its request arrives (the gateway, the caller,
 * the body's media type), `ready` once its headers and body are validated (the target environment). Each
 * returns the reply when it answered, and the request goes no further.
 */
export interface RouteGuards {
  admit(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
  ready(route: ServedRoute, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
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
  const missing = [...new Set(routes().map((r) => r.operation.id))].filter((id) => handlers[id] === undefined);
  if (missing.length > 0) throw new Error(`The sandbox serves no handler for ${missing.join(', ')} of the operation catalogue (core/catalogue/operations.ts).`);
  for (const route of routes()) register(app, route, handlers[route.operation.id]!(route.product), guards);
}

function register(app: FastifyInstance, route: Route, handler: Handler, guards: RouteGuards): void {
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
      if (!guards.admit(served, request, reply)) done();
    },
    // The last check in the handler rather than a preHandler hook: Fastify runs no hook stage for it.
    handler: (request, reply) => guards.ready(served, request, reply) ?? handler(request, reply),
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
      const maxLength = typeof stated === 'number' ? stated : values?.every((v) => typeof v === 'string') ? Math.max(...values.map((v) => v.length)) : undefined;
      if (typeof maxLength !== 'number') throw new Error(`The path parameter ${name} of ${operation.id} states no maxLength nor enum (core/catalogue/operations.ts or its schema); the router needs one to bound the segment.`);
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
