import { createHash } from 'node:crypto';
import { createReadStream, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { LeakFinder, searchedDigest, type Leak } from '../../harness/secrets/leak-scan.ts';
import { create, Parser, type ReadEntry } from 'tar';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { ATTESTATION_FILE, type Subject } from './signing.ts';

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
 * `attest`, when given, turns the bundle's files (manifest.json first) with their SHA-256 into the text of a
 * signed attestation over them (signing.ts), which goes in beside the manifest as ATTESTATION_FILE.
 */
export async function writeBundle(
  file: string,
  entries: readonly BundleEntry[],
  about: Omit<Manifest, 'files'>,
  attest?: (subjects: Subject[]) => string,
): Promise<Manifest> {
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
    const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
    writeFileSync(join(stage, MANIFEST_FILE), manifestText);
    const signed = attest !== undefined;
    if (attest) {
      const subjects = [
        { name: MANIFEST_FILE, digest: { sha256: sha256(manifestText) } },
        ...files.map((f) => ({ name: f.path, digest: { sha256: f.sha256 } })),
      ];
      writeFileSync(join(stage, ATTESTATION_FILE), attest(subjects));
    }
    mkdirSync(dirname(file), { recursive: true });
    // portable: no owner, group or device numbers of this machine in the archive.
    await create({ gzip: true, file, cwd: stage, portable: true }, [
      MANIFEST_FILE,
      ...(signed ? [ATTESTATION_FILE] : []),
      ...files.map((f) => f.path),
    ]);
    return manifest;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The bundle cannot be read as one: not a gzipped tar, no valid manifest, or beyond what verify reads. */
export class UnreadableBundleError extends Error {
  constructor(file: string, why: string) {
    super(`Cannot read ${file} as a certification bundle: ${why}`);
    this.name = 'UnreadableBundleError';
  }
}

/** Reading stopped at a bound (BundleLimits): a decompression bomb, or a bundle larger than allowed. */
export class BundleLimitError extends UnreadableBundleError {
  constructor(
    file: string,
    why: string,
    readonly limit: 'size' | 'ratio' | 'entries',
  ) {
    super(file, `${why}; reading stopped there`);
    this.name = 'BundleLimitError';
  }
}

/** How much reading a bundle may take. A bundle the harness writes is a few MB and compresses about 10 to 1. */
export interface BundleLimits {
  /** Bytes of tar that the gzip may decompress to, in all; an entry declaring more is refused at its header. */
  maxBytes: number;
  /** Bytes decompressed per compressed byte read (beyond a first MiB, which tar's padding alone can fill). */
  maxRatio: number;
}

const MiB = 1024 * 1024;
export const BUNDLE_LIMITS: Readonly<BundleLimits> = { maxBytes: 512 * MiB, maxRatio: 1000 };
const RATIO_FLOOR_BYTES = MiB;
const MAX_ENTRIES = 10_000;
const MAX_MANIFEST_BYTES = 16 * MiB;
// readBundle keeps every file in memory; verify and the leak scan stream them instead.
export const MAX_BYTES_IN_MEMORY = 64 * MiB;
const BLOCK = 512;
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

// What tar calls each kind of entry a bundle must not hold. A bundle holds only regular files (and may hold
// folders); anything else in a report's place is tampering, and would be unpacked as something else.
const NOT_A_FILE: Readonly<Record<string, string>> = {
  SymbolicLink: 'a symbolic link',
  Link: 'a hard link',
  ContiguousFile: 'a contiguous file',
  CharacterDevice: 'a character device',
  BlockDevice: 'a block device',
  FIFO: 'a FIFO (named pipe)',
  GNUDumpDir: 'a GNU dump directory',
};

/** What becomes of the bytes of one regular file of a bundle. */
interface FileSink {
  data(chunk: Buffer): void;
  end(): void;
}

/**
 * Reads a bundle entry by entry, without unpacking it, within the limits: every regular file's bytes go to the
 * sink `visit` gives for its path (normalised: "./a" is "a"), nothing is held. Returns what is wrong with the
 * entries themselves, one line each (the bundle was tampered with): an entry that is not a regular file or a
 * folder, a path outside the bundle, a path twice, data after the end of the archive. Throws
 * UnreadableBundleError when it is not a tar (gzipped or not), and BundleLimitError as soon as a bound is crossed.
 */
async function readEntries(file: string, limits: BundleLimits, visit: (path: string) => FileSink | undefined): Promise<string[]> {
  const reader = new EntryReader(file, limits, visit);
  try {
    const gzipped = await isGzip(file);
    // Small reads keep the ratio honest: what one read decompresses to is checked against the reads before it.
    const input = createReadStream(file, { highWaterMark: 16 * 1024 });
    const counted = reader.counted.bind(reader);
    const consume = reader.consume.bind(reader);
    if (gzipped) await pipeline(input, counted, createGunzip({ chunkSize: 64 * 1024 }), consume);
    else await pipeline(input, counted, consume);
    reader.parser.end();
  } catch (error) {
    if (error instanceof TrailingData)
      reader.problems.push(
        'data after the end of the archive: another archive appended to it, which some tar programs unpack over the reports',
      );
    else if (error instanceof UnreadableBundleError) throw error;
    else throw new UnreadableBundleError(file, `it is not a gzipped tar archive (${(error as Error).message})`);
  }
  if (reader.damage) throw new UnreadableBundleError(file, `it is not a gzipped tar archive (${reader.damage.message})`);
  return reader.problems;
}

/** The state of reading one bundle: its tar parser fed block by block, the entries seen, and what is wrong. */
class EntryReader {
  readonly problems: string[] = [];
  readonly parser = new Parser({ strict: true, zstd: false, brotli: false });
  damage: Error | undefined;
  private readonly paths = new Map<string, string>();
  private readonly pathsInAnyCase = new Map<string, string>();
  private entries = 0;
  private stop: Error | undefined;
  private ended = false;
  private compressed = 0;
  private decompressed = 0;

  constructor(
    private readonly file: string,
    private readonly limits: BundleLimits,
    private readonly visit: (path: string) => FileSink | undefined,
  ) {
    this.parser.on('error', (error: Error) => (this.damage ??= error));
    this.parser.on('eof', () => (this.ended = true));
    this.parser.on('entry', (entry: ReadEntry) => {
      const sink = this.sinkFor(entry);
      if (!sink) {
        entry.resume();
        return;
      }
      entry.on('data', (chunk: Buffer) => sink.data(chunk));
      entry.on('end', () => sink.end());
    });
    // tar skips these (and has already): an unknown type, or an extended header too large for it.
    this.parser.on('ignoredEntry', (entry: ReadEntry) => {
      if (this.countEntry())
        this.problems.push(
          `${shown(entry.path)}: ${entry.meta ? 'an extended header larger than tar reads' : 'an entry of a type tar does not know'}, which other tar programs may unpack as a file`,
        );
    });
  }

  /** Counts one more entry; false, with the run stopped, past the most a bundle has. */
  private countEntry(): boolean {
    if (++this.entries <= MAX_ENTRIES) return true;
    this.stop ??= new BundleLimitError(this.file, `it has more than ${MAX_ENTRIES} entries, where a bundle has one per report`, 'entries');
    return false;
  }

  /** Where the bytes of an entry go, if anywhere; records what is wrong with it, or stops at a bound. */
  private sinkFor(entry: ReadEntry): FileSink | undefined {
    if (this.stop || !this.countEntry()) return undefined;
    const refusal = whyRefused(entry, this.paths, this.pathsInAnyCase);
    if (refusal) {
      this.problems.push(`${shown(entry.path)}: ${refusal}`);
      return undefined;
    }
    if (entry.type === 'Directory') return undefined;
    if (entry.size > this.limits.maxBytes) {
      this.stop = new BundleLimitError(
        this.file,
        `its entry ${shown(entry.path)} declares ${bytes(entry.size)}, more than the ${bytes(this.limits.maxBytes)} a bundle may hold`,
        'size',
      );
      return undefined;
    }
    return this.visit(normalised(entry.path));
  }

  /** The file's bytes as read, counted for the ratio of what they decompress to. */
  async *counted(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      this.compressed += chunk.length;
      yield chunk;
    }
  }

  /** The decompressed bytes, within the bounds of size and ratio, fed to the parser block by block. */
  async consume(source: AsyncIterable<Buffer>): Promise<void> {
    const { file, limits } = this;
    for await (const chunk of source) {
      if (this.decompressed === 0 && chunk.subarray(0, 2).equals(GZIP_MAGIC))
        throw new UnreadableBundleError(file, 'what it decompresses to is compressed again, which a bundle never is');
      this.decompressed += chunk.length;
      if (this.decompressed > limits.maxBytes)
        throw new BundleLimitError(file, `it decompresses to more than ${bytes(limits.maxBytes)}, the most a bundle may hold`, 'size');
      if (this.decompressed > limits.maxRatio * this.compressed + RATIO_FLOOR_BYTES) {
        throw new BundleLimitError(
          file,
          `it decompresses to more than ${limits.maxRatio} times its compressed size (${bytes(this.decompressed)} from ${bytes(this.compressed)}): a decompression bomb, not a bundle the harness writes`,
          'ratio',
        );
      }
      this.feed(chunk);
    }
  }

  /** Block by block, so that the end of the archive is known to the byte: what follows it must be zeros. */
  private feed(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      if (this.ended) {
        if (!allZeros(chunk.subarray(at))) throw new TrailingData();
        break;
      }
      const next = Math.min(chunk.length, at + BLOCK - ((this.decompressed - chunk.length + at) % BLOCK));
      this.parser.write(chunk.subarray(at, next));
      at = next;
      if (this.damage) throw this.damage;
      if (this.stop) throw this.stop;
    }
  }
}

/** Bytes other than zeros after the end of the archive: reading stops there, and the bundle is tampered with. */
class TrailingData extends Error {}

const ZEROS = Buffer.alloc(64 * 1024);

function allZeros(data: Buffer): boolean {
  for (let at = 0; at < data.length; at += ZEROS.length) {
    const part = data.subarray(at, at + ZEROS.length);
    if (!part.equals(ZEROS.subarray(0, part.length))) return false;
  }
  return true;
}

async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const start = Buffer.alloc(2);
    const { bytesRead } = await handle.read(start, 0, 2, 0);
    return bytesRead === 2 && start.equals(GZIP_MAGIC);
  } finally {
    await handle.close();
  }
}

/** Why an entry has no place in a bundle, or nothing; remembers its path to catch the same path again. */
function whyRefused(entry: ReadEntry, paths: Map<string, string>, pathsInAnyCase: Map<string, string>): string | undefined {
  if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'Directory') {
    const what = NOT_A_FILE[entry.type] ?? `an entry of type ${shown(entry.type)}`;
    const target = entry.linkpath ? ` to ${shown(entry.linkpath)}` : '';
    return `${what}${target}, not a regular file; a bundle holds only files, and unpacking this would put it in a report's place`;
  }
  const outside = whyOutside(entry.path);
  if (outside) return `${outside}; every path of a bundle is relative and inside it`;
  const path = normalised(entry.path);
  const earlier = paths.get(path);
  if (earlier !== undefined)
    return `the same path as the earlier entry ${shown(earlier)}; a bundle holds each file once (unpacking keeps the later one)`;
  const inAnyCase = path.normalize('NFC').toLowerCase();
  const sameButCase = pathsInAnyCase.get(inAnyCase);
  if (sameButCase !== undefined)
    return `the same path as the earlier entry ${shown(sameButCase)} but for letter case; on a case-insensitive file system one replaces the other`;
  paths.set(path, entry.path);
  pathsInAnyCase.set(inAnyCase, entry.path);
  return undefined;
}

function whyOutside(path: string): string | undefined {
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'control characters in its path';
  if (path.includes('\\')) return 'a backslash in its path, which Windows reads as a folder separator';
  if (/^[A-Za-z]:/.test(path)) return 'a Windows drive letter: a path outside the bundle';
  if (path.startsWith('/')) return 'an absolute path: outside the bundle';
  if (path.split('/').includes('..')) return 'a ".." in its path, which leads outside the bundle';
  if (normalised(path) === '') return 'no name';
  return undefined;
}

/** A path as unpacking reads it: "./a//b/" is "a/b". */
function normalised(path: string): string {
  return path
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/** An archive's own text, safe to print: control and direction characters escaped (then quoted), not too long. */
function shown(text: string): string {
  const cut = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const escaped = JSON.stringify(cut)
    .slice(1, -1)
    .replace(/[\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return escaped === cut ? cut : `"${escaped}"`;
}

function bytes(count: number): string {
  if (count >= 1024 * MiB) return `${(count / (1024 * MiB)).toFixed(1)} GiB`;
  if (count >= MiB) return `${Math.round(count / MiB)} MiB`;
  if (count >= 1024) return `${Math.round(count / 1024)} KiB`;
  return `${count} bytes`;
}

/** Every regular file of a bundle, by its path, read into memory (at most 64 MiB); refuses a tampered bundle. */
export async function readBundle(file: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const problems = await readEntries(file, { ...BUNDLE_LIMITS, maxBytes: MAX_BYTES_IN_MEMORY }, (path) => {
    const chunks: Buffer[] = [];
    return { data: (chunk) => chunks.push(chunk), end: () => files.set(path, Buffer.concat(chunks)) };
  });
  if (problems.length > 0) throw new UnreadableBundleError(file, `it holds what a bundle must not:\n  ${problems.join('\n  ')}`);
  return files;
}

/** What a check read besides its verdict: every regular file's SHA-256 by path, and the signed attestation if any. */
interface BundleContents {
  hashes: Map<string, string>;
  attestation: Buffer | undefined;
}

export type BundleCheck = BundleContents &
  ({ intact: true; manifest: Manifest } | { intact: false; manifest: Manifest | undefined; problems: string[] });

/**
 * Checks a bundle against its manifest: every file listed is there with its SHA-256, no file is there that
 * the manifest does not list, and the spec's hash is the hash of the spec copy; and that the archive holds
 * nothing but regular files, each once, inside it. Reads within the limits, holding only the manifest in
 * memory. Throws UnreadableBundleError when the archive or its manifest cannot be read, BundleLimitError when
 * reading crosses a bound.
 */
export async function verifyBundle(file: string, limits: BundleLimits = BUNDLE_LIMITS): Promise<BundleCheck> {
  const hashes = new Map<string, string>();
  // The manifest and the attestation are read whole (each up to MAX_MANIFEST_BYTES); every file is hashed.
  const heldFiles = new Map<string, { chunks: Buffer[]; bytes: number; data?: Buffer }>([
    [MANIFEST_FILE, { chunks: [], bytes: 0 }],
    [ATTESTATION_FILE, { chunks: [], bytes: 0 }],
  ]);
  const entryProblems = await readEntries(file, limits, (path) => {
    const hash = createHash('sha256');
    const held = heldFiles.get(path);
    return {
      data: (chunk) => {
        hash.update(chunk);
        if (!held) return;
        held.bytes += chunk.length;
        if (held.bytes <= MAX_MANIFEST_BYTES) held.chunks.push(chunk);
      },
      end: () => {
        hashes.set(path, hash.digest('hex'));
        if (held) held.data = Buffer.concat(held.chunks);
      },
    };
  });
  const { data: manifestData, bytes: manifestBytes } = heldFiles.get(MANIFEST_FILE)!;
  const attestationHeld = heldFiles.get(ATTESTATION_FILE)!;
  if (attestationHeld.bytes > MAX_MANIFEST_BYTES)
    entryProblems.push(`${ATTESTATION_FILE}: ${bytes(attestationHeld.bytes)}, where an attestation is a few KiB`);
  const contents: BundleContents = { hashes, attestation: attestationHeld.bytes > MAX_MANIFEST_BYTES ? undefined : attestationHeld.data };

  let manifest: Manifest;
  try {
    manifest = manifestOf(file, manifestData, manifestBytes);
  } catch (error) {
    // A bundle whose entries were tampered with is tampered, whatever became of its manifest.
    if (entryProblems.length > 0 && error instanceof UnreadableBundleError)
      return { ...contents, intact: false, manifest: undefined, problems: entryProblems };
    throw error;
  }

  const problems = [...entryProblems];
  const listed = new Map(manifest.files.map((f) => [normalised(f.path), f]));
  for (const entry of manifest.files) {
    const hash = hashes.get(normalised(entry.path));
    if (hash === undefined) problems.push(`${entry.path}: listed in the manifest but missing from the bundle (removed)`);
    else if (hash !== entry.sha256) problems.push(`${entry.path}: its SHA-256 is not the manifest's (altered)`);
  }
  for (const path of hashes.keys()) {
    if (path !== MANIFEST_FILE && path !== ATTESTATION_FILE && !listed.has(path))
      problems.push(`${shown(path)}: in the bundle but not in the manifest (added)`);
  }
  if (manifest.spec && listed.get(normalised(manifest.spec.path))?.sha256 !== manifest.spec.sha256) {
    problems.push(`${manifest.spec.path}: the spec's SHA-256 in the manifest is not the one of the spec copy it lists (altered)`);
  }
  return problems.length === 0 ? { ...contents, intact: true, manifest } : { ...contents, intact: false, manifest, problems };
}

function manifestOf(file: string, data: Buffer | undefined, size: number): Manifest {
  if (data === undefined) throw new UnreadableBundleError(file, `it has no ${MANIFEST_FILE}`);
  if (size > MAX_MANIFEST_BYTES)
    throw new UnreadableBundleError(file, `its ${MANIFEST_FILE} is ${bytes(size)}, where a manifest is a few KiB`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(data.toString('utf8')) as Manifest;
  } catch (error) {
    throw new UnreadableBundleError(file, `${MANIFEST_FILE} is not JSON (${(error as Error).message})`);
  }
  const validate = validatorFor('certification-manifest');
  if (!validate(manifest))
    throw new UnreadableBundleError(file, `${MANIFEST_FILE} is not a bundle manifest:\n  ${describeErrors(validate.errors).join('\n  ')}`);
  return manifest;
}

/**
 * The leak scan of harness/secrets over the files of a bundle, each named <bundle>:<path>, read as a stream; the
 * digest of each file read whole goes into `searched`, with what was found in it.
 */
export async function scanBundleForSecrets(bundle: string, secrets: readonly string[], searched?: Map<string, Leak[]>): Promise<Leak[]> {
  const finder = new LeakFinder(secrets);
  const leaks: Leak[] = [];
  await readEntries(bundle, BUNDLE_LIMITS, (path) => {
    const search = finder.start(`${basename(bundle)}:${path}`);
    const decoder = new StringDecoder('utf8');
    const digest = searchedDigest();
    return {
      data: (chunk) => {
        digest.update(chunk);
        search.push(decoder.write(chunk));
      },
      end: () => {
        search.push(decoder.end());
        const found = search.leaks();
        leaks.push(...found);
        searched?.set(digest.digest(), found);
      },
    };
  });
  return leaks;
}
