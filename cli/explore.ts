import { runExplore } from '../conformance/explore/explore.ts';
import { faultPlugins } from '../sandbox-quality/faults/faults.ts';
import { variationPlugins } from '../sandbox-quality/variations/variations.ts';

export { EXPLORE_OPTIONS as options } from '../conformance/explore/explore.ts';

/**
 * `momo-harness explore`: the seeded exploration; MOMO_SANDBOX_DEVIATIONS may start the embedded sandbox with faults,
 * and MOMO_SANDBOX_VARIATIONS with conforming variations, as for `run`.
 */
export default function explore(argv: string[]): Promise<number> {
  return runExplore({
    argv,
    env: process.env,
    cwd: process.cwd(),
    log: (line) => console.log(line),
    faults: faultPlugins,
    variations: variationPlugins,
  });
}
