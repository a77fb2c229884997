/**
 * Every published npm client of the API through every flow it has, against the sandbox in both profiles and
 * under --strict, each run with the sandbox's client report on (interop.ts). A flow the sandbox fails fails this
 * test; so does a client note that no longer explains a bug, and a docs/interop.md that is not what the run
 * makes of the flows. The clients' known bugs are found by the client report, each by its rule.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validatorFor } from '../../core/validation/schemas.ts';
import { CLIENT_REPORT_FILES } from '../../sandbox/client-report/client-report.ts';
import { CLIENTS, INTEROP_DOC, SETUPS, judge, renderMarkdown, runAll, runFolder, type Judgement } from './interop.ts';

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
            `${f.flow} (${f.profile}${f.strict ? ', --strict' : ''}): ${f.error}\n    ${f.exchanges.map((e) => `${e.method} ${e.path} ${e.status}`).join('\n    ')}\n    findings: ${f.findings.map((x) => `${x.rule}: ${x.detail}`).join('; ')}`,
        ),
        [],
      );
    });
  }

  test("each client's run wrote its client report, which follows its schema", () => {
    const validate = validatorFor('client-report');
    for (const client of CLIENTS) {
      for (const setup of SETUPS) {
        const folder = runFolder(client, setup);
        const report = JSON.parse(readFileSync(join(folder, CLIENT_REPORT_FILES.json), 'utf8')) as unknown;
        assert.ok(validate(report), `${folder}: ${JSON.stringify(validate.errors)}`);
        for (const file of [CLIENT_REPORT_FILES.html, CLIENT_REPORT_FILES.junit])
          assert.ok(readFileSync(join(folder, file), 'utf8').length > 0);
      }
    }
  });

  test("the clients' known bugs are found by the client report, each by the rule it breaks", () => {
    assert.deepEqual(
      judgement.bugs.map((b) => `${b.ref} ${b.client} ${b.rule}`),
      ['B1 mtn-momo account-holder-kind-case', 'B2 code-coast-momo-api account-holder-kind-case', 'B3 mtn-momo-sdk reference-id-v4'],
    );
  });

  test('a flow that passes in the default sandbox broke no rule of the spec', () => {
    const violating = judgement.flows.filter(
      (f) => !f.strict && f.verdict === 'passes' && f.findings.some((x) => x.severity === 'violation'),
    );
    assert.deepEqual(
      violating.map((f) => `${f.client} / ${f.flow} (${f.profile}): ${f.findings.map((x) => x.detail).join('; ')}`),
      [],
    );
  });

  test('every client note still explains a bug the client report finds', () => {
    assert.deepEqual(judgement.stale, []);
  });

  test('docs/interop.md is what this run makes of the flows (npm run interop writes it)', () => {
    assert.equal(readFileSync(INTEROP_DOC, 'utf8'), renderMarkdown(judgement));
  });
});
