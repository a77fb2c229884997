import type { OptionSpec, OptionSpecs } from './command-line.ts';

/**
 * What a command's declaration says of it, written out: its usage text (--help), and the option table of its
 * section of docs/reference.md (withOptionTables, which scripts/generate-reference.ts runs). Both are written from
 * the options as the command declares them (core/command-line.ts), so neither can drift from what the parser takes.
 */

/** A command as its --help presents it; only the options are a table, the rest is the command's own prose. */
export interface CommandHelp {
  /** How it is called, after "Usage: " (more lines may follow, e.g. how to call it in a clone). */
  usage: string;
  /** What it does, before its options. */
  about?: string;
  options: OptionSpecs;
  /** After the options: notes, and the exit codes. */
  after?: string;
}

/** Lines of the usage text are at most this long. */
const WIDTH = 120;
/** The column where descriptions start, unless every flag is shorter. */
const MOST_FLAG_COLUMN = 32;

export function helpText({ usage, about, options, after }: CommandHelp): string {
  return [`Usage: ${usage}`, ...(about ? ['', about] : []), '', ...optionLines(options), ...(after ? ['', after] : [])].join('\n');
}

/** The flag as written with its value, if it declares how: `--parallel <workers>`, `-h, --help`. */
export function flagOf(name: string, { value, short }: OptionSpec): string {
  const shown = `--${name}${value !== undefined ? ` ${value}` : ''}`;
  return short ? `-${short}, ${shown}` : shown;
}

/**
 * What an option does, with the variable it stands for and its default: "worker processes (default 4)". A
 * description marks code with backticks, for docs/reference.md; the terminal shows it without them.
 */
export function meaningOf({ describe, env, default: shown }: OptionSpec): string {
  const notes = [...(env ? [env] : []), ...(shown !== undefined ? [`default ${shown}`] : [])];
  return plain(notes.length > 0 ? `${describe} (${notes.join('; ')})` : describe);
}

/** Text as a terminal shows it: without the backticks that mark code. */
function plain(text: string): string {
  return text.replace(/`/g, '');
}

/** One entry per option, its flag then its meaning, wrapped into a column. */
export function optionLines(options: OptionSpecs): string[] {
  return columns(Object.entries(options).map(([name, spec]) => [flagOf(name, spec), meaningOf(spec)]));
}

/** Two columns, a name and its text, the text wrapped into its column (also momo-harness's list of commands). */
export function columns(rows: readonly (readonly [string, string])[]): string[] {
  const column = Math.min(MOST_FLAG_COLUMN, Math.max(...rows.map(([name]) => name.length)) + 4);
  const indent = ' '.repeat(column);
  return rows.flatMap(([name, meaning]) => {
    const head = `  ${name}`;
    const text = wrap(meaning, WIDTH - column);
    // A name too long for its column puts its text on the lines below.
    const first = head.length < column - 1 ? [`${head.padEnd(column)}${text[0]}`] : [head, `${indent}${text[0]}`];
    return [...first, ...text.slice(1).map((line) => `${indent}${line}`)];
  });
}

/** Words of a text in lines of at most `width` characters (a longer word has a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + word.length + 1 <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/**
 * The options as a Markdown table for docs/reference.md: the flag, the variable it stands for and the default (each
 * column only if some option has one), and the meaning.
 */
export function optionTable(options: OptionSpecs): string {
  const specs = Object.entries(options);
  const withEnv = specs.some(([, s]) => s.env !== undefined);
  const withDefault = specs.some(([, s]) => s.default !== undefined);
  const header = ['flag', ...(withEnv ? ['environment'] : []), ...(withDefault ? ['default'] : []), 'meaning'];
  const rows = specs.map(([name, spec]) => [
    code(flagOf(name, spec)),
    ...(withEnv ? [spec.env ? code(spec.env) : ''] : []),
    ...(withDefault ? [defaultCell(spec.default)] : []),
    markdownOf(spec.describe),
  ]);
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`.replace(/ {2}\|/g, ' |')).join('\n');
}

/** A default that is a value (`4`, `reports/capacity`) as code; one said in words ("two per CPU", "(none)") as text. */
function defaultCell(shown: string | undefined): string {
  if (shown === undefined) return '';
  return /\s/.test(shown) || shown.startsWith('(') ? markdownOf(shown) : code(shown);
}

function code(text: string): string {
  return `\`${escapeCell(text)}\``;
}

/** A pipe would end the table's cell. */
function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/**
 * A description as Markdown: what it marks as code stays so; outside code, flags and variables become code too, a
 * document of docs/ a link (the table is in docs/), and a stray < is no HTML tag.
 */
function markdownOf(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? escapeCell(part)
        : escapeCell(part)
            .replace(/</g, '&lt;')
            .replace(/(^|[\s("])(--[a-z][\w-]*)/g, '$1`$2`')
            .replace(/\b(MOMO_[A-Z0-9_]+|LOAD_[A-Z0-9_]*[A-Z0-9]|PORT)\b/g, '`$1`')
            .replace(/\bdocs\/([\w-]+\.md)(#[\w-]+)?/g, '[$1]($1$2)'),
    )
    .join('');
}

const MARKED_TABLE = /(<!-- options:([\w-]+):begin -->\n)[\s\S]*?\n(<!-- options:\2:end -->)/g;

/**
 * A document with each command's option table written between its markers, `<!-- options:<command>:begin -->` and
 * `<!-- options:<command>:end -->`, and the rest left as it is (docs/reference.md, npm run generate:reference).
 * Throws when a command has no markers, or markers name no command: a table that is not written would go stale unseen.
 */
export function withOptionTables(text: string, commands: Readonly<Record<string, OptionSpecs>>): string {
  const marked = [...text.matchAll(MARKED_TABLE)].map((m) => m[2]!);
  const unknown = marked.filter((name) => !(name in commands));
  const missing = Object.keys(commands).filter((name) => !marked.includes(name));
  if (unknown.length > 0 || missing.length > 0)
    throw new Error(
      [
        ...(missing.length > 0 ? [`no <!-- options:<command>:begin --> … end markers for ${missing.join(', ')}`] : []),
        ...(unknown.length > 0 ? [`markers for commands that do not exist: ${unknown.join(', ')}`] : []),
      ].join('; '),
    );
  return text.replace(MARKED_TABLE, (_, begin: string, name: string, end: string) => `${begin}${optionTable(commands[name]!)}\n${end}`);
}
