import { runVerify } from '../conformance/certification/verify.ts';

export { VERIFY_OPTIONS as options } from '../conformance/certification/verify.ts';

/** `momo-harness verify <bundle>`: paths are taken from where npm was called, when it was. */
export default function verify(argv: string[]): Promise<number> {
  return runVerify(argv, process.env.INIT_CWD ?? process.cwd(), (line) => console.log(line));
}
