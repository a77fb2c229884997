import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ProfileName } from '../../core/profiles.ts';

/**
 * A MoMo server the project did not write: test/independent-server/momo_server.py, written from the spec and the
 * live-service notes alone by an author who never saw the harness (its README says how). Where the documents leave
 * a point open it takes choices of its own (--choices own) or the plainest one (--choices plain). The suite must
 * pass it in both: what it demands beyond that is a false alarm.
 */
export interface IndependentServer {
  url: string;
  keys: { collection: string; disbursement: string; remittance: string };
  stop(): Promise<void>;
}

const SERVER = fileURLToPath(new URL('../independent-server/momo_server.py', import.meta.url));
const KEYS = {
  collection: 'independent-collection-key',
  disbursement: 'independent-disbursement-key',
  remittance: 'independent-remittance-key',
};

/** Starts the independent server on a free port of 127.0.0.1, with timings short enough for a test run. */
export async function startIndependentServer(profile: ProfileName, choices: 'own' | 'plain'): Promise<IndependentServer> {
  const child = spawn(
    'python3',
    [
      SERVER,
      '--port',
      '0',
      '--profile',
      profile,
      '--choices',
      choices,
      '--keys',
      `collection=${KEYS.collection},disbursement=${KEYS.disbursement},remittance=${KEYS.remittance}`,
      '--token-lifetime',
      '6',
      '--delayed-approval-seconds',
      '2',
      '--pending-timeout-seconds',
      '5',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the independent server did not start within 10 s: ${err}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => void (err += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the independent server exited (${code}) before it listened: ${err}`));
    });
  });
  return { url, keys: KEYS, stop: () => stopChild(child) };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The settings that point the suite at the independent server. */
export function independentTargetEnv(server: IndependentServer, profile: ProfileName): Record<string, string> {
  return {
    MOMO_BASE_URL: server.url,
    MOMO_COLLECTION_KEY: server.keys.collection,
    MOMO_DISBURSEMENT_KEY: server.keys.disbursement,
    MOMO_REMITTANCE_KEY: server.keys.remittance,
    MOMO_PROFILE: profile,
    MOMO_RETRIES: '0',
    MOMO_SLOW_OUTCOME_TIMEOUT_MS: '15000',
  };
}
