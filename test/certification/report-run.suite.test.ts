import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST_FILE, readBundle, type Manifest } from '../../conformance/certification/bundle.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import { runVerify } from '../../conformance/certification/verify.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import type { SuiteRun } from '../support/suite.ts';
import { smokeRun } from './fixtures.ts';

let run: SuiteRun;
let dir: string;
let report: CertificationReport;

// One real run of the smoke scenarios against the embedded sandbox; every test reads what it wrote.
before(async () => {
  ({ run, dir, report } = await smokeRun());
});

test("npm start ends with requirements covered and passed out of the total, operations out of 19, and the report's path", () => {
  assert.equal(run.code, 0, run.output);
  const { total } = report.coverage;
  assert.match(
    run.output,
    new RegExp(
      `\\nRequirements: ${total.covered} of ${total.requirements} covered, ${total.verdicts.PASS} of ${total.requirements} passed.*; ${total.unprovokable} more no client can provoke\\.\\n`,
    ),
  );
  assert.match(run.output, new RegExp(`\\nOperations: ${report.coverage.operationsCovered} of 19 covered\\.\\n`));
  assert.ok(run.output.includes(`\nCertification report: ${join(dir, 'index.html')}\n`), run.output);
  assert.ok(total.covered > 0 && report.coverage.operationsCovered > 0, 'the smoke scenarios cover something');
});

test('certification.json of a real run follows its schema and counts the smoke selection as NOT APPLICABLE elsewhere', () => {
  const validate = validatorFor('certification-report');
  assert.ok(validate(report), describeErrors(validate.errors).join('\n'));
  assert.equal(report.exitCode, 0);
  assert.deepEqual(report.selection, { requested: '@smoke', expression: '(@smoke) and not @strict' });
  const notApplicable = report.requirements.find((r) => r.verdict === 'NOT APPLICABLE' && r.scenarios.length > 0);
  assert.ok(notApplicable, 'some requirement has only scenarios outside @smoke');
  assert.match(notApplicable.explanation, /outside --tags "@smoke"/);
});

test('the bundle of a real run holds every artifact and the spec, and verifies as intact', async () => {
  const [bundleName] = readdirSync(dir).filter((name) => /^certification-.*\.tar\.gz$/.test(name));
  assert.ok(bundleName, `no bundle in ${dir}`);
  const bundle = join(dir, bundleName);
  const files = await readBundle(bundle);
  for (const path of [
    MANIFEST_FILE,
    'conformance/summary.json',
    'conformance/messages.ndjson',
    'conformance/cucumber.html',
    'conformance/junit.xml',
    'certification/index.html',
    'certification/certification.json',
    'spec/momo-api-spec.md',
  ]) {
    assert.ok(files.has(path), `${path} is not in the bundle`);
  }
  const manifest = JSON.parse(files.get(MANIFEST_FILE)!.toString()) as Manifest;
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.equal(manifest.harness.version, pkg.version);
  assert.equal(manifest.spec?.sha256, report.spec?.sha256);
  assert.equal(manifest.profile.name, 'spec');
  assert.deepEqual(manifest.configuration.subscriptionKeys, { collection: null, disbursement: null, remittance: null });
  const lines: string[] = [];
  assert.equal(await runVerify([bundle], process.cwd(), (line) => lines.push(line)), 0, lines.join('\n'));
});
