/**
 * momo-harness explore's options and the targets it cannot test: each ends with exit 2 and one line that says what
 * to fix, before any call; a target that does not answer is "could not test" in its report too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPLORE_OPTIONS, runExplore } from '../../conformance/explore/explore.ts';
import type { ExploreReport } from '../../conformance/explore/reports.ts';
import { faultPlugins } from '../../sandbox-quality/faults/faults.ts';
import { targetEnv } from '../support/suite.ts';

async function explore(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; lines: string[]; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-explore-'));
  const lines: string[] = [];
  const code = await runExplore({ argv: [...argv, '--reports', dir], env, cwd: dir, log: (l) => lines.push(l), faults: faultPlugins });
  return { code, lines, dir };
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test('--help lists every option, and exits 0', async () => {
  const { code, lines } = await explore(['--help']);
  assert.equal(code, 0);
  for (const name of Object.keys(EXPLORE_OPTIONS)) assert.match(lines.join('\n'), new RegExp(`--${name}\\b`));
});

test('a wrong option or value is one line, exit 2', async () => {
  for (const [argv, said] of [
    [['--runs', 'many'], /^--runs: "many" is not a whole number from 1 to 1000000; write e.g. --runs 300/],
    [['--seed', '1.5'], /^--seed: "1.5" is not a whole number/],
    [['--max-calls', '0'], /^--max-calls: "0" is not a whole number from 1/],
    [['--seeds', '3'], /^unknown option --seeds; did you mean --seed\?/],
  ] as const) {
    const { code, lines } = await explore([...argv]);
    assert.equal(code, 2, lines.join('\n'));
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, said);
  }
});

test('a deviation the sandbox does not have is one line, exit 2', async () => {
  const { code, lines } = await explore([], { MOMO_SANDBOX_DEVIATIONS: 'deposit-id-reuse' });
  assert.equal(code, 2, lines.join('\n'));
  assert.match(lines.join('\n'), /^MOMO_SANDBOX_DEVIATIONS: .*deposit-id-reuse/);
});

test('a target that does not answer could not be tested: exit 2, said once, and so in the report', async () => {
  const { code, lines, dir } = await explore([], targetEnv(`http://127.0.0.1:${await closedPort()}`));
  assert.equal(code, 2, lines.join('\n'));
  assert.match(lines.join('\n'), /could not be tested: connection refused/);
  const report = JSON.parse(readFileSync(join(dir, 'explore.json'), 'utf8')) as ExploreReport;
  assert.equal(report.outcome, 'could not test');
  assert.equal(report.runsDone, 0);
  assert.match(readFileSync(join(dir, 'junit.xml'), 'utf8'), /<skipped message="[^"]*connection refused/);
});
