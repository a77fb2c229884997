import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The test process's environment without any sandbox setting, so the child sees only what a test gives it. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'PORT' || k.startsWith('MOMO_') || k.startsWith('NODE_TEST')) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * `momo-harness sandbox` as a child process (node --import tsx cli/momo-harness.ts sandbox), its output
 * gathered as it comes; it is killed after `limitMs` should a test leave it running.
 */
export function startCli(args: string[], env: Record<string, string> = {}, limitMs = 20_000) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/momo-harness.ts', 'sandbox', ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out.stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out.stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  killer.unref();
  void exited.then(() => clearTimeout(killer));
  return { child, out, exited };
}
