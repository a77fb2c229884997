import { runExplore } from '../conformance/explore/explore.ts';
import { processContext } from './process-context.ts';

export { EXPLORE_OPTIONS as options } from '../conformance/explore/explore.ts';

/**
 * `momo-harness explore`: the seeded exploration; MOMO_SANDBOX_DEVIATIONS may start the embedded sandbox with faults,
 * and MOMO_SANDBOX_VARIATIONS with conforming variations, as for `run`.
 */
export default function explore(argv: string[]): Promise<number> {
  return runExplore(processContext(argv));
}
