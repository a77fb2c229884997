import { runConformance } from '../conformance/runner/conformance.ts';
import { faultPlugins } from '../sandbox-quality/faults/faults.ts';
import { variationPlugins } from '../sandbox-quality/variations/variations.ts';

export { RUN_OPTIONS as options } from '../conformance/runner/conformance.ts';

/**
 * `momo-harness run`: the conformance run; MOMO_SANDBOX_DEVIATIONS may start the embedded sandbox with faults, and
 * MOMO_SANDBOX_VARIATIONS with conforming variations.
 */
export default function run(argv: string[]): Promise<number> {
  return runConformance({
    argv,
    env: process.env,
    cwd: process.cwd(),
    log: (line) => console.log(line),
    faults: faultPlugins,
    variations: variationPlugins,
  });
}
