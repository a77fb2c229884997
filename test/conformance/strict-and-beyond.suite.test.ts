/**
 * The line the harness draws for a remote server: it never fails one for what the spec leaves open. A server
 * that accepts what only a strict reading refuses conforms without --strict and fails the @strict scenarios
 * with it; one that lacks the operations beyond the spec conforms unless the run asks for them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite, startReferenceSandbox, targetEnv } from '../support/suite.ts';
import { AlteringProxy } from '../support/altering-proxy.ts';
import { routes, bindingOf } from '../../core/catalogue/routes.ts';
import { matchRoute } from '../../core/catalogue/match.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';

const certificationOf = (reportsDir: string) =>
  JSON.parse(readFileSync(join(reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;

test('a server that accepts what only the strict readings refuse: conforms without --strict, fails every @strict scenario with it', async () => {
  const lenient = await startReferenceSandbox();
  try {
    const plain = await runSuite(['--tags', '@errors or @strict', '--parallel', '0'], targetEnv(lenient.url));
    assert.equal(plain.code, 0, plain.output);
    const report = certificationOf(plain.reportsDir);
    const readings = report.requirements.filter((r) => r.reading !== undefined);
    assert.ok(
      readings.length >= 4 && readings.every((r) => r.verdict === 'NOT APPLICABLE' && /--strict/.test(r.explanation)),
      JSON.stringify(readings.map((r) => [r.id, r.verdict])),
    );

    const strict = await runSuite(['--strict', '--tags', '@strict', '--parallel', '0'], targetEnv(lenient.url));
    assert.equal(strict.code, 1, strict.output);
    assert.match(strict.output, /(\d+) scenarios: 0 passed, \1 failed/);
    assert.ok(
      certificationOf(strict.reportsDir)
        .requirements.filter((r) => r.reading !== undefined)
        .every((r) => r.verdict === 'FAIL'),
    );
  } finally {
    await lenient.close();
  }
});

test('a server without the operations beyond the spec: NOT APPLICABLE by default, FAIL when the run asks for @beyond-spec', async () => {
  const sandbox = await startReferenceSandbox();
  const beyond = (method: string, url: string) => {
    const matched = matchRoute(method, url);
    return matched?.product !== undefined && bindingOf(matched.operation.id, matched.product).beyondSpec !== undefined;
  };
  // The spec alone: every operation beyond it is a 404, as an unknown path.
  const proxy = new AlteringProxy(sandbox.url, (e) =>
    beyond(e.method, e.path)
      ? { status: 404, headers: { 'content-type': 'application/json' }, body: '{"statusCode":404,"message":"Resource not found"}' }
      : undefined,
  );
  try {
    const url = await proxy.start();
    assert.ok(
      routes().some((r) => r.product && bindingOf(r.operation.id, r.product).beyondSpec),
      'the catalogue has operations beyond the spec',
    );
    // The whole suite: no scenario outside @beyond-spec may rest on an operation beyond the spec.
    const plain = await runSuite(['--parallel', '2'], { ...targetEnv(url), MOMO_CALLBACK_HOST: '127.0.0.1' }, 300_000);
    assert.equal(plain.code, 0, plain.output);
    assert.match(plain.output, /Leaving out @beyond-spec scenarios/);
    const notApplicable = certificationOf(plain.reportsDir).requirements.filter((r) => r.scope === 'beyond-spec');
    assert.ok(
      notApplicable.length > 0 && notApplicable.every((r) => r.verdict === 'NOT APPLICABLE'),
      JSON.stringify(notApplicable.map((r) => [r.id, r.verdict])),
    );

    const asked = await runSuite(['--tags', '@beyond-spec and @disbursement', '--parallel', '0'], targetEnv(url));
    assert.equal(asked.code, 1, asked.output);
    assert.ok(certificationOf(asked.reportsDir).requirements.some((r) => r.scope === 'beyond-spec' && r.verdict === 'FAIL'));
  } finally {
    await proxy.stop();
    await sandbox.close();
  }
});
