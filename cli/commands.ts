import type { OptionSpecs } from '../core/command-line.ts';

/**
 * The subcommands of momo-harness, the one list of them: a subcommand is one entry, its line of help and the module
 * of cli/ whose default export takes the arguments after its name and resolves to the exit code, and whose
 * `options` are the flags it declares (core/command-line.ts): what it parses, what its --help and its table in
 * docs/reference.md are written from (npm run generate:reference), and what the docs tests check the examples
 * against. A module is loaded only when asked for, so `momo-harness --help` starts nothing.
 */
export interface CommandModule {
  default: (argv: string[]) => Promise<number>;
  options: OptionSpecs;
}

type Command = { describe: string; load: () => Promise<CommandModule> };

export const COMMANDS: Record<string, Command> = {
  run: {
    describe:
      'the conformance run (the default): every scenario against the embedded sandbox or MOMO_BASE_URL, with every report; --sign-key signs its evidence bundle',
    load: () => import('./run.ts'),
  },
  explore: {
    describe: 'seeded exploration: random sequences of valid and invalid calls, a departure shrunk to a replay',
    load: () => import('./explore.ts'),
  },
  sandbox: { describe: 'the reference MoMo sandbox on its own', load: () => import('./sandbox.ts') },
  load: { describe: 'a k6 load scenario against the embedded sandbox or MOMO_BASE_URL', load: () => import('./load.ts') },
  capacity: {
    describe: 'the highest arrival rate at which the target meets its SLOs, by a stepped search',
    load: () => import('./capacity.ts'),
  },
  'load-merge': {
    describe: 'one summary with global percentiles from the raw samples of a split load run',
    load: () => import('./load-merge.ts'),
  },
  'load-k8s': { describe: 'k6-operator manifests for a load scenario split over pods', load: () => import('./load-k8s.ts') },
  verify: {
    describe: 'checks a certification bundle against its manifest, and its signature with --key',
    load: () => import('./verify.ts'),
  },
  keygen: {
    describe: 'makes an Ed25519 key pair to sign evidence bundles with (run --sign-key, verify --key)',
    load: () => import('./keygen.ts'),
  },
};

/** The options of every subcommand, by name; this loads every module. */
export async function subcommandOptions(): Promise<Record<string, OptionSpecs>> {
  const loaded = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, command]) => [name, (await command.load()).options] as const),
  );
  return Object.fromEntries(loaded);
}
