/**
 * A failure must come with what reproduces it: each exchange of a failed scenario carries a curl command that,
 * run with the MOMO_* variables set, gets the same answer from the target; and each scenario's exchanges are a
 * HAR 1.2 file that follows the schema and travels in the bundle. One run against a sandbox behind a proxy that
 * breaks the balance record, then the commands against the same proxy. And each failed scenario comes with a
 * script that replays it by itself, which gets the same failure from another sandbox with the same fault.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { secretVariablesOf } from '../../harness/config.ts';
import { HAR_FOLDER } from '../../conformance/certification/har-files.ts';
import { readBundle } from '../../conformance/certification/bundle.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';
import { AlteringProxy } from '../support/altering-proxy.ts';
import { provisionApiUser, runSuite, startReferenceSandbox, targetEnv } from '../support/suite.ts';
import { NEW_ANSWER, RUN_GOT } from '../../harness/reproduction/script.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { faultPlugins } from '../../sandbox-quality/faults/faults.ts';

// The fault: the collection balance comes back without its availableBalance.
const BROKEN_BALANCE = JSON.stringify({ currency: 'EUR' });

test('every exchange of a failed scenario carries a curl command that reproduces it; every scenario is a HAR 1.2 file in the bundle', async () => {
  const sandbox = await startReferenceSandbox();
  const proxy = new AlteringProxy(sandbox.url, (x) =>
    x.operation === 'getBalanceInCurrency' && x.product === 'collection' && x.status === 200
      ? { body: BROKEN_BALANCE, headers: { 'content-type': 'application/json' } }
      : undefined,
  );
  try {
    const url = await proxy.start();
    const user = await provisionApiUser(sandbox.url, 'collection');
    const names = secretVariablesOf('collection');
    // The variables a user sets: the run's own settings, the same for the run and for the commands.
    const env: Record<string, string> = { ...targetEnv(url), [names.userId]: user.userId, [names.apiKey]: user.apiKey };
    // One attempt: a rerun would find the token cached, and show the balance call alone.
    const run = await runSuite(['--tags', '@req:COL-BALANCE-200', '--parallel', '0', '--retries', '0'], env);
    assert.equal(run.code, 1, run.output);

    const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
    const failed = report.scenarios.filter((s) => s.verdict === 'failed');
    assert.equal(failed.length, 1, run.output);
    const exchanges = failed[0]!.exchanges;
    assert.ok(exchanges.length >= 2, 'the token and the balance');
    for (const exchange of exchanges) {
      assert.ok(exchange.curl, `${exchange.operation} carries its curl command`);
      for (const secret of [user.apiKey, DEVELOPMENT_KEYS.collection])
        assert.ok(!exchange.curl.includes(secret), 'no secret in a command, only variables');
      // Each command, run in the scenario's order with the variables set, gets the answer the run got.
      const { stdout } = await promisify(execFile)('bash', ['-c', exchange.curl], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH!, ...env },
      });
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(stdout)?.[1]);
      assert.equal(status, exchange.response?.status, `${exchange.operation}:\n${exchange.curl}\n${stdout}`);
      if (exchange.response?.body === BROKEN_BALANCE)
        assert.equal(stdout.split('\r\n\r\n')[1], BROKEN_BALANCE, 'the reproduction shows the same departure');
    }
    assert.ok(
      exchanges.some((e) => e.response?.body === BROKEN_BALANCE),
      'the failing exchange is among them',
    );

    // The failure message cucumber shows ends with the command of its exchange.
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as RunSummary;
    const reason = summary.scenarios.find((s) => s.verdict === 'failed')?.reason ?? '';
    assert.match(reason, /reproduce \(the MOMO_\* variables of \.env\.example set\):\n {4}# an access token of the collection API user/);
    assert.match(reason, /-H 'Authorization: Bearer '"\$MOMO_TOKEN"/);
    assert.match(readFileSync(join(run.reportsDir, 'certification', 'index.html'), 'utf8'), /<pre class="curl">/);

    // One HAR 1.2 file per scenario that called the target, valid, redacted, and in the bundle.
    const harDir = join(run.reportsDir, HAR_FOLDER);
    const files = readdirSync(harDir);
    assert.equal(files.length, report.scenarios.filter((s) => s.exchanges.length > 0).length);
    const validate = validatorFor('har');
    for (const file of files) {
      const text = readFileSync(join(harDir, file), 'utf8');
      assert.ok(validate(JSON.parse(text)), `${file}: ${describeErrors(validate.errors).join('\n')}`);
      assert.ok(!text.includes(user.apiKey) && !text.includes(DEVELOPMENT_KEYS.collection), `${file} is redacted`);
    }
    const bundle = readdirSync(join(run.reportsDir, 'certification')).find((f) => f.endsWith('.tar.gz'))!;
    const bundled = await readBundle(join(run.reportsDir, 'certification', bundle));
    for (const file of files) assert.ok(bundled.has(`conformance/${HAR_FOLDER}/${file}`), `${file} is in the bundle`);
  } finally {
    await proxy.stop();
    await sandbox.close();
  }
});

/** The answer a reproduction script printed to the call that failed: its status, headers and body. */
function newAnswerOf(output: string): { status: number; headers: Map<string, string>; body: string } {
  const answer = output.split(`${NEW_ANSWER}\n`)[1]?.split(`\n${RUN_GOT}`)[0];
  assert.ok(answer !== undefined, output);
  const [head = '', ...rest] = answer.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = new Map(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(statusLine)?.[1]), headers, body: rest.join('\r\n\r\n').replace(/\n$/, '') };
}

function at(json: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], json);
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

test("each failure's reproduction script, run as written with only the MOMO_* variables, gets the same failure from a target with the same fault", async () => {
  // Faults of different shapes: a wrong code on a replayed duplicate, a record lacking a field, a state reached after
  // a wait (a notification twice after success), and the consent flow's values carried from answer to request.
  const deviations = 'duplicate-code-misspelled,remittance-balance-without-currency,notification-repeat-allowed,consent-scope-widened';
  const run = await runSuite(
    ['--tags', '@smoke or @remittance or @consent or @req:COL-DN-REPEAT-429', '--retries', '0'],
    { MOMO_SANDBOX_DEVIATIONS: deviations },
    180_000,
  );
  assert.equal(run.code, 1, run.output);
  const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
  const failed = report.scenarios.filter((s) => s.verdict === 'failed');
  assert.ok(failed.length >= 4, run.output);

  // The same fault, in another sandbox, as a user would start one; the run's own is gone.
  const sandbox = await startEmbeddedSandbox({ ...EMBEDDED_TIMINGS }, { plugins: faultPlugins(deviations.split(',')) });
  try {
    const variables = {
      MOMO_BASE_URL: sandbox.baseUrl,
      MOMO_COLLECTION_KEY: DEVELOPMENT_KEYS.collection,
      MOMO_DISBURSEMENT_KEY: DEVELOPMENT_KEYS.disbursement,
      MOMO_REMITTANCE_KEY: DEVELOPMENT_KEYS.remittance,
    };
    for (const scenario of failed) {
      const { reproduction, failure } = scenario;
      assert.ok(reproduction && failure, `${scenario.name} has a reproduction and its failure`);
      assert.ok(failure.findings.length > 0, `${scenario.name}: the findings of its failure`);
      const file = join(run.reportsDir, reproduction.file);
      assert.equal(readFileSync(file, 'utf8'), reproduction.script);
      for (const secret of Object.values(DEVELOPMENT_KEYS)) assert.ok(!reproduction.script.includes(secret), 'secrets stay variables');
      const { stdout } = await promisify(execFile)('sh', [file], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH!, ...variables },
        timeout: 60_000,
      });
      const got = newAnswerOf(stdout);
      assert.ok(failure.exchange !== undefined, `${scenario.name}: the failure is about an answer`);
      const recorded = scenario.exchanges[failure.exchange]!.response!;
      assert.equal(got.status, recorded.status, `${scenario.name}: the status\n${stdout}`);
      for (const finding of failure.findings) {
        const field = finding.field ?? '';
        if (field.startsWith('/')) {
          assert.deepEqual(
            at(parse(got.body), field),
            at(parse(recorded.body), field),
            `${scenario.name}: ${field} as the run got it\n${stdout}`,
          );
        } else if (field.startsWith('header ')) {
          const name = field.slice('header '.length).toLowerCase();
          const runValue = Object.entries(recorded.headers).find(([n]) => n.toLowerCase() === name)?.[1];
          assert.equal(got.headers.get(name), runValue, `${scenario.name}: ${field}\n${stdout}`);
        }
      }
    }
  } finally {
    await sandbox.close();
  }
});
