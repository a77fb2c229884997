/** Every command's options are parsed in one place, which says what to fix when a command line is wrong. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandLineError, editDistance, nearestWords, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText, optionTable } from '../../core/command-help.ts';
import { decimalNumber, namesAmong, oneOf, wholeNumber } from '../../core/option-values.ts';

const OPTIONS = {
  tags: { type: 'string', value: '<expression>', describe: 'the scenarios to run' },
  strict: { type: 'boolean', env: 'MOMO_STRICT', describe: 'the strict readings too' },
  parallel: { type: 'string', value: '<workers>', default: '4', describe: 'worker processes', parse: wholeNumber(0, 16, 4) },
  'fail-on': { type: 'string', describe: 'which failures fail the run', parse: oneOf(['new', 'any']) },
  help: { type: 'boolean', short: 'h', describe: 'the usage text' },
} as const satisfies OptionSpecs;

/** npm's environment for `npm start …` or `npm run <script> …`, with the configs it took from the command line. */
const npmEnv = (script: string, configs: Record<string, string> = {}) => ({
  npm_lifecycle_event: script,
  npm_config_cache: '/root/.npm',
  ...configs,
});

function messageOf(argv: string[], env: Record<string, string> = {}, positionals = false): string {
  try {
    parseCommandLine(argv, OPTIONS, { env, positionals });
  } catch (error) {
    assert.ok(error instanceof CommandLineError, String(error));
    return error.message;
  }
  assert.fail(`${argv.join(' ')} was accepted`);
}

test('a well-formed command line gives its values and positionals', () => {
  const parsed = parseCommandLine(['--tags', '@smoke', '--strict', 'x'], OPTIONS, { env: {}, positionals: true });
  assert.deepEqual({ ...parsed.values }, { tags: '@smoke', strict: true });
  assert.deepEqual(parsed.positionals, ['x']);
});

test('an unknown option is named with the nearest known one', () => {
  assert.equal(messageOf(['--tgas', '@smoke']), 'unknown option --tgas; did you mean --tags?');
  assert.equal(messageOf(['--tgas=@smoke']), 'unknown option --tgas; did you mean --tags?');
  assert.equal(messageOf(['--paralel', '0']), 'unknown option --paralel; did you mean --parallel?');
  assert.equal(messageOf(['--fail_on', 'new']), 'unknown option --fail_on; did you mean --fail-on?');
  // One dash makes parseArgs read short options (-t -a -g -s): the word written is what is named.
  assert.equal(messageOf(['-tags', '@smoke']), 'unknown option -tags; did you mean --tags?');
});

test('an unknown option with nothing near it lists the options', () => {
  assert.equal(
    messageOf(['--verbose']),
    'unknown option --verbose; the options are --tags, --strict, --parallel, --fail-on, --help (--help says what each does)',
  );
});

test('a missing value, a value given to a switch and a stray argument each say what to write', () => {
  assert.equal(messageOf(['--tags']), '--tags needs a value: write --tags <expression>');
  assert.equal(
    messageOf(['--tags', '--strict']),
    '--tags needs a value, and is followed by the option --strict: write --tags <expression>',
  );
  assert.equal(messageOf(['--strict=yes']), '--strict takes no value: write --strict alone');
  assert.equal(messageOf(['@smoke']), 'unexpected argument "@smoke": this command takes only options (--help lists them)');
});

test('npm start --tags @smoke (no --): npm took the option, and the message shows the command with --', () => {
  // What npm 11 on this machine does (tried): npm_config_tags=true, and "@smoke" passed on as an argument.
  assert.equal(
    messageOf(['@smoke'], npmEnv('start', { npm_config_tags: 'true' })),
    "npm took --tags for itself: put -- before the harness's options, as in npm start -- --tags @smoke",
  );
  // --tags=<value> leaves the value with npm, and no argument.
  assert.equal(
    messageOf([], npmEnv('start', { npm_config_tags: '@collection and not @slow' })),
    'npm took --tags for itself: put -- before the harness\'s options, as in npm start -- --tags "@collection and not @slow"',
  );
  // A switch leaves nothing behind: without this check the run would go on, silently not strict.
  assert.equal(
    messageOf([], npmEnv('start', { npm_config_strict: 'true' })),
    "npm took --strict for itself: put -- before the harness's options, as in npm start -- --strict",
  );
  // Dashes in an option's name are underscores in npm's variable.
  assert.match(
    messageOf(['new'], npmEnv('start', { npm_config_fail_on: 'true' })),
    /npm took --fail-on for itself: .* npm start -- --fail-on new$/,
  );
});

test('npm run <script> with a command that takes arguments of its own, and with several options taken', () => {
  // npm run load smoke --parallel 3: the option's value is the last argument, as options follow the arguments.
  assert.equal(
    messageOf(['smoke', '3'], npmEnv('load', { npm_config_parallel: 'true' }), true),
    "npm took --parallel for itself: put -- before the harness's options, as in npm run load -- smoke --parallel 3",
  );
  assert.equal(
    messageOf(['smoke', '5', '2'], npmEnv('load', { npm_config_tags: 'true', npm_config_parallel: 'true' }), true),
    "npm took --tags and --parallel for itself: put -- before the harness's options, as in npm run load -- smoke 5 2 --tags <expression> --parallel <workers>",
  );
});

test("npm's variables count only for a script npm runs, and only for options the command line lacks", () => {
  assert.deepEqual({ ...parseCommandLine([], OPTIONS, { env: { npm_config_tags: 'true' } }).values }, {});
  assert.deepEqual(
    { ...parseCommandLine(['--tags', '@smoke'], OPTIONS, { env: npmEnv('start', { npm_config_tags: 'true' }) }).values },
    { tags: '@smoke' },
  );
  // An argument npm passed on from an npm config it knows (it exports none of those of our names) is still explained.
  assert.match(
    messageOf(['lab.pem'], npmEnv('verify')),
    /^unexpected argument "lab.pem": .*npm took it for itself: put -- before the harness's options, as in npm run verify -- --<option> lab.pem$/,
  );
});

test('edit distance counts a swap of neighbours as one edit; the nearest words are the fewest edits away', () => {
  assert.equal(editDistance('tgas', 'tags'), 1);
  assert.equal(editDistance('smok', 'smoke'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.deepEqual(nearestWords('@smok', ['@smoke', '@slow', '@stateful']), ['@smoke']);
  assert.deepEqual(nearestWords('@req:COL-RTP-DUPLICATE-40', ['@req:COL-RTP-DUPLICATE-409', '@req:COL-RTP-DECLINED']), [
    '@req:COL-RTP-DUPLICATE-409',
  ]);
  assert.deepEqual(nearestWords('xyz', ['tags', 'strict']), []);
});

test("an option's value is parsed as declared: typed when it is good, refused in one form when it is not", () => {
  const { values } = parseCommandLine(['--parallel', '8', '--fail-on', 'new'], OPTIONS, { env: {} });
  assert.equal(values.parallel, 8);
  assert.equal(values['fail-on'], 'new');
  assert.equal(messageOf(['--parallel', 'abc']), '--parallel: "abc" is not a whole number from 0 to 16; write e.g. --parallel 4');
  assert.equal(messageOf(['--parallel', '17']), '--parallel: "17" is not a whole number from 0 to 16; write e.g. --parallel 4');
  // Every refused value is said at once.
  assert.equal(
    messageOf(['--parallel=-1', '--fail-on', 'all']),
    '--parallel: "-1" is not a whole number from 0 to 16; write e.g. --parallel 4\n--fail-on: "all" is not new or any; write e.g. --fail-on new',
  );
});

test('each value of a repeated option is parsed; the kinds of value say what they take', () => {
  const options = {
    share: { type: 'string', multiple: true, describe: 'a share', parse: decimalNumber({ max: 1 }, 0.05) },
    only: { type: 'string', describe: 'names', parse: namesAmong(['a', 'b'], 'letters', 'the alphabet lists them') },
  } as const satisfies OptionSpecs;
  const parse = (argv: string[]) => parseCommandLine(argv, options, { env: {} }).values;
  assert.deepEqual(parse(['--share', '0.5', '--share', '1']).share, [0.5, 1]);
  assert.deepEqual(parse(['--only', 'none']).only, []);
  assert.deepEqual(parse(['--only', 'a, b']).only, ['a', 'b']);
  assert.throws(() => parse(['--share', '0.5', '--share', '2']), {
    message: '--share: "2" is not a number above 0 and at most 1; write e.g. --share 0.05',
  });
  assert.throws(() => parse(['--only', 'a,c']), {
    message: '--only: "a,c" is not a list of letters or none: "c" is not one of them (the alphabet lists them); write e.g. --only a',
  });
});

test('the usage text is written from the declaration: each flag with its value, meaning, variable and default', () => {
  const text = helpText({ usage: 'momo-harness try [options]', about: 'Tries.', options: OPTIONS, after: 'Exit codes: 0 tried.' });
  const lines = text.split('\n');
  assert.equal(lines[0], 'Usage: momo-harness try [options]');
  assert.match(text, /^ {2}--parallel <workers> +worker processes \(default 4\)$/m);
  assert.match(text, /^ {2}--strict +the strict readings too \(MOMO_STRICT\)$/m);
  assert.match(text, /^ {2}-h, --help +the usage text$/m);
  assert.equal(lines.at(-1), 'Exit codes: 0 tried.');
});

test('the option table of docs/reference.md is written from the same declaration', () => {
  assert.equal(
    optionTable(OPTIONS),
    [
      '| flag | environment | default | meaning |',
      '| --- | --- | --- | --- |',
      '| `--tags <expression>` | | | the scenarios to run |',
      '| `--strict` | `MOMO_STRICT` | | the strict readings too |',
      '| `--parallel <workers>` | | `4` | worker processes |',
      '| `--fail-on` | | | which failures fail the run |',
      '| `-h, --help` | | | the usage text |',
    ].join('\n'),
  );
});
