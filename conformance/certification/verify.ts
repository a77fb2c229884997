import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUNDLE_LIMITS, BundleLimitError, UnreadableBundleError, verifyBundle, type BundleLimits } from './bundle.ts';

export const VERIFY_EXIT = { intact: 0, tampered: 1, unreadable: 2 } as const;

const MiB = 1024 * 1024;

const USAGE = `Usage: npm run verify -- [--max-size <MiB>] [--max-ratio <n>] <bundle.tar.gz>

Checks a certification bundle (reports/certification/certification-<timestamp>.tar.gz): the SHA-256 of
every file against its manifest.json, that no file was added or removed, and that the archive holds only
regular files, each once, inside it (no links, devices, absolute or ".." paths, nothing after its end).

Reading stops, and the bundle counts as unreadable, once it decompresses to more than
  --max-size <MiB>   ${BUNDLE_LIMITS.maxBytes / MiB} MiB by default, or to more than
  --max-ratio <n>    ${BUNDLE_LIMITS.maxRatio} times its compressed size by default (a decompression bomb).

Exit codes: 0 the bundle is intact, 1 it was tampered with (the files are named), 2 it cannot be read.`;

/** `npm run verify`: from arguments to exit code. */
export async function runVerify(argv: string[], cwd: string, log: (line: string) => void): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
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
  try {
    const check = await verifyBundle(file, parsed.limits);
    if (!check.intact) {
      log(`TAMPERED: ${file} does not match its manifest:`);
      for (const problem of check.problems) log(`  - ${problem}`);
      return VERIFY_EXIT.tampered;
    }
    const { manifest } = check;
    log(`Intact: ${file}`);
    log(`  ${manifest.files.length} files match their SHA-256 in manifest.json`);
    log(`  ${manifest.harness.name} ${manifest.harness.version}, profile ${manifest.profile.name}, target ${manifest.target}, ${manifest.createdAt}`);
    log(`  spec: ${manifest.spec ? `${manifest.spec.path} (SHA-256 ${manifest.spec.sha256})` : 'not included (it was not found when the bundle was made)'}`);
    return VERIFY_EXIT.intact;
  } catch (error) {
    if (error instanceof BundleLimitError) {
      log(error.message);
      if (error.limit === 'size') log(`If the bundle is genuine and this large, allow more with --max-size <MiB> (now ${parsed.limits.maxBytes / MiB}).`);
      if (error.limit === 'ratio') log(`If the bundle is genuine and compresses this well, allow it with --max-ratio <n> (now ${parsed.limits.maxRatio}).`);
      return VERIFY_EXIT.unreadable;
    }
    if (error instanceof UnreadableBundleError) {
      log(error.message);
      return VERIFY_EXIT.unreadable;
    }
    throw error;
  }
}

/** The bundle and the limits, or what is wrong with the arguments. */
function parseArguments(argv: string[]): { bundle: string; limits: BundleLimits } | string {
  const limits: BundleLimits = { ...BUNDLE_LIMITS };
  const bundles: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!;
    if (argument === '--max-size' || argument === '--max-ratio') {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value <= 0) return `${argument} needs a positive number, got ${argv[i] === undefined ? 'nothing' : `"${argv[i]}"`}.`;
      if (argument === '--max-size') limits.maxBytes = Math.floor(value * MiB);
      else limits.maxRatio = value;
    } else if (argument.startsWith('-')) {
      return `Unknown option ${argument}.`;
    } else {
      bundles.push(argument);
    }
  }
  if (bundles.length !== 1) return 'Give exactly one bundle to verify.';
  return { bundle: bundles[0]!, limits };
}
