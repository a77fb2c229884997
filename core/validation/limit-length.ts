import { _, type KeywordCxt, type KeywordDefinition } from 'ajv/dist/2020.js';
import { useFunc } from 'ajv/dist/compile/util.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import limitLengthModule from 'ajv/dist/vocabularies/validation/limitLength.js';

/**
 * maxLength and minLength as ajv checks them, in characters (code points), with the same errors, but counting the
 * characters only when the string's length in UTF-16 units leaves the answer open: a string has at least half as
 * many characters as units and at most as many. ajv counts every character of every string it checks, which was
 * most of the cost of validating a request's headers and body in the sandbox (docs/performance.md).
 *
 * It reuses ajv's own keyword (its errors, its $data support) and runtime function from ajv's internal modules,
 * which are not part of its public API: package.json pins ajv to the minor version they were read from, and
 * test/core/schema-lengths.test.ts holds this keyword to ajv's own on generated strings. The change belongs in ajv
 * itself: docs/upstream-reports.md has the proposal.
 */

// ajv's modules are CommonJS: Node gives a default import as the module object, whose default is the export,
// where tsx gives the export itself.
const commonJsDefault = <T>(imported: unknown): T => (imported as { default?: T }).default ?? (imported as T);
const ucs2length = commonJsDefault<typeof ucs2lengthModule.default>(ucs2lengthModule);
const limitLength = commonJsDefault<KeywordDefinition>(limitLengthModule);

export const limitLengthByUnitsFirst: KeywordDefinition = {
  ...limitLength,
  before: 'pattern',
  code(cxt: KeywordCxt) {
    const { keyword, data, schemaCode } = cxt;
    const characters = useFunc(cxt.gen, ucs2length);
    cxt.fail$data(
      keyword === 'maxLength'
        ? _`${data}.length > ${schemaCode} && ${characters}(${data}) > ${schemaCode}`
        : _`${data}.length < ${schemaCode} || (${data}.length < 2 * ${schemaCode} && ${characters}(${data}) < ${schemaCode})`,
    );
  },
};
