import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';

/**
 * The options of `npm run benchmark`, declared apart from benchmark.ts, which runs when it is imported: the docs
 * (scripts/generate-reference.ts) and their tests read them from here.
 */
export const BENCHMARK_OPTIONS = {
  quick: { type: 'boolean', describe: 'the same comparisons, smaller and shorter, to try it out' },
  generator: { type: 'boolean', describe: 'only the load script against the minimal script (throughput and instructions)' },
  cpu: { type: 'boolean', describe: 'only the server CPU per request, sandbox request to pay against bare Fastify' },
  instructions: { type: 'boolean', describe: 'only the server instructions per request, the same two, compiled' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

export const BENCHMARK_USAGE = helpText({
  usage: 'npm run benchmark -- [options]',
  about: `Produces every figure of docs/benchmarks.md, each comparison measured side by side in one run (the full run, with
no option, takes about 20 minutes on 2 cores). Servers run in their own processes, one at a time; k6 is the load
generator. Results go to reports/benchmarks/results.json and into the generated section of docs/benchmarks.md.`,
  options: BENCHMARK_OPTIONS,
});

export type BenchmarkArguments = ReturnType<typeof parseCommandLine<typeof BENCHMARK_OPTIONS>>['values'];

/** The switches of the command line; with --help, or a command line that is wrong, says so and exits (0, or 2). */
export function benchmarkArgumentsOrExit(argv: string[]): BenchmarkArguments {
  let values: BenchmarkArguments;
  try {
    values = parseCommandLine(argv, BENCHMARK_OPTIONS).values;
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    console.error(`${error.message}\n\n${BENCHMARK_USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(BENCHMARK_USAGE);
    process.exit(0);
  }
  return values;
}
