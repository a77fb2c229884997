import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRequirements } from '../../conformance/certification/requirements.ts';
import { WaiverError, loadWaivers, waiversFileOf, type Waiver } from '../../conformance/certification/waivers.ts';
import { runSuite } from '../support/suite.ts';

const KNOWN = new Set(['COL-A', 'COL-B']);
const VALID: Waiver = { requirement: 'COL-A', reason: 'the gateway fix ships in 2.4 (TICKET-12)', owner: 'payments team', expires: '2099-12-31' };

function waiversFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'momo-waivers-'));
  const file = join(dir, 'waivers.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function problemsOf(content: unknown, known: ReadonlySet<string> = KNOWN): string[] {
  try {
    loadWaivers(waiversFile(content), known);
  } catch (error) {
    assert.ok(error instanceof WaiverError, String(error));
    assert.match(error.message, /^The waivers file .*waivers\.json is wrong:/);
    return error.problems;
  }
  assert.fail('the waivers file was accepted');
}

test('a valid waivers file gives its waivers', () => {
  assert.deepEqual(loadWaivers(waiversFile({ $schema: 'https://momo-harness.dev/schemas/waivers.schema.json', waivers: [VALID] }), KNOWN), [VALID]);
});

test('a waiver naming a requirement the catalogue does not have is a configuration error naming it', () => {
  assert.deepEqual(problemsOf({ waivers: [VALID, { ...VALID, requirement: 'COL-TYPO' }] }), [
    '/waivers/1 names the requirement COL-TYPO, which is not in the requirement catalogue (requirements/momo-api.requirements.json): correct the id or remove the waiver',
  ]);
});

test('a waiver without an owner, with an impossible expiry date or an unknown field is refused, each said', () => {
  const { owner: _owner, ...withoutOwner } = VALID;
  const problems = problemsOf({ waivers: [withoutOwner, { ...VALID, requirement: 'COL-B', expires: '2026-02-30' }, { ...VALID, approvedBy: 'me' }] });
  assert.ok(problems.some((p) => p.startsWith('/waivers/0') && p.includes('owner')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('/waivers/1/expires') && p.includes('date')), problems.join('\n'));
  assert.ok(problems.some((p) => p === '/waivers/2 has an unknown property "approvedBy"'), problems.join('\n'));
});

test('two waivers for one requirement, a file that is not JSON, and a file that is not there are refused', () => {
  assert.deepEqual(problemsOf({ waivers: [VALID, VALID] }), ['/waivers/1 waives COL-A a second time: keep one waiver per requirement']);
  assert.match(problemsOf('{"waivers": [')[0] ?? '', /^is not JSON/);
  assert.throws(() => loadWaivers('/nonexistent/waivers.json', KNOWN), (error: Error) => error instanceof WaiverError && /cannot be read/.test(error.message));
});

test('the waivers file is MOMO_WAIVERS, else waivers.json of the project folder if there is one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-project-'));
  assert.equal(waiversFileOf(dir, undefined), undefined);
  assert.equal(waiversFileOf(dir, 'ci/waivers.json'), join(dir, 'ci/waivers.json'));
  writeFileSync(join(dir, 'waivers.json'), '{"waivers": []}');
  assert.equal(waiversFileOf(dir, undefined), join(dir, 'waivers.json'));
});

test('npm start with a waiver of an unknown requirement stops before testing: exit 2, naming the id', async () => {
  const run = await runSuite([], { MOMO_WAIVERS: waiversFile({ waivers: [{ ...VALID, requirement: 'NO-SUCH-REQUIREMENT' }] }) });
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /names the requirement NO-SUCH-REQUIREMENT, which is not in the requirement catalogue/);
  assert.doesNotMatch(run.output, /Testing /);
});

test('npm start with an expired waiver fails the run (exit 1) and says which waiver expired', async () => {
  const [first] = loadRequirements();
  assert.ok(first);
  const file = waiversFile({ waivers: [{ ...VALID, requirement: first.id, expires: '2020-01-31' }] });
  const run = await runSuite(['--tags', '@provisioning and @smoke', '--parallel', '0'], { MOMO_WAIVERS: file });
  assert.equal(run.code, 1, run.output);
  assert.match(run.output, new RegExp(`WAIVER: The waiver of ${first.id} \\(owner payments team\\) expired on 2020-01-31`));
  const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as { waivers: { status: string }[]; exitCode: number };
  assert.deepEqual(report.waivers.map((w) => w.status), ['expired']);
  assert.equal(report.exitCode, 1);
});

test('npm start with waivers for every failure it finds shows them WAIVED and conforms (exit 0)', async () => {
  // The embedded sandbox reads an API user back without its callback host: the run finds that failure first.
  const env = { MOMO_SANDBOX_DEVIATIONS: 'api-user-record-without-host' };
  const args = ['--tags', '@provisioning', '--parallel', '0'];
  const failing = await runSuite(args, env);
  assert.equal(failing.code, 1, failing.output);
  type Report = { exitCode: number; requirements: { id: string; verdict: string }[]; waivers: { requirement: string; status: string }[] };
  const readReport = (dir: string) => JSON.parse(readFileSync(join(dir, 'certification', 'certification.json'), 'utf8')) as Report;
  const failed = readReport(failing.reportsDir).requirements.filter((r) => r.verdict === 'FAIL').map((r) => r.id);
  assert.ok(failed.includes('PROV-APIUSER-READ-200'), failed.join(', '));

  const waived = await runSuite(args, { ...env, MOMO_WAIVERS: waiversFile({ waivers: failed.map((requirement) => ({ ...VALID, requirement })) }) });
  assert.equal(waived.code, 0, waived.output);
  assert.match(waived.output, /Certification verdict: the target conforms \(exit code 0\), with the waivers counted\./);
  const report = readReport(waived.reportsDir);
  assert.deepEqual(report.requirements.filter((r) => failed.includes(r.id)).map((r) => r.verdict), failed.map(() => 'WAIVED'));
  assert.deepEqual(report.waivers.map((w) => w.status), failed.map(() => 'applied'));
  assert.equal(report.exitCode, 0);
});
