/** Every command's options are parsed in one place, which says what to fix when a command line is wrong. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandLineError, editDistance, nearestWords, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';

const OPTIONS = {
  tags: { type: 'string', value: '<expression>' },
  strict: { type: 'boolean' },
  parallel: { type: 'string', value: '<workers>' },
  'fail-on': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
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
