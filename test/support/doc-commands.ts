/**
 * The commands the documents show in their code blocks (README.md, CONTRIBUTING.md, docs/*.md), read as a shell
 * would split them, and what each one runs: an npm script, and through it (or through npx) a subcommand of
 * momo-harness with its arguments. The docs tests check them against package.json's scripts and the options each
 * command declares.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';

/** The documents a user or a contributor reads, as paths from the project root: README first. */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(PACKAGE_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function documentText(file: string): string {
  return readFileSync(join(PACKAGE_ROOT, file), 'utf8');
}

export interface DocCommand {
  /** The document, the line it is on, and the command as written there (without its comment). */
  file: string;
  line: number;
  text: string;
  /** How it is started: an npm script, npm's own command (ci, pack, install), or the momo-harness command. */
  kind: 'npm-script' | 'npm' | 'momo-harness';
  /** The npm script it runs (kind npm-script). */
  script?: string;
  /** The words npm would take for itself: options written before the -- of `npm run <script> -- …`. */
  takenByNpm: string[];
  /** The arguments that reach the program: the script's own words after its program, then the user's. */
  args: string[];
}

const SCRIPTS = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The npm scripts of package.json, by name. */
export const NPM_SCRIPTS: Readonly<Record<string, string>> = SCRIPTS;

/** The subcommand an npm script runs, with the words it adds (e.g. "tsx cli/momo-harness.ts load" → ['load']), if it runs momo-harness. */
export function harnessWordsOf(script: string): string[] | undefined {
  const words = /^tsx cli\/momo-harness\.ts((?: [\w-]+)*)$/.exec(NPM_SCRIPTS[script] ?? '');
  return words ? words[1]!.trim().split(' ').filter(Boolean) : undefined;
}

/** Every command of every document. */
export function allDocCommands(): DocCommand[] {
  return DOCUMENTS.flatMap((file) => docCommands(file));
}

/**
 * Every command of a document's code blocks (sh, or without a language) that starts npm, npx momo-harness or
 * momo-harness: each of a line's commands (joined by &&, ||, ;, | or &), a line ending in \ joined to the next.
 */
export function docCommands(file: string, text = documentText(file)): DocCommand[] {
  const commands: DocCommand[] = [];
  let inBlock = false;
  let shellBlock = false;
  let continued: { line: number; text: string } | undefined;
  text.split('\n').forEach((raw, index) => {
    const fence = /^\s*```(\S*)/.exec(raw);
    if (fence) {
      inBlock = !inBlock;
      shellBlock = inBlock && ['', 'sh', 'bash', 'shell', 'console'].includes(fence[1]!);
      continued = undefined;
      return;
    }
    if (!inBlock || !shellBlock) return;
    const line = continued?.line ?? index + 1;
    const whole = continued ? `${continued.text}${withoutComment(raw).trimStart()}` : withoutComment(raw);
    if (whole.endsWith('\\')) {
      continued = { line, text: `${whole.slice(0, -1).trimEnd()} ` };
      return;
    }
    continued = undefined;
    for (const part of shellCommands(whole)) {
      const words = shellWords(part);
      while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) words.shift();
      const command = commandOf(words);
      if (command) commands.push({ file, line, text: part.trim(), ...command });
    }
  });
  return commands;
}

/** A line's commands: split where the shell starts another (&&, ||, ;, |, &), outside quotes. */
export function shellCommands(line: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (const i of unquoted(line)) {
    // The second character of && or || was passed over with the first.
    if (i < start || !';|&'.includes(line[i]!)) continue;
    parts.push(line.slice(start, i));
    start = line[i + 1] === line[i] ? i + 2 : i + 1;
  }
  parts.push(line.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}

/** The positions of a line's characters that stand outside '…' and "…", in order; the quotes are not among them. */
function* unquoted(line: string): Generator<number> {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else {
      yield i;
    }
  }
}

function commandOf(words: string[]): Omit<DocCommand, 'file' | 'line' | 'text'> | undefined {
  const [program, first, ...rest] = words;
  if (program === 'momo-harness') return { kind: 'momo-harness', takenByNpm: [], args: words.slice(1) };
  if (program === 'npx' && first === 'momo-harness') return { kind: 'momo-harness', takenByNpm: [], args: rest };
  if (program !== 'npm' || first === undefined) return undefined;
  // npm start and npm test are npm run start and npm run test.
  const [script, after] =
    first === 'run' || first === 'run-script'
      ? [rest[0], rest.slice(1)]
      : first === 'start' || first === 'test'
        ? [first, rest]
        : [undefined, []];
  if (script === undefined) return { kind: 'npm', takenByNpm: [], args: words.slice(1) };
  const dash = after.indexOf('--');
  const beforeDash = dash === -1 ? after : after.slice(0, dash);
  return {
    kind: 'npm-script',
    script,
    takenByNpm: beforeDash.filter((w) => w.startsWith('-')),
    args: [
      ...(harnessWordsOf(script) ?? []),
      ...beforeDash.filter((w) => !w.startsWith('-')),
      ...(dash === -1 ? [] : after.slice(dash + 1)),
    ],
  };
}

/** A line without its comment: from a # that starts a word, outside quotes. */
export function withoutComment(line: string): string {
  for (const i of unquoted(line)) if (line[i] === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trimEnd();
  return line.trimEnd();
}

/** The words of a command as a POSIX shell splits them: on white space, with '…' and "…" kept whole. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
