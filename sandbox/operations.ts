import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { schemaId } from '../core/schemas.ts';
import type { Product } from '../core/products.ts';

/** How a caller proves who it is, besides the subscription key every operation needs. */
export type Credential = 'basic' | 'bearer' | 'consent' | 'none';

export type HeaderName = 'x-reference-id' | 'x-target-environment' | 'x-callback-url' | 'language';

export interface ResponseSpec {
  description: string;
  /** Short schema name in schemas/ (several: one of them), or undefined for no body. */
  schema?: string | string[];
}

/** One operation of the API, as the sandbox serves it and its OpenAPI document describes it. */
export interface OperationSpec {
  id: string;
  summary: string;
  /** Where the spec defines it, e.g. "§4.2 #2". */
  specSection: string;
  method: 'GET' | 'POST';
  url: string;
  /** The product whose subscription key opens it; provisioning takes the key of any product. */
  product: Product | 'provisioning';
  credential: Credential;
  requiredHeaders?: HeaderName[];
  optionalHeaders?: HeaderName[];
  params?: Record<string, object>;
  body?: { schema: string; mediaType: 'application/json' | 'application/x-www-form-urlencoded' };
  /** A body is not allowed (the live sandbox answers 400 to a body sent to /token/). */
  noBody?: boolean;
  responses: Record<number, ResponseSpec>;
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

export const HEADER_SCHEMAS: Record<HeaderName, object> = {
  'x-reference-id': { $ref: schemaId('uuid-v4') },
  'x-target-environment': { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' },
  'x-callback-url': { type: 'string', maxLength: 2048, format: 'uri', pattern: '^https?://[^/?#\\s]+' },
  language: { type: 'string', pattern: '^[a-zA-Z]{2,3}$' },
};

export const HEADER_DESCRIPTIONS: Record<HeaderName, string> = {
  'x-reference-id': 'UUID v4 chosen by the caller: the id of the resource to create (§2.5).',
  'x-target-environment': 'The wallet platform that processes the request, e.g. "sandbox".',
  'x-callback-url': 'Where the sandbox sends the final status record; its host must be the API user\'s providerCallbackHost.',
  language: 'ISO 639-1 or 639-3 code of the notification template.',
};

export class OperationCatalogue {
  readonly operations: OperationSpec[] = [];

  constructor(private readonly app: FastifyInstance) {}

  define(spec: OperationSpec, handler: Handler): void {
    this.operations.push(spec);
    const headerNames = [...(spec.requiredHeaders ?? []), ...(spec.optionalHeaders ?? [])];
    const schema: Record<string, object> = {};
    if (headerNames.length > 0) {
      schema.headers = {
        type: 'object',
        required: spec.requiredHeaders ?? [],
        properties: Object.fromEntries(headerNames.map((h) => [h, HEADER_SCHEMAS[h]])),
      };
    }
    if (spec.params) {
      schema.params = { type: 'object', required: Object.keys(spec.params), properties: spec.params };
    }
    if (spec.body) schema.body = { $ref: schemaId(spec.body.schema) };
    this.app.route({
      method: spec.method,
      url: spec.url,
      schema,
      config: { operation: spec, mediaType: spec.body?.mediaType },
      handler,
    });
  }
}
