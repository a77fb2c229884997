/**
 * A requirement's verdict comes from the checks that cite it (conformance/certification/verdicts.ts): a target
 * that breaks one rule in one field fails only the requirements the broken check cites. The other requirements of
 * the failed scenario passed (their checks passed before the failure) or were not reached, and the certification
 * page, certification.json and its JUnit say so. Each case is one deviation, in the run that can catch it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { runAgainstDeviation, runSuite, type SuiteRun } from '../support/suite.ts';
import type { ProfileName } from '../../core/profiles.ts';

interface Case {
  rule: string;
  run: () => Promise<SuiteRun>;
  /** Exactly the requirements that must FAIL. */
  fails: string[];
  /** Requirements of a failed scenario that must not fail: they PASS or are NOT TESTED (not reached). */
  spared: string[];
}

const embedded = (deviation: string, profile: ProfileName, tags: string) => () =>
  runSuite(['--tags', tags, '--parallel', '0'], { MOMO_SANDBOX_DEVIATIONS: deviation, MOMO_PROFILE: profile, MOMO_RETRIES: '0' });

const CASES: Case[] = [
  {
    rule: 'a request-to-pay status record gives amount 13.5 for 12.50 (record-echoes-request on the status query)',
    run: () =>
      runAgainstDeviation((x) => {
        if (x.operation !== 'getRequestToPayStatus' || x.status !== 200) return undefined;
        const record = JSON.parse(x.body) as Record<string, unknown>;
        return record.amount === '12.5' ? { body: JSON.stringify({ ...record, amount: '13.5' }) } : undefined;
      }, '@collection and @smoke'),
    fails: ['COL-RTP-STATUS-QUERY'],
    spared: ['COL-RTP-ACCEPTED-202', 'COL-RTP-AUTHORIZED', 'VER-PATHS-V1-0'],
  },
  {
    rule: 'a deposit status record gives amount as a number (body-schema of the status query, an observation)',
    run: embedded('deposit-status-amount-number', 'mtn-sandbox', '@disbursement and @smoke'),
    fails: ['DIS-DEPOSIT-STATUS-QUERY'],
    spared: ['DIS-DEPOSIT-ACCEPTED-202', 'DIS-DEPOSIT-BODY', 'VER-PATHS-V1-0'],
  },
  {
    rule: 'a duplicate is refused with RESOURCE_ALREADY_EXISTS (error-code and the error record)',
    run: embedded('duplicate-code-misspelled', 'spec', '@errors and @smoke'),
    fails: ['COL-RTP-DUPLICATE-409', 'ERR-BODY-CODE-MESSAGE', 'ERR-SET-A'],
    spared: [],
  },
  {
    rule: 'a second delivery notification right after the first is enqueued (status-code)',
    run: embedded('notification-repeat-allowed', 'spec', '@collection and not @slow and not @callback'),
    fails: ['COL-DN-REPEAT-429'],
    spared: ['COL-DN-ENQUEUED-200', 'COL-DN-429-AFTER-SUCCESS'],
  },
  {
    rule: 'the remittance balance lacks its currency (the balance record)',
    run: embedded('remittance-balance-without-currency', 'spec', '@remittance'),
    fails: ['BAL-RECORD', 'REM-BALANCE-200'],
    spared: [],
  },
  {
    rule: 'the token answer lacks Cache-Control: no-store (an observation)',
    run: embedded('token-cacheable', 'mtn-sandbox', '@tokens'),
    fails: ['TOKEN-ISSUED-200'],
    spared: ['TOKEN-RECORD', 'AUTH-BEARER', 'VER-TOKEN-PATHS'],
  },
];

for (const c of CASES) {
  test(`one rule broken fails only the requirements its check cites: ${c.rule}`, async () => {
    const run = await c.run();
    assert.equal(run.code, 1, run.output);
    const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
    const verdictOf = new Map(report.requirements.map((r) => [r.id, r]));
    assert.deepEqual(
      report.requirements
        .filter((r) => r.verdict === 'FAIL')
        .map((r) => r.id)
        .sort(),
      [...c.fails].sort(),
      run.output,
    );
    for (const id of c.spared)
      assert.ok(
        ['PASS', 'NOT TESTED', 'WARN'].includes(verdictOf.get(id)!.verdict),
        `${id}: ${verdictOf.get(id)!.verdict} ${verdictOf.get(id)!.explanation}`,
      );
    // The certification's JUnit has one failure per failed requirement, and no other.
    const junit = readFileSync(join(run.reportsDir, 'certification', 'junit.xml'), 'utf8');
    assert.equal((junit.match(/<failure /g) ?? []).length, c.fails.length, junit);
    for (const id of c.fails) assert.match(junit, new RegExp(`name="${id}: [^"]*">\\n\\s+<failure `));
    // The terminal summary and the certification page begin with the failures: requirement, scenario, the check's
    // difference by field, and the reproduction.
    const summary = run.output.slice(run.output.indexOf('\nFailures: '));
    assert.ok(summary.indexOf('\nFailures: ') < summary.indexOf('\nRequirements: '), run.output);
    const failuresBlock = summary.slice(0, summary.indexOf('\nRequirements: '));
    for (const id of c.fails) assert.match(failuresBlock, new RegExp(`fails .*\\b${id}\\b`), failuresBlock);
    assert.match(
      failuresBlock,
      /\n {4}[a-z-]+ \((definite|observed|reading)[^\n]*: .*expected .*, got .*\n {4}reproduce: sh .*\.sh/,
      failuresBlock,
    );
    const html = readFileSync(join(run.reportsDir, 'certification', 'index.html'), 'utf8');
    const main = html.slice(html.indexOf('<main>'));
    assert.ok(main.indexOf('<section id="failures">') < main.indexOf('<section id="summary">'), 'the page begins with the failures');
    const failuresStart = main.indexOf('<section id="failures">');
    const failuresSection = main.slice(failuresStart, main.indexOf('</section>', failuresStart));
    for (const id of c.fails) assert.ok(failuresSection.includes(`>${id}</a>`), `${id} is among the failures`);
    for (const s of report.scenarios.filter((x) => x.verdict === 'failed')) {
      assert.ok(s.failure && s.failure.findings.length > 0, `${s.name}: its failure's findings, each with expected and received`);
      assert.ok(s.reproduction, `${s.name}: its reproduction`);
    }
  });
}
