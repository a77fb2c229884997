import { runLoad } from '../load/runner/load-command.ts';

export { LOAD_OPTIONS as options } from '../load/runner/load-command.ts';

/** `momo-harness load <scenario>`: a k6 scenario against the embedded sandbox or MOMO_BASE_URL. */
export default async function load(argv: string[]): Promise<number> {
  const { code } = await runLoad({ argv, env: process.env, log: (line) => console.log(line) });
  return code;
}
