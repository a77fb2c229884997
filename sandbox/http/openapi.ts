import type { AddressInfo } from 'node:net';
import { isIPv6 } from 'node:net';
import { LONGEST_PATH_PARAMETER, MAX_PARAM_LENGTH } from './serving.ts';
import {
  SANDBOX_ANSWERS_KEYWORD,
  SCHEMA_BASE,
  STRICT_READING_KEYWORD,
  schemaDocuments,
  type JsonSchema,
} from '../../core/validation/schemas.ts';
import { HEADERS, type HeaderName } from '../../core/catalogue/headers.ts';
import { OPERATIONS, type DependentParam } from '../../core/catalogue/operations.ts';
import { bindingOf, bodySchemasOf, routes, type Route } from '../../core/catalogue/routes.ts';
import { behaviourOf, type ProfileName, type ProfileBehaviour } from '../../core/profiles.ts';
import { offeredScopesPattern } from '../domain/scopes.ts';

/**
 * The sandbox's OpenAPI 3.1 document, built from the operation catalogue that registers the routes and from the
 * JSON Schemas that validate requests, so it cannot drift from what the sandbox does. It states what the sandbox
 * in its mode enforces (the strict readings' constraints only under --strict, the scopes it was started with),
 * and it is written for code generators: only the API's schemas, every record a type a generator can read, error
 * bodies with titles, operationIds that become clean method names, and a server.
 */

type Schema = Record<string, unknown>;

export interface DocumentOptions {
  profile: ProfileName;
  version: string;
  strict: boolean;
  /** The consent scopes bc-authorize takes (--scopes). */
  scopes: readonly string[];
}

const COMPONENTS = '#/components/schemas/';

/** "request-to-pay.schema.json" → "RequestToPay". */
function componentName(file: string): string {
  return file
    .replace(/\.schema\.json$/, '')
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

const nameOfSchema = (name: string) => componentName(`${name}.schema.json`);
const ref = (name: string) => ({ $ref: `${COMPONENTS}${nameOfSchema(name)}` });

/** Every schema file (and derived schema) by the component name it would have. */
const SCHEMA_FILES: ReadonlyMap<string, JsonSchema> = new Map(
  schemaDocuments.map((doc) => [componentName(doc.$id.replace(SCHEMA_BASE, '')), doc]),
);

/**
 * Rewrites the schemas' references into OpenAPI component references: another file ("party.schema.json",
 * relative or absolute, with or without a fragment) becomes its component; a reference inside the same
 * schema ("#/$defs/code") becomes a pointer into the component it is in. A strict reading is part of the
 * document only when the sandbox enforces it (--strict).
 */
function localise(value: unknown, strict: boolean, component?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => localise(v, strict, component));
  if (value === null || typeof value !== 'object') return value;
  const out: Schema = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$id' || key === '$schema' || key === STRICT_READING_KEYWORD || key === SANDBOX_ANSWERS_KEYWORD) continue;
    out[key] = key === '$ref' && typeof inner === 'string' ? componentRef(inner, component) : localise(inner, strict, component);
  }
  const reading = (value as Schema)[STRICT_READING_KEYWORD] as { schema: Schema } | undefined;
  if (reading && strict) mergeReading(out, localise(reading.schema, strict, component) as Schema);
  return out;
}

/**
 * Adds a strict reading's constraints to the schema it qualifies, as its own keywords where they fit (a required
 * field more, a tighter bound, a pattern it lacks), so that a generator reads them; in an allOf otherwise. The
 * reading's description is left out: the schema's own says what the reading asks.
 */
function mergeReading(schema: Schema, reading: Schema): void {
  const rest: Schema = {};
  for (const [key, value] of Object.entries(reading)) {
    if (key === 'description') continue;
    if (key === 'required') schema.required = [...new Set([...((schema.required as string[] | undefined) ?? []), ...(value as string[])])];
    else if (key === 'maxLength' && typeof schema.maxLength === 'number') schema.maxLength = Math.min(schema.maxLength, value as number);
    else if (!(key in schema)) schema[key] = value;
    else rest[key] = value;
  }
  if (Object.keys(rest).length > 0) schema.allOf = [...((schema.allOf as unknown[] | undefined) ?? []), rest];
}

function componentRef(reference: string, component: string | undefined): string {
  const [file, fragment = ''] = reference.split('#');
  const target = file ? componentName(file.replace(SCHEMA_BASE, '')) : component;
  if (!target) throw new Error(`a local reference ${reference} outside any schema`);
  return `${COMPONENTS}${target}${fragment}`;
}

/** The component name a document reference points into ("#/components/schemas/FailureReason/$defs/code" → "FailureReason"). */
const componentOfRef = (reference: string) => reference.slice(COMPONENTS.length).split('/')[0]!;

function refsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENTS)) found.add(componentOfRef(inner));
      else refsIn(inner, found);
    }
  }
  return found;
}

/**
 * A schema file as a component. Where the file accepts more than the sandbox sends (x-sandbox-answers, for the
 * harness checking other servers), the component is the part the sandbox sends: a client generated from the
 * document types what it receives, where a string-or-object would defeat the generator.
 */
function componentOf(name: string, strict: boolean): Schema {
  const doc = SCHEMA_FILES.get(name);
  if (!doc) throw new Error(`the OpenAPI document refers to ${name}, which no schema of schemas/ is`);
  const answered = doc[SANDBOX_ANSWERS_KEYWORD];
  if (typeof answered !== 'string') return localise(doc, strict, name) as Schema;
  const [file, fragment = ''] = answered.split('#');
  const targetName = file ? componentName(file) : name;
  const target = fragment
    .split('/')
    .slice(1)
    .reduce<unknown>((node, token) => (node as Schema | undefined)?.[token], SCHEMA_FILES.get(targetName));
  if (!target || typeof target !== 'object') throw new Error(`${name}: ${SANDBOX_ANSWERS_KEYWORD} ${answered} resolves to nothing`);
  const { title: _title, description: _description, $defs: _defs, ...sent } = target as Schema;
  return {
    title: doc.title,
    description: `${doc.description} The reference sandbox sends only the form this schema gives.`,
    ...(localise(sent, strict, targetName) as Schema),
  };
}

/**
 * A record's conditions (if/then/else) in an x-conditions extension rather than as JSON Schema: code generators
 * drop or misread them (OpenAPI Generator 7.10 typed every status record `object` for them). Done for the records
 * the sandbox only answers with; a request's conditions stay, as they are what the sandbox enforces and what a
 * validator of requests must see (generators read those records without them).
 */
function conditionsAside(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(conditionsAside);
  if (value === null || typeof value !== 'object') return value;
  const schema = value as Schema;
  const out: Schema = {};
  const conditions: Schema[] = [];
  if ('if' in schema) conditions.push(pick(schema, ['if', 'then', 'else']));
  for (const [key, inner] of Object.entries(schema)) {
    if (key === 'if' || key === 'then' || key === 'else') continue;
    if (SCHEMA_MAPS.has(key) && inner && typeof inner === 'object') {
      out[key] = Object.fromEntries(Object.entries(inner).map(([name, member]) => [name, conditionsAside(member)]));
    } else if (key === 'allOf' && Array.isArray(inner)) {
      const kept = inner.filter((member) => !isCondition(member)).map(conditionsAside);
      conditions.push(...(inner.filter(isCondition) as Schema[]));
      if (kept.length > 0) out.allOf = kept;
    } else out[key] = conditionsAside(inner);
  }
  if (conditions.length > 0) out['x-conditions'] = conditions;
  return out;
}

/**
 * A reference with keywords beside it, as generators read it best, each rewrite meaning the same. A reference
 * closed to the fields it names (`properties` restating them as true, `additionalProperties: false`) becomes
 * `unevaluatedProperties: false`, which closes it to the same fields, so that a generator types it as the
 * referenced component rather than as a new one named after the first property it meets it in. A `type` the
 * referenced schema has already is dropped where nothing beside it needs it (generators warn of it; a validator in
 * strict mode wants the type beside a keyword of that type).
 */
function tidyReferences(value: unknown, schemas: Record<string, Schema>): unknown {
  if (Array.isArray(value)) return value.map((v) => tidyReferences(v, schemas));
  if (value === null || typeof value !== 'object') return value;
  const out = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, tidyReferences(inner, schemas)])) as Schema;
  const target = typeof out.$ref === 'string' && out.$ref.startsWith(COMPONENTS) ? schemas[out.$ref.slice(COMPONENTS.length)] : undefined;
  if (!target) return out;
  const restated = out.properties as Schema | undefined;
  const named = Object.keys((target.properties as Schema | undefined) ?? {});
  if (
    out.additionalProperties === false &&
    restated &&
    Object.values(restated).every((p) => p === true) &&
    Object.keys(restated).sort().join() === named.sort().join()
  ) {
    delete out.properties;
    delete out.additionalProperties;
    out.unevaluatedProperties = false;
    return out;
  }
  const annotations = ['$ref', 'type', 'title', 'description', 'x-source'];
  if (out.type !== undefined && out.type === target.type && Object.keys(out).every((key) => annotations.includes(key))) delete out.type;
  return out;
}

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const isCondition = (member: unknown) =>
  typeof member === 'object' && member !== null && 'if' in member && Object.keys(member).every((k) => ['if', 'then', 'else'].includes(k));
const pick = (schema: Schema, keys: string[]) => Object.fromEntries(keys.filter((k) => k in schema).map((k) => [k, schema[k]]));

export function buildOpenApiDocument(options: DocumentOptions): Record<string, unknown> {
  const { profile, version, strict } = options;
  const behaviour = behaviourOf(profile);
  const titleOf = (name: string) => String(SCHEMA_FILES.get(nameOfSchema(name))?.title ?? nameOfSchema(name));
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes()) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operationObject(route, behaviour, strict, titleOf);
  }
  const operations = Object.values(paths).flatMap((item) => Object.values(item));
  const schemas = componentsFrom(refsIn(paths), (name) => componentOf(name, strict));
  const requested = componentsFrom(refsIn(operations.map((op) => [op.parameters, op.requestBody])), (name) => schemas[name]!);
  for (const name of Object.keys(schemas)) if (!(name in requested)) schemas[name] = conditionsAside(schemas[name]) as Schema;
  offerScopes(schemas, options.scopes);
  for (const name of Object.keys(schemas)) schemas[name] = tidyReferences(schemas[name], schemas) as Schema;
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'MoMo reference sandbox',
      version,
      description: `The Mobile-Money API as the reference sandbox serves it (profile: ${profile}${strict ? ', strict readings on' : ''}). Every operation needs the Ocp-Apim-Subscription-Key of its product.`,
    },
    paths: tidyReferences(paths, schemas),
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

/** The components the references name, and every one those refer to in turn, sorted by name. */
function componentsFrom(names: Iterable<string>, componentNamed: (name: string) => Schema): Record<string, Schema> {
  const found = new Map<string, Schema>();
  const pending = [...names];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (found.has(name)) continue;
    const component = componentNamed(name);
    found.set(name, component);
    pending.push(...refsIn(component));
  }
  return Object.fromEntries([...found].sort(([a], [b]) => a.localeCompare(b)));
}

/** bc-authorize takes only the scopes this sandbox offers (--scopes): its scope parameter says which. */
function offerScopes(schemas: Record<string, Schema>, scopes: readonly string[]): void {
  const request = OPERATIONS.bcAuthorize.request;
  const form = request === 'none' ? undefined : schemas[nameOfSchema(request.schema)];
  const properties = form?.properties as Record<string, Schema> | undefined;
  if (!properties?.scope) throw new Error('bc-authorize has no scope parameter in its request schema');
  properties.scope = {
    ...properties.scope,
    pattern: offeredScopesPattern(scopes),
    description: `One or more of the scopes this sandbox offers, separated by spaces: ${scopes.join(', ')}. Another is UNSUPPORTED_SCOPE.`,
  };
}

/** The tag of a route: its product, or "provisioning" for the operations any product's key opens. */
export function routeGroupOf(route: Pick<Route, 'product'>): string {
  return route.product ?? 'provisioning';
}

/**
 * The operationId of a route: its group and the catalogue's id in camel case ("collectionRequestToPay"), with a
 * capital that follows a capital lowered ("collectionCreateOauthToken"), so that generators that split words at
 * capitals make a method of whole words in every case convention (create_oauth_token, not create_o_auth_token).
 */
export function operationIdOf(route: Pick<Route, 'product' | 'operation'>): string {
  const id = route.operation.id.replace(/([A-Z])([A-Z]+)/g, (_, first: string, rest: string) => first + rest.toLowerCase());
  return `${routeGroupOf(route)}${id[0]!.toUpperCase()}${id.slice(1)}`;
}

function operationObject(route: Route, behaviour: ProfileBehaviour, strict: boolean, titleOf: (schema: string) => string): Schema {
  const op = route.operation;
  const binding = bindingOf(op.id, route.product ?? 'collection');
  // Records are open, so a body may match more than one of a status's schemas: any one of them is the answer. The
  // title names the union for generators, which otherwise name it after the operation and the status.
  const body = (schemas: readonly string[]) =>
    schemas.length === 1 ? ref(schemas[0]!) : { title: schemas.map(titleOf).join(' or '), anyOf: schemas.map(ref) };
  const parameters = [
    ...Object.entries(op.params ?? {}).map(([name, schema]) => pathParameter(name, schema, op.dependentParams?.[name], strict)),
    ...op.headers.required.map((h) => header(h, true, strict)),
    ...op.headers.optional.map((h) => header(h, false, strict)),
  ];
  const credential = { basic: { apiUserBasic: [] }, bearer: { accessToken: [] }, consent: { consentToken: [] }, none: {} }[op.credential];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const schemas = bodySchemasOf(response, binding.errors, behaviour);
    responses[status] = {
      description: response.description,
      ...(schemas.length > 0 ? { content: { 'application/json': { schema: body(schemas) } } } : {}),
      ...(response.codes ? { 'x-error-codes': response.codes } : {}),
    };
  }
  const existing401 = op.responses[401];
  const schemas401 = existing401 ? bodySchemasOf(existing401, binding.errors, behaviour) : [];
  responses['401'] = {
    description: existing401 ? `${existing401.description} Or a missing or wrong subscription key.` : 'Missing or wrong subscription key.',
    content: { 'application/json': { schema: body([...schemas401, 'gateway-error']) } },
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
    operationId: operationIdOf(route),
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

/**
 * A path parameter. One whose form depends on another's value takes, in its schema, any of the forms, as one
 * pattern (a generator reads a pattern, where it makes an empty type of an anyOf), and says in x-depends-on which
 * value asks for which: OpenAPI cannot tie one parameter to another.
 */
function pathParameter(name: string, schema: object, dependent: DependentParam | undefined, strict: boolean): Schema {
  const parameter = { name, in: 'path', required: true, schema: localise(schema, strict) };
  if (!dependent) return parameter;
  const patterns = Object.entries(dependent.forms).map(([value, form]) => {
    const resolved =
      typeof form.schema.$ref === 'string' ? SCHEMA_FILES.get(componentName(form.schema.$ref.replace(SCHEMA_BASE, ''))) : form.schema;
    if (typeof resolved?.pattern !== 'string') throw new Error(`the form of ${name} for ${dependent.on} ${value} states no pattern`);
    return `(?:${resolved.pattern})`;
  });
  const values = Object.entries(dependent.forms).map(([value, form]) => `${form.what} for ${value}`);
  return {
    ...parameter,
    description: `Validated by ${dependent.on}: ${values.join(', ')}.`,
    schema: { ...(parameter.schema as Schema), pattern: patterns.join('|') },
    'x-depends-on': {
      parameter: dependent.on,
      forms: Object.fromEntries(Object.entries(dependent.forms).map(([value, form]) => [value, localise(form.schema, strict)])),
    },
  };
}

function header(name: HeaderName, required: boolean, strict: boolean) {
  const { name: display, description, schema } = HEADERS[name];
  return { name: display, in: 'header', required, description, schema: localise(schema, strict) };
}

/** A host name (letters, digits, hyphens and the underscores of container names, in dot-separated labels) or [an IPv6 address], and a port. */
const HOST_HEADER =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*|\[([0-9A-Fa-f:.]+)\])(?::([0-9]{1,5}))?$/;

/**
 * The URL a client reached the sandbox at: the request's Host when it is a host name or address with an optional
 * port and nothing else (any other text, which a caller could use to put a URL or markup of its choosing in the
 * document, is not copied), else the address the sandbox listens on.
 */
export function serverUrlOf(host: string | undefined, listening: AddressInfo | string | null): string {
  const match = host !== undefined && host.length <= 262 ? HOST_HEADER.exec(host) : null;
  if (match && (match[1] === undefined || isIPv6(match[1])) && (match[2] === undefined || Number(match[2]) <= 65535))
    return `http://${host}`;
  if (listening === null || typeof listening === 'string') return 'http://127.0.0.1';
  // Listening on every address names none a client can reach; the loopback one is one of them.
  const address = { '0.0.0.0': '127.0.0.1', '::': '::1' }[listening.address] ?? listening.address;
  return `http://${isIPv6(address) ? `[${address}]` : address}:${listening.port}`;
}

/** The document with the server a client reached it at, after its info, as generators read it. */
export function withServer(document: Record<string, unknown>, url: string): Record<string, unknown> {
  const { openapi, jsonSchemaDialect, info, ...rest } = document;
  return { openapi, jsonSchemaDialect, info, servers: [{ url }], ...rest };
}
