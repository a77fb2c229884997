/**
 * A target the certification engineer does not control may answer with anything. Whatever it sends, the run
 * stays bounded in memory and time, ends with an exit code that says what happened, writes every report with
 * its structure intact, and keeps the reports as small as the evidence deserves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FaultyServer, type FaultyServerOptions } from '../support/faulty-server.ts';
import { runSuiteMeasured, startReferenceSandbox, targetEnv, type MeasuredRun } from '../support/suite.ts';
import { assertEveryReport } from '../support/reports.ts';
import { AlteringProxy, type Alteration } from '../support/altering-proxy.ts';

const MiB = 1024 * 1024;
/**
 * What a run's biggest process may hold at its peak. A run of the smoke scenarios against a faithful target
 * peaks near 200 MiB (cucumber, ajv, the sandbox's code); one read of a 100 MB body whole would add at least
 * 200 MiB more (a UTF-16 string of it), which this bound does not leave room for.
 */
const PEAK_RSS_BOUND = 350 * MiB;
/** The certification page holds 32 KiB of each body at most; a few bodies cut that far stay far below this. */
const PAGE_BOUND = 2 * MiB;
const TIMEOUTS = {
  MOMO_CONNECT_TIMEOUT_MS: '1000',
  MOMO_REQUEST_TIMEOUT_MS: '3000',
  MOMO_POLL_TIMEOUT_MS: '2000',
  MOMO_SLOW_OUTCOME_TIMEOUT_MS: '3000',
};
const HUNG_AFTER_MS = 180_000;
const FEW = '@smoke';

let sandbox: Awaited<ReturnType<typeof startReferenceSandbox>>;
before(async () => {
  sandbox = await startReferenceSandbox();
});
after(async () => {
  await sandbox.close();
});

async function runAgainstFault(options: Omit<FaultyServerOptions, 'upstream'>, env: Record<string, string> = {}): Promise<MeasuredRun> {
  // The first request (the run's probe of the target) is served faithfully: the fault is in the answers.
  const server = new FaultyServer({ upstream: sandbox.url, healthyRequests: 1, ...options });
  try {
    const url = await server.start();
    const run = await runSuiteMeasured(['--tags', FEW, '--parallel', '0'], { ...targetEnv(url), ...TIMEOUTS, ...env }, HUNG_AFTER_MS);
    console.log(
      `${options.fault}: exit ${run.code}, peak RSS ${(run.peakRssBytes / MiB).toFixed(0)} MiB, ${(run.durationMs / 1000).toFixed(1)} s`,
    );
    return run;
  } finally {
    await server.stop();
  }
}

function assertBounded(run: MeasuredRun): void {
  assert.ok(
    run.peakRssBytes < PEAK_RSS_BOUND,
    `a process of the run peaked at ${(run.peakRssBytes / MiB).toFixed(0)} MiB (bound ${PEAK_RSS_BOUND / MiB} MiB)`,
  );
  const page = statSync(join(run.reportsDir, 'certification', 'index.html')).size;
  assert.ok(page < PAGE_BOUND, `the certification page is ${(page / MiB).toFixed(1)} MiB`);
}

describe('a target that answers with too much', () => {
  test('a 100 MB body: read to 1 MiB, the run does not conform and says the body exceeded 1 MiB, every report written and small', async () => {
    const run = await runAgainstFault({ fault: 'huge-body', bodyBytes: 100 * 1000 * 1000 });
    assert.equal(run.code, 1, run.output);
    assert.match(
      run.output,
      /✘ answer-bounded \(definite: [^)]*\): body: expected at most 1 MiB \(MOMO_MAX_RESPONSE_BYTES\), got more: the harness read 1 MiB of it and no further/,
    );
    await assertEveryReport(run.reportsDir);
    assertBounded(run);
  });

  test('an endless body: read to 1 MiB and no further, exit 1, every report written', async () => {
    const run = await runAgainstFault({ fault: 'endless-body' });
    assert.equal(run.code, 1, run.output);
    assert.match(
      run.output,
      /✘ answer-bounded \(definite: [^)]*\): body: expected at most 1 MiB \(MOMO_MAX_RESPONSE_BYTES\), got more: the harness read 1 MiB of it and no further/,
    );
    await assertEveryReport(run.reportsDir);
    assertBounded(run);
  });

  test('a 10 MB body: the certification page keeps a cut of each body, not the whole', async () => {
    const run = await runAgainstFault({ fault: 'huge-body', bodyBytes: 10 * 1000 * 1000 });
    assert.equal(run.code, 1, run.output);
    const summary = await assertEveryReport(run.reportsDir);
    assert.ok(
      summary.scenarios.some((s) => /answer-bounded .*expected at most 1 MiB/.test(s.reason ?? '')),
      'no scenario names the body that exceeded the limit',
    );
    assertBounded(run);
  });

  test('a body that drips one byte at a time, without end: the request time-out ends each call, and the run could not test (exit 2)', async () => {
    // A shorter request time-out than the others' (each call waits it out): what is shown is that it ends each call.
    const run = await runAgainstFault({ fault: 'drip-body', delayMs: 50 }, { MOMO_REQUEST_TIMEOUT_MS: '1200' });
    assert.equal(run.code, 2, run.output);
    assert.match(run.output, /Verdict: the run could NOT test the target/);
    await assertEveryReport(run.reportsDir);
    assertBounded(run);
  });
});

/**
 * Text a target controls, written to break out of each report: the end of a CDATA section (twice, which
 * xmlbuilder's escape misses), the end of the HTML report's script, an HTML comment, control characters,
 * a lone surrogate (as a JSON escape and as a header), and bytes that are not UTF-8.
 */
const HOSTILE_TEXT =
  ']]><testcase name="forged-1"/>]]><testcase name="forged-2"/></script><script>alert(1)</script><!-- \u0001\u0008\u001b[31m \ud800 \udfff';
const hostile: Alteration = (exchange) => {
  if (exchange.status < 400) return undefined;
  const json = Buffer.from(JSON.stringify({ code: 'HOSTILE', message: HOSTILE_TEXT }));
  return {
    headers: { ...exchange.headers, 'content-type': 'application/json', 'x-hostile': ']]></script>\u0085' },
    body: Buffer.concat([json.subarray(0, json.length - 2), Buffer.from([0x20, 0xff, 0xfe, 0xc3]), json.subarray(json.length - 2)]),
  };
};

describe('a target whose answers are written to break the reports', () => {
  test('every report keeps its structure: as many JUnit testcases as scenarios, the HTML script whole, every NDJSON line JSON', async () => {
    const proxy = new AlteringProxy(sandbox.url, hostile);
    try {
      const url = await proxy.start();
      const run = await runSuiteMeasured(
        ['--tags', '@smoke or (@negative and @collection)', '--parallel', '0'],
        { ...targetEnv(url), ...TIMEOUTS },
        HUNG_AFTER_MS,
      );
      assert.equal(run.code, 1, run.output);
      const summary = await assertEveryReport(run.reportsDir);
      assert.ok(
        summary.scenarios.some((s) => s.verdict === 'failed'),
        'no scenario failed: the hostile answers never reached a report',
      );
    } finally {
      await proxy.stop();
    }
  });
});

describe('a run with more evidence than its budget', () => {
  test('past MOMO_EVIDENCE_BUDGET_BYTES an exchange keeps its call and outcome, and the terminal and the page say so', async () => {
    const run = await runSuiteMeasured(
      ['--tags', FEW, '--parallel', '0'],
      { ...targetEnv(sandbox.url), ...TIMEOUTS, MOMO_EVIDENCE_BUDGET_BYTES: '20000' },
      HUNG_AFTER_MS,
    );
    assert.equal(run.code, 0, run.output);
    assert.match(
      run.output,
      /Evidence: \d+ of \d+ exchanges not recorded, the run's evidence budget \(MOMO_EVIDENCE_BUDGET_BYTES\) was spent/,
    );
    await assertEveryReport(run.reportsDir);
    const certification = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as {
      scenarios: { exchanges: { omitted?: string; response?: unknown }[] }[];
    };
    const exchanges = certification.scenarios.flatMap((s) => s.exchanges);
    const kept = exchanges.filter((e) => e.omitted === undefined);
    assert.ok(kept.length > 0 && kept.length < exchanges.length, `${kept.length} of ${exchanges.length} exchanges kept`);
    assert.ok(Buffer.byteLength(JSON.stringify(kept)) <= 20_000, 'the kept exchanges exceed the budget');
    assert.match(
      readFileSync(join(run.reportsDir, 'certification', 'index.html'), 'utf8'),
      /exchanges are not recorded: the run(&#39;|')s evidence budget/,
    );
  });
});
