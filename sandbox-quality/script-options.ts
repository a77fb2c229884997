import type { OptionSpecs } from '../core/command-line.ts';
import { BENCHMARK_OPTIONS } from './benchmark/benchmark-options.ts';
import { FUZZ_OPTIONS } from './fuzz/fuzz-command.ts';
import { MUTATION_OPTIONS } from './mutation/mutation.ts';

/**
 * The sandbox's quality tools that are commands of their own, by npm script, with the options each declares: not
 * momo-harness subcommands (cli/commands.ts), so not in the package, but in docs/reference.md beside them
 * (npm run generate:reference), and held to the documents' examples by test/docs.
 */
export const SCRIPT_OPTIONS: Readonly<Record<string, OptionSpecs>> = {
  fuzz: FUZZ_OPTIONS,
  mutation: MUTATION_OPTIONS,
  benchmark: BENCHMARK_OPTIONS,
};
