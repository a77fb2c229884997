import { createHash } from 'node:crypto';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajv } from '../../core/validation/schemas.ts';

/** A JSON Schema as the OpenAPI document holds it (references are local: #/components/schemas/...). */
export type Schema = Record<string, unknown>;

export interface ModelParameter {
  /** As the document spells it; header names are compared in lower case. */
  name: string;
  in: 'path' | 'header';
  required: boolean;
  schema: Schema;
  validate: ValidateFunction;
}

export interface ModelResponse {
  status: number;
  description: string;
  /** Validates the body; undefined when the document gives the status no content (the body must then be empty). */
  validate?: ValidateFunction;
  /** Component names of the body's schema (one, or the branches of an anyOf). */
  components: string[];
  /** Error codes the description names for this status, e.g. RESOURCE_NOT_FOUND; a body's code must be one of them. */
  codes: string[];
}

/** One operation of the document, in the form requests are generated from and answers judged against. */
export interface ModelOperation {
  id: string;
  /** The operation of the catalogue it serves (x-operation), e.g. requestToPay; the operationId when it names none. */
  operation: string;
  method: string;
  /** Path template with its {name} placeholders, as the OpenAPI document gives it. */
  path: string;
  /** The first tag: the product whose subscription key opens it, or "provisioning" (any product's key). */
  product: string;
  /** The security scheme besides the subscription key (apiUserBasic, accessToken, ...), if any. */
  credential: string | undefined;
  parameters: ModelParameter[];
  body: { mediaType: string; schema: Schema; validate: ValidateFunction } | undefined;
  responses: Map<number, ModelResponse>;
}

export interface ApiModel {
  operations: ModelOperation[];
  /** Security schemes by name, as the document declares them. */
  schemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  /** The schema a local reference points at. */
  resolve(ref: string): Schema;
  /** The validator of a component schema, e.g. BadRequest. */
  validatorOf(component: string): ValidateFunction;
  /** The fields of a body that the component it matches best does not name (records are open in the document). */
  unknownFieldsOf(components: readonly string[], body: unknown): string[];
}

export class DocumentError extends Error {}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Reads an OpenAPI 3.1 document into the operations the fuzzer drives. Its component schemas are
 * registered with the project's Ajv instance under an id of their own (one per document content), so
 * answers are judged by the document as served, not by the files it was built from.
 */
export function loadModel(doc: unknown): ApiModel {
  const document = doc as {
    openapi?: string;
    paths?: Record<string, Record<string, unknown>>;
    components?: { schemas?: Record<string, Schema>; securitySchemes?: ApiModel['schemes'] };
  };
  if (typeof document?.openapi !== 'string' || !document.openapi.startsWith('3.1')) {
    throw new DocumentError(
      `expected an OpenAPI 3.1 document, got ${typeof document?.openapi === 'string' ? `version ${document.openapi}` : 'something else'}`,
    );
  }
  if (!document.paths || !document.components?.schemas) throw new DocumentError('the document has no paths or no components.schemas');

  const documentId = `https://momo-harness.dev/fuzz/openapi-${createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16)}.json`;
  // Ajv reads $defs, not OpenAPI's components: the same schemas, re-pointed.
  if (!ajv.getSchema(documentId)) {
    ajv.addSchema({ $id: documentId, $defs: repoint(document.components.schemas) as Record<string, unknown> });
  }
  const compile = (schema: Schema): ValidateFunction => ajv.compile(repoint(schema, documentId) as Schema);

  const resolve = (ref: string): Schema => {
    if (!ref.startsWith('#/')) throw new DocumentError(`only local references are supported, got ${ref}`);
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, token) => (node as Record<string, unknown> | undefined)?.[token.replace(/~1/g, '/').replace(/~0/g, '~')],
        doc,
      );
    if (target === undefined || target === null || typeof target !== 'object') throw new DocumentError(`unresolved reference ${ref}`);
    return target as Schema;
  };

  const operations: ModelOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      operations.push(operationOf(path, method, op, compile, resolve));
    }
  }
  const componentValidators = new Map<string, ValidateFunction>();
  const validatorOf = (component: string): ValidateFunction => {
    if (!document.components!.schemas![component]) throw new DocumentError(`the document has no component schema ${component}`);
    let validate = componentValidators.get(component);
    if (!validate) componentValidators.set(component, (validate = compile({ $ref: `#/components/schemas/${component}` })));
    return validate;
  };
  /**
   * The fields of a body that the component it matches best does not name: the document's records are open, as
   * for any target, and the sandbox's own answers are held to exactly their shapes with this.
   */
  const unknownFieldsOf = (components: readonly string[], body: unknown): string[] => {
    const fits = components
      .filter((name) => validatorOf(name)(body))
      .map((name) => fieldsNotNamed(resolve(`#/components/schemas/${name}`), body, resolve, ''));
    return fits.length === 0 ? [] : fits.reduce((best, fit) => (fit.length < best.length ? fit : best));
  };
  return { operations, schemes: document.components.securitySchemes ?? {}, resolve, validatorOf, unknownFieldsOf };
}

function fieldsNotNamed(schema: Schema, value: unknown, resolve: (ref: string) => Schema, at: string): string[] {
  const resolved = typeof schema.$ref === 'string' && schema.$ref.startsWith('#/') ? resolve(schema.$ref) : schema;
  const properties = resolved.properties as Record<string, Schema> | undefined;
  if (!properties || typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, member]) => {
    const named = properties[key];
    return named === undefined ? [`${at}/${key}`] : fieldsNotNamed(named, member, resolve, `${at}/${key}`);
  });
}

function operationOf(
  path: string,
  method: string,
  op: Record<string, unknown>,
  compile: (s: Schema) => ValidateFunction,
  resolve: (ref: string) => Schema,
): ModelOperation {
  const id = String(op.operationId ?? `${method.toUpperCase()} ${path}`);
  const parameters = ((op.parameters ?? []) as { name: string; in: string; required?: boolean; schema?: Schema }[]).map(
    (p): ModelParameter => {
      if (p.in !== 'path' && p.in !== 'header')
        throw new DocumentError(`${id}: parameter ${p.name} is in ${p.in}; the fuzzer knows path and header parameters`);
      const schema = p.schema ?? { type: 'string' };
      return {
        name: p.in === 'header' ? p.name.toLowerCase() : p.name,
        in: p.in,
        required: p.required === true || p.in === 'path',
        schema,
        validate: compile(schema),
      };
    },
  );
  const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
  const [mediaType, media] = content ? (Object.entries(content)[0] ?? []) : [];
  const body = mediaType && media ? { mediaType, schema: media.schema, validate: compile(media.schema) } : undefined;

  const security = ((op.security ?? []) as Record<string, unknown>[])[0] ?? {};
  const credential = Object.keys(security).find((name) => name !== 'subscriptionKey');

  const responses = new Map<number, ModelResponse>();
  for (const [status, response] of Object.entries(
    (op.responses ?? {}) as Record<
      string,
      { description?: string; content?: Record<string, { schema: Schema }>; 'x-error-codes'?: string[] }
    >,
  )) {
    const schema = response.content?.['application/json']?.schema;
    const components = schema ? componentsOf(schema) : [];
    const enums = new Set(components.flatMap((name) => enumStrings(resolve(`#/components/schemas/${name}`), resolve)));
    const description = response.description ?? '';
    // The codes the document lists for the status (x-error-codes), else those its description names.
    const listed = response['x-error-codes'] ?? description.match(/\b[A-Z][A-Z_]{2,}[A-Z]\b/g) ?? [];
    const codes = [...new Set(listed.filter((word) => enums.has(word) || enums.has(`${word}.`)))];
    responses.set(Number(status), {
      status: Number(status),
      description,
      validate: schema ? compile(schema) : undefined,
      components,
      codes,
    });
  }
  const tags = (op.tags ?? []) as string[];
  const operation = typeof op['x-operation'] === 'string' ? op['x-operation'] : id;
  return { id, operation, method: method.toUpperCase(), path, product: tags[0] ?? 'provisioning', credential, parameters, body, responses };
}

/**
 * #/components/schemas/X → #/$defs/X, absolute when a document id is given; and a record's x-conditions, which the
 * document keeps out of generators' way, back into an allOf, so that answers are judged by them too.
 */
function repoint(value: unknown, documentId = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => repoint(v, documentId));
  if (value === null || typeof value !== 'object') return value;
  const out: Schema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string') out[key] = inner.replace('#/components/schemas/', `${documentId}#/$defs/`);
    else if (key === 'x-conditions' && Array.isArray(inner))
      out.allOf = [...((out.allOf as unknown[]) ?? []), ...inner.map((c) => repoint(c, documentId))];
    else if (key === 'allOf' && Array.isArray(inner))
      out.allOf = [...inner.map((c) => repoint(c, documentId)), ...((out.allOf as unknown[]) ?? [])];
    else out[key] = repoint(inner, documentId);
  }
  return out;
}

function componentsOf(schema: Schema): string[] {
  const refs =
    typeof schema.$ref === 'string' ? [schema.$ref] : ((schema.anyOf ?? schema.oneOf ?? []) as Schema[]).map((s) => String(s.$ref ?? ''));
  return refs.map((ref) => ref.replace('#/components/schemas/', '')).filter(Boolean);
}

/** Every string an enum or const admits anywhere in a schema, following references. */
function enumStrings(schema: unknown, resolve: (ref: string) => Schema, seen = new Set<unknown>()): string[] {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const s = schema as Schema;
  const own = [...((Array.isArray(s.enum) ? s.enum : []) as unknown[]), ...(typeof s.const === 'string' ? [s.const] : [])].filter(
    (v): v is string => typeof v === 'string',
  );
  const nested = Object.entries(s).flatMap(([key, inner]) => {
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/')) return enumStrings(resolve(inner), resolve, seen);
    return typeof inner === 'object' ? enumStrings(inner, resolve, seen) : [];
  });
  return [...own, ...nested];
}
