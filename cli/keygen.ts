import { generateKeys } from '../conformance/certification/keygen.ts';

export { KEYGEN_OPTIONS as options } from '../conformance/certification/keygen.ts';

/** `momo-harness keygen [--out <prefix>]`: an Ed25519 key pair to sign evidence bundles with. */
export default function keygen(argv: string[]): Promise<number> {
  return Promise.resolve(generateKeys(argv, process.cwd(), (line) => console.log(line)));
}
