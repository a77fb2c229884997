/**
 * The commands README.md shows in its code blocks, read as a shell would split them, and what each one runs:
 * an npm script, and through it (or through npx) a subcommand of momo-harness with its arguments. The README
 * test checks them against package.json's scripts and the options each command declares.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';

export interface ReadmeCommand {
  /** The line of README.md it is on, and the command as written there (without its comment). */
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

/** Every command of README.md's code blocks (sh, or without a language) that starts npm, npx momo-harness or momo-harness. */
export function readmeCommands(readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8')): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  let inBlock = false;
  let shellBlock = false;
  readme.split('\n').forEach((raw, index) => {
    const fence = /^\s*```(\S*)/.exec(raw);
    if (fence) {
      inBlock = !inBlock;
      shellBlock = inBlock && ['', 'sh', 'bash', 'shell', 'console'].includes(fence[1]!);
      return;
    }
    if (!inBlock || !shellBlock) return;
    for (const part of withoutComment(raw).split('&&')) {
      const words = shellWords(part);
      while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) words.shift();
      const command = commandOf(words);
      if (command) commands.push({ line: index + 1, text: part.trim(), ...command });
    }
  });
  return commands;
}

function commandOf(words: string[]): Omit<ReadmeCommand, 'line' | 'text'> | undefined {
  const [program, first, ...rest] = words;
  if (program === 'momo-harness') return { kind: 'momo-harness', takenByNpm: [], args: words.slice(1) };
  if (program === 'npx' && first === 'momo-harness') return { kind: 'momo-harness', takenByNpm: [], args: rest };
  if (program !== 'npm' || first === undefined) return undefined;
  // npm start and npm test are npm run start and npm run test.
  const [script, after] = first === 'run' || first === 'run-script' ? [rest[0], rest.slice(1)] : first === 'start' || first === 'test' ? [first, rest] : [undefined, []];
  if (script === undefined) return { kind: 'npm', takenByNpm: [], args: words.slice(1) };
  const dash = after.indexOf('--');
  const beforeDash = dash === -1 ? after : after.slice(0, dash);
  return {
    kind: 'npm-script',
    script,
    takenByNpm: beforeDash.filter((w) => w.startsWith('-')),
    args: [...(harnessWordsOf(script) ?? []), ...beforeDash.filter((w) => !w.startsWith('-')), ...(dash === -1 ? [] : after.slice(dash + 1))],
  };
}

/** A line without its comment: from a # that starts a word, outside quotes. */
export function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return line.slice(0, i).trimEnd();
    }
  }
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
