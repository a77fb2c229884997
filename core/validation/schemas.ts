import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { _, Ajv2020, type ErrorObject, type KeywordCxt, type KeywordDefinition, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import { useFunc } from 'ajv/dist/compile/util.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import limitLengthModule from 'ajv/dist/vocabularies/validation/limitLength.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats and ajv's own modules are CommonJS: Node gives a default import as the module object, whose
// default is the export, where tsx gives the export itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const commonJsDefault = <T>(imported: unknown): T => (imported as { default?: T }).default ?? (imported as T);
const ucs2length = commonJsDefault<typeof ucs2lengthModule.default>(ucs2lengthModule);
const limitLength = commonJsDefault<KeywordDefinition>(limitLengthModule);

/**
 * maxLength and minLength as ajv checks them, in characters (code points), with the same errors, but counting
 * the characters only when the string's length in UTF-16 units leaves the answer open: a string has at least
 * half as many characters as units and at most as many. ajv counts every character of every string it checks,
 * which was most of the cost of validating a request's headers and body in the sandbox.
 */
const limitLengthByUnitsFirst: KeywordDefinition = {
  ...limitLength,
  before: 'pattern',
  code(cxt: KeywordCxt) {
    const { keyword, data, schemaCode } = cxt;
    const characters = useFunc(cxt.gen, ucs2length);
    cxt.fail$data(keyword === 'maxLength'
      ? _`${data}.length > ${schemaCode} && ${characters}(${data}) > ${schemaCode}`
      : _`${data}.length < ${schemaCode} || (${data}.length < 2 * ${schemaCode} && ${characters}(${data}) < ${schemaCode})`);
  },
};

import { OPERATION_IDS } from '../catalogue/operations.ts';
import { STRICT_READING_NAMES } from '../profiles.ts';
import { SCHEMA_BASE, schemaId } from '../schema-ids.ts';
import { COMPILED, PACKAGE_ROOT } from '../package.ts';

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
    description: 'The name of a strict reading (STRICT_READINGS in core/profiles.ts): strictness beyond what the spec and the live service make definite.',
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
    macro: (value: { schema: { required?: string[] } }) => (readings === 'enforce' ? readingSchema(value.schema) : true),
  });
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

/** One line per ajv error, naming where in the instance it failed (a JSON pointer) and what was expected. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined, root = ''): string[] {
  if (!errors) return [];
  const lines: string[] = [];
  for (const error of errors) {
    // if/then and oneOf wrappers only restate their branches' errors.
    if (error.keyword === 'if' || error.keyword === 'oneOf' || error.keyword === 'allOf' || error.keyword === STRICT_READING_KEYWORD) continue;
    const pointer = `${root}${error.instancePath}` || '/';
    const described = error.parentSchema?.description;
    let detail = error.message ?? 'is invalid';
    // A raw regular expression tells a person little; the schema's own description says what is meant.
    if (error.keyword === 'pattern' && typeof described === 'string') detail = `is invalid: ${firstSentence(described)}`;
    if (error.keyword === 'additionalProperties') detail = `has an unknown property "${String(error.params.additionalProperty)}"`;
    if (error.keyword === 'enum') detail = `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    lines.push(`${pointer} ${detail}`);
  }
  return [...new Set(lines)];
}

function firstSentence(text: string): string {
  const end = text.search(/[.:](\s|$)/);
  return end === -1 ? text : text.slice(0, end);
}
