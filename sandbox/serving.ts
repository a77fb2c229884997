import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HEADERS } from '../core/catalogue/headers.ts';
import type { Operation, OperationId } from '../core/catalogue/operations.ts';
import { routes, type Route } from '../core/catalogue/routes.ts';
import type { Product } from '../core/products.ts';
import { schemaId } from '../core/schema-ids.ts';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** What a request's route knows of itself: its operation and the product it is served under. */
export interface ServedRoute {
  operation: Operation<OperationId>;
  /** Undefined for an operation any product's key opens (provisioning). */
  product: Product | undefined;
}

/**
 * Registers the sandbox's handlers on the routes of the operation catalogue: the method, path, header, path
 * parameter and body schemas all come from the operation's entry, so the sandbox serves exactly what the
 * catalogue defines. `ensureComplete` refuses to start a sandbox that leaves an operation of the catalogue
 * without a handler.
 */
export class CatalogueRoutes {
  private readonly served = new Set<OperationId>();

  constructor(private readonly app: FastifyInstance) {}

  /** Serves an operation under every product the catalogue lists it for; `handlerFor` makes each product's handler. */
  serve(id: OperationId, handlerFor: (product: Product | undefined) => Handler): void {
    for (const route of routes().filter((r) => r.operation.id === id)) this.register(route, handlerFor(route.product));
    this.served.add(id);
  }

  ensureComplete(): void {
    const missing = [...new Set(routes().map((r) => r.operation.id))].filter((id) => !this.served.has(id));
    if (missing.length > 0) throw new Error(`The sandbox serves no handler for ${missing.join(', ')} of the operation catalogue (core/catalogue/operations.ts).`);
  }

  private register(route: Route, handler: Handler): void {
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
    this.app.route({
      method: route.method,
      url: route.path.replace(/\{([A-Za-z]+)\}/g, ':$1'),
      schema,
      config: { route: served, mediaType: operation.request === 'none' ? undefined : operation.request.mediaType },
      handler,
    });
  }
}
