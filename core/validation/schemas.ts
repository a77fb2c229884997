import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { limitLengthByUnitsFirst } from './limit-length.ts';

// ajv-formats is CommonJS: Node gives a default import as the module object, whose default is the export, where
// tsx gives the export itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

import { OPERATION_IDS } from '../catalogue/operations.ts';
import { STRICT_READING_NAMES } from '../profiles.ts';
import { SCHEMA_BASE, schemaId } from '../schema-ids.ts';
import { COMPILED, PACKAGE_ROOT } from '../package.ts';
import type { Source } from '../sources.ts';

export { SCHEMA_BASE, schemaId };
const schemaDir = join(PACKAGE_ROOT, 'schemas');

export interface JsonSchema {
  $id: string;
  title?: string;
  description?: string;
  [keyword: string]: unknown;
}

/**
 * Schemas made from the operation catalogue and the strict readings rather than written as files, so that
 * neither list is written twice: the requirement catalogue's schema refers to operation-id.schema.json and
 * strict-reading.schema.json.
 */
const derivedDocuments: readonly JsonSchema[] = [
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: schemaId('operation-id'),
    title: 'Operation id',
    description: 'The id of an operation of the operation catalogue (core/catalogue/operations.ts).',
    enum: [...OPERATION_IDS],
  },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: schemaId('strict-reading'),
    title: 'Strict reading',
    description:
      'The name of a strict reading (STRICT_READINGS in core/profiles.ts): strictness beyond what the spec and the live service make definite.',
    enum: [...STRICT_READING_NAMES],
  },
];

/** Every schema file under schemas/, read once at start-up, and the schemas derived from the operation catalogue. */
export const schemaDocuments: readonly JsonSchema[] = [
  ...readdirSync(schemaDir)
    .filter((name) => name.endsWith('.schema.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(schemaDir, name), 'utf8')) as JsonSchema),
  ...derivedDocuments,
];

/**
 * How a schema marks a constraint that is a strict reading (STRICT_READINGS in core/profiles.ts) rather than
 * the spec's or the live service's: {"strictReading": {"reading": "amountValue", "schema": {...}}}. An instance
 * that enforces the readings validates the inner schema there; one that does not takes anything.
 */
export const STRICT_READING_KEYWORD = 'strictReading';

/**
 * Where a schema's constraint comes from (core/sources.ts), as an annotation that validates nothing: on a record
 * schema of the API's answers for the whole record, on one of its properties for that field, or on any subschema
 * for what it adds. The harness weighs each departure by the nearest source (schemaProblems).
 */
export const SOURCE_KEYWORD = 'x-source';

/**
 * Where a schema accepts more than the reference sandbox ever sends (the harness checks other servers with it): a
 * reference to the part the sandbox sends, {"x-sandbox-answers": "#/$defs/code"}. It validates nothing; the
 * sandbox's OpenAPI document shows that part, so that a client generated from it types what it will receive.
 */
export const SANDBOX_ANSWERS_KEYWORD = 'x-sandbox-answers';

const SOURCE_META_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'clause'],
      properties: { kind: { const: 'spec' }, clause: { type: 'string', minLength: 1 } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'note'],
      properties: { kind: { const: 'observed' }, note: { type: 'string', minLength: 1 } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'reading'],
      properties: { kind: { const: 'reading' }, reading: { type: 'string', minLength: 1 } },
    },
  ],
};

/**
 * An Ajv instance over every schema of the project, strict and with formats, and the given options: the
 * sandbox's lenient request validation drops the fields a schema does not list (removeAdditional) rather than
 * refusing them, and ignores the strict readings (readings: 'ignore'); the load build asks for standalone code.
 */
export function ajvOverSchemas(options: Options & { readings?: 'enforce' | 'ignore' }): Ajv2020 {
  const { readings = 'enforce', ...ajvOptions } = options;
  // Checking every schema against the draft 2020-12 meta-schema costs a compiled package a sixth of its start; the
  // tests, which run from the sources, check the very files the package ships (package.json files: schemas/).
  const instance = new Ajv2020({ strict: true, allErrors: true, verbose: true, validateSchema: !COMPILED, ...ajvOptions });
  addFormats(instance);
  instance.removeKeyword('maxLength').removeKeyword('minLength').addKeyword(limitLengthByUnitsFirst);
  instance.addKeyword({
    keyword: STRICT_READING_KEYWORD,
    metaSchema: {
      type: 'object',
      required: ['reading', 'schema'],
      additionalProperties: false,
      properties: { reading: { enum: STRICT_READING_NAMES }, schema: { type: 'object' } },
    },
    macro: (value: { reading: string; schema: { required?: string[] } }) =>
      readings === 'enforce'
        ? {
            ...readingSchema(value.schema),
            [SOURCE_KEYWORD]: { kind: 'reading', reading: `the strict reading ${value.reading} (core/profiles.ts STRICT_READINGS)` },
          }
        : true,
  });
  instance.addKeyword({ keyword: SOURCE_KEYWORD, metaSchema: SOURCE_META_SCHEMA });
  instance.addKeyword({ keyword: SANDBOX_ANSWERS_KEYWORD, metaSchema: { type: 'string', minLength: 1 } });
  for (const schema of schemaDocuments) instance.addSchema(schema);
  return instance;
}

/**
 * The one Ajv instance of the project: strict, all errors, draft 2020-12, with formats, holding a server to the
 * strict readings too. The harness validates responses with it, and the sandbox validates requests with it
 * under --strict (and headers and paths always), so both sides read the same schema files.
 */
export const ajv = ajvOverSchemas({});

/**
 * A reading's schema as it is validated. Its `required` names properties its parent defines, which strict mode
 * cannot see from inside the expansion: each is declared again as `true`, which constrains nothing.
 */
export function readingSchema(schema: { required?: string[] }): object {
  if (!schema.required) return schema;
  return { ...schema, properties: Object.fromEntries(schema.required.map((name) => [name, true])) };
}

/** The compiled validator of a schema by its short name, e.g. "party". Compiled once, then cached by ajv. */
export function validatorFor(name: string): ValidateFunction {
  const validate = ajv.getSchema(schemaId(name));
  if (!validate) throw new Error(`No schema named "${name}" in schemas/ (looked for ${schemaId(name)})`);
  return validate;
}

/**
 * What a string of each format ajv-formats checks must look like, with an example: a format error names the form
 * to write, where ajv says only `must match format "date"`. Every format the project's ajv knows has its form
 * here (test/core/schema-formats.test.ts).
 */
export const FORMAT_FORMS: Readonly<Record<string, string>> = {
  date: 'a date in the form YYYY-MM-DD',
  time: 'a time in the form HH:MM:SS with its offset, such as 13:45:00Z or 13:45:00+01:00',
  'date-time': 'a date and time in the form YYYY-MM-DDTHH:MM:SS with its offset, such as 2026-03-10T13:45:00Z (RFC 3339)',
  'iso-time': 'a time in the form HH:MM:SS, an offset such as Z or +01:00 optional',
  'iso-date-time': 'a date and time in the form YYYY-MM-DDTHH:MM:SS, an offset such as Z or +01:00 optional',
  duration: 'an ISO 8601 duration such as P1D or PT30S',
  uri: 'an absolute URI such as https://example.com/path',
  'uri-reference': 'a URI or a relative reference such as /path',
  'uri-template': 'a URI template (RFC 6570) such as https://example.com/{id}',
  url: 'a URL such as https://example.com/path',
  email: 'an email address such as name@example.com',
  hostname: 'a host name such as api.example.com',
  ipv4: 'an IPv4 address such as 192.0.2.1',
  ipv6: 'an IPv6 address such as 2001:db8::1',
  regex: 'a regular expression',
  uuid: 'a UUID such as 123e4567-e89b-42d3-a456-426614174000',
  'json-pointer': 'a JSON pointer such as /waivers/0',
  'json-pointer-uri-fragment': 'a JSON pointer as a URI fragment, such as #/waivers/0',
  'relative-json-pointer': 'a relative JSON pointer such as 1/name',
  byte: 'base64, such as aGVsbG8=',
  int32: 'a whole number from -2147483648 to 2147483647',
  int64: 'a whole number from -9223372036854775808 to 9223372036854775807',
  float: 'a number',
  double: 'a number',
  password: 'a string',
  binary: 'a string of bytes',
};

/** The form a format asks for, in words; a format without one in FORMAT_FORMS is named as ajv names it. */
function formOf(format: string): string {
  return FORMAT_FORMS[format] ?? `a string of the format "${format}"`;
}

/** One line per ajv error, naming where in the instance it failed (a JSON pointer) and what was expected. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined, root = ''): string[] {
  if (!errors) return [];
  const lines: string[] = [];
  for (const error of errors) {
    // if/then and oneOf wrappers only restate their branches' errors.
    if (
      error.keyword === 'if' ||
      error.keyword === 'oneOf' ||
      error.keyword === 'anyOf' ||
      error.keyword === 'allOf' ||
      error.keyword === STRICT_READING_KEYWORD
    )
      continue;
    const pointer = `${root}${error.instancePath}` || '/';
    const described = error.parentSchema?.description;
    let detail = error.message ?? 'is invalid';
    // A raw regular expression tells a person little; the schema's own description says what is meant.
    if (error.keyword === 'pattern' && typeof described === 'string') detail = `is invalid: ${firstSentence(described)}`;
    if (error.keyword === 'additionalProperties') detail = `has an unknown property "${String(error.params.additionalProperty)}"`;
    if (error.keyword === 'enum')
      detail = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    // The value is the user's own (a waivers file, a request): shown cut, so that a long one cannot flood the line.
    if (error.keyword === 'format')
      detail = `must be ${formOf(String(error.params.format))}${'data' in error ? `, got ${shortJson(error.data)}` : ''}`;
    lines.push(`${pointer} ${detail}`);
  }
  return [...new Set(lines)];
}

/** A value as JSON, cut to about 60 characters. */
function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function firstSentence(text: string): string {
  const end = text.search(/[.:](\s|$)/);
  return end === -1 ? text : text.slice(0, end);
}

/** One departure of a value from a schema: where, what was expected there, the value found, and the source of the constraint. */
export interface SchemaProblem {
  /** A JSON pointer into the value ("/amount"), or "/" for the whole. */
  pointer: string;
  expected: string;
  /** The value at the pointer; undefined for a field that is missing. */
  value: unknown;
  /** The nearest x-source: of the failing subschema, else of the record's property, else of the record. */
  source: Source | undefined;
}

type SchemaObject = { [keyword: string]: unknown; properties?: Record<string, SchemaObject> };

/**
 * The departures of a value from the schema of that name, each with the source of the constraint it breaks. A
 * wrapper's error (if/then, oneOf, allOf) only restates its branches' and is left out, unless it is all there is.
 */
export function schemaProblems(name: string, value: unknown): SchemaProblem[] {
  const validate = validatorFor(name);
  if (validate(value)) return [];
  const root = validate.schema as SchemaObject;
  const errors = validate.errors ?? [];
  const wrappers = new Set(['if', 'oneOf', 'allOf', 'anyOf', STRICT_READING_KEYWORD]);
  const substantive = errors.filter((e) => !wrappers.has(e.keyword));
  const problems = (substantive.length > 0 ? substantive : errors).map((error): SchemaProblem => {
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    const pointer = missing !== undefined ? `${error.instancePath}/${missing}` : error.instancePath || '/';
    const field = missing !== undefined && error.instancePath === '' ? missing : error.instancePath.split('/')[1];
    // A missing field weighs as the field does; any other departure as the subschema that states it, else its field.
    const ofField = field !== undefined ? sourceOf(root.properties?.[field]) : undefined;
    const ofSubschema = error.parentSchema === root ? undefined : sourceOf(error.parentSchema);
    const source = (missing !== undefined ? (ofField ?? ofSubschema) : (ofSubschema ?? ofField)) ?? sourceOf(root);
    return { pointer, expected: expectedOf(error), value: missing !== undefined ? undefined : valueAt(value, error.instancePath), source };
  });
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.pointer}\n${p.expected}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function sourceOf(schema: unknown): Source | undefined {
  return typeof schema === 'object' && schema !== null
    ? ((schema as Record<string, unknown>)[SOURCE_KEYWORD] as Source | undefined)
    : undefined;
}

/** What the constraint asks for, in a few words: "a string", "one of \"A\", \"B\"", the schema's description for a pattern. */
function expectedOf(error: ErrorObject): string {
  const described = error.parentSchema?.description;
  switch (error.keyword) {
    case 'type':
      return `a ${String(error.params.type).replace(',', ' or ')}`;
    case 'required':
      return 'the field';
    case 'enum':
      return `one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return JSON.stringify(error.params.allowedValue);
    case 'pattern':
      return typeof described === 'string' ? firstSentence(described) : `a value matching ${String(error.params.pattern)}`;
    case 'format':
      return formOf(String(error.params.format));
    case 'not':
      return typeof described === 'string' ? described : 'not this';
    default:
      return typeof described === 'string' && (error.keyword === 'if' || error.keyword === 'oneOf')
        ? described
        : (error.message ?? 'a valid value');
  }
}

function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * The fields of a value that its record schema does not name: the top-level properties, and those of each named
 * property that is itself a record of named properties (a party), following $ref. Records are open, so these are
 * never a departure; the sandbox's tests hold its own answers to exactly its shapes with it, and the harness names
 * them under --strict.
 */
export function unknownFields(name: string, value: unknown): string[] {
  const schema = ajv.getSchema(schemaId(name))?.schema as SchemaObject | undefined;
  if (!schema) throw new Error(`No schema named "${name}" in schemas/`);
  return unknownIn(schema, value, '');
}

/**
 * The part of a value that its record schema names: the value with every field it does not name left out, at
 * every level the schema names. Two answers that carry the same record (a status query's and its callback's) are
 * compared on this, so that a field one of them adds, which records may, is no difference.
 */
export function namedPart(name: string, value: unknown): unknown {
  const schema = ajv.getSchema(schemaId(name))?.schema as SchemaObject | undefined;
  if (!schema) throw new Error(`No schema named "${name}" in schemas/`);
  return namedIn(schema, value);
}

function namedIn(schema: SchemaObject, value: unknown): unknown {
  const properties = resolveRef(schema).properties;
  if (!properties || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => properties[key] !== undefined)
      .map(([key, member]) => [key, namedIn(properties[key]!, member)]),
  );
}

function unknownIn(schema: SchemaObject, value: unknown, at: string): string[] {
  const resolved = resolveRef(schema);
  const properties = resolved.properties;
  if (!properties || typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const named = properties[key];
    if (named === undefined) out.push(`${at}/${key}`);
    else out.push(...unknownIn(named, member, `${at}/${key}`));
  }
  return out;
}

function resolveRef(schema: SchemaObject): SchemaObject {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || ref.startsWith('#')) return schema;
  const target = ajv.getSchema(new URL(ref, SCHEMA_BASE).href)?.schema as SchemaObject | undefined;
  return target ? resolveRef(target) : schema;
}
