/**
 * The test tiers, each chosen by its own pattern of file names, so that a test file lands in a tier because its
 * name says so, never because it matched none of the others: a misspelt suffix (`x.suit.test.ts`) lands in no tier,
 * and test/architecture/test-tiers.test.ts fails on it. package.json's test:<tier> scripts run `tsx test/tiers.ts <tier>` for the list
 * of files; CONTRIBUTING.md describes each tier.
 *
 * Run as a script, it prints the files of one tier, one a line, and fails on a tier that has none: an empty list
 * would make node --test look for tests of its own.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Each tier's pattern, matched against a test file's name (not its folder). */
export const TIERS = {
  /** In-process: a plain name before `.test.ts`, lowercase words joined by hyphens. */
  fast: /^[a-z0-9]+(?:-[a-z0-9]+)*\.test\.ts$/,
  /** Whole `npm start` runs in child processes. */
  suite: /\.suite\.test\.ts$/,
  /** Published npm clients against the sandbox. */
  interop: /\.interop\.test\.ts$/,
  /** k6 against the embedded sandbox. */
  load: /\.k6\.test\.ts$/,
  /** Pages in headless Chromium. */
  browser: /\.browser\.test\.ts$/,
  /** The packed tarball, installed. */
  pack: /\.pack\.test\.ts$/,
} as const satisfies Record<string, RegExp>;

export type Tier = keyof typeof TIERS;

/** Every test file under test/ (`*.test.ts`), as a path from the project root, sorted. */
export function testFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** The tiers whose pattern a file's name matches: exactly one for every test file. */
export function tiersOf(file: string): Tier[] {
  const name = file.slice(file.lastIndexOf('/') + 1);
  return (Object.keys(TIERS) as Tier[]).filter((tier) => TIERS[tier].test(name));
}

export function filesOf(tier: Tier, files = testFiles()): string[] {
  return files.filter((file) => tiersOf(file).includes(tier));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tier = process.argv[2];
  if (!tier || !(tier in TIERS)) {
    console.error(`Usage: tsx test/tiers.ts <tier>: one of ${Object.keys(TIERS).join(', ')}`);
    process.exit(2);
  }
  const files = filesOf(tier as Tier);
  if (files.length === 0) {
    console.error(`test/tiers.ts: no test file matches the ${tier} tier's pattern ${TIERS[tier as Tier]}`);
    process.exit(1);
  }
  console.log(files.join('\n'));
}
