#!/usr/bin/env node
/**
 * momo-harness: one command, a subcommand per job. COMMANDS is the one list of them: a subcommand is one entry,
 * its line of help and the module of cli/ whose default export takes the arguments after its name and resolves
 * to the exit code. Each module declares its own flags and answers its own --help; it is loaded only when asked
 * for, so `momo-harness --help` starts nothing.
 */
type Command = { describe: string; load: () => Promise<{ default: (argv: string[]) => Promise<number> }> };

const COMMANDS: Record<string, Command> = {
  run: { describe: 'the conformance run (the default): every scenario against the embedded sandbox or MOMO_BASE_URL, with every report; --sign-key signs its evidence bundle', load: () => import('./run.ts') },
  sandbox: { describe: 'the reference MoMo sandbox on its own', load: () => import('./sandbox.ts') },
  load: { describe: 'a k6 load scenario against the embedded sandbox or MOMO_BASE_URL', load: () => import('./load.ts') },
  capacity: { describe: 'the highest arrival rate at which the target meets its SLOs, by a stepped search', load: () => import('./capacity.ts') },
  'load-merge': { describe: 'one summary with global percentiles from the raw samples of a split load run', load: () => import('./load-merge.ts') },
  'load-k8s': { describe: 'k6-operator manifests for a load scenario split over pods', load: () => import('./load-k8s.ts') },
  verify: { describe: 'checks a certification bundle against its manifest, and its signature with --key', load: () => import('./verify.ts') },
  keygen: { describe: 'makes an Ed25519 key pair to sign evidence bundles with (run --sign-key, verify --key)', load: () => import('./keygen.ts') },
};

const USAGE = `Usage: momo-harness <command> [options]     (momo-harness <command> --help for its own)

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(11)} ${c.describe}`).join('\n')}

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
    console.error(`No command "${name}".\n\n${USAGE}`);
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
