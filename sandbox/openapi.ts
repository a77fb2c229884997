import { SCHEMA_BASE, schemaDocuments } from '../core/schemas.ts';
import { HEADER_DESCRIPTIONS, HEADER_SCHEMAS, type OperationSpec } from './operations.ts';
import type { ProfileName } from '../core/profiles.ts';

/** "request-to-pay.schema.json" → "RequestToPay". */
function componentName(file: string): string {
  return file.replace(/\.schema\.json$/, '').split('-').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/**
 * Rewrites the schemas' references into OpenAPI component references: another file ("party.schema.json",
 * relative or absolute, with or without a fragment) becomes its component; a reference inside the same
 * schema ("#/$defs/code") becomes a pointer into the component it is in.
 */
function localise(value: unknown, component?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => localise(v, component));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$id' || key === '$schema') continue;
    out[key] = key === '$ref' && typeof inner === 'string' ? componentRef(inner, component) : localise(inner, component);
  }
  return out;
}

function componentRef(ref: string, component: string | undefined): string {
  const [file, fragment = ''] = ref.split('#');
  const target = file ? componentName(file.replace(SCHEMA_BASE, '')) : component;
  if (!target) throw new Error(`a local reference ${ref} outside any schema`);
  return `#/components/schemas/${target}${fragment}`;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${componentName(`${name}.schema.json`)}` });
const refs = (names: string | string[]) => (Array.isArray(names) ? names.map(ref) : [ref(names)]);
const oneOrOneOf = (schemas: object[]) => (schemas.length === 1 ? schemas[0]! : { oneOf: schemas });

/**
 * The sandbox's OpenAPI 3.1 document, built from the same operation catalogue that registers the routes
 * and the same JSON Schemas that validate requests, so it cannot drift from what the sandbox does.
 */
export function buildOpenApiDocument(operations: readonly OperationSpec[], profile: ProfileName, version: string): Record<string, unknown> {
  const schemas = Object.fromEntries(schemaDocuments.map((doc) => {
    const name = componentName(doc.$id.replace(SCHEMA_BASE, ''));
    return [name, localise(doc, name)];
  }));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = op.url.replace(/:([A-Za-z]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][op.method.toLowerCase()] = operationObject(op);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'MoMo reference sandbox',
      version,
      description: `The Mobile-Money API as the reference sandbox serves it (profile: ${profile}). Every operation needs the Ocp-Apim-Subscription-Key of its product.`,
    },
    paths,
    components: {
      schemas,
      securitySchemes: {
        subscriptionKey: { type: 'apiKey', in: 'header', name: 'Ocp-Apim-Subscription-Key' },
        apiUserBasic: { type: 'http', scheme: 'basic', description: 'API user id and API key.' },
        accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        consentToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A consent token from the OAuth 2.0 token operation (the CIBA grant), not an access token.' },
      },
    },
  };
}

function operationObject(op: OperationSpec): Record<string, unknown> {
  const parameters = [
    ...Object.entries(op.params ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema: localise(schema) })),
    ...(op.requiredHeaders ?? []).map((h) => header(h, true)),
    ...(op.optionalHeaders ?? []).map((h) => header(h, false)),
  ];
  const credential = { basic: { apiUserBasic: [] }, bearer: { accessToken: [] }, consent: { consentToken: [] }, none: {} }[op.credential];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.schema ? { content: { 'application/json': { schema: oneOrOneOf(refs(response.schema)) } } } : {}),
    };
  }
  const gateway = ref('gateway-error');
  const existing401 = op.responses[401];
  responses['401'] = {
    description: existing401 ? `${existing401.description} Or a missing or wrong subscription key.` : 'Missing or wrong subscription key.',
    content: { 'application/json': { schema: oneOrOneOf([...(existing401?.schema ? refs(existing401.schema) : []), gateway]) } },
  };
  // What the framework answers before the operation's own code runs, whatever the operation lists.
  const badRequest = { content: { 'application/json': { schema: ref('bad-request') } } };
  responses['400'] ??= { description: 'A malformed request: a header or path parameter that does not fit its schema, or a body where the operation takes none.', ...badRequest };
  if (op.params) responses['414'] = { description: 'A path segment longer than 200 characters.', ...badRequest };
  if (op.body) {
    responses['413'] = { description: 'A body larger than 64 KiB.', ...badRequest };
    responses['415'] = { description: `A Content-Type other than ${op.body.mediaType}.`, ...badRequest };
  }
  return {
    operationId: op.id,
    summary: op.summary,
    description: `Spec: ${op.specSection}.`,
    tags: [op.product],
    security: [{ subscriptionKey: [], ...credential }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body ? { requestBody: { required: true, content: { [op.body.mediaType]: { schema: ref(op.body.schema) } } } } : {}),
    responses,
  };
}

function header(name: keyof typeof HEADER_DESCRIPTIONS, required: boolean) {
  const display = name.split('-').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('-');
  return { name: display, in: 'header', required, description: HEADER_DESCRIPTIONS[name], schema: localise(HEADER_SCHEMAS[name]) };
}
