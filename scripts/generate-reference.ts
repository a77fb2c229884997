/**
 * The option tables of docs/reference.md, written from the options each command declares (core/command-line.ts),
 * so that the page cannot drift from what the commands take. Each table stands between its markers,
 * `<!-- options:<command>:begin -->` and `<!-- options:<command>:end -->`, where <command> is a subcommand of
 * momo-harness (run, sandbox, …) or an npm script with options of its own (fuzz, mutation, benchmark); the prose
 * around them is left as it is.
 *
 *   npm run generate:reference            # rewrites the tables
 *   npm run generate:reference -- --check # exits 1 when the file is not what the declarations give (a test runs this)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../cli/commands.ts';
import { optionTable } from '../core/command-help.ts';
import type { OptionSpecs } from '../core/command-line.ts';
import { BENCHMARK_OPTIONS } from '../sandbox-quality/benchmark/benchmark-options.ts';
import { FUZZ_OPTIONS } from '../sandbox-quality/fuzz/fuzz-command.ts';
import { MUTATION_OPTIONS } from '../sandbox-quality/mutation/mutation.ts';

export const REFERENCE = fileURLToPath(new URL('../docs/reference.md', import.meta.url));

/** The npm scripts that are commands of their own, not momo-harness subcommands, by script name, with their options. */
export const SCRIPT_OPTIONS: Readonly<Record<string, OptionSpecs>> = {
  fuzz: FUZZ_OPTIONS,
  mutation: MUTATION_OPTIONS,
  benchmark: BENCHMARK_OPTIONS,
};

/** Every command with a table in the reference: momo-harness's subcommands, then the scripts. */
export async function declaredOptions(): Promise<Record<string, OptionSpecs>> {
  const subcommands = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, command]) => [name, (await command.load()).options] as const),
  );
  return { ...Object.fromEntries(subcommands), ...SCRIPT_OPTIONS };
}

const MARKED_TABLE = /(<!-- options:([\w-]+):begin -->\n)[\s\S]*?\n(<!-- options:\2:end -->)/g;

/**
 * The text with each command's table written between its markers. Throws when a command has no markers, or markers
 * name no command: a table that is not generated would go stale unseen.
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

/** docs/reference.md as the declarations give it. */
export async function referenceText(): Promise<string> {
  return withOptionTables(readFileSync(REFERENCE, 'utf8'), await declaredOptions());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await referenceText();
  if (process.argv.includes('--check')) {
    if (readFileSync(REFERENCE, 'utf8') !== text) {
      console.error("docs/reference.md's option tables are not what the commands declare: run npm run generate:reference");
      process.exit(1);
    }
  } else {
    writeFileSync(REFERENCE, text);
    console.log('Wrote the option tables of docs/reference.md');
  }
}
