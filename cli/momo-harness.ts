#!/usr/bin/env node
/**
 * momo-harness: one command, a subcommand per job (COMMANDS, cli/commands.ts). Each subcommand declares its own
 * flags (core/command-line.ts) and answers its own --help, written from them (core/command-help.ts).
 */
import { columns } from '../core/command-help.ts';
import { nearestWords } from '../core/command-line.ts';
import { COMMANDS } from './commands.ts';

const USAGE = `Usage: momo-harness <command> [options]     (momo-harness <command> --help for its own)

Commands:
${columns(Object.entries(COMMANDS).map(([name, c]) => [name, c.describe])).join('\n')}

Without a command, or with options only, it runs the conformance run.
Exit codes: 0 conforms (or the command succeeded), 1 does not conform, 2 could not test.`;

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || (first === 'help' && rest.length === 0)) {
    console.log(USAGE);
    return 0;
  }
  // `momo-harness help <command>` is `momo-harness <command> --help`.
  if (first === 'help') return main([rest[0]!, '--help']);
  const named = first !== undefined && !first.startsWith('-');
  const name = named ? first : 'run';
  const command = COMMANDS[name];
  if (!command) {
    const meant = nearestWords(name, Object.keys(COMMANDS));
    console.error(`${meant.length > 0 ? `no command "${name}"; did you mean ${meant.join(' or ')}?` : `no command "${name}"`}\n\n${USAGE}`);
    return 2;
  }
  const module = await command.load();
  return module.default(named ? rest : argv);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`momo-harness stopped on an unexpected error: ${(error as Error).stack ?? String(error)}`);
    process.exit(2);
  },
);
