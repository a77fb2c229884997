import { parseArgs } from 'node:util';

/**
 * The one model of every command's options (momo-harness's subcommands, and the npm scripts of the sandbox's
 * quality tools), and its parser. Each option is declared once, where its command's job is: the parser reads it,
 * the usage text is written from it (core/command-help.ts), and so are the option tables of docs/reference.md
 * (npm run generate:reference). The parser is node's parseArgs, strict, with its errors said as what to fix: an
 * unknown option is named with the nearest known one, an option that npm took for itself (npm start --tags @smoke,
 * without --) is recognised from npm's environment and explained, and a value an option's `parse` refuses is said
 * in one form whatever the command: `--steps: "abc" is not a whole number from 1 to 10; write e.g. --steps 5`.
 */

/** One option of a command, declared once: parseArgs reads it, and the usage text and docs/reference.md are written from it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** How its value is written in the usage text and in examples, e.g. "<expression>". */
  value?: string;
  /** What it does, in one line (the usage text wraps it). */
  describe: string;
  /** What happens when it is not given, as the usage text shows it: "4", "two per CPU", "reports/capacity". */
  default?: string;
  /** The environment variable it stands for, which it sets or which is read when it is not given. */
  env?: string;
  /** Turns each value as written into the value the command uses; throws InvalidOptionValue (core/option-values.ts). */
  parse?: (raw: string) => unknown;
}

export type OptionSpecs = Record<string, OptionSpec>;

type SingleValueOf<S extends OptionSpec> = S extends { parse: (raw: string) => infer V }
  ? V
  : S['type'] extends 'boolean'
    ? boolean
    : string;

type ValueOf<S extends OptionSpec> = S['multiple'] extends true ? SingleValueOf<S>[] : SingleValueOf<S>;

export interface CommandLine<O extends OptionSpecs> {
  values: { [K in keyof O]?: ValueOf<O[K]> };
  positionals: string[];
}

/** A command line that cannot be run as it is: the message says what is wrong and what to write instead. */
export class CommandLineError extends Error {
  override readonly name = 'CommandLineError';
}

/**
 * What an option's `parse` throws for a value it cannot take: what the value should be ("a whole number from 1 to
 * 10") and a value to write instead ("5"). The parser says it with the option's name, in the one form of every command.
 */
export class InvalidOptionValue extends Error {
  constructor(
    readonly expected: string,
    readonly example: string,
  ) {
    super(`is not ${expected}`);
  }
}

/** The one form of a refused value: `--steps: "abc" is not a whole number; write e.g. --steps 5`. */
function refusedValueMessage(name: string, raw: string, { expected, example }: InvalidOptionValue): string {
  return `--${name}: ${JSON.stringify(raw)} is not ${expected}; write e.g. --${name} ${shellWord(example)}`;
}

/** A word as a shell needs it written: quoted when it holds a space. */
function shellWord(word: string): string {
  return /\s/.test(word) ? JSON.stringify(word) : word;
}

export interface ParseSettings {
  /** Whether the command takes arguments other than options (a scenario name, files). */
  positionals?: boolean;
  /** The environment the command runs in, where npm leaves the options it took for itself. */
  env?: Record<string, string | undefined>;
}

/** The options and positionals of a command line; throws CommandLineError, saying what to fix, when it is wrong. */
export function parseCommandLine<O extends OptionSpecs>(
  argv: readonly string[],
  options: O,
  { positionals = false, env = process.env }: ParseSettings = {},
): CommandLine<O> {
  const takenByNpm = optionsTakenByNpm(argv, options, env, positionals);
  if (takenByNpm) throw new CommandLineError(takenByNpm);
  const forParseArgs = Object.fromEntries(
    Object.entries(options).map(([name, { type, multiple, short }]) => [
      name,
      { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) },
    ]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: forParseArgs, strict: true, allowPositionals: positionals });
  } catch (error) {
    throw new CommandLineError(explainParseError(error as Error & { code?: string }, argv, options, env));
  }
  return { values: parsedValues(parsed.values, options) as CommandLine<O>['values'], positionals: parsed.positionals };
}

/**
 * The values as the command uses them: each one given to an option with a `parse`, parsed. Every refused value is
 * said at once, one a line, so that one correction is enough.
 */
function parsedValues(values: Record<string, unknown>, options: OptionSpecs): Record<string, unknown> {
  const problems: string[] = [];
  const parseOne = (name: string, parse: (raw: string) => unknown) => (raw: string) => {
    try {
      return parse(raw);
    } catch (error) {
      if (!(error instanceof InvalidOptionValue)) throw error;
      problems.push(refusedValueMessage(name, raw, error));
      return undefined;
    }
  };
  const parsed = { ...values };
  for (const [name, { parse }] of Object.entries(options)) {
    const given = values[name];
    if (parse === undefined || given === undefined) continue;
    parsed[name] = Array.isArray(given) ? given.map(parseOne(name, parse)) : parseOne(name, parse)(given as string);
  }
  if (problems.length > 0) throw new CommandLineError(problems.join('\n'));
  return parsed;
}

/** The command line as written in a terminal: each option as --name, for messages and examples. */
export function optionNames(options: OptionSpecs): string[] {
  return Object.keys(options).map((name) => `--${name}`);
}

function explainParseError(
  error: Error & { code?: string },
  argv: readonly string[],
  options: OptionSpecs,
  env: Record<string, string | undefined>,
): string {
  const { message } = error;
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const unknown = /Unknown option '([^']+)'/.exec(message)?.[1] ?? '?';
      // "-tags" is read as the short options -t -a -g -s: the word the user wrote is the whole argument.
      const written = unknown.startsWith('--')
        ? unknown
        : (argv.find((a) => a.startsWith(unknown) && !a.startsWith('--'))?.split('=')[0] ?? unknown);
      const name = written.replace(/^-+/, '');
      const nearest = nearestWords(name, Object.keys(options));
      return nearest.length > 0
        ? `unknown option ${written}; did you mean ${nearest.map((n) => `--${n}`).join(' or ')}?`
        : `unknown option ${written}; the options are ${optionNames(options).join(', ')} (--help says what each does)`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = /Option '(?:-\w, )?--([\w-]+)/.exec(message)?.[1];
      const spec = name === undefined ? undefined : options[name];
      if (name === undefined || spec === undefined) return message;
      if (spec.type === 'boolean') return `--${name} takes no value: write --${name} alone`;
      const next = argv[argv.indexOf(`--${name}`) + 1];
      return `--${name} needs a value${next !== undefined ? `, and is followed by the option ${next}` : ''}: write --${name} ${spec.value ?? '<value>'}`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const stray = /Unexpected argument '([^']*)'/.exec(message)?.[1] ?? '';
      const byNpm =
        env.npm_lifecycle_event !== undefined
          ? `; if you gave npm an option before it, npm took it for itself: put -- before the harness's options, as in ${npmCommandOf(env)} -- --<option> ${stray}`
          : '';
      return `unexpected argument "${stray}": this command takes only options (--help lists them)${byNpm}`;
    }
    default:
      return message;
  }
}

/**
 * Options of this command that npm took for its own configuration: `npm start --tags @smoke` (no --) sets
 * npm_config_tags=true and passes "@smoke" on as an argument; `npm start --strict` sets npm_config_strict=true and
 * passes nothing (npm 11.19, tried). npm exports the configs it was given to the script's environment, so a
 * variable named after an option that the command line does not hold is one npm took. Only three of npm's own
 * config names are also ours (key, only, scopes), and npm sets none of them unless someone configures it so.
 */
function optionsTakenByNpm(
  argv: readonly string[],
  options: OptionSpecs,
  env: Record<string, string | undefined>,
  positionals: boolean,
): string | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  const given = (name: string) => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  const taken = Object.keys(options).filter((name) => env[npmVariableOf(name)] !== undefined && !given(name));
  if (taken.length === 0) return undefined;
  // npm passed on the value of `--name value` as an argument. With one such option, that argument is its value
  // when the command takes no arguments of its own; when it does, the last argument, as options are written after
  // them (npm run load smoke --rate 5). Otherwise the example shows where the values go.
  const valueless = taken.filter((name) => options[name]!.type === 'string' && env[npmVariableOf(name)] === 'true');
  const strays = argv.filter((a) => !a.startsWith('-'));
  const pairStray = valueless.length === 1 && (positionals ? strays.length >= 2 : strays.length === 1);
  const stray = strays.at(-1);
  const written = taken.map((name) => {
    const spec = options[name]!;
    if (spec.type === 'boolean') return `--${name}`;
    const fromNpm = env[npmVariableOf(name)]!;
    const value = fromNpm !== 'true' ? fromNpm : pairStray ? stray! : (spec.value ?? '<value>');
    return `--${name} ${/\s/.test(value) ? JSON.stringify(value) : value}`;
  });
  const rest = pairStray ? argv.filter((_, i) => i !== argv.lastIndexOf(stray!)) : argv;
  const example = [npmCommandOf(env), '--', ...rest.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)), ...written].join(' ');
  const names = taken.map((name) => `--${name}`);
  return `npm took ${names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`} for itself: put -- before the harness's options, as in ${example}`;
}

/** The variable npm sets for a config of that name: npm_config_ and the name, dashes as underscores. */
function npmVariableOf(option: string): string {
  return `npm_config_${option.replace(/-/g, '_')}`;
}

/** How the user called the script that runs this command: npm start, npm test, or npm run <script>. */
function npmCommandOf(env: Record<string, string | undefined>): string {
  const script = env.npm_lifecycle_event ?? '';
  return script === 'start' || script === 'test' ? `npm ${script}` : `npm run ${script}`;
}

/**
 * What a user who mistyped a word most likely meant: the candidates fewest edits away (a swap of two neighbouring
 * letters is one edit), if that is within a third of the word's length (at least one); at most `most` of them.
 */
export function nearestWords(word: string, candidates: readonly string[], most = 3): string[] {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const scored = [...new Set(candidates)].map((candidate) => ({
    candidate,
    distance: editDistance(word.toLowerCase(), candidate.toLowerCase()),
  }));
  const best = Math.min(limit, ...scored.map(({ distance }) => distance));
  return scored
    .filter(({ distance }) => distance <= best)
    .map(({ candidate }) => candidate)
    .sort()
    .slice(0, most);
}

/** Insertions, deletions, substitutions and swaps of neighbouring characters that turn a into b (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
