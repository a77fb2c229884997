import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { secretsIn, type Leak } from '../../harness/secrets/leak-scan.ts';
import { create, list, type ReadEntry } from 'tar';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';

/** manifest.json of a bundle (schemas/certification-manifest.schema.json). */
export interface Manifest {
  harness: { name: string; version: string };
  createdAt: string;
  target: string;
  profile: { name: string; behaviour: Record<string, unknown> };
  configuration: Record<string, unknown>;
  spec: { path: string; sha256: string } | null;
  files: { path: string; sha256: string; bytes: number }[];
}

export const MANIFEST_FILE = 'manifest.json';

/** A file to put in the bundle: where it is on disk, and its path inside the bundle. */
export interface BundleEntry {
  path: string;
  source: string;
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Writes a gzipped tar of the entries with a manifest of their SHA-256 hashes. The files are first copied
 * into a folder of their own, so the archive holds exactly what was hashed even if a source changes later.
 */
export async function writeBundle(file: string, entries: readonly BundleEntry[], about: Omit<Manifest, 'files'>): Promise<Manifest> {
  const stage = mkdtempSync(join(tmpdir(), 'momo-bundle-'));
  try {
    const files = entries.map(({ path, source }) => {
      const target = join(stage, path);
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(source, target);
      const data = readFileSync(target);
      return { path, sha256: sha256(data), bytes: data.length };
    });
    const manifest: Manifest = { ...about, files };
    writeFileSync(join(stage, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    mkdirSync(dirname(file), { recursive: true });
    // portable: no owner, group or device numbers of this machine in the archive.
    await create({ gzip: true, file, cwd: stage, portable: true }, [MANIFEST_FILE, ...files.map((f) => f.path)]);
    return manifest;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The bundle cannot be read as one: not a gzipped tar, or no valid manifest. */
export class UnreadableBundleError extends Error {
  constructor(file: string, why: string) {
    super(`Cannot read ${file} as a certification bundle: ${why}`);
    this.name = 'UnreadableBundleError';
  }
}

/** Every regular file of a gzipped tar, by its path, read into memory. */
export async function readBundle(file: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  try {
    await list({
      file,
      // A damaged archive is an error, not a warning: a bundle is either read whole or not at all.
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        if (entry.type !== 'File') return;
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => chunks.push(chunk));
        entry.on('end', () => files.set(entry.path, Buffer.concat(chunks)));
      },
    });
  } catch (error) {
    throw new UnreadableBundleError(file, `it is not a gzipped tar archive (${(error as Error).message})`);
  }
  return files;
}

export type BundleCheck = { intact: true; manifest: Manifest } | { intact: false; manifest: Manifest; problems: string[] };

/**
 * Checks a bundle against its manifest: every file listed is there with its SHA-256, no file is there that
 * the manifest does not list, and the spec's hash is the hash of the spec copy. Throws UnreadableBundleError
 * when the archive or its manifest cannot be read.
 */
export async function verifyBundle(file: string): Promise<BundleCheck> {
  const files = await readBundle(file);
  const manifestData = files.get(MANIFEST_FILE);
  if (manifestData === undefined) throw new UnreadableBundleError(file, `it has no ${MANIFEST_FILE}`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestData.toString('utf8')) as Manifest;
  } catch (error) {
    throw new UnreadableBundleError(file, `${MANIFEST_FILE} is not JSON (${(error as Error).message})`);
  }
  const validate = validatorFor('certification-manifest');
  if (!validate(manifest)) throw new UnreadableBundleError(file, `${MANIFEST_FILE} is not a bundle manifest:\n  ${describeErrors(validate.errors).join('\n  ')}`);

  const problems: string[] = [];
  const listed = new Map(manifest.files.map((f) => [f.path, f]));
  for (const entry of manifest.files) {
    const data = files.get(entry.path);
    if (data === undefined) problems.push(`${entry.path}: listed in the manifest but missing from the bundle (removed)`);
    else if (sha256(data) !== entry.sha256) problems.push(`${entry.path}: its SHA-256 is not the manifest's (altered)`);
  }
  for (const path of files.keys()) {
    if (path !== MANIFEST_FILE && !listed.has(path)) problems.push(`${path}: in the bundle but not in the manifest (added)`);
  }
  if (manifest.spec && listed.get(manifest.spec.path)?.sha256 !== manifest.spec.sha256) {
    problems.push(`${manifest.spec.path}: the spec's SHA-256 in the manifest is not the one of the spec copy it lists (altered)`);
  }
  return problems.length === 0 ? { intact: true, manifest } : { intact: false, manifest, problems };
}

/** The leak scan of harness/secrets over the files of a bundle, each named <bundle>:<path>. */
export async function scanBundleForSecrets(bundle: string, secrets: readonly string[]): Promise<Leak[]> {
  const leaks: Leak[] = [];
  for (const [path, data] of await readBundle(bundle)) leaks.push(...secretsIn(`${basename(bundle)}:${path}`, data.toString('utf8'), secrets));
  return leaks;
}
