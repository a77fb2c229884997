/**
 * The measurement behind docs/sandbox.md's "Performance of --data": requests to pay created as fast as a client
 * with a given number of requests in flight can get them answered, by a sandbox in memory and by one that keeps
 * its state with --data (every 202 only once its record is fsynced, the fsyncs shared by group commit).
 *
 *   node --import tsx sandbox-quality/benchmark/durable-creations.ts [--seconds 10] [--in-flight 1,16,64] [--dir <parent>]
 *
 * Each sandbox is `momo-harness sandbox` in a process of its own, started for one run and stopped after it; the
 * client is this process (undici, one connection per request in flight). --dir names where the data directories
 * are made (default: the system's temporary folder), so that a disk can be chosen.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { CommandLineError, InvalidOptionValue, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { decimalNumber } from '../../core/option-values.ts';
import { pathOf } from '../../core/catalogue/routes.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';

/** `--in-flight 1,16,64`: whole numbers above 0, separated by commas. */
function inFlightLevels(raw: string): number[] {
  const levels = raw.split(',').map(Number);
  if (levels.some((n) => !(Number.isInteger(n) && n > 0)))
    throw new InvalidOptionValue('a list of whole numbers above 0, separated by commas', '1,16,64');
  return levels;
}

const OPTIONS = {
  seconds: { type: 'string', value: '<s>', default: '10', describe: 'how long each run is measured', parse: decimalNumber({}, 10) },
  'in-flight': {
    type: 'string',
    value: '<list>',
    default: '1,16,64',
    describe: 'the requests in flight of each run',
    parse: inFlightLevels,
  },
  dir: { type: 'string', value: '<parent>', default: "the system's temporary folder", describe: 'where the data directories are made' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'node --import tsx sandbox-quality/benchmark/durable-creations.ts [options]',
  about: 'Requests to pay created by a sandbox in memory and by one that keeps its state with --data (docs/sandbox.md).',
  options: OPTIONS,
});

let values: ReturnType<typeof parseCommandLine<typeof OPTIONS>>['values'];
try {
  values = parseCommandLine(process.argv.slice(2), OPTIONS).values;
} catch (error) {
  if (!(error instanceof CommandLineError)) throw error;
  console.error(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const SECONDS = values.seconds ?? 10;
const LEVELS = values['in-flight'] ?? [1, 16, 64];
const PARENT = values.dir ?? tmpdir();
const KEY = DEVELOPMENT_KEYS.collection;
const WARM_UP_MS = 2000;

interface Run {
  mode: 'in memory' | '--data';
  inFlight: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The sandbox process's CPU time (user and system) per creation answered in the window, in µs. */
  cpuMicros: number;
  failed: number;
  /** From spawning the sandbox to its listening, on an empty directory (or none). */
  startMs: number;
  /** --data: a start again on the directory the run left, and the transactions it read back. */
  restart?: { ms: number; transactions: number };
}

/** A process's CPU time so far (user and system, in ms), from /proc: Linux only, NaN elsewhere. */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, the 14th and 15th fields, in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function startSandbox(
  data: string | undefined,
): Promise<{ base: string; pid: number; startMs: number; banner: string; stop(): Promise<void> }> {
  const started = performance.now();
  // A budget of records four times the default, so that a fast run is not cut short by 503s (docs/sandbox.md, "Reliability").
  const args = [
    '--import',
    'tsx',
    'cli/momo-harness.ts',
    'sandbox',
    '--port',
    '0',
    '--log-level',
    'warn',
    '--retention-max-bytes',
    String(1024 ** 3),
  ];
  if (data) args.push('--data', data);
  const child = spawn(process.execPath, args, { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const found = /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out);
      if (found && out.includes('health:')) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}:\n${out}`)));
  });
  return {
    base,
    pid: child.pid!,
    startMs: performance.now() - started,
    banner: out,
    // Stopping twice waits for the one exit.
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function call(agent: Agent, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string) {
  const response = await request(url, { method, headers, dispatcher: agent, ...(body !== undefined ? { body } : {}) });
  await response.body.dump();
  return response;
}

/** An API user with a key and a token, as a client makes them. */
async function bearerOf(agent: Agent, base: string): Promise<string> {
  const userId = randomUUID();
  await call(
    agent,
    'POST',
    `${base}${pathOf('createApiUser')}`,
    { 'ocp-apim-subscription-key': KEY, 'x-reference-id': userId, 'content-type': 'application/json' },
    '{"providerCallbackHost":"127.0.0.1"}',
  );
  const key = await request(`${base}${pathOf('createApiKey', undefined, { referenceId: userId })}`, {
    method: 'POST',
    headers: { 'ocp-apim-subscription-key': KEY },
    dispatcher: agent,
  });
  const { apiKey } = (await key.body.json()) as { apiKey: string };
  const token = await request(`${base}${pathOf('createAccessToken', 'collection')}`, {
    method: 'POST',
    headers: { 'ocp-apim-subscription-key': KEY, authorization: `Basic ${Buffer.from(`${userId}:${apiKey}`).toString('base64')}` },
    dispatcher: agent,
  });
  return ((await token.body.json()) as { access_token: string }).access_token;
}

async function measure(mode: Run['mode'], inFlight: number): Promise<Run> {
  const data = mode === '--data' ? mkdtempSync(join(PARENT, 'momo-durable-creations-')) : undefined;
  const sandbox = await startSandbox(data);
  const agent = new Agent({ connections: inFlight, pipelining: 1 });
  try {
    const token = await bearerOf(agent, sandbox.base);
    const url = `${sandbox.base}${pathOf('requestToPay', 'collection')}`;
    const body = JSON.stringify({
      amount: '1',
      currency: 'EUR',
      externalId: '1',
      payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
    });
    const headers = {
      'ocp-apim-subscription-key': KEY,
      authorization: `Bearer ${token}`,
      'x-target-environment': 'sandbox',
      'content-type': 'application/json',
    };
    const started = performance.now();
    const measuredFrom = started + WARM_UP_MS;
    const end = measuredFrom + SECONDS * 1000;
    const latencies: number[] = [];
    let failed = 0;
    let cpuAtStart = Number.NaN;
    const warmedUp = setTimeout(() => {
      cpuAtStart = cpuMsOf(sandbox.pid);
    }, WARM_UP_MS);
    const client = async () => {
      for (let sent = performance.now(); sent < end; sent = performance.now()) {
        const response = await call(agent, 'POST', url, { ...headers, 'x-reference-id': randomUUID() }, body);
        const answered = performance.now();
        if (sent < measuredFrom) continue;
        if (response.statusCode === 202) latencies.push(answered - sent);
        else failed += 1;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, client));
    clearTimeout(warmedUp);
    const cpuMs = cpuMsOf(sandbox.pid) - cpuAtStart;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
    const cpuMicros = (cpuMs * 1000) / (latencies.length + failed);
    await sandbox.stop();
    const run: Run = {
      mode,
      inFlight,
      perSecond: latencies.length / SECONDS,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      cpuMicros,
      failed,
      startMs: sandbox.startMs,
    };
    if (data) {
      const again = await startSandbox(data);
      await again.stop();
      run.restart = { ms: again.startMs, transactions: Number(/ (\d+) transactions/.exec(again.banner)?.[1]) };
    }
    return run;
  } finally {
    await agent.close();
    await sandbox.stop();
    if (data) rmSync(data, { recursive: true, force: true });
  }
}

const runs: Run[] = [];
for (const inFlight of LEVELS) {
  for (const mode of ['in memory', '--data'] as const) {
    const run = await measure(mode, inFlight);
    runs.push(run);
    console.error(`${mode}, ${inFlight} in flight: ${run.perSecond.toFixed(0)} creations/s`);
  }
}
console.log(`requests to pay for ${SECONDS} s after ${WARM_UP_MS / 1000} s of warm-up; data directories under ${PARENT}`);
console.log(
  '| requests in flight | sandbox | creations/s (202) | median ms | 99th percentile ms | sandbox CPU per creation | other answers |',
);
console.log('|---|---|---|---|---|---|---|');
for (const run of runs) {
  console.log(
    `| ${run.inFlight} | ${run.mode} | ${run.perSecond.toFixed(0)} | ${run.p50Ms.toFixed(2)} | ${run.p99Ms.toFixed(2)} | ${run.cpuMicros.toFixed(0)} µs | ${run.failed} |`,
  );
}
console.log('\n| requests in flight | start in memory | start on an empty directory | start again on what the run left |');
console.log('|---|---|---|---|');
for (const inFlight of LEVELS) {
  const memory = runs.find((run) => run.inFlight === inFlight && run.mode === 'in memory')!;
  const data = runs.find((run) => run.inFlight === inFlight && run.mode === '--data')!;
  console.log(
    `| ${inFlight} | ${memory.startMs.toFixed(0)} ms | ${data.startMs.toFixed(0)} ms | ${data.restart!.ms.toFixed(0)} ms, ${data.restart!.transactions} transactions read back |`,
  );
}
process.exit(runs.some((run) => run.failed > 0) ? 1 : 0);
