import {
  closeSync,
  close as closeFile,
  fdatasync,
  fsync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The files of a sandbox data directory (--data): a marker that says whose directory it is and in which format,
 * a lock held while a sandbox uses it, and generations of state. Generation g is a snapshot of the whole state
 * as it stood when journal g began, and journal g the changes since, one JSON line each; the state is the newest
 * complete snapshot and every journal from its generation on. Appends are made durable in groups (group commit):
 * whoever waits for a change is told once the write that holds it has been fsynced. When a journal outgrows the
 * snapshot, the next generation begins: a new journal at once, then the snapshot of that moment written beside,
 * fsynced and renamed into place; the older generation is deleted only after. Nothing here knows what a record
 * means (sandbox/domain/persistence.ts does); it keeps lines, in order, through crashes.
 */

export const DATA_FORMAT = 'momo-harness sandbox data';
/** The format this code writes and reads; a directory of a later one is refused, never rewritten. */
export const DATA_VERSION = 1;
export const MARKER_FILE = 'momo-sandbox.json';
export const LOCK_FILE = 'momo-sandbox.lock';
const SNAPSHOT_FORMAT = 'momo-harness sandbox snapshot';
const JOURNAL_FORMAT = 'momo-harness sandbox journal';
const GENERATION_FILE = /^(snapshot|journal)-(\d{6,})\.jsonl$/;
/** What a sandbox may leave in a directory before its marker is in place: a lock, and the files made aside. */
const LEFT_BEFORE_MARKER = /^momo-sandbox\.(lock(\.\d+\.[0-9a-f]+)?|json\.tmp)$/;
/** A journal starts a new generation once it is larger than this and than the last snapshot. */
export const DEFAULT_COMPACT_AFTER_BYTES = 16 * 1024 * 1024;
/** How much of a file is read, or of a snapshot made into bytes, at a time. */
const CHUNK_BYTES = 1024 * 1024;
/** No record the sandbox writes comes near this: a longer line is damage, not a record to read into memory. */
const LONGEST_LINE_BYTES = 16 * 1024 * 1024;

/** A data directory that cannot be used as it is: the message says what is wrong and what to do; the directory is left as it was. */
export class DataDirectoryError extends Error {
  override readonly name = 'DataDirectoryError';
}

const fileName = (kind: 'snapshot' | 'journal', generation: number) => `${kind}-${String(generation).padStart(6, '0')}.jsonl`;

/** One line read back from a snapshot or a journal, parsed, with where it was for a message. */
export interface StoredLine {
  value: unknown;
  where: string;
}

interface Marker {
  format: string;
  version: number;
  /** Signs the sandbox's tokens unless a secret is configured, so that tokens outlive a restart. */
  tokenSecret: string;
}

interface Batch {
  fd: number;
  text: string;
  waiters: ((error?: Error) => void)[];
  /** The batch is the first into a new file, whose name must be made durable with it. */
  syncDirectory: boolean;
}

export interface DataDirectoryOptions {
  /** A journal starts a new generation past this size (and the last snapshot's); tests make it small. */
  compactAfterBytes?: number;
}

export class DataDirectory {
  readonly path: string;
  readonly tokenSecret: string;
  private readonly compactAfterBytes: number;
  private generation = 0;
  private fd = -1;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** The batch appends go into until the writer takes it. */
  private open: Batch | undefined;
  /** The newest batch not yet durable: what a waiter for everything appended so far waits for. */
  private newest: Batch | undefined;
  private readonly queue: Batch[] = [];
  private pumping = false;
  private nextBatchSyncsDirectory = false;
  private compacting: Promise<void> | undefined;
  private snapshotLines: (() => Iterable<string>) | undefined;
  private failure: Error | undefined;
  private failed: (error: Error) => void = () => undefined;
  private closed = false;

  /** A directory openDataDirectory has checked and locked. */
  constructor(path: string, tokenSecret: string, options: DataDirectoryOptions) {
    this.path = path;
    this.tokenSecret = tokenSecret;
    this.compactAfterBytes = options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER_BYTES;
  }

  /**
   * The lines of the state: the newest complete snapshot's, then every journal's from its generation on, in
   * order. A journal's last line cut short by a crash is dropped; any other line that cannot be read is an error.
   */
  *recover(): Generator<StoredLine> {
    const { snapshots, journals } = this.generations();
    const base = snapshots.at(-1) ?? 0;
    if (base > 0) yield* this.readSnapshot(base);
    // Journal g is made before snapshot g is renamed into place, so from the snapshot on none may be missing.
    const replayed = journals.filter((g) => g >= base);
    if (base > 0 && replayed[0] !== base) throw this.corrupt(fileName('journal', base), 'the file is missing');
    let expected = replayed[0] ?? 0;
    for (const [i, generation] of replayed.entries()) {
      if (generation !== expected) throw this.corrupt(fileName('journal', expected), 'the file is missing');
      yield* this.readJournal(generation, replayed.slice(i + 1));
      expected += 1;
    }
    this.generation = Math.max(0, ...snapshots, ...journals);
  }

  /**
   * Begins the next generation from the state recovered, before the sandbox answers anything: its snapshot, an
   * empty journal, and the older files deleted. From then on appends go to the new journal.
   */
  begin(snapshotLines: () => Iterable<string>, failed: (error: Error) => void): void {
    this.snapshotLines = snapshotLines;
    this.failed = failed;
    const generation = this.generation + 1;
    this.openJournal(generation);
    const chunks = snapshotChunks(snapshotLines(), generation);
    const temporary = join(this.path, `${fileName('snapshot', generation)}.tmp`);
    const fd = openSync(temporary, 'w', 0o600);
    try {
      for (const chunk of chunks) for (let written = 0; written < chunk.length; ) written += writeSync(fd, chunk, written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, join(this.path, fileName('snapshot', generation)));
    syncDirectory(this.path);
    this.nextBatchSyncsDirectory = false;
    this.snapshotBytes = byteLengthOf(chunks);
    this.deleteOlderThan(generation);
  }

  /** Appends one line (without its newline) to the journal; it is durable once a waiter says so. */
  append(line: string): void {
    if (this.failure || this.closed) return;
    (this.open ?? this.openBatch()).text += `${line}\n`;
  }

  /**
   * Calls `done` once everything appended so far is durable: at once when nothing waits to be written, so an
   * answer that changed nothing is not held.
   */
  whenDurable(done: (error?: Error) => void): void {
    if (this.failure) done(this.failure);
    else if (this.newest) this.newest.waiters.push(done);
    else done();
  }

  /** Calls `done` once what is appended up to the next write, this turn of the event loop included, is durable. */
  afterCommit(done: (error?: Error) => void): void {
    if (this.failure) done(this.failure);
    else (this.open ?? this.openBatch()).waiters.push(done);
  }

  /** Waits for every append to be durable and any generation under way to be complete, then lets the directory go. */
  async close(): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((done) => this.whenDurable(() => done()));
    await this.compacting;
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    unlock(this.path);
  }

  /** Lets the directory go without writing anything more: a start that failed before the sandbox answered. */
  release(): void {
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    unlock(this.path);
  }

  private openBatch(): Batch {
    const batch: Batch = { fd: this.fd, text: '', waiters: [], syncDirectory: this.nextBatchSyncsDirectory };
    this.nextBatchSyncsDirectory = false;
    this.open = batch;
    this.newest = batch;
    this.queue.push(batch);
    // The write waits for the end of this turn of the event loop, so every change made in it goes in one write.
    if (!this.pumping) {
      this.pumping = true;
      setImmediate(() => this.pump());
    }
    return batch;
  }

  /** Writes and fsyncs the oldest batch; the next fills meanwhile, and goes as soon as this one is durable. */
  private pump(): void {
    const batch = this.queue.shift();
    if (!batch) {
      this.pumping = false;
      return;
    }
    if (batch === this.open) this.open = undefined;
    const finish = (error?: Error | null) => {
      if (error) return this.fail(error);
      if (batch.fd === this.fd) this.journalBytes += bytes.length;
      if (this.newest === batch) this.newest = undefined;
      for (const waiter of batch.waiters) waiter();
      this.compactWhenGrown();
      this.pump();
    };
    const bytes = Buffer.from(batch.text);
    if (bytes.length === 0) {
      finish();
      return;
    }
    writeFully(batch.fd, bytes, (error) => {
      if (error) return finish(error);
      fdatasync(batch.fd, (synced) => {
        if (synced || !batch.syncDirectory) return finish(synced);
        syncDirectoryAsync(this.path, finish);
      });
    });
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = new DataDirectoryError(`--data ${this.path}: cannot write the journal (${error.message})`);
    for (const batch of this.queue.splice(0)) for (const waiter of batch.waiters) waiter(this.failure);
    this.open = undefined;
    this.newest = undefined;
    this.failed(this.failure);
  }

  private compactWhenGrown(): void {
    if (this.compacting || this.closed || !this.snapshotLines) return;
    if (this.journalBytes <= Math.max(this.compactAfterBytes, this.snapshotBytes)) return;
    this.compacting = this.compact().finally(() => {
      this.compacting = undefined;
    });
  }

  /**
   * The next generation, while the sandbox goes on: in this turn, the new journal opens and the snapshot of this
   * moment is taken, so every change before it is in the old journal and every one after in the new; then the
   * snapshot is written aside and renamed into place, and once the old journal's last writes are durable too,
   * the older generation goes.
   */
  private async compact(): Promise<void> {
    const previousFd = this.fd;
    const generation = this.generation + 1;
    const previousDurable = new Promise<void>((done) => this.whenDurable(() => done()));
    this.open = undefined;
    this.openJournal(generation);
    const chunks = snapshotChunks(this.snapshotLines!(), generation);
    try {
      await writeSnapshot(this.path, generation, chunks);
      await previousDurable;
      closeSync(previousFd);
      this.snapshotBytes = byteLengthOf(chunks);
      this.deleteOlderThan(generation);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  /** Opens journal `generation` with its header, where appends go from now on; its first write makes its name durable. */
  private openJournal(generation: number): void {
    const fd = openSync(join(this.path, fileName('journal', generation)), 'wx', 0o600);
    const header = `${JSON.stringify({ format: JOURNAL_FORMAT, version: DATA_VERSION, generation })}\n`;
    writeSync(fd, header);
    this.fd = fd;
    this.generation = generation;
    this.journalBytes = Buffer.byteLength(header);
    this.nextBatchSyncsDirectory = true;
  }

  private deleteOlderThan(generation: number): void {
    for (const name of readdirSync(this.path)) {
      const match = GENERATION_FILE.exec(name.replace(/\.tmp$/, ''));
      if (match && (Number(match[2]) < generation || (name.endsWith('.tmp') && Number(match[2]) <= generation))) {
        unlinkSync(join(this.path, name));
      }
    }
  }

  private generations(): { snapshots: number[]; journals: number[] } {
    const snapshots: number[] = [];
    const journals: number[] = [];
    for (const name of readdirSync(this.path)) {
      const match = GENERATION_FILE.exec(name);
      if (match) (match[1] === 'snapshot' ? snapshots : journals).push(Number(match[2]));
    }
    const ascending = (a: number, b: number) => a - b;
    return { snapshots: snapshots.sort(ascending), journals: journals.sort(ascending) };
  }

  private *readSnapshot(generation: number): Generator<StoredLine> {
    const name = fileName('snapshot', generation);
    let count = 0;
    let ended = false;
    for (const line of linesOf(join(this.path, name))) {
      const where = `${name} line ${line.number}`;
      if (ended || !line.complete) throw this.corrupt(where, ended ? 'a line after the end of the snapshot' : 'a line cut short');
      const value = parseLine(line.text, () => this.corrupt(where, 'not JSON'));
      if (line.number === 1) {
        this.checkHeader(value, SNAPSHOT_FORMAT, generation, where);
        continue;
      }
      if (isEnd(value)) {
        if (value.records !== count) throw this.corrupt(where, `the snapshot ends after ${count} records, not ${value.records}`);
        ended = true;
        continue;
      }
      count += 1;
      yield { value, where };
    }
    if (!ended) throw this.corrupt(name, 'the snapshot has no end line, so records are missing');
  }

  private *readJournal(generation: number, later: readonly number[]): Generator<StoredLine> {
    const name = fileName('journal', generation);
    for (const line of linesOf(join(this.path, name))) {
      const where = `${name} line ${line.number}`;
      // A crash cuts off at most the write under way: the last line, and only when no later journal holds a
      // change (each write is durable before the next begins, in this file or the next).
      if (!line.complete) {
        if (later.some((g) => this.holdsChanges(g))) throw this.corrupt(where, 'a line cut short before later changes');
        return;
      }
      const value = parseLine(line.text, () => this.corrupt(where, 'not JSON'));
      if (line.number === 1) this.checkHeader(value, JOURNAL_FORMAT, generation, where);
      else yield { value, where };
    }
  }

  private holdsChanges(generation: number): boolean {
    let lines = 0;
    for (const line of linesOf(join(this.path, fileName('journal', generation)))) if (line.complete) lines += 1;
    return lines > 1;
  }

  private checkHeader(value: unknown, format: string, generation: number, where: string): void {
    const header = value as { format?: unknown; version?: unknown; generation?: unknown } | null;
    if (typeof header !== 'object' || header === null || header.format !== format)
      throw this.corrupt(where, `not the header of a ${format.replace('momo-harness sandbox ', '')}`);
    if (typeof header.version === 'number' && header.version > DATA_VERSION) throw newerFormat(this.path, header.version);
    if (header.version !== DATA_VERSION || header.generation !== generation)
      throw this.corrupt(where, `a header of version ${String(header.version)}, generation ${String(header.generation)}`);
  }

  private corrupt(where: string, problem: string): DataDirectoryError {
    return corruptLine(this.path, where, problem);
  }
}

/**
 * Opens a directory for one sandbox: made (with its marker) when it does not exist or is empty, refused when it
 * holds files but no marker, a marker of another format or of a later version, or another sandbox's lock.
 */
export function openDataDirectory(dir: string, options: DataDirectoryOptions = {}): DataDirectory {
  const path = resolve(dir);
  const where = `--data ${dir}`;
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new DataDirectoryError(
      `${where}: cannot make the directory (${(error as Error).message}); give a directory this user can write.`,
    );
  }
  const entries = listDirectory(path, where);
  const existing = entries.includes(MARKER_FILE) ? readMarker(path, where) : undefined;
  if (!existing) {
    const others = entries.filter((name) => !LEFT_BEFORE_MARKER.test(name));
    if (others.length > 0) {
      throw new DataDirectoryError(
        `${where} is not a sandbox data directory: it holds ${others.length === 1 ? 'a file' : `${others.length} files`} (${others.slice(0, 3).join(', ')}) and no ${MARKER_FILE}; give an empty or new directory, or the one a sandbox made.`,
      );
    }
  }
  lock(path, where);
  try {
    const marker = existing ?? createMarker(path);
    return new DataDirectory(path, marker.tokenSecret, options);
  } catch (error) {
    unlock(path);
    throw error;
  }
}

/** A record that cannot be taken as the sandbox wrote it. */
export function corruptLine(path: string, where: string, problem: string): DataDirectoryError {
  return new DataDirectoryError(
    `--data ${path}: ${where} cannot be read (${problem}); the directory was left as it is. Restore it from a copy, or start with another directory.`,
  );
}

function newerFormat(path: string, version: number): DataDirectoryError {
  return new DataDirectoryError(
    `--data ${path} was written in format ${version} of the sandbox's data, by a later momo-harness; this one reads format ${DATA_VERSION}. Use that version, or another directory.`,
  );
}

function isEnd(value: unknown): value is { t: 'end'; records: unknown } {
  return typeof value === 'object' && value !== null && (value as { t?: unknown }).t === 'end';
}

function parseLine(text: string, corrupt: () => Error): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw corrupt();
  }
}

/** A snapshot's bytes: its header, its lines and its end line, in chunks of about a MiB (the whole may be longer than a string may be). */
function snapshotChunks(lines: Iterable<string>, generation: number): Buffer[] {
  const chunks: Buffer[] = [];
  let text = `${JSON.stringify({ format: SNAPSHOT_FORMAT, version: DATA_VERSION, generation })}\n`;
  let records = 0;
  for (const line of lines) {
    text += `${line}\n`;
    records += 1;
    if (text.length >= CHUNK_BYTES) {
      chunks.push(Buffer.from(text));
      text = '';
    }
  }
  chunks.push(Buffer.from(`${text}${JSON.stringify({ t: 'end', records })}\n`));
  return chunks;
}

const byteLengthOf = (chunks: readonly Buffer[]) => chunks.reduce((sum, chunk) => sum + chunk.length, 0);

function listDirectory(path: string, where: string): string[] {
  try {
    return readdirSync(path);
  } catch (error) {
    throw new DataDirectoryError(`${where}: cannot read the directory (${(error as Error).message}).`);
  }
}

function readMarker(path: string, where: string): Marker {
  let marker: Partial<Marker>;
  try {
    marker = JSON.parse(readFileSync(join(path, MARKER_FILE), 'utf8')) as Partial<Marker>;
  } catch (error) {
    throw new DataDirectoryError(
      `${where}: ${MARKER_FILE} is not a sandbox data marker (${(error as Error).message}); the directory was left as it is.`,
    );
  }
  if (typeof marker !== 'object' || marker === null || marker.format !== DATA_FORMAT) {
    throw new DataDirectoryError(
      `${where}: ${MARKER_FILE} is not a sandbox data marker (its format is not "${DATA_FORMAT}"); the directory belongs to something else and was left as it is.`,
    );
  }
  if (typeof marker.version === 'number' && marker.version > DATA_VERSION) throw newerFormat(path, marker.version);
  if (marker.version !== DATA_VERSION || typeof marker.tokenSecret !== 'string' || marker.tokenSecret.length < 32) {
    throw new DataDirectoryError(
      `${where}: ${MARKER_FILE} is damaged (no version ${DATA_VERSION} or no token secret); the directory was left as it is.`,
    );
  }
  return marker as Marker;
}

/** The marker of a new directory, written aside and renamed, so that it is whole or absent. */
function createMarker(path: string): Marker {
  const marker: Marker = { format: DATA_FORMAT, version: DATA_VERSION, tokenSecret: randomBytes(32).toString('base64url') };
  const temporary = join(path, `${MARKER_FILE}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(marker, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, join(path, MARKER_FILE));
  syncDirectory(path);
  return marker;
}

interface LockOwner {
  pid: number;
  host: string;
}

/**
 * Takes the directory for this process: the lock file is made whole aside and linked into place, which fails
 * when one is there. A lock whose process is gone (killed, say) is taken over; one of a live process, of another
 * host or of this process is refused.
 */
function lock(path: string, where: string): void {
  const lockPath = join(path, LOCK_FILE);
  const owner: LockOwner = { pid: process.pid, host: hostname() };
  const mine = join(path, `${LOCK_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  const fd = openSync(mine, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(owner));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    if (linked(mine, lockPath)) return;
    const holder = readLock(lockPath);
    const stale = holder !== undefined && holder.host === owner.host && holder.pid !== process.pid && !isAlive(holder.pid);
    if (stale) unlinkSync(lockPath);
    // Another sandbox that found the same stale lock may have taken the directory meanwhile: then it is in use.
    if (stale && linked(mine, lockPath)) return;
    const who = !holder
      ? 'another sandbox'
      : holder.pid === process.pid && holder.host === owner.host
        ? 'this process'
        : `process ${holder.pid} on ${holder.host}`;
    throw new DataDirectoryError(
      `${where} is in use by ${who}; one sandbox at a time may use a data directory. Stop it first, or, if it is not running, delete ${lockPath}.`,
    );
  } finally {
    unlinkSync(mine);
  }
}

/** Whether the lock was linked into place; false when one is there already. */
function linked(mine: string, lockPath: string): boolean {
  try {
    linkSync(mine, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new DataDirectoryError(`--data ${lockPath}: cannot take the lock (${(error as Error).message}).`);
  }
}

function readLock(lockPath: string): LockOwner | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as Partial<LockOwner>;
    return typeof holder.pid === 'number' && typeof holder.host === 'string' ? (holder as LockOwner) : undefined;
  } catch {
    // A lock is linked into place whole: one that cannot be read was not left by a sandbox, and is not taken over.
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlock(path: string): void {
  try {
    const holder = readLock(join(path, LOCK_FILE));
    if (holder?.pid === process.pid) unlinkSync(join(path, LOCK_FILE));
  } catch {
    // Gone already: nothing to let go.
  }
}

function syncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDirectoryAsync(path: string, done: (error?: Error | null) => void): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    done(error as Error);
    return;
  }
  fsync(fd, (error) => closeFile(fd, () => done(error)));
}

function writeFully(fd: number, bytes: Buffer, done: (error?: Error | null) => void, offset = 0): void {
  write(fd, bytes, offset, bytes.length - offset, null, (error, written) => {
    if (error) return done(error);
    if (offset + written < bytes.length) return writeFully(fd, bytes, done, offset + written);
    done();
  });
}

async function writeSnapshot(path: string, generation: number, chunks: readonly Buffer[]): Promise<void> {
  const temporary = join(path, `${fileName('snapshot', generation)}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    for (const chunk of chunks)
      await new Promise<void>((done, failed) => writeFully(fd, chunk, (error) => (error ? failed(error) : done())));
    await new Promise<void>((done, failed) => fsync(fd, (error) => (error ? failed(error) : done())));
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, join(path, fileName('snapshot', generation)));
  await new Promise<void>((done, failed) => syncDirectoryAsync(path, (error) => (error ? failed(error) : done())));
}

/** The lines of a file, read a chunk at a time (a snapshot may be larger than a string may be); the last may lack its newline. */
function* linesOf(path: string): Generator<{ text: string; number: number; complete: boolean }> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let number = 0;
    for (;;) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0) break;
      let start = 0;
      for (let end = chunk.indexOf(10, start); end !== -1 && end < read; end = chunk.indexOf(10, start)) {
        pending.push(chunk.subarray(start, end));
        const text = Buffer.concat(pending).toString('utf8');
        pending = [];
        pendingBytes = 0;
        start = end + 1;
        number += 1;
        yield { text, number, complete: true };
      }
      if (start < read) {
        pending.push(Buffer.from(chunk.subarray(start, read)));
        pendingBytes += read - start;
        if (pendingBytes > LONGEST_LINE_BYTES)
          throw corruptLine(dirname(path), `${basename(path)} line ${number + 1}`, 'it is longer than 16 MiB without an end');
      }
    }
    if (pending.length > 0) yield { text: Buffer.concat(pending).toString('utf8'), number: number + 1, complete: false };
  } finally {
    closeSync(fd);
  }
}
