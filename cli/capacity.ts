import { runCapacity } from '../load/runner/capacity.ts';

export { CAPACITY_OPTIONS as options } from '../load/runner/capacity.ts';

/** `momo-harness capacity <mix>`: the highest arrival rate the target holds its SLOs at. */
export default async function capacity(argv: string[]): Promise<number> {
  const { code } = await runCapacity({ argv, env: process.env, log: (line) => console.log(line) });
  return code;
}
