import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { BUNDLE_LIMITS, BundleLimitError, UnreadableBundleError, verifyBundle, type BundleCheck, type BundleLimits } from './bundle.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { decimalNumber } from '../../core/option-values.ts';
import { ATTESTATION_FILE, KeyFileError, keyIdOf, openEnvelope, readPublicKey, subjectProblems } from './signing.ts';

export const VERIFY_EXIT = { intact: 0, tampered: 1, unreadable: 2 } as const;

const MiB = 1024 * 1024;

/** The options of `momo-harness verify`, each declared once (core/command-line.ts). */
export const VERIFY_OPTIONS = {
  key: {
    type: 'string',
    value: '<public key file>',
    describe:
      "the signer's Ed25519 public key (PEM), got from the signer out of band: the bundle must carry a signature by that key (run --sign-key), or it counts as tampered with",
  },
  'max-size': {
    type: 'string',
    value: '<MiB>',
    default: String(BUNDLE_LIMITS.maxBytes / MiB),
    describe: 'the bundle counts as unreadable once it decompresses to more than this',
    parse: decimalNumber({}, BUNDLE_LIMITS.maxBytes / MiB),
  },
  'max-ratio': {
    type: 'string',
    value: '<n>',
    default: String(BUNDLE_LIMITS.maxRatio),
    describe: 'or to more than this many times its compressed size, as a decompression bomb does',
    parse: decimalNumber({}, BUNDLE_LIMITS.maxRatio),
  },
  help: { type: 'boolean', short: 'h', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: `momo-harness verify [options] <bundle.tar.gz>
       (in a clone: npm run verify -- ...)`,
  about: `Checks a certification bundle (reports/certification/certification-<timestamp>.tar.gz): the SHA-256 of
every file against its manifest.json, that no file was added or removed, and that the archive holds only
regular files, each once, inside it (no links, devices, absolute or ".." paths, nothing after its end).

With --key, the signature must be over an in-toto statement whose subjects are every file with its SHA-256,
manifest.json included; a bundle signed by another key, signed again, or altered after signing is tampered with.
Without --key the signature is not checked, and whoever can rewrite the bundle can rewrite its manifest.`,
  options: VERIFY_OPTIONS,
  after: `Exit codes: 0 the bundle is intact (and signed by the key), 1 it was tampered with (the files, or what is wrong
with the signature, are named), 2 it cannot be read (or the key file cannot be used).`,
});

/** `npm run verify`: from arguments to exit code. */
export async function runVerify(argv: string[], cwd: string, log: (line: string) => void): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    log(USAGE);
    return VERIFY_EXIT.intact;
  }
  const parsed = parseArguments(argv);
  if (typeof parsed === 'string') {
    log(`${parsed}\n\n${USAGE}`);
    return VERIFY_EXIT.unreadable;
  }
  const file = resolve(cwd, parsed.bundle);
  if (!existsSync(file)) {
    log(`Cannot read ${file}: there is no such file.`);
    return VERIFY_EXIT.unreadable;
  }
  let key: KeyObject | undefined;
  try {
    key = parsed.key === undefined ? undefined : readPublicKey(resolve(cwd, parsed.key));
  } catch (error) {
    if (!(error instanceof KeyFileError)) throw error;
    log(error.message);
    return VERIFY_EXIT.unreadable;
  }
  try {
    const check = await verifyBundle(file, parsed.limits);
    const signature = key ? signatureOf(check, key) : undefined;
    if (!check.intact || (signature && signature.problems.length > 0)) {
      if (!check.intact) {
        log(`TAMPERED: ${file} does not match its manifest:`);
        for (const problem of check.problems) log(`  - ${problem}`);
      }
      if (signature && signature.problems.length > 0) {
        log(`TAMPERED: ${file} is not as the holder of ${parsed.key} signed it:`);
        for (const problem of signature.problems) log(`  - ${problem}`);
      }
      return VERIFY_EXIT.tampered;
    }
    const { manifest } = check;
    log(`Intact: ${file}`);
    log(`  ${manifest.files.length} files match their SHA-256 in manifest.json`);
    if (signature)
      log(`  signed by ${signature.keyId}, the key of ${parsed.key}: every file and the manifest as signed; result ${signature.result}`);
    else if (check.attestation) log(`  signed, but the signature was not checked: give the signer's public key with --key <file>`);
    else log('  not signed: the manifest proves the files whole, not who made them (momo-harness run --sign-key signs)');
    log(
      `  ${manifest.harness.name} ${manifest.harness.version}, profile ${manifest.profile.name}, target ${manifest.target}, ${manifest.createdAt}`,
    );
    log(
      `  spec: ${manifest.spec ? `${manifest.spec.path} (SHA-256 ${manifest.spec.sha256})` : 'not included (it was not found when the bundle was made)'}`,
    );
    return VERIFY_EXIT.intact;
  } catch (error) {
    if (error instanceof BundleLimitError) {
      log(error.message);
      if (error.limit === 'size')
        log(`If the bundle is genuine and this large, allow more with --max-size <MiB> (now ${parsed.limits.maxBytes / MiB}).`);
      if (error.limit === 'ratio')
        log(`If the bundle is genuine and compresses this well, allow it with --max-ratio <n> (now ${parsed.limits.maxRatio}).`);
      return VERIFY_EXIT.unreadable;
    }
    if (error instanceof UnreadableBundleError) {
      log(error.message);
      return VERIFY_EXIT.unreadable;
    }
    throw error;
  }
}

/** What is wrong with a bundle's signature by the key, or whose it is and the result it states. */
function signatureOf(check: BundleCheck, key: KeyObject): { problems: string[]; keyId?: string; result?: string } {
  if (!check.attestation)
    return { problems: [`NOT SIGNED: the bundle has no ${ATTESTATION_FILE}; it was made without --sign-key, or its signature removed`] };
  const opened = openEnvelope(check.attestation, key);
  if (!opened.valid) return { problems: [opened.problem] };
  const files = new Map([...check.hashes].filter(([path]) => path !== ATTESTATION_FILE));
  return { problems: subjectProblems(opened.statement, files), keyId: keyIdOf(key), result: opened.statement.predicate?.result };
}

/** The bundle, the limits and the public key file, or what is wrong with the arguments. */
function parseArguments(argv: string[]): { bundle: string; limits: BundleLimits; key?: string } | string {
  let parsed;
  try {
    parsed = parseCommandLine(argv, VERIFY_OPTIONS, { positionals: true });
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    return error.message;
  }
  const { values, positionals } = parsed;
  const limits: BundleLimits = {
    maxBytes: values['max-size'] === undefined ? BUNDLE_LIMITS.maxBytes : Math.floor(values['max-size'] * MiB),
    maxRatio: values['max-ratio'] ?? BUNDLE_LIMITS.maxRatio,
  };
  if (positionals.length !== 1) return 'Give exactly one bundle to verify.';
  return { bundle: positionals[0]!, limits, ...(values.key !== undefined ? { key: values.key } : {}) };
}
