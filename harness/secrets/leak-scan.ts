import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { SecretFinder } from '../../core/secrets/encodings.ts';

/** A secret found in a report: where, and what kind; never the secret itself. */
export interface Leak {
  file: string;
  kind: string;
}

// Credentials recognisable by their shape, whoever issued them.
const SHAPES: { kind: string; pattern: RegExp }[] = [
  { kind: 'a JWT (access or consent token)', pattern: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { kind: 'a Basic credential', pattern: /Basic\s+(?!\[REDACTED\])[A-Za-z0-9+/]{16,}={0,2}/ },
  { kind: 'an apiKey value', pattern: /\\?"apiKey\\?"\s*:\s*\\?"(?!\[REDACTED\])[^"\\]{8,}/ },
  { kind: 'a refresh_token value', pattern: /\\?"refresh_token\\?"\s*:\s*\\?"(?!\[REDACTED\])[^"\\]{8,}/ },
];

// A file is read, and searched, in pieces so that no size of report is too large to scan; each piece is
// searched with the end of the one before, more than any encoded secret (wrapped lines and all) can span.
const PIECE_BYTES = 8 * 1024 * 1024;
const OVERLAP_CHARS = 64 * 1024;

/** Searches for secrets the run was configured with (in any encoding) and for credentials by their shape. */
export class LeakFinder {
  private readonly finder: SecretFinder;
  // Secrets are named by their place in the list given, as the configuration gives them.
  private readonly numbers: number[];

  constructor(secrets: readonly string[]) {
    this.finder = new SecretFinder(secrets.filter((s) => s.length >= 6));
    this.numbers = secrets.flatMap((s, i) => (s.length >= 6 ? [i + 1] : []));
  }

  /** A search through one text that arrives in pieces; `where` names it in what is found. */
  start(where: string): LeakSearch {
    return new LeakSearch(where, this.finder, this.numbers);
  }
}

/** One text searched piece by piece, as it arrives in chunks of any size. */
export class LeakSearch {
  private pending: string[] = [];
  private pendingChars = 0;
  private tail = '';
  private readonly encodings = new Map<number, Set<string>>();
  private readonly shapes = new Set<string>();

  constructor(
    private readonly where: string,
    private readonly finder: SecretFinder,
    private readonly numbers: readonly number[],
  ) {}

  push(chunk: string): void {
    this.pending.push(chunk);
    this.pendingChars += chunk.length;
    if (this.pendingChars >= PIECE_BYTES) this.searchPending();
  }

  /** What the whole text holds; call once it has all arrived. */
  leaks(): Leak[] {
    this.searchPending();
    const configured = [...this.encodings]
      .sort(([a], [b]) => a - b)
      .map(([secret, how]) => ({ file: this.where, kind: `configured secret #${this.numbers[secret]} (${[...how].join('; ')})` }));
    return [...configured, ...SHAPES.filter(({ kind }) => this.shapes.has(kind)).map(({ kind }) => ({ file: this.where, kind }))];
  }

  private searchPending(): void {
    if (this.pendingChars === 0) return;
    const text = this.tail + this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    for (const { secret, encoding } of this.finder.find(text)) {
      const seen = this.encodings.get(secret) ?? new Set();
      seen.add(encoding);
      this.encodings.set(secret, seen);
    }
    for (const { kind, pattern } of SHAPES) if (pattern.test(text)) this.shapes.add(kind);
    this.tail = text.slice(-OVERLAP_CHARS);
  }
}

/**
 * Reads every file under a reports folder for the secrets the run was configured with (subscription keys,
 * API keys), in any encoding, and for credentials by their shape. A run whose reports hold one must not be
 * shared: the runner fails it.
 */
export function scanForSecrets(
  dir: string,
  secrets: readonly string[],
  alreadySearched: ReadonlyMap<string, readonly Leak[]> = new Map(),
): Leak[] {
  const finder = new LeakFinder(secrets);
  const piece = Buffer.allocUnsafe(PIECE_BYTES);
  return filesUnder(dir).flatMap((file) => {
    const where = relative(dir, file);
    // Searched already (the same bytes, in the bundle): what was found there is named here too, by this file's path.
    const found = alreadySearched.size > 0 ? alreadySearched.get(contentDigest(file, piece)) : undefined;
    return found ? found.map(({ kind }) => ({ file: where, kind })) : scanFile(file, finder.start(where), piece);
  });
}

/**
 * The SHA-256 of a text, in hex: what `scanForSecrets` is told was searched already, with what was found in it (a file
 * of the same bytes, inside the evidence bundle), so that a run's reports are each read once, however many places they
 * are shared from.
 */
export function searchedDigest(): { update(chunk: Buffer): void; digest(): string } {
  const hash = createHash('sha256');
  return { update: (chunk) => hash.update(chunk), digest: () => hash.digest('hex') };
}

function contentDigest(file: string, piece: Buffer): string {
  const digest = searchedDigest();
  eachPiece(file, piece, (chunk) => digest.update(chunk));
  return digest.digest();
}

function scanFile(file: string, search: LeakSearch, piece: Buffer): Leak[] {
  const decoder = new StringDecoder('utf8');
  eachPiece(file, piece, (chunk) => search.push(decoder.write(chunk)));
  search.push(decoder.end());
  return search.leaks();
}

function eachPiece(file: string, piece: Buffer, take: (chunk: Buffer) => void): void {
  const fd = openSync(file, 'r');
  try {
    for (let read = readSync(fd, piece, 0, PIECE_BYTES, null); read > 0; read = readSync(fd, piece, 0, PIECE_BYTES, null)) {
      take(piece.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
}

/** The secrets in one text, which `where` names in what is found. */
export function secretsIn(where: string, text: string, secrets: readonly string[]): Leak[] {
  const search = new LeakFinder(secrets).start(where);
  search.push(text);
  return search.leaks();
}

/** Every regular file under a folder, at any depth. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
