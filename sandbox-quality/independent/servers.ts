import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ProfileName } from '../../core/profiles.ts';

/**
 * MoMo servers the project did not write, each from the spec and the live-service notes alone, by an author who never
 * saw the harness (their READMEs say how, and list every choice they made where the documents are open):
 * - python: test/independent-server/momo_server.py, `--choices own` or `plain` at every open point, the realistic
 *   deviations blind authors added to it (`--deviation`, issue 30), and the spec-legal controls of the last (`--control`);
 * - go: test/independent-servers/go, other choices again, spec-legal controls (`--control`), and the deviations a
 *   third blind author added to it (`--deviation`, issue 30);
 * - java: test/independent-servers/java, other choices again, spec-legal controls, and the deviations a fourth blind
 *   author added to it (`--deviation`, issue 30);
 * - python2: test/independent-servers/python2, a fifth author's, other choices again (callbacks by POST in spec, one
 *   balance per subscription as a control, partial refunds refused as a control), with its own controls and deviations.
 * The suite must pass each, with each control, in each profile it is legal in: what it demands beyond that is a false
 * alarm; and must fail each deviation. `npm run mutation` runs them all, the tests a sample.
 */
export type IndependentServerName = 'python' | 'go' | 'java' | 'python2';
export const INDEPENDENT_SERVERS: readonly IndependentServerName[] = ['python', 'go', 'java', 'python2'];

export interface IndependentServer {
  url: string;
  keys: { collection: string; disbursement: string; remittance: string };
  stop(): Promise<void>;
}

export interface IndependentServerOptions {
  server?: IndependentServerName;
  /** The python server's choices at the open points. */
  choices?: 'own' | 'plain';
  /** Spec-legal controls (a server's --list-controls). */
  controls?: readonly string[];
  /** Deliberate deviations (a server's --list-deviations). */
  deviations?: readonly string[];
  /** When the customer who approves after a while approves (default 2 s; 0: at once, as a target may). */
  delayedApprovalSeconds?: number;
}

/** A switch a server lists: a control (legal) or a deviation (not), the profiles it applies in, and why. */
export interface ServerSwitch {
  name: string;
  profiles: ProfileName[];
  clause: string;
  effect: string;
}

const ROOT = new URL('../../', import.meta.url).pathname;
const PYTHON = join(ROOT, 'test/independent-server/momo_server.py');
const GO = join(ROOT, 'test/independent-servers/go');
const JAVA = join(ROOT, 'test/independent-servers/java');
const PYTHON2 = join(ROOT, 'test/independent-servers/python2/server.py');
const KEYS = {
  collection: 'independent-collection-key',
  disbursement: 'independent-disbursement-key',
  remittance: 'independent-remittance-key',
};

/** The command that starts a server, built first when it has not been (go build, javac: offline, the standard library only). */
export function commandOf(server: IndependentServerName): [string, string[]] {
  if (server === 'python') return ['python3', [PYTHON]];
  if (server === 'python2') return ['python3', [PYTHON2]];
  if (server === 'go') {
    const binary = join(GO, 'bin/momo-server');
    if (!existsSync(binary)) execFileSync('sh', [join(GO, 'build.sh')], { stdio: 'pipe' });
    return [binary, []];
  }
  if (!existsSync(join(JAVA, 'out/momo/Server.class'))) execFileSync('sh', [join(JAVA, 'build.sh')], { stdio: 'pipe' });
  return ['java', ['-cp', join(JAVA, 'out'), 'momo.Server']];
}

/** Which kinds of switch each server's author wrote: spec-legal controls, deliberate deviations, or both. */
const SWITCH_KINDS: Record<IndependentServerName, readonly SwitchKind[]> = {
  python: ['control', 'deviation'],
  go: ['control', 'deviation'],
  java: ['control', 'deviation'],
  python2: ['control', 'deviation'],
};
export type SwitchKind = 'control' | 'deviation';

/** Whether a server has switches of a kind (and a --list-controls or --list-deviations to list them). */
export const hasSwitches = (server: IndependentServerName, kind: SwitchKind): boolean => SWITCH_KINDS[server].includes(kind);

/** The controls or deviations a server lists, parsed from its tab-separated listing; none when it has no such kind. */
export function switchesOf(server: IndependentServerName, kind: SwitchKind): ServerSwitch[] {
  if (!hasSwitches(server, kind)) return [];
  const [command, prefix] = commandOf(server);
  const text = execFileSync(command, [...prefix, kind === 'control' ? '--list-controls' : '--list-deviations'], { encoding: 'utf8' });
  return text
    .split('\n')
    .filter((line) => line.includes('\t'))
    .map((line) => {
      const [name, profiles, clause = '', effect = ''] = line.split('\t');
      return {
        name: name!.trim(),
        profiles: profiles!
          .replace(/^profiles=/, '')
          .split(',')
          .map((p) => p.trim()) as ProfileName[],
        clause: clause.replace(/^clause: /, ''),
        effect: effect.replace(/^effect: /, ''),
      };
    });
}

/** Starts an independent server on a free port of 127.0.0.1, with timings short enough for a test run. */
export async function startIndependentServer(profile: ProfileName, options: IndependentServerOptions = {}): Promise<IndependentServer> {
  const server = options.server ?? 'python';
  const [command, prefix] = commandOf(server);
  const args = [
    ...prefix,
    '--port',
    '0',
    '--profile',
    profile,
    ...(server === 'python' ? ['--choices', options.choices ?? 'own'] : []),
    ...(options.controls ?? []).flatMap((control) => ['--control', control]),
    ...(options.deviations ?? []).flatMap((deviation) => ['--deviation', deviation]),
    '--keys',
    `collection=${KEYS.collection},disbursement=${KEYS.disbursement},remittance=${KEYS.remittance}`,
    '--token-lifetime',
    '6',
    '--delayed-approval-seconds',
    String(options.delayedApprovalSeconds ?? 2),
    '--pending-timeout-seconds',
    '5',
  ];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await listeningUrl(child, `the ${server} server`);
  return { url, keys: KEYS, stop: () => stopChild(child) };
}

/** The URL a child process prints as "listening on http://127.0.0.1:<port>", within 20 s of its start. */
export function listeningUrl(child: ChildProcess, name: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 20 s: ${err}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => void (err = (err + chunk.toString()).slice(-4096)));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it listened: ${err}`));
    });
  });
}

/** Ends a child process: SIGTERM, then SIGKILL after 5 s. */
export function stopChild(child: ChildProcess): Promise<void> {
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

/** The settings that point the suite at an independent server. */
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
