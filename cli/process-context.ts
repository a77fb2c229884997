import type { CommandContext } from '../conformance/runner/command-context.ts';
import { faultPlugins } from '../sandbox-quality/faults/faults.ts';
import { variationPlugins } from '../sandbox-quality/variations/variations.ts';

/**
 * The context a conformance command runs in from the command line: this process's environment and directory, lines to
 * the console, and MOMO_SANDBOX_DEVIATIONS and MOMO_SANDBOX_VARIATIONS read as faults and variations of the embedded sandbox.
 */
export function processContext(argv: string[]): CommandContext {
  return {
    argv,
    env: process.env,
    cwd: process.cwd(),
    log: (line) => console.log(line),
    faults: faultPlugins,
    variations: variationPlugins,
  };
}
