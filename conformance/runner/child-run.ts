import { spawn } from 'node:child_process';
import { PACKAGE_ROOT, harnessProgram } from '../../core/package.ts';

export interface ChildRun {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
  timedOut: boolean;
}

/**
 * `npm start`'s program in a child process with only the given environment (and PATH, HOME), as a user would
 * run it: whole runs (or explorations) in the tests and in npm run mutation. Killed after timeoutMs.
 */
export function runConformanceProcess(
  argv: string[],
  env: Record<string, string>,
  timeoutMs: number,
  command: 'run' | 'explore' = 'run',
): Promise<ChildRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...harnessProgram(), command, ...argv], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, timedOut });
    });
  });
}
