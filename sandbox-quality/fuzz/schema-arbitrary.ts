import fc from 'fast-check';
import type { Schema } from './openapi-model.ts';

/**
 * Values the document's schemas admit, as fast-check arbitraries. It covers the keywords the sandbox's
 * schemas use (type, const, enum, pattern, format, lengths, properties, required, oneOf/anyOf, allOf of
 * if/then/else on one property, $ref); the caller filters with the document's own validator, so a
 * keyword this misreads costs generated values, never a request wrongly counted as valid.
 */
export interface SchemaArbitraryContext {
  resolve(ref: string): Schema;
  /** Domain values for a property, parameter or header of this name (see hints.ts); mixed with the schema's. */
  hint(name: string): fc.Arbitrary<unknown> | undefined;
}

/** Free strings are kept short: long ones are the malformed generator's business. */
const FREE_STRING_MAX = 24;

export function arbitraryFor(schema: Schema | boolean, context: SchemaArbitraryContext, name?: string): fc.Arbitrary<unknown> {
  const fromSchema = schemaArbitrary(schema, context);
  const hint = name === undefined ? undefined : context.hint(name);
  return hint ? fc.oneof({ arbitrary: hint, weight: 4 }, { arbitrary: fromSchema, weight: 1 }) : fromSchema;
}

function schemaArbitrary(input: Schema | boolean, context: SchemaArbitraryContext): fc.Arbitrary<unknown> {
  if (typeof input === 'boolean') return input ? fc.string({ maxLength: FREE_STRING_MAX }) : fc.constant(undefined);
  const schema = withReference(input, context);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => schemaArbitrary(b, context)));
  switch (schema.type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return fc.integer({ min: numberOr(schema.minimum, -1_000_000), max: numberOr(schema.maximum, 1_000_000) });
    case 'number':
      return fc.double({ min: numberOr(schema.minimum, -1e6), max: numberOr(schema.maximum, 1e6), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(schemaArbitrary((schema.items as Schema | undefined) ?? {}, context), { maxLength: numberOr(schema.maxItems, 4) });
    case 'object':
      return objectArbitrary(schema, context);
    default:
      return fc.string({ maxLength: FREE_STRING_MAX });
  }
}

/** A $ref with sibling keywords (e.g. a minLength beside it) reads as the referenced schema plus those keywords. */
function withReference(schema: Schema, context: SchemaArbitraryContext): Schema {
  if (typeof schema.$ref !== 'string') return schema;
  const { $ref, ...siblings } = schema;
  return { ...withReference(context.resolve($ref as string), context), ...siblings };
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = numberOr(schema.minLength, 0);
  const maxLength = numberOr(schema.maxLength, Number.MAX_SAFE_INTEGER);
  const fits = (s: string) => s.length >= minLength && s.length <= maxLength;
  switch (schema.format) {
    case 'uuid':
      return fc.uuid({ version: 4 });
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
      return fc.webUrl().filter(fits);
  }
  if (typeof schema.pattern === 'string') {
    const full = new RegExp(schema.pattern, 'u');
    // fast-check cannot generate from look-aheads: generate without them, keep what the whole pattern admits.
    const generable = new RegExp(schema.pattern.replace(/\(\?[=!](?:[^()\\]|\\.)*\)/g, ''));
    return fc.stringMatching(generable, { maxLength: Math.min(maxLength, 64) }).filter((s) => fits(s) && full.test(s));
  }
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(maxLength, FREE_STRING_MAX)) });
}

/**
 * An object: its required properties and any of its optional ones. A conditional (allOf of if/then/else
 * on one property's const, as party and the OAuth token request use) becomes one branch per outcome, so
 * partyIdType MSISDN comes with a partyId that is an MSISDN.
 */
function objectArbitrary(schema: Schema, context: SchemaArbitraryContext): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema | boolean>;
  const required = (schema.required ?? []) as string[];
  const conditionals = ((schema.allOf ?? []) as Schema[]).filter((part) => part.if !== undefined);
  if (conditionals.length === 0) return recordOf(properties, required, context);
  const branches = conditionals.flatMap((conditional) => branchesOf(conditional, properties, required, context));
  return fc.oneof(...branches);
}

function branchesOf(
  conditional: Schema,
  properties: Record<string, Schema | boolean>,
  required: string[],
  context: SchemaArbitraryContext,
): fc.Arbitrary<unknown>[] {
  const condition = (conditional.if as Schema).properties as Record<string, Schema> | undefined;
  const [key, test] = Object.entries(condition ?? {})[0] ?? [];
  if (key === undefined || test === undefined || !('const' in test)) return [recordOf(properties, required, context)];
  const merge = (branch: Schema | undefined, value: Schema): [Record<string, Schema | boolean>, string[]] => [
    // A branch's `true` only admits the property; its schema stays the one the object gives it.
    {
      ...properties,
      ...Object.fromEntries(Object.entries((branch?.properties ?? {}) as Record<string, Schema | boolean>).filter(([, s]) => s !== true)),
      [key]: value,
    },
    [...new Set([...required, ...((branch?.required ?? []) as string[]), key])],
  ];
  const result = [recordOf(...merge(conditional.then as Schema | undefined, { const: test.const }), context)];
  const base = properties[key];
  const others = typeof base === 'object' && Array.isArray(base.enum) ? (base.enum as unknown[]).filter((v) => v !== test.const) : [];
  if (others.length > 0) result.push(recordOf(...merge(conditional.else as Schema | undefined, { enum: others }), context));
  return result;
}

function recordOf(
  properties: Record<string, Schema | boolean>,
  required: string[],
  context: SchemaArbitraryContext,
): fc.Arbitrary<unknown> {
  const model = Object.fromEntries(
    Object.entries(properties)
      .filter(([, schema]) => schema !== false)
      // A property allowed by `true` alone (a conditional's placeholder) has its real schema elsewhere; skip it.
      .map(([key, schema]) => [key, schema === true ? fc.string({ maxLength: FREE_STRING_MAX }) : arbitraryFor(schema, context, key)]),
  );
  return fc.record(model, { requiredKeys: required.filter((key) => key in model) });
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
