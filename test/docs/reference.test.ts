/**
 * docs/reference.md stays true to the code: its option tables are what npm run generate:reference writes from the
 * options each command declares, the sandbox's table gives each setting the variable and default the sandbox reads,
 * and every variable the harness, the sandbox, the reproductions and the load scripts read has its row.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withOptionTables } from '../../core/command-help.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { CONFIG_VARIABLES } from '../../harness/config.ts';
import { BASIC_VARIABLE, TOKEN_VARIABLE } from '../../harness/reproduction/curl.ts';
import { helpText } from '../../sandbox/domain/settings.ts';
import { DEVIATIONS_SETTING } from '../../sandbox-quality/faults/faults.ts';
import { VARIATIONS_SETTING } from '../../sandbox-quality/variations/variations.ts';
import { documentText } from '../support/doc-commands.ts';

const reference = documentText('docs/reference.md');

/** The text of a section of the reference, from its heading to the next heading of the same level or above. */
function section(heading: string): string {
  const start = reference.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `docs/reference.md has no section "## ${heading}"`);
  const end = reference.indexOf('\n## ', start + 1);
  return reference.slice(start, end === -1 ? undefined : end);
}

/** The table rows of a text, each as its cells without the backticks. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^\| `/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/`/g, '')),
    );
}

test('the option tables are what npm run generate:reference writes from the declared options', () => {
  // After changing an option, run `npm run generate:reference`: the file must be exactly what it writes.
  const script = fileURLToPath(new URL('../../scripts/generate-reference.ts', import.meta.url));
  const check = spawnSync(process.execPath, ['--import', 'tsx', script, '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
});

test('the generator rewrites only what stands between the markers, and every command has them', () => {
  const options = { out: { type: 'string', value: '<dir>', default: 'reports', describe: 'where it goes' } } as const;
  const text = ['# Title', '', 'Prose.', '<!-- options:try:begin -->', '| stale |', '<!-- options:try:end -->', 'More prose.', ''].join(
    '\n',
  );
  assert.equal(
    withOptionTables(text, { try: options }),
    [
      '# Title',
      '',
      'Prose.',
      '<!-- options:try:begin -->',
      '| flag | default | meaning |',
      '| --- | --- | --- |',
      '| `--out <dir>` | `reports` | where it goes |',
      '<!-- options:try:end -->',
      'More prose.',
      '',
    ].join('\n'),
  );
  assert.throws(() => withOptionTables(text, { try: options, other: options }), /no .* markers for other/);
  assert.throws(() => withOptionTables(text, {}), /markers for commands that do not exist: try/);
});

test("the sandbox's table gives each setting the variable and the default the sandbox reads", () => {
  const fromHelp = helpText([DEVIATIONS_SETTING, VARIATIONS_SETTING])
    .split('\n')
    .map((line) => /^ {2}(--[\w-]+)\s+(\S+)\s+(\S+)/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, flag, env, fallback]): [string, string, string] => [flag!, env!, fallback!]);
  assert.ok(fromHelp.length > 30, `only ${fromHelp.length} settings read from the sandbox's help`);
  const documented = new Map(rows(section('momo-harness sandbox')).map(([flag, env, fallback]) => [flag!, [flag!, env!, fallback!]]));
  for (const [flag, env, fallback] of fromHelp) assert.deepEqual(documented.get(flag), [flag, env, fallback], `the row of ${flag}`);
});

test('every variable the harness, the reproductions and the load scripts read has its row', () => {
  const named = new Set(rows(reference).flatMap(([first]) => first!.split(/,\s*/)));
  const loadFiles = (dir: string): string[] =>
    readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => join(entry.parentPath, entry.name));
  const loadSource = loadFiles('load')
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  // Names of the code itself (LOAD_OPTIONS, the options of momo-harness load) are not variables.
  const identifiers = new Set([...loadSource.matchAll(/\bconst (LOAD_\w+)/g)].map((m) => m[1]!));
  const loadVariables = new Set(
    [...loadSource.matchAll(/\bLOAD_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]).filter((name) => !identifiers.has(name)),
  );
  assert.ok(loadVariables.has('LOAD_RATE') && loadVariables.has('LOAD_SLO_P95_MS'), [...loadVariables].join(', '));
  const missing = [...Object.keys(CONFIG_VARIABLES), TOKEN_VARIABLE, BASIC_VARIABLE, ...loadVariables].filter((name) => !named.has(name));
  assert.deepEqual(missing, []);
});
