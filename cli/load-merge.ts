import { runMerge } from '../load/runner/merge.ts';

export { MERGE_OPTIONS as options } from '../load/runner/merge.ts';

/** `momo-harness load-merge <files…>`: one summary, global percentiles and counters, from a split run's raw samples; reports under the working folder. */
export default function loadMerge(argv: string[]): Promise<number> {
  return runMerge(argv, (line) => console.log(line), process.cwd());
}
