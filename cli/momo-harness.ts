#!/usr/bin/env node
/**
 * momo-harness: one command, a subcommand per job. Each subcommand is a module of cli/ whose default export
 * takes the arguments after its name and resolves to the exit code; it is loaded only when asked for, so
 * `momo-harness --help` starts nothing.
 */
type Command = { describe: string; load: () => Promise<{ default: (argv: string[]) => Promise<number> }> };

const COMMANDS: Record<string, Command> = {
  run: { describe: 'the conformance run (the default): every scenario against the embedded sandbox or MOMO_BASE_URL, with every report', load: () => import('./run.ts') },
  sandbox: { describe: 'the reference MoMo sandbox on its own', load: () => import('./sandbox.ts') },
  load: { describe: 'a k6 load scenario against the embedded sandbox or MOMO_BASE_URL', load: () => import('./load.ts') },
  capacity: { describe: 'the highest arrival rate at which the target meets its SLOs, by a stepped search', load: () => import('./capacity.ts') },
  'load-merge': { describe: 'one summary with global percentiles from the raw samples of a split load run', load: () => import('./load-merge.ts') },
  'load-k8s': { describe: 'k6-operator manifests for a load scenario split over pods', load: () => import('./load-k8s.ts') },
  verify: { describe: 'checks a certification bundle against its manifest', load: () => import('./verify.ts') },
};

const USAGE = `Usage: momo-harness <command> [options]     (momo-harness <command> --help for its own)

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(11)} ${c.describe}`).join('\n')}

Without a command, or with options only, it runs the conformance run.
Exit codes: 0 conforms (or the command succeeded), 1 does not conform, 2 could not test.`;

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    console.log(USAGE);
    return 0;
  }
  const named = first !== undefined && !first.startsWith('-');
  const name = named ? first : 'run';
  const command = COMMANDS[name];
  if (!command) {
    console.log(`No command "${name}".\n\n${USAGE}`);
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
