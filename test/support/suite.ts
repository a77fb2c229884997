import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { runConformanceProcess } from '../../conformance/runner/child-run.ts';
import type { ProfileName } from '../../core/profiles.ts';
import type { Product } from '../../core/products.ts';
import { pathOf } from '../../core/catalogue/routes.ts';
import { SUBSCRIPTION_KEY_HEADER } from '../../core/catalogue/headers.ts';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { AlteringProxy, type Alteration } from './altering-proxy.ts';

export interface SuiteRun {
  code: number | null;
  output: string;
  reportsDir: string;
}

/** Runs `npm start`'s program in a child process with only the given environment, as a user would. */
export async function runSuite(argv: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<SuiteRun> {
  const reportsDir = mkdtempSync(join(tmpdir(), 'momo-reports-'));
  const { code, output, timedOut } = await runConformanceProcess(['--reports', reportsDir, ...argv], env, timeoutMs);
  if (timedOut) throw new Error(`the suite did not finish within ${timeoutMs} ms:\n${output}`);
  return { code, output, reportsDir };
}

export interface MeasuredRun extends SuiteRun {
  /** The largest peak resident set size of the run's processes (the run itself and any worker), in bytes. */
  peakRssBytes: number;
  /** How long the run took, for the test's log; never asserted on (a busy machine moves it). */
  durationMs: number;
}

const PEAK_RSS_MODULE = fileURLToPath(new URL('./peak-rss.mjs', import.meta.url));

/** runSuite, measuring the memory of its processes: each writes its peak RSS as it exits (peak-rss.mjs). */
export async function runSuiteMeasured(argv: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<MeasuredRun> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-peak-rss-'));
  const started = Date.now();
  const run = await runSuite(argv, { ...env, NODE_OPTIONS: `--import=${PEAK_RSS_MODULE}`, PEAK_RSS_DIR: dir }, timeoutMs);
  const peaks = readdirSync(dir).map((pid) => Number(readFileSync(join(dir, pid), 'utf8')));
  if (peaks.length === 0) throw new Error(`no process of the run wrote its peak RSS to ${dir}:\n${run.output}`);
  return { ...run, peakRssBytes: Math.max(...peaks), durationMs: Date.now() - started };
}

/** The settings that point the suite at a server of the test's own, with the development keys. */
export function targetEnv(baseUrl: string, profile: ProfileName = 'spec'): Record<string, string> {
  return {
    MOMO_BASE_URL: baseUrl,
    MOMO_COLLECTION_KEY: DEVELOPMENT_KEYS.collection,
    MOMO_DISBURSEMENT_KEY: DEVELOPMENT_KEYS.disbursement,
    MOMO_REMITTANCE_KEY: DEVELOPMENT_KEYS.remittance,
    MOMO_PROFILE: profile,
    MOMO_POLL_TIMEOUT_MS: '3000',
    MOMO_SLOW_OUTCOME_TIMEOUT_MS: '8000',
  };
}

/**
 * Runs the selected scenarios against a reference sandbox seen through a proxy that breaks one rule,
 * and returns what the suite said.
 */
export async function runAgainstDeviation(alteration: Alteration, tags: string, profile: ProfileName = 'spec'): Promise<SuiteRun> {
  const sandbox = await startReferenceSandbox(profile);
  const proxy = new AlteringProxy(sandbox.url, alteration);
  try {
    const url = await proxy.start();
    return await runSuite(['--tags', tags, '--parallel', '0'], targetEnv(url, profile));
  } finally {
    await proxy.stop();
    await sandbox.close();
  }
}

/** A faithful reference sandbox on a free port, with the embedded run's short timings: a server to put faults in front of. */
export async function startReferenceSandbox(profile: ProfileName = 'spec'): Promise<{ url: string; close: () => Promise<void> }> {
  const running = await startEmbeddedSandbox({ profile, ...EMBEDDED_TIMINGS });
  return { url: running.baseUrl, close: running.close };
}

/**
 * An API user of a product on a sandbox, made as a partner makes one on the portal, registered for callbacks to
 * `callbackHost`. The sandbox takes the development keys (DEVELOPMENT_KEYS) unless given others.
 */
export async function provisionApiUser(
  baseUrl: string,
  product: Product,
  callbackHost = '127.0.0.1',
  keys: Record<Product, string> = DEVELOPMENT_KEYS,
): Promise<{ userId: string; apiKey: string }> {
  const userId = randomUUID();
  const headers = { [SUBSCRIPTION_KEY_HEADER]: keys[product] };
  const created = await request(`${baseUrl}${pathOf('createApiUser')}`, {
    method: 'POST',
    headers: { ...headers, 'X-Reference-Id': userId, 'Content-Type': 'application/json' },
    body: JSON.stringify({ providerCallbackHost: callbackHost }),
  });
  if (created.statusCode !== 201) throw new Error(`provisioning an API user gave ${created.statusCode}: ${await created.body.text()}`);
  await created.body.dump();
  const key = await request(`${baseUrl}${pathOf('createApiKey', undefined, { referenceId: userId })}`, { method: 'POST', headers });
  return { userId, apiKey: ((await key.body.json()) as { apiKey: string }).apiKey };
}
