#!/usr/bin/env node
// momo-harness as npm links it (package.json "bin"), and as `npx momo-harness` runs it in a clone.
// An installed package holds the compiled CLI (dist/node) and no TypeScript sources: that is what runs. A clone
// holds the sources and, after npm ci, tsx (a devDependency): they run through tsx, as npm start runs them, so
// `npx momo-harness` works in a clone without a build, and never runs a build older than the sources.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const sources = fileURLToPath(new URL('../cli/momo-harness.ts', import.meta.url));

if (!existsSync(sources)) {
  await import('../dist/node/cli/momo-harness.js');
} else {
  let tsx;
  try {
    tsx = import.meta.resolve('tsx');
  } catch {
    console.error('momo-harness: this clone has no tsx to run its sources with: run npm ci first.');
    process.exit(2);
  }
  // A child process rather than tsx's register(): cucumber's worker processes inherit the parent's node
  // arguments, and so the loader, only from the command line (core/package.ts harnessProgram() does the same).
  const child = spawn(process.execPath, ['--import', tsx, sources, ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C reaches the whole process group, the child with it: passing it on as well would interrupt the child's
  // own orderly stop. A signal sent to this process alone (kill, a CI runner's timeout) is passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}
