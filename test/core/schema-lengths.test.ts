import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ajv, ajvOverSchemas } from '../../core/validation/schemas.ts';

/** Characters as JSON Schema counts them: code points, a surrogate pair being one. */
const characters = (text: string) => [...text].length;

/** Strings of ASCII, a character of two UTF-16 units, and lone surrogates, which count as one character each. */
const texts = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '\uD83D', '\uDE00'), maxLength: 14 });

describe('maxLength and minLength', () => {
  it('count characters as ajv does, with the same errors in the same order', () => {
    // ajv's own keywords, as the project's instances had them before they counted units first.
    const reference = new Ajv2020({ strict: true, allErrors: true, verbose: true });
    fc.assert(
      fc.property(texts, fc.nat(8), fc.nat(8), (text, min, max) => {
        const schema = { type: 'string', minLength: min, maxLength: max, pattern: '^a' };
        const ours = ajv.compile(schema);
        const theirs = reference.compile(schema);
        const valid = ours(text);
        assert.equal(valid, characters(text) >= min && characters(text) <= max && text.startsWith('a'));
        assert.equal(valid, theirs(text));
        const strip = (errors: typeof ours.errors) => (errors ?? []).map(({ keyword, message, params }) => ({ keyword, message, params }));
        assert.deepEqual(strip(ours.errors), strip(theirs.errors));
      }),
      { numRuns: 3000 },
    );
  });

  it("hold in every instance the project makes, the sandbox's lenient one among them", () => {
    const lenient = ajvOverSchemas({ removeAdditional: true, readings: 'ignore' });
    const validate = lenient.compile({ type: 'object', properties: { note: { type: 'string', maxLength: 2 } } });
    assert.equal(validate({ note: '😀😀' }), true, 'two characters, four units');
    assert.equal(validate({ note: '😀😀a' }), false);
    assert.equal(validate.errors?.[0]?.message, 'must NOT have more than 2 characters');
  });
});
