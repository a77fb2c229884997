/**
 * Every published npm client of the API through every flow it has, against the sandbox in both profiles and
 * under --strict (interop.ts). A flow the sandbox fails fails this test; so does a known client bug that no
 * longer shows, and a docs/interop.md that is not what the run makes of it.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CLIENTS, INTEROP_DOC, judge, renderMarkdown, runAll, type Judgement } from './interop.ts';

describe('published clients against the reference sandbox', () => {
  let judgement: Judgement;
  before(async () => {
    judgement = judge(await runAll());
  });

  for (const client of CLIENTS) {
    test(`${client}: every flow passes, or fails for a bug of the client's own`, () => {
      const flows = judgement.flows.filter((f) => f.client === client);
      assert.ok(flows.length > 0, `${client} ran no flow`);
      const failing = flows.filter((f) => f.verdict === 'SANDBOX FAILS IT');
      assert.deepEqual(
        failing.map(
          (f) =>
            `${f.flow} (${f.profile}${f.strict ? ', --strict' : ''}): ${f.error}\n    ${f.exchanges.map((e) => `${e.method} ${e.path} ${e.status}`).join('\n    ')}`,
        ),
        [],
      );
    });
  }

  test('every known client bug still shows, with its evidence', () => {
    assert.deepEqual(judgement.stale, []);
  });

  test('docs/interop.md is what this run makes of the flows (npm run interop writes it)', () => {
    assert.equal(readFileSync(INTEROP_DOC, 'utf8'), renderMarkdown(judgement));
  });
});
