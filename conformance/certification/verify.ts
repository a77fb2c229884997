import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UnreadableBundleError, verifyBundle } from './bundle.ts';

export const VERIFY_EXIT = { intact: 0, tampered: 1, unreadable: 2 } as const;

const USAGE = `Usage: npm run verify -- <bundle.tar.gz>

Checks a certification bundle (reports/certification/certification-<timestamp>.tar.gz): the SHA-256 of
every file against its manifest.json, and that no file was added or removed.

Exit codes: 0 the bundle is intact, 1 it was tampered with (the files are named), 2 it cannot be read.`;

/** `npm run verify`: from arguments to exit code. */
export async function runVerify(argv: string[], cwd: string, log: (line: string) => void): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    log(USAGE);
    return VERIFY_EXIT.intact;
  }
  if (argv.length !== 1 || argv[0]?.startsWith('-')) {
    log(`Give exactly one bundle to verify.\n\n${USAGE}`);
    return VERIFY_EXIT.unreadable;
  }
  const file = resolve(cwd, argv[0] ?? '');
  if (!existsSync(file)) {
    log(`Cannot read ${file}: there is no such file.`);
    return VERIFY_EXIT.unreadable;
  }
  try {
    const check = await verifyBundle(file);
    const { manifest } = check;
    if (!check.intact) {
      log(`TAMPERED: ${file} does not match its manifest:`);
      for (const problem of check.problems) log(`  - ${problem}`);
      return VERIFY_EXIT.tampered;
    }
    log(`Intact: ${file}`);
    log(`  ${manifest.files.length} files match their SHA-256 in manifest.json`);
    log(`  ${manifest.harness.name} ${manifest.harness.version}, profile ${manifest.profile.name}, target ${manifest.target}, ${manifest.createdAt}`);
    log(`  spec: ${manifest.spec ? `${manifest.spec.path} (SHA-256 ${manifest.spec.sha256})` : 'not included (it was not found when the bundle was made)'}`);
    return VERIFY_EXIT.intact;
  } catch (error) {
    if (error instanceof UnreadableBundleError) {
      log(error.message);
      return VERIFY_EXIT.unreadable;
    }
    throw error;
  }
}
