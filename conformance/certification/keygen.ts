import { resolve } from 'node:path';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { KeyFileError, generateKeyFiles } from './signing.ts';

/** The options of `momo-harness keygen`, each declared once (core/command-line.ts). */
export const KEYGEN_OPTIONS = {
  out: {
    type: 'string',
    value: '<prefix>',
    default: '`momo-signing`, in this folder',
    describe: 'where the pair goes; an existing file is never overwritten',
  },
  help: { type: 'boolean', short: 'h', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'momo-harness keygen [--out <prefix>]',
  about: `Makes an Ed25519 key pair to sign evidence bundles with, in PEM:
  <prefix>.key.pem   the private key (PKCS#8, readable by you alone): momo-harness run --sign-key <prefix>.key.pem
  <prefix>.pub.pem   the public key (SPKI): hand it to reviewers out of band; they check a bundle with
                     momo-harness verify <bundle> --key <prefix>.pub.pem`,
  options: KEYGEN_OPTIONS,
  after: 'Exit codes: 0 the pair was written, 2 it was not (the files exist, or the folder cannot be written).',
});

/** `momo-harness keygen`: from arguments to exit code. */
export function generateKeys(argv: string[], cwd: string, log: (line: string) => void): number {
  let values;
  try {
    values = parseCommandLine(argv, KEYGEN_OPTIONS).values;
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    log(USAGE);
    return 0;
  }
  try {
    const { privateFile, publicFile, keyId } = generateKeyFiles(resolve(cwd, values.out ?? 'momo-signing'));
    log(`Private key: ${privateFile} (mode 0600; keep it secret, sign with momo-harness run --sign-key ${privateFile})`);
    log(`Public key:  ${publicFile} (give it to reviewers out of band)`);
    log(`Key id:      ${keyId} (what verify names; reviewers can compare it over the phone)`);
    return 0;
  } catch (error) {
    if (error instanceof KeyFileError) {
      log(error.message);
      return 2;
    }
    if ((error as NodeJS.ErrnoException).code !== undefined) {
      log(`Cannot write the key pair: ${(error as Error).message}`);
      return 2;
    }
    throw error;
  }
}
