import { runConformance } from '../conformance/runner/conformance.ts';
import { processContext } from './process-context.ts';

export { RUN_OPTIONS as options } from '../conformance/runner/conformance.ts';

/**
 * `momo-harness run`: the conformance run; MOMO_SANDBOX_DEVIATIONS may start the embedded sandbox with faults, and
 * MOMO_SANDBOX_VARIATIONS with conforming variations.
 */
export default function run(argv: string[]): Promise<number> {
  return runConformance(processContext(argv));
}
