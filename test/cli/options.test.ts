/**
 * Every command declares its options once (core/command-line.ts): a bad value is refused in the same form whatever
 * the command, before it starts anything, with exit 2; and --help shows each declared option with its meaning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../cli/commands.ts';
import { meaningOf } from '../../core/command-help.ts';
import { runConformance } from '../../conformance/runner/conformance.ts';
import { runVerify } from '../../conformance/certification/verify.ts';
import { runCapacity } from '../../load/runner/capacity.ts';
import { main as loadK8s } from '../../load/runner/k8s.ts';
import { runLoad } from '../../load/runner/load-command.ts';
import { FUZZ_OPTIONS, main as fuzz } from '../../sandbox-quality/fuzz/fuzz-command.ts';

/** The lines a command said, and its exit code. */
async function said(run: (log: (line: string) => void) => Promise<number>): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await run((line) => lines.push(...line.split('\n')));
  return { code, lines };
}

/** The one form of a refused value: the option, the value as written, what it is not, and what to write instead. */
const REFUSED_VALUE = /^(--[\w-]+): "([^"]*)" is not .+; write e.g. \1 \S+/;

test('a bad value is refused in the same form by every command, with exit 2, before anything starts', async () => {
  const env = {};
  const refusals = {
    run: await said((log) => runConformance({ argv: ['--parallel', 'many'], env, cwd: process.cwd(), log })),
    load: await said(async (log) => (await runLoad({ argv: ['smoke', '--rate', 'fast'], env, log })).code),
    capacity: await said(async (log) => (await runCapacity({ argv: ['token', '--vus', '0'], env, log })).code),
    'load-k8s': await said((log) =>
      loadK8s(['capacity', '--parallelism', '2', '--base-url', 'http://momo:8080', '--cpu', 'two'], env, log, log),
    ),
    verify: await said((log) => runVerify(['--max-ratio', 'lots', 'bundle.tar.gz'], process.cwd(), log)),
    fuzz: await said((log) => fuzz(['--shrink', 'all'], log)),
  };
  assert.deepEqual(Object.fromEntries(Object.entries(refusals).map(([command, { code, lines }]) => [command, [code, lines[0]]])), {
    run: [2, '--parallel: "many" is not a whole number from 0 to 16; write e.g. --parallel 4'],
    load: [2, '--rate: "fast" is not a number, 0 or more; write e.g. --rate 50'],
    capacity: [2, '--vus: "0" is not a whole number, 1 or more; write e.g. --vus 200'],
    'load-k8s': [2, '--cpu: "two" is not a Kubernetes quantity such as 2 or 1500m; write e.g. --cpu 2'],
    verify: [2, '--max-ratio: "lots" is not a number above 0; write e.g. --max-ratio 1000'],
    fuzz: [2, '--shrink: "all" is not a whole number from 0 to 100; write e.g. --shrink 3 (--help lists the options)'],
  });
  for (const { lines } of Object.values(refusals)) assert.match(lines[0]!, REFUSED_VALUE);
});

/** Text with its line breaks and indentation as single spaces: a wrapped description reads as one line again. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** What console.log printed while `run` ran. */
async function printed(run: () => Promise<number>): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(' '));
  try {
    return { code: await run(), text: lines.join('\n') };
  } finally {
    console.log = log;
  }
}

test("each momo-harness command's --help shows every option it declares, with its meaning", async () => {
  for (const [name, command] of Object.entries(COMMANDS)) {
    const module = await command.load();
    const { code, text } = await printed(() => module.default(['--help']));
    assert.equal(code, 0, name);
    assert.match(text, /^Usage: /m, name);
    for (const [option, spec] of Object.entries(module.options)) {
      // The sandbox's help is a table of its settings, with the variable and default in columns of their own.
      if (name === 'sandbox' && spec.env === undefined) continue;
      assert.ok(text.includes(`--${option}`), `momo-harness ${name} --help shows --${option}`);
      const meaning = name === 'sandbox' ? spec.describe : meaningOf(spec);
      assert.ok(flat(text).includes(flat(meaning)), `momo-harness ${name} --help says what --${option} does: ${meaning}`);
    }
  }
});

test('npm run fuzz --help shows every option it declares, with its meaning', async () => {
  const { code, lines } = await said((log) => fuzz(['--help'], log));
  assert.equal(code, 0);
  for (const [option, spec] of Object.entries(FUZZ_OPTIONS)) {
    assert.ok(
      lines.some((line) => line.includes(`--${option}`)),
      `--${option}`,
    );
    assert.ok(flat(lines.join('\n')).includes(flat(meaningOf(spec))), meaningOf(spec));
  }
});
