import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

import { OPERATION_IDS } from '../catalogue/operations.ts';
import { SCHEMA_BASE, schemaId } from '../schema-ids.ts';

export { SCHEMA_BASE, schemaId };
const schemaDir = fileURLToPath(new URL('../../schemas/', import.meta.url));

export interface JsonSchema {
  $id: string;
  title?: string;
  description?: string;
  [keyword: string]: unknown;
}

/**
 * Schemas made from the operation catalogue rather than written as files, so that a list of the catalogue's is
 * never written twice: the requirement catalogue's schema refers to operation-id.schema.json.
 */
const derivedDocuments: readonly JsonSchema[] = [
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: schemaId('operation-id'),
    title: 'Operation id',
    description: 'The id of an operation of the operation catalogue (core/catalogue/operations.ts).',
    enum: [...OPERATION_IDS],
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
 * The one Ajv instance of the project: strict, all errors, draft 2020-12, with formats.
 * The sandbox validates requests with it and the harness validates responses with it,
 * so both sides read the same schema files.
 */
export const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true });
addFormats(ajv);
for (const schema of schemaDocuments) ajv.addSchema(schema);

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
    if (error.keyword === 'if' || error.keyword === 'oneOf' || error.keyword === 'allOf') continue;
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
