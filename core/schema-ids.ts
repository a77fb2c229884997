/**
 * Where the project's JSON Schemas live by name. Pure, so the k6 scripts and the catalogue can name schemas
 * without reading them; core/schemas.ts loads the files.
 */
export const SCHEMA_BASE = 'https://momo-harness.dev/schemas/';

/** A schema of schemas/ by its short name: "party" is schemas/party.schema.json. */
export type SchemaName = string;

export function schemaId(name: SchemaName): string {
  return `${SCHEMA_BASE}${name}.schema.json`;
}
