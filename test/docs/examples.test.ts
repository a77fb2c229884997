/**
 * Every command the documents show (README.md, CONTRIBUTING.md, docs/*.md) runs as written in a clone: each
 * `npm run X` / `npm start` names a script of package.json, each momo-harness command (npx, bare, or behind a
 * script) a subcommand, and each passes only options that command declares (its module's `options`, which its
 * parser reads), after the -- npm needs. examples.suite.test.ts runs the cheap ones (--help, --list-…) for real.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../cli/commands.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { scenarioNames } from '../../load/build.ts';
import { parseMix } from '../../load/lib/mixes.ts';
// The options of the npm scripts that are not momo-harness subcommands but take options of their own.
import { SCRIPT_OPTIONS } from '../../sandbox-quality/script-options.ts';
import {
  DOCUMENTS,
  NPM_SCRIPTS,
  allDocCommands,
  docCommands,
  documentText,
  harnessWordsOf,
  shellCommands,
  shellWords,
  withoutComment,
  type DocCommand,
} from '../support/doc-commands.ts';

/** npm's own commands a README may show (installing, packing), which run no script of ours. */
const NPM_COMMANDS = new Set(['ci', 'install', 'pack']);

/** What would not run as written, one line each; none for a command that runs. */
async function problemsOf(command: DocCommand): Promise<string[]> {
  const where = `${command.file}:${command.line} \`${command.text}\``;
  if (command.kind === 'npm')
    return NPM_COMMANDS.has(command.args[0] ?? '') ? [] : [`${where}: npm ${command.args[0]} is not a command these documents should need`];
  const problems: string[] = [];
  let options: OptionSpecs | undefined;
  let args = command.args;
  if (command.kind === 'npm-script') {
    if (NPM_SCRIPTS[command.script!] === undefined) return [`${where}: package.json has no script "${command.script}"`];
    if (command.takenByNpm.length > 0) problems.push(`${where}: npm takes ${command.takenByNpm.join(' ')} for itself; write them after --`);
    if (harnessWordsOf(command.script!) === undefined) {
      options = SCRIPT_OPTIONS[command.script!];
      if (args.length > 0 && !options)
        problems.push(
          `${where}: gives arguments to npm run ${command.script}, whose options this test does not know: add them to SCRIPT_OPTIONS (sandbox-quality/script-options.ts)`,
        );
      if (!options) return problems;
    }
  }
  if (!options) {
    // momo-harness's own: --help alone is its usage; a first word that is not an option names the subcommand, else run.
    if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) return problems;
    const named = args[0] !== undefined && !args[0].startsWith('-');
    const name = named ? args[0]! : 'run';
    const subcommand = COMMANDS[name];
    if (!subcommand) return [...problems, `${where}: momo-harness has no command "${name}"`];
    options = (await subcommand.load()).options;
    if (named) args = args.slice(1);
  }
  let positionals: string[] = [];
  try {
    positionals = parseCommandLine(args, options, { positionals: true, env: {} }).positionals;
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    problems.push(`${where}: ${error.message}`);
  }
  // The arguments that name something: a load scenario, a capacity mix.
  const [subcommand] = command.kind === 'momo-harness' || harnessWordsOf(command.script ?? '') ? command.args : [];
  const [named] = positionals;
  if (subcommand === 'load' && named !== undefined && !scenarioNames().includes(named))
    problems.push(`${where}: no load scenario "${named}" (${scenarioNames().join(', ')})`);
  if (subcommand === 'capacity' && named !== undefined) {
    try {
      parseMix(named);
    } catch (error) {
      problems.push(`${where}: no mix "${named}": ${(error as Error).message}`);
    }
  }
  return problems;
}

test('every document shows commands that run as written in a clone', async () => {
  const commands = allDocCommands();
  assert.ok(commands.length >= 80, `only ${commands.length} commands read from ${DOCUMENTS.join(', ')}`);
  const problems = (await Promise.all(commands.map(problemsOf))).flat();
  assert.deepEqual(problems, []);
});

test('README is a door: the two commands first, a block per job, the index of every document, at most 200 lines', () => {
  const readme = documentText('README.md');
  assert.ok(readme.split('\n').length <= 200, `README.md has ${readme.split('\n').length} lines`);
  const commands = docCommands('README.md');
  assert.deepEqual(commands.find((c) => c.kind !== 'npm')?.args, ['run'], 'the first command is the conformance run');
  for (const command of ['npm ci && npm start', 'npm test'])
    assert.match(readme, new RegExp(`^${command} `, 'm'), `README shows ${command} on a line of its own`);
  assert.ok(
    commands.some((c) => c.script === 'capacity'),
    'README shows npm run capacity',
  );
  for (const flag of ['--sign-key', '--baseline', '--rerun-failed'])
    assert.ok(
      commands.some((c) => c.args.includes(flag)),
      `README shows ${flag}`,
    );
  const unlisted = DOCUMENTS.filter((file) => file !== 'README.md' && !readme.includes(`](${file})`));
  assert.deepEqual(unlisted, [], "README's index links every document");
});

test('the check finds what would not run: a missing script or subcommand, an unknown option, an option npm would take', async () => {
  const readme = [
    '```sh',
    'npm run lod -- smoke              # no such script',
    'npm start --tags @smoke           # npm takes --tags',
    'npx momo-harness run --tgas @smoke',
    'npx momo-harness verfiy bundle.tar.gz',
    'MOMO_PROFILE=spec npm run sandbox -- --prot 9000',
    'npm run fuzz -- --seeds 3',
    'npm ci && npm start -- --tags',
    'npm run load -- smok',
    'npm run capacity -- requestToPay:x',
    'npm run benchmark -- --quikc',
    'MOMO_BASE_URL=http://127.0.0.1:1 \\',
    '  npm run capacity -- mixd; npm run load -- smoke &',
    '```',
    '```json',
    'npm start -- --not-a-command-in-json',
    '```',
  ].join('\n');
  const problems = (await Promise.all(docCommands('README.md', readme).map(problemsOf))).flat();
  assert.deepEqual(problems, [
    'README.md:2 `npm run lod -- smoke`: package.json has no script "lod"',
    'README.md:3 `npm start --tags @smoke`: npm takes --tags for itself; write them after --',
    'README.md:4 `npx momo-harness run --tgas @smoke`: unknown option --tgas; did you mean --tags?',
    'README.md:5 `npx momo-harness verfiy bundle.tar.gz`: momo-harness has no command "verfiy"',
    'README.md:6 `MOMO_PROFILE=spec npm run sandbox -- --prot 9000`: unknown option --prot; did you mean --port?',
    'README.md:7 `npm run fuzz -- --seeds 3`: unknown option --seeds; did you mean --seed?',
    'README.md:8 `npm start -- --tags`: --tags needs a value: write --tags <expression>',
    `README.md:9 \`npm run load -- smok\`: no load scenario "smok" (${scenarioNames().join(', ')})`,
    'README.md:10 `npm run capacity -- requestToPay:x`: no mix "requestToPay:x": the share of requestToPay must be a positive number, got "x"',
    'README.md:11 `npm run benchmark -- --quikc`: unknown option --quikc; did you mean --quick?',
    `README.md:12 \`MOMO_BASE_URL=http://127.0.0.1:1 npm run capacity -- mixd\`: no mix "mixd": ${mixProblem('mixd')}`,
  ]);
});

function mixProblem(mix: string): string {
  try {
    parseMix(mix);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

test('a command line is split as a shell splits it, and its comment left out', () => {
  assert.deepEqual(shellCommands('npm ci && npm start; npm test || true'), ['npm ci', 'npm start', 'npm test', 'true']);
  assert.deepEqual(shellCommands(`npm run sandbox & echo 'a; b' | cat`), ['npm run sandbox', `echo 'a; b'`, 'cat']);
  assert.deepEqual(shellWords('npm start -- --tags "@collection and not @slow" --parallel 0'), [
    'npm',
    'start',
    '--',
    '--tags',
    '@collection and not @slow',
    '--parallel',
    '0',
  ]);
  assert.deepEqual(shellWords(`K='a b' x ""`), ['K=a b', 'x', '']);
  assert.equal(withoutComment('npm start -- --tags "@a # b"   # a comment'), 'npm start -- --tags "@a # b"');
  assert.equal(withoutComment('curl localbox/#anchor'), 'curl localbox/#anchor');
});
