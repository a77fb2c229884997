/** A format error, of any schema, names the form the value must be written in, with what was found. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORMAT_FORMS, ajv, describeErrors, schemaDocuments, schemaProblems } from '../../core/validation/schemas.ts';
import { HEADERS } from '../../core/catalogue/headers.ts';

/** Every "format" a schema (or a header of the catalogue) asks for, at any depth. */
function formatsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(formatsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, member]) => (key === 'format' && typeof member === 'string' ? [member] : formatsIn(member)));
}

test("every format the project's ajv checks has its form in words, and so every format a schema uses", () => {
  assert.deepEqual(
    Object.keys(ajv.formats).filter((format) => FORMAT_FORMS[format] === undefined),
    [],
  );
  const used = new Set([...formatsIn(schemaDocuments), ...formatsIn(HEADERS)]);
  assert.ok(used.has('date') && used.has('uuid'), [...used].join(', '));
  assert.deepEqual(
    [...used].filter((format) => FORMAT_FORMS[format] === undefined),
    [],
  );
});

test('each format error says the form and the value found, never only "must match format"', () => {
  for (const [format, bad] of [
    ['date', '25/12/2026'],
    ['date-time', '2026-12-25 10:00'],
    ['uuid', 'not-a-uuid'],
    ['email', 'nobody'],
    ['uri', 'relative/path'],
  ] as const) {
    const validate = ajv.compile({ type: 'object', properties: { field: { type: 'string', format } } });
    assert.equal(validate({ field: bad }), false, format);
    assert.deepEqual(describeErrors(validate.errors), [`/field must be ${FORMAT_FORMS[format]}, got ${JSON.stringify(bad)}`]);
  }
});

test('a long value is cut in the message', () => {
  const validate = ajv.compile({ type: 'string', format: 'date' });
  validate('x'.repeat(500));
  const [line] = describeErrors(validate.errors);
  assert.ok(line!.length < 150, line);
  assert.match(line!, /^\/ must be a date in the form YYYY-MM-DD, got "x+…$/);
});

test("a target's departure from a format is expected in the same words", () => {
  const problems = schemaProblems('waivers', { waivers: [{ requirement: 'COL-A', reason: 'r', owner: 'o', expires: 'tomorrow' }] });
  assert.deepEqual(
    problems.map((p) => [p.pointer, p.expected, p.value]),
    [['/waivers/0/expires', 'a date in the form YYYY-MM-DD', 'tomorrow']],
  );
});
