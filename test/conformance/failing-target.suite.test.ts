import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIVE_UP_AFTER_UNANSWERED } from '../../harness/client/momo-client.ts';
import { DEFAULT_RETRY_POLICY } from '../../harness/client/careful.ts';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';
import { FaultyServer, UNRESOLVABLE_URL, refusingUrl, selfSignedCertificate, type FaultyServerOptions } from '../support/faulty-server.ts';
import { runSuite, startReferenceSandbox, targetEnv, type SuiteRun } from '../support/suite.ts';

// Short timeouts, so that a target that does not answer costs seconds. The slow faults answer after 3 s.
const TIMEOUTS = {
  MOMO_CONNECT_TIMEOUT_MS: '500',
  MOMO_REQUEST_TIMEOUT_MS: '1000',
  MOMO_POLL_TIMEOUT_MS: '2000',
  MOMO_SLOW_OUTCOME_TIMEOUT_MS: '3000',
};
const SLOW_ANSWER_MS = 3_000;
/**
 * A run against a failing target is bounded by what it waits for, not by a time measured here (which a busy
 * machine moves): a target that fails before the run begins costs one probe and no call of any scenario; one
 * that fails mid-run costs at most GIVE_UP_AFTER_UNANSWERED calls without an answer (each of at most the retry
 * policy's attempts, bounded by its budget and the timeouts) before the client stops calling it. The runs use one worker, so that is the bound for the run.
 * A run killed after this long has hung, which is a failure of its own.
 */
const HUNG_AFTER_MS = 120_000;
const FEW = '@smoke';
const PROVISIONING = '@provisioning and @smoke';

let sandbox: Awaited<ReturnType<typeof startReferenceSandbox>>;
before(async () => {
  sandbox = await startReferenceSandbox();
});
after(async () => {
  await sandbox.close();
});

interface TargetRun extends SuiteRun {
  summary: RunSummary | undefined;
  /** The calls of the run's scenarios that got no answer (a transport error), from the certification's evidence. */
  unanswered: number;
}

async function runAgainst(url: string, tags: string | undefined, env: Record<string, string> = {}): Promise<TargetRun> {
  const run = await runSuite(
    [...(tags ? ['--tags', tags] : []), '--parallel', '0'],
    { ...targetEnv(url), ...TIMEOUTS, ...env },
    HUNG_AFTER_MS,
  );
  const file = join(run.reportsDir, 'summary.json');
  const certification = join(run.reportsDir, 'certification', 'certification.json');
  const scenarios = existsSync(certification)
    ? (JSON.parse(readFileSync(certification, 'utf8')) as { scenarios: { exchanges: { transportError?: string }[] }[] }).scenarios
    : [];
  const unanswered = scenarios.flatMap((s) => s.exchanges).filter((e) => e.transportError !== undefined).length;
  return { ...run, unanswered, summary: existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RunSummary) : undefined };
}

async function withFaultyServer(options: FaultyServerOptions, use: (url: string, server: FaultyServer) => Promise<void>): Promise<void> {
  const server = new FaultyServer(options);
  try {
    await use(await server.start(), server);
  } finally {
    await server.stop();
  }
}

/**
 * What every run against a failing target must show: exit 2 after at most GIVE_UP_AFTER_UNANSWERED calls that
 * got no answer (each after its attempts); the cause, in a user's words, in the output; no scenario failed, and none passed after the
 * fault began; summary.json and junit.xml written, with every scenario the target kept from testing "not
 * tested" and the cause as its reason.
 */
function assertNotTested(run: TargetRun, cause: RegExp, { passedBeforeTheFault = false } = {}): void {
  assert.equal(run.code, 2, run.output);
  assert.ok(
    run.unanswered <= GIVE_UP_AFTER_UNANSWERED * DEFAULT_RETRY_POLICY.attempts,
    `the scenarios made ${run.unanswered} attempts that got no answer; the client stops after ${GIVE_UP_AFTER_UNANSWERED} calls of at most ${DEFAULT_RETRY_POLICY.attempts} attempts`,
  );
  assert.match(run.output, cause);
  assert.match(run.output, /Verdict: the run could NOT test the target/);
  assert.doesNotMatch(run.output, /does NOT conform|^FAILED[: ]/m);
  assert.ok(existsSync(join(run.reportsDir, 'junit.xml')), 'junit.xml was not written');
  const summary = run.summary;
  assert.ok(summary, 'summary.json was not written');
  assert.equal(summary.exitCode, 2);
  assert.equal(summary.totals.failed, 0, JSON.stringify(summary.totals));
  if (!passedBeforeTheFault) assert.equal(summary.totals.passed, 0, JSON.stringify(summary.totals));
  const untested = summary.scenarios.filter((s) => s.verdict === 'not tested');
  assert.ok(untested.length > 0, 'no scenario is marked not tested');
  for (const scenario of untested) assert.match(scenario.reason ?? '', cause, `${scenario.scenario}: ${scenario.reason}`);
}

describe('a failing target', () => {
  test('connection refused before the run: every scenario of the whole suite is in the reports as not tested, none calling the target', async () => {
    const run = await runAgainst(await refusingUrl(), undefined);
    assertNotTested(run, /connection refused: nothing accepts connections at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    assert.equal(run.unanswered, 0, 'after the probe, no scenario called the target');
    assert.match(run.output, /Every selected scenario is reported as not tested/);
    // Everything a remote target can be tested with: only @stateful and @uncertain are left out.
    assert.ok(run.summary!.scenarios.length >= 60, `only ${run.summary!.scenarios.length} scenarios listed`);
    assert.equal(run.summary!.totals['not tested'], run.summary!.scenarios.length);
    for (const file of ['cucumber.html', 'cucumber.json', 'messages.ndjson'])
      assert.ok(existsSync(join(run.reportsDir, file)), `${file} was not written`);
    const junit = readFileSync(join(run.reportsDir, 'junit.xml'), 'utf8');
    assert.equal((junit.match(/<testcase /g) ?? []).length, run.summary!.scenarios.length);
  });

  test('a connection reset on every request: not tested, "connection reset"', async () => {
    await withFaultyServer({ fault: 'reset' }, async (url) => {
      assertNotTested(await runAgainst(url, FEW), /connection reset: the server closed the connection without answering \(ECONNRESET/);
    });
  });

  test('a target that dies mid-run: what ran before passed, the rest is not tested, and the client soon stops calling it', async () => {
    // The preflight takes 12 answers (4 a product: an API user, its key, a token, a status read), the scenarios 12 more.
    await withFaultyServer({ fault: 'reset', upstream: sandbox.url, healthyRequests: 24 }, async (url, server) => {
      const run = await runAgainst(url, FEW);
      assertNotTested(run, /connection reset/, { passedBeforeTheFault: true });
      assert.ok(run.summary!.totals.passed >= 1, `nothing passed before the target died:\n${run.output}`);
      const reasons = run.summary!.scenarios.map((s) => s.reason ?? '');
      assert.ok(
        reasons.some((r) => r.includes(`Not called: the last ${GIVE_UP_AFTER_UNANSWERED} calls to the target got no answer`)),
        reasons.join('\n'),
      );
      // Only the calls before the client gave up reached the dead target, each with its attempts.
      assert.ok(
        server.received <= 24 + GIVE_UP_AFTER_UNANSWERED * DEFAULT_RETRY_POLICY.attempts,
        `${server.received} requests reached the target`,
      );
    });
  });

  test('answers slower than the request timeout, from the start or mid-run: not tested, naming MOMO_REQUEST_TIMEOUT_MS', async () => {
    const timedOut = /timed out: no answer within 1000 ms.*raise MOMO_REQUEST_TIMEOUT_MS \(now 1000\)/;
    await withFaultyServer({ fault: 'slow', upstream: sandbox.url, delayMs: SLOW_ANSWER_MS }, async (url) => {
      assertNotTested(await runAgainst(url, FEW), timedOut);
    });
    await withFaultyServer({ fault: 'slow', upstream: sandbox.url, delayMs: SLOW_ANSWER_MS, healthyRequests: 1 }, async (url) => {
      const run = await runAgainst(url, FEW);
      assertNotTested(run, timedOut);
      // Without giving up, each scenario would wait out its own timeout; the client stops after a few.
      assert.ok(
        run.summary!.scenarios.some((s) => s.reason?.startsWith(`Not called: the last ${GIVE_UP_AFTER_UNANSWERED} calls`)),
        run.output,
      );
    });
  });

  test('a 2xx with an HTML page where the spec gives a JSON record is a failure to conform, named "not JSON"', async () => {
    await withFaultyServer({ fault: 'html', upstream: sandbox.url }, async (url) => {
      const run = await runAgainst(url, PROVISIONING);
      assert.equal(run.code, 1, run.output);
      assert.match(run.output, /create API key \(collection\) — §4\.5 #15/);
      assert.match(
        run.output,
        /✘ body-schema \(definite: §4: all payloads are JSON except where marked form-encoded\): body: expected JSON: api-key\.schema\.json for 201, got a body that is not JSON \(Content-Type text\/html; charset=utf-8\)/,
      );
      assert.match(run.output, /Verdict: the target does NOT conform/);
    });
  });

  test('a 2xx labelled application/json whose body is not JSON is a failure to conform, named as such', async () => {
    await withFaultyServer({ fault: 'broken-json', upstream: sandbox.url }, async (url) => {
      const run = await runAgainst(url, PROVISIONING);
      assert.equal(run.code, 1, run.output);
      assert.match(
        run.output,
        /body: expected JSON: api-key\.schema\.json for 201, got a body that is not valid JSON although its Content-Type is application\/json \(.+\)/,
      );
    });
  });

  test("a gateway's HTML 502 page mid-run is not tested, never a failure", async () => {
    await withFaultyServer({ fault: 'gateway-html', healthyRequests: 1, upstream: sandbox.url }, async (url) => {
      assertNotTested(
        await runAgainst(url, PROVISIONING),
        /the target answered HTTP 502 \(an HTML page titled "502 Bad Gateway", \d+ characters\); it was unavailable, so this could not be tested/,
      );
    });
  });

  test('a storm of 503s from the start: not tested, "unavailable"', async () => {
    await withFaultyServer({ fault: '503-storm' }, async (url) => {
      assertNotTested(await runAgainst(url, FEW), /could not be tested: it answers HTTP 503, unavailable/);
    });
  });

  test('a redirect for every call: not tested, naming the Location, never a failure', async () => {
    await withFaultyServer({ fault: 'redirect' }, async (url) => {
      assertNotTested(
        await runAgainst(url, FEW),
        /answered HTTP 307 to "http:\/\/127\.0\.0\.1:\d+\/[^"]*" instead of an answer of the API[\s\S]*point MOMO_BASE_URL/,
      );
    });
  });

  test('https:// to a port that speaks plain HTTP: not tested, a TLS error that says to use http://', async () => {
    const plain = sandbox.url.replace('http://', 'https://');
    assertNotTested(
      await runAgainst(plain, FEW),
      /TLS error: the TLS handshake with 127\.0\.0\.1:\d+ failed \(ERR_SSL_WRONG_VERSION_NUMBER: wrong version number\); if the server speaks plain HTTP on this port, the URL must begin with http:\/\//,
    );
  });

  const certificate = selfSignedCertificate();
  test('a self-signed certificate: not tested, a TLS error naming NODE_EXTRA_CA_CERTS, which then lets the run through', {
    skip: 'unavailable' in certificate ? certificate.unavailable : false,
  }, async () => {
    if ('unavailable' in certificate) return;
    await withFaultyServer({ fault: 'none', upstream: sandbox.url, tls: certificate }, async (url) => {
      assertNotTested(
        await runAgainst(url, PROVISIONING),
        /TLS error: the server's certificate is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate\); .*NODE_EXTRA_CA_CERTS=<ca\.pem>/,
      );
      const trusted = await runAgainst(url, PROVISIONING, { NODE_EXTRA_CA_CERTS: certificate.certFile });
      assert.equal(trusted.code, 0, trusted.output);
    });
  });

  test('a host name that does not resolve: not tested, a DNS error naming the host', async () => {
    assertNotTested(
      await runAgainst(UNRESOLVABLE_URL, FEW),
      /DNS error: the host name momo-target\.invalid (does not resolve|could not be resolved now)/,
    );
  });
});
