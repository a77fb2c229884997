import { LONGEST_PATH_PARAMETER, MAX_PARAM_LENGTH } from './serving.ts';
import { SCHEMA_BASE, STRICT_READING_KEYWORD, readingSchema, schemaDocuments } from '../../core/validation/schemas.ts';
import { HEADERS, type HeaderName } from '../../core/catalogue/headers.ts';
import { bindingOf, bodySchemasOf, routes, type Route } from '../../core/catalogue/routes.ts';
import { behaviourOf, type ProfileName, type ProfileBehaviour } from '../../core/profiles.ts';

/** "request-to-pay.schema.json" → "RequestToPay". */
function componentName(file: string): string {
  return file
    .replace(/\.schema\.json$/, '')
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

/**
 * Rewrites the schemas' references into OpenAPI component references: another file ("party.schema.json",
 * relative or absolute, with or without a fragment) becomes its component; a reference inside the same
 * schema ("#/$defs/code") becomes a pointer into the component it is in.
 */
function localise(value: unknown, strict = false, component?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => localise(v, strict, component));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$id' || key === '$schema') continue;
    if (key === STRICT_READING_KEYWORD) continue;
    out[key] = key === '$ref' && typeof inner === 'string' ? componentRef(inner, component) : localise(inner, strict, component);
  }
  // A strict reading is part of the document only when the sandbox enforces it: as one more schema to satisfy.
  const reading = (value as Record<string, unknown>)[STRICT_READING_KEYWORD] as { schema: { required?: string[] } } | undefined;
  if (reading && strict)
    out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), localise(readingSchema(reading.schema), strict, component)];
  return out;
}

function componentRef(ref: string, component: string | undefined): string {
  const [file, fragment = ''] = ref.split('#');
  const target = file ? componentName(file.replace(SCHEMA_BASE, '')) : component;
  if (!target) throw new Error(`a local reference ${ref} outside any schema`);
  return `#/components/schemas/${target}${fragment}`;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${componentName(`${name}.schema.json`)}` });
const refs = (names: readonly string[]) => names.map(ref);
// Records are open, so a body may match more than one of a status's schemas: any one of them is the answer.
const oneOrAnyOf = (schemas: object[]) => (schemas.length === 1 ? schemas[0]! : { anyOf: schemas });

/**
 * The sandbox's OpenAPI 3.1 document, built from the operation catalogue that registers the routes and from
 * the JSON Schemas that validate requests, so it cannot drift from what the sandbox does: with the strict
 * readings' constraints when it enforces them (--strict), without them otherwise.
 */
export function buildOpenApiDocument(profile: ProfileName, version: string, strict: boolean): Record<string, unknown> {
  const schemas = Object.fromEntries(
    schemaDocuments.map((doc) => {
      const name = componentName(doc.$id.replace(SCHEMA_BASE, ''));
      return [name, localise(doc, strict, name)];
    }),
  );
  const behaviour = behaviourOf(profile);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes()) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationObject(route, behaviour, strict);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'MoMo reference sandbox',
      version,
      description: `The Mobile-Money API as the reference sandbox serves it (profile: ${profile}${strict ? ', strict readings on' : ''}). Every operation needs the Ocp-Apim-Subscription-Key of its product.`,
    },
    paths,
    components: {
      schemas,
      securitySchemes: {
        subscriptionKey: { type: 'apiKey', in: 'header', name: 'Ocp-Apim-Subscription-Key' },
        apiUserBasic: { type: 'http', scheme: 'basic', description: 'API user id and API key.' },
        accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        consentToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A consent token from the OAuth 2.0 token operation (the CIBA grant), not an access token.',
        },
      },
    },
  };
}

/** The tag and operationId prefix of a route: its product, or "provisioning" for the operations any product's key opens. */
export function routeGroupOf(route: Pick<Route, 'product'>): string {
  return route.product ?? 'provisioning';
}

function operationObject(route: Route, behaviour: ProfileBehaviour, strict: boolean): Record<string, unknown> {
  const op = route.operation;
  const binding = bindingOf(op.id, route.product ?? 'collection');
  const parameters = [
    ...Object.entries(op.params ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema: localise(schema) })),
    ...op.headers.required.map((h) => header(h, true)),
    ...op.headers.optional.map((h) => header(h, false)),
  ];
  const credential = { basic: { apiUserBasic: [] }, bearer: { accessToken: [] }, consent: { consentToken: [] }, none: {} }[op.credential];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const schemas = bodySchemasOf(response, binding.errors, behaviour);
    responses[status] = {
      description: response.description,
      ...(schemas.length > 0 ? { content: { 'application/json': { schema: oneOrAnyOf(refs(schemas)) } } } : {}),
      ...(response.codes ? { 'x-error-codes': response.codes } : {}),
    };
  }
  const gateway = ref('gateway-error');
  const existing401 = op.responses[401];
  const schemas401 = existing401 ? bodySchemasOf(existing401, binding.errors, behaviour) : [];
  responses['401'] = {
    description: existing401 ? `${existing401.description} Or a missing or wrong subscription key.` : 'Missing or wrong subscription key.',
    content: { 'application/json': { schema: oneOrAnyOf([...refs(schemas401), gateway]) } },
    ...(existing401?.codes ? { 'x-error-codes': existing401.codes } : {}),
  };
  // What the framework answers before the operation's own code runs, whatever the operation lists.
  const badRequest = { content: { 'application/json': { schema: ref('bad-request') } } };
  responses['400'] ??= {
    description: 'A malformed request: a header or path parameter that does not fit its schema, or a body where the operation takes none.',
    ...badRequest,
  };
  if (op.params)
    responses['414'] = {
      description: `A path segment of more than ${MAX_PARAM_LENGTH} UTF-16 code units once decoded (no path parameter may exceed ${LONGEST_PATH_PARAMETER} characters).`,
      ...badRequest,
    };
  // Without --strict a form operation takes the same fields as JSON too (STRICT_READINGS.formMediaType).
  const mediaTypes =
    op.request === 'none'
      ? []
      : [op.request.mediaType, ...(!strict && op.request.mediaType !== 'application/json' ? ['application/json'] : [])];
  if (op.request !== 'none') {
    responses['413'] = { description: 'A body larger than 64 KiB.', ...badRequest };
    responses['415'] = { description: `A Content-Type other than ${mediaTypes.join(' or ')}.`, ...badRequest };
  }
  const group = routeGroupOf(route);
  return {
    operationId: `${group}.${op.id}`,
    summary: `${op.label[0]!.toUpperCase()}${op.label.slice(1)}${route.product ? ` (${route.product})` : ''}`,
    description: binding.beyondSpec
      ? `Beyond the spec: the live service has it, and the spec does not list it here (${binding.section}). Source: ${binding.beyondSpec}.${binding.note ? ` ${binding.note}` : ''}`
      : `Spec: ${binding.section}.${binding.note ? ` ${binding.note}` : ''}`,
    tags: [group],
    'x-operation': op.id,
    ...(binding.beyondSpec ? { 'x-beyond-spec': true } : {}),
    security: [{ subscriptionKey: [], ...credential }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.request !== 'none'
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: ref((op.request as { schema: string }).schema) }])),
          },
        }
      : {}),
    responses,
  };
}

function header(name: HeaderName, required: boolean) {
  const { name: display, description, schema } = HEADERS[name];
  return { name: display, in: 'header', required, description, schema: localise(schema) };
}
