import fc from 'fast-check';
import type { ApiModel, ModelOperation, Schema } from './openapi-model.ts';
import { arbitraryFor, type SchemaArbitraryContext } from './schema-arbitrary.ts';
import { applyMutation, encodeBody, mutationArbitrary, type Mutation, type MutationContext } from './mutations.ts';
import { CALLBACK_PLACEHOLDER } from './hints.ts';
import { isCreator } from './episode.ts';

/**
 * One generated request, before the episode fills in what only it knows (credentials, ids it learned).
 * Plain data, so fast-check can print and shrink it.
 */
export interface RequestPlan {
  operation: string;
  /** Simulated time that passes before the request (the sandbox runs on a manual clock). */
  elapsedMs: number;
  /** Which product's subscription key a provisioning request carries. */
  keyProduct: number;
  /** Path parameters and headers drawn from their schemas; an optional header may be left out (undefined). */
  params: Record<string, unknown>;
  body: unknown;
  /** Per slot (path:referenceId, header:x-reference-id, body:referenceIdToRefund): use a value the episode learned. */
  known: Record<string, { roll: number; pick: number }>;
  mutation: Mutation | null;
}

/** A request as it is sent. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** A request between plan and wire: mutations work on this. */
export interface RequestParts {
  method: string;
  pathParams: Record<string, string>;
  /** Path parameters to put in the path as they are, without percent-encoding (bad encodings on purpose). */
  rawPathParams: Set<string>;
  /** Replaces the path built from the template (route-miss mutations). */
  path?: string;
  query: string;
  headers: Record<string, string>;
  body: unknown;
  /** Sent instead of the encoded body. */
  rawBody?: string | Buffer;
  /** The Content-Type to send with a body; null sends none. */
  contentType: string | null;
}

/** How often a slot takes a learned value (percent): ids of existing resources, or a duplicate reference id. */
const KNOWN_SHARE = { path: 85, body: 85, header: 8 } as const;

/** Simulated time between requests: mostly none, sometimes past the consent interval, the cool-down, the notification window. */
const ELAPSED = fc.oneof(
  { arbitrary: fc.constant(0), weight: 60 },
  { arbitrary: fc.integer({ min: 1, max: 200 }), weight: 20 },
  { arbitrary: fc.constant(1_100), weight: 16 },
  { arbitrary: fc.constant(61_000), weight: 3 },
  { arbitrary: fc.constant(31 * 60_000), weight: 1 },
);

/** The plans of every operation of the model, each operation equally likely; half of them malformed. */
export function planArbitrary(model: ApiModel, hints: Map<string, fc.Arbitrary<unknown>>): fc.Arbitrary<RequestPlan> {
  const context: SchemaArbitraryContext = { resolve: model.resolve, hint: (name) => hints.get(name) };
  return fc.oneof(...model.operations.map((op) => operationPlan(op, model, context)));
}

function operationPlan(op: ModelOperation, model: ApiModel, context: SchemaArbitraryContext): fc.Arbitrary<RequestPlan> {
  const params = Object.fromEntries(
    op.parameters.map((p) => {
      const value = arbitraryFor(p.schema, context, p.name).filter((v) => p.validate(v));
      return [p.name, p.required ? value : fc.option(value, { nil: undefined, freq: 3 })];
    }),
  );
  const body = op.body ? arbitraryFor(op.body.schema, context).filter((v) => op.body!.validate(v)) : fc.constant(undefined);
  const known = Object.fromEntries(slotsOf(op, model).map((slot) => [slot, fc.record({ roll: fc.nat(99), pick: fc.nat() })]));
  return fc.record({
    operation: fc.constant(op.id),
    elapsedMs: ELAPSED,
    keyProduct: fc.nat(2),
    params: fc.record(params),
    body,
    known: fc.record(known),
    mutation: fc.option(mutationArbitrary(op), { nil: null, freq: 2 }),
  });
}

/** The values of a request that can name something earlier answers created. */
export function slotsOf(op: ModelOperation, model: ApiModel): string[] {
  const slots = op.parameters.filter((p) => p.in === 'path').map((p) => `path:${p.name}`);
  if (isCreator(op)) slots.push('header:x-reference-id');
  if (op.body) {
    const schema = resolveAll(op.body.schema, model);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      const resolved = typeof property === 'object' ? resolveAll(property, model) : {};
      if (resolved.format === 'uuid' || String(resolved.pattern ?? '').includes('-4[0-9a-fA-F]{3}-')) slots.push(`body:${name}`);
    }
  }
  return slots;
}

function resolveAll(schema: Schema, model: ApiModel): Schema {
  return typeof schema.$ref === 'string' ? resolveAll(model.resolve(schema.$ref), model) : schema;
}

export interface EpisodeContext extends MutationContext {
  /** The receiver's base URL, which replaces the placeholder of generated callback URLs. */
  callbackBaseUrl: string;
}

/** Turns a plan into parts: the subscription key and credential the operation needs, learned ids, then the mutation. */
export function partsOf(plan: RequestPlan, op: ModelOperation, context: EpisodeContext): RequestParts {
  const { world, keys, products } = context;
  const headers: Record<string, string> = {};
  const product = op.product === 'provisioning' ? products[plan.keyProduct % products.length]! : op.product;
  headers['ocp-apim-subscription-key'] = keys[product] ?? '';
  const authorization = op.credential ? world.credential(op.credential, op.product) : undefined;
  if (authorization) headers.authorization = authorization;
  const pathParams: Record<string, string> = {};
  for (const p of op.parameters) {
    const value = plan.params[p.name];
    if (value === undefined) continue;
    if (p.in === 'path') pathParams[p.name] = String(value);
    else headers[p.name] = String(value).replace(CALLBACK_PLACEHOLDER, context.callbackBaseUrl);
  }
  const body = plan.body === undefined ? undefined : (structuredClone(plan.body) as Record<string, unknown>);
  for (const [slot, choice] of Object.entries(plan.known)) {
    const [where, name] = slot.split(':') as ['path' | 'header' | 'body', string];
    const pool = world.pool(world.poolFor(op, slot) ?? '');
    if (pool.length === 0 || choice.roll >= KNOWN_SHARE[where]) continue;
    const value = pool[choice.pick % pool.length]!;
    if (where === 'path') pathParams[name] = value;
    else if (where === 'header') headers[name] = value;
    else if (body && typeof body === 'object') body[name] = value;
  }
  const parts: RequestParts = {
    method: op.method,
    pathParams,
    rawPathParams: new Set(),
    query: '',
    headers,
    body,
    contentType: op.body ? op.body.mediaType : null,
  };
  return plan.mutation ? applyMutation(parts, plan.mutation, op, context) : parts;
}

export function serialise(parts: RequestParts, op: ModelOperation): FuzzRequest {
  const path =
    parts.path ??
    op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = parts.pathParams[name] ?? '';
      return parts.rawPathParams.has(name) ? value : encodeURIComponent(value);
    });
  const headers = { ...parts.headers };
  let body: string | Buffer | undefined = parts.rawBody;
  // The bytes follow the operation's media type; a mutated Content-Type only changes what they are called.
  if (body === undefined && parts.body !== undefined) body = encodeBody(parts.body, op.body?.mediaType);
  if (body !== undefined && parts.contentType !== null) headers['content-type'] = parts.contentType;
  return { method: parts.method, url: `${path}${parts.query}`, headers, ...(body !== undefined ? { body } : {}) };
}

/**
 * Whether a URL parser rewrites the path: a segment "." or ".." (or its percent-encoded form) is removed
 * with what it points at (RFC 3986 §5.2.4), so the request reaches another path, usually none an operation
 * serves. A schema-valid path parameter can be such a segment (accountHolderId ".").
 */
export function hasDotSegment(url: string): boolean {
  const path = url.split('?')[0]!;
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}
