import { readFileSync } from 'node:fs';
import { describeErrors, validatorFor } from './schemas.ts';

export type CheckedDocument<T> = { ok: true; document: T } | { ok: false; problems: string[] };

/**
 * A JSON file the project reads as data (a catalogue, waivers), checked against its schema in schemas/: the
 * document, or what is wrong with it, one line each (cannot be read, not JSON, or where it departs from the
 * schema), for the caller to raise with the file's name.
 */
export function readCheckedJson<T>(file: string, schema: string): CheckedDocument<T> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { ok: false, problems: [`cannot be read: ${(error as Error).message}`] };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`is not JSON: ${(error as Error).message}`] };
  }
  const validate = validatorFor(schema);
  if (!validate(document)) return { ok: false, problems: describeErrors(validate.errors) };
  return { ok: true, document: document as T };
}
