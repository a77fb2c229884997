/**
 * `verify` against bundles built to fool it: entries appended to a genuine bundle that are not regular files,
 * that lead outside it, that repeat a path, or that hide after its end, each refused as tampered (exit 1) and
 * named; and decompression bombs, refused (exit 2) as soon as a bound is crossed, in little time and memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWriteStream, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';
import {
  BundleLimitError,
  readBundle,
  scanBundleForSecrets,
  sha256,
  verifyBundle,
  writeBundle,
  type Manifest,
} from '../../conformance/certification/bundle.ts';
import { runVerify } from '../../conformance/certification/verify.ts';

const MiB = 1024 * 1024;
const ABOUT: Omit<Manifest, 'files'> = {
  harness: { name: 'momo-conformance-harness', version: '0.1.0' },
  createdAt: '2026-03-10T12:00:00.000Z',
  target: 'the embedded reference sandbox',
  profile: { name: 'spec', behaviour: {} },
  configuration: { profile: 'spec' },
  spec: { path: 'spec/momo-api-spec.md', sha256: sha256('# The spec\n') },
};

const dir = mkdtempSync(join(tmpdir(), 'momo-hostile-bundle-'));
let made = 0;

async function genuineBundle(): Promise<string> {
  const files = { 'summary.json': '{"exitCode":0}\n', 'junit.xml': '<testsuite/>\n', 'spec.md': '# The spec\n' };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const bundle = join(dir, `certification-${made++}.tar.gz`);
  await writeBundle(
    bundle,
    [
      { path: 'conformance/summary.json', source: join(dir, 'summary.json') },
      { path: 'conformance/junit.xml', source: join(dir, 'junit.xml') },
      { path: 'spec/momo-api-spec.md', source: join(dir, 'spec.md') },
    ],
    ABOUT,
  );
  return bundle;
}

interface Entry {
  path: string;
  type?: string;
  linkpath?: string;
  data?: string;
  size?: number;
}

/** One tar entry as tar writes it: a 512-byte header, then the data padded to whole blocks. */
function tarEntry({ path, type = 'File', linkpath, data = '', size }: Entry): Buffer {
  const body = Buffer.from(data);
  const block = Buffer.alloc(512);
  new Header({
    path,
    type: type as HeaderData['type'],
    linkpath,
    size: size ?? body.length,
    mode: 0o644,
    uid: 0,
    gid: 0,
    mtime: new Date(0),
  }).encode(block, 0);
  return Buffer.concat([block, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}

/** A header whose type flag is one no tar knows (GNU and BSD tar unpack it as a file). */
function entryOfUnknownType(path: string, data: string): Buffer {
  const entry = tarEntry({ path, data });
  entry[156] = 'Z'.charCodeAt(0);
  entry.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += entry[i]!;
  entry.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return entry;
}

/** The tar of a bundle up to its end-of-archive blocks, so that entries can be appended. */
function tarBeforeItsEnd(bundle: string): Buffer {
  const tar = gunzipSync(readFileSync(bundle));
  let at = 0;
  while (at + 512 <= tar.length && tar.subarray(at, at + 512).some((byte) => byte !== 0)) {
    at += 512 + Math.ceil((new Header(tar, at).size ?? 0) / 512) * 512;
  }
  return tar.subarray(0, at);
}

/** A copy of a genuine bundle with entries appended, as whoever rewrites it would append them. */
async function withAppended(...entries: (Entry | Buffer)[]): Promise<string> {
  const bundle = await genuineBundle();
  const hostile = join(dir, `hostile-${made++}.tar.gz`);
  const appended = entries.map((entry) => (Buffer.isBuffer(entry) ? entry : tarEntry(entry)));
  writeFileSync(hostile, gzipSync(Buffer.concat([tarBeforeItsEnd(bundle), ...appended, Buffer.alloc(1024)])));
  return hostile;
}

async function verifyOutput(bundle: string, ...options: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await runVerify([...options, bundle], process.cwd(), (line) => lines.push(line));
  return { code, output: lines.join('\n') };
}

async function assertTampered(bundle: string, problem: RegExp): Promise<void> {
  const { code, output } = await verifyOutput(bundle);
  assert.equal(code, 1, output);
  assert.match(output, /^TAMPERED: /);
  assert.match(output, problem);
}

test('the genuine bundle the tests append to verifies as intact', async () => {
  const { code, output } = await verifyOutput(await genuineBundle());
  assert.equal(code, 0, output);
});

test("a symbolic link appended in a report's place is tampering, named with where it points", async () => {
  await assertTampered(
    await withAppended({ path: 'conformance/summary.json', type: 'SymbolicLink', linkpath: '/etc/passwd' }),
    /- conformance\/summary\.json: a symbolic link to \/etc\/passwd, not a regular file; a bundle holds only files/,
  );
});

test('a hard link, a contiguous file, a device or a FIFO is tampering', async () => {
  await assertTampered(
    await withAppended({ path: 'conformance/junit.xml', type: 'Link', linkpath: 'manifest.json' }),
    /- conformance\/junit\.xml: a hard link to manifest\.json, not a regular file/,
  );
  await assertTampered(
    await withAppended({ path: 'conformance/summary.json', type: 'ContiguousFile', data: '{"exitCode":0}\n' }),
    /- conformance\/summary\.json: a contiguous file, not a regular file/,
  );
  await assertTampered(
    await withAppended({ path: 'conformance/tty', type: 'CharacterDevice' }),
    /- conformance\/tty: a character device, not a regular file/,
  );
  await assertTampered(
    await withAppended({ path: 'conformance/disk', type: 'BlockDevice' }),
    /- conformance\/disk: a block device, not a regular file/,
  );
  await assertTampered(
    await withAppended({ path: 'conformance/pipe', type: 'FIFO' }),
    /- conformance\/pipe: a FIFO \(named pipe\), not a regular file/,
  );
  await assertTampered(
    await withAppended(entryOfUnknownType('conformance/summary.json', '{"exitCode":1}\n')),
    /- conformance\/summary\.json: an entry of a type tar does not know, which other tar programs may unpack as a file/,
  );
});

test('a path outside the bundle is tampering: "..", absolute, a Windows drive or backslashes', async () => {
  await assertTampered(
    await withAppended({ path: '../outside.txt', data: 'x' }),
    /- \.\.\/outside\.txt: a "\.\." in its path, which leads outside the bundle/,
  );
  await assertTampered(await withAppended({ path: 'conformance/../../outside.txt', data: 'x' }), /a "\.\." in its path/);
  await assertTampered(
    await withAppended({ path: '/tmp/outside.txt', data: 'x' }),
    /- \/tmp\/outside\.txt: an absolute path: outside the bundle/,
  );
  await assertTampered(await withAppended({ path: 'C:/outside.txt', data: 'x' }), /- C:\/outside\.txt: a Windows drive letter/);
  await assertTampered(
    await withAppended({ path: 'conformance\\summary.json', data: 'x' }),
    /- "conformance\\\\summary\.json": a backslash in its path/,
  );
  await assertTampered(
    await withAppended({ path: 'report\u001b[2J.txt', data: 'x' }),
    /- "report\\u001b\[2J\.txt": control characters in its path/,
  );
});

test('the same path twice is tampering, also as ./path, and in another letter case', async () => {
  // The same bytes again: the manifest's hash still matches, only the second entry gives it away.
  await assertTampered(
    await withAppended({ path: 'conformance/summary.json', data: '{"exitCode":0}\n' }),
    /- conformance\/summary\.json: the same path as the earlier entry conformance\/summary\.json; a bundle holds each file once/,
  );
  await assertTampered(
    await withAppended({ path: './conformance/junit.xml', data: '<testsuite/>\n' }),
    /- \.\/conformance\/junit\.xml: the same path as the earlier entry conformance\/junit\.xml/,
  );
  await assertTampered(
    await withAppended({ path: 'conformance/Summary.json', data: '{"exitCode":1}\n' }),
    /the same path as the earlier entry conformance\/summary\.json but for letter case/,
  );
});

test('another archive after the end of the bundle is tampering', async () => {
  const bundle = await genuineBundle();
  const hidden = join(dir, `hidden-${made++}.tar.gz`);
  // Two gzip members: gunzip reads both, tar stops at the first end; `tar -i` would unpack the second.
  writeFileSync(
    hidden,
    Buffer.concat([
      readFileSync(bundle),
      gzipSync(
        Buffer.concat([tarEntry({ path: 'conformance/summary.json', type: 'SymbolicLink', linkpath: '/etc/passwd' }), Buffer.alloc(1024)]),
      ),
    ]),
  );
  await assertTampered(hidden, /- data after the end of the archive: another archive appended to it/);
  // Zeros after the end (padding to a record) are no tampering.
  const padded = join(dir, `padded-${made++}.tar.gz`);
  writeFileSync(padded, gzipSync(Buffer.concat([gunzipSync(readFileSync(bundle)), Buffer.alloc(10240)])));
  assert.equal((await verifyOutput(padded)).code, 0);
});

test('a tampered manifest.json (a link in its place) is tampering, not an unreadable bundle', async () => {
  const hostile = join(dir, `no-manifest-${made++}.tar.gz`);
  writeFileSync(
    hostile,
    gzipSync(Buffer.concat([tarEntry({ path: 'manifest.json', type: 'SymbolicLink', linkpath: '../manifest.json' }), Buffer.alloc(1024)])),
  );
  await assertTampered(hostile, /- manifest\.json: a symbolic link to \.\.\/manifest\.json, not a regular file/);
});

test('readBundle refuses a tampered bundle; the leak scan still reads its regular files', async () => {
  const hostile = await withAppended(
    { path: 'conformance/extra.txt', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    { path: 'conformance/leak.txt', data: 'key configured-key-987654' },
  );
  await assert.rejects(readBundle(hostile), /it holds what a bundle must not:\n {2}conformance\/extra\.txt: a symbolic link/);
  const leaks = await scanBundleForSecrets(hostile, ['configured-key-987654']);
  assert.deepEqual(
    leaks.map((l) => l.file),
    [`${hostile.split('/').pop()}:conformance/leak.txt`],
  );
});

/**
 * A decompression bomb: a tar entry declaring `declared` bytes, then `zeros` MiB of zeros. The zeros are one
 * gzip member of 8 MiB written again and again (gzip allows members one after another): the file is made in
 * milliseconds, a few hundred KiB for hundreds of MiB, compressed about 1030 to 1 as deflate allows at most.
 */
async function bomb(entries: { path: string; declared: number }[], zerosPerEntry: number): Promise<string> {
  const file = join(dir, `bomb-${made++}.tar.gz`);
  const eightMiB = gzipSync(Buffer.alloc(8 * MiB), { level: 9 });
  const out = createWriteStream(file);
  for (const { path, declared } of entries) {
    const block = Buffer.alloc(512);
    new Header({ path, type: 'File', size: declared, mode: 0o644, mtime: new Date(0) }).encode(block, 0);
    out.write(gzipSync(block));
    for (let i = 0; i < zerosPerEntry / 8; i++) if (!out.write(eightMiB)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return file;
}

/** Runs a check while sampling the process's resident memory; returns how far above the start it went. */
async function peakGrowthOf<T>(check: () => Promise<T>): Promise<{ result: T; growthMiB: number; ms: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  try {
    const result = await check();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growthMiB: (peak - before) / MiB, ms: performance.now() - started };
  } finally {
    clearInterval(sampler);
  }
}

test('a decompression bomb is refused as soon as it decompresses 1000 times its size, in little time and memory', async () => {
  const file = await bomb([{ path: 'conformance/zeros.bin', declared: 400 * MiB }], 400);
  assert.ok(statSync(file).size < 512 * 1024, `the bomb is ${statSync(file).size} bytes`);
  const { result, growthMiB, ms } = await peakGrowthOf(() => verifyOutput(file));
  assert.equal(result.code, 2, result.output);
  assert.match(
    result.output,
    /^Cannot read .* as a certification bundle: it decompresses to more than 1000 times its compressed size \(\d+ MiB from \d+ KiB\): a decompression bomb, not a bundle the harness writes; reading stopped there/,
  );
  assert.match(result.output, /allow it with --max-ratio <n> \(now 1000\)/);
  assert.ok(growthMiB < 100, `memory grew by ${growthMiB.toFixed(0)} MiB`);
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
});

test('a bundle beyond the size limit is refused once it decompresses past it, and --max-size moves the limit', async () => {
  // Entries of 8 MiB each, declared truthfully: only the total gives the bundle away.
  const file = await bomb(
    Array.from({ length: 12 }, (_, i) => ({ path: `conformance/part-${i}.bin`, declared: 8 * MiB })),
    8,
  );
  const { result, growthMiB, ms } = await peakGrowthOf(() => verifyOutput(file, '--max-size', '48', '--max-ratio', '100000'));
  assert.equal(result.code, 2, result.output);
  assert.match(result.output, /it decompresses to more than 48 MiB, the most a bundle may hold; reading stopped there/);
  assert.match(result.output, /allow more with --max-size <MiB> \(now 48\)/);
  assert.ok(growthMiB < 100, `memory grew by ${growthMiB.toFixed(0)} MiB`);
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
  await assert.rejects(
    verifyBundle(file, { maxBytes: 48 * MiB, maxRatio: Infinity }),
    (error: Error) => error instanceof BundleLimitError && error.limit === 'size',
  );
});

test('an entry declaring more than a bundle may hold is refused at its header, before any of its data', async () => {
  const file = await bomb([{ path: 'conformance/huge.bin', declared: 4 * 1024 * MiB }], 8);
  const { code, output } = await verifyOutput(file);
  assert.equal(code, 2, output);
  assert.match(
    output,
    /its entry conformance\/huge\.bin declares 4\.0 GiB, more than the 512 MiB a bundle may hold; reading stopped there/,
  );
});

test('verify refuses options it does not know and limits that are not positive numbers', async () => {
  const bundle = await genuineBundle();
  assert.match(
    (await verifyOutput(bundle, '--max-size', 'lots')).output,
    /^--max-size: "lots" is not a number above 0; write e.g. --max-size 512\n/,
  );
  assert.equal((await verifyOutput(bundle, '--max-size', '0')).code, 2);
  assert.match(
    (await verifyOutput(bundle, '--follow')).output,
    /^unknown option --follow; the options are --key, --max-size, --max-ratio, --help/,
  );
  assert.match((await verifyOutput(bundle, '--max-szie', '1')).output, /^unknown option --max-szie; did you mean --max-size\?/);
  assert.equal((await verifyOutput(bundle, '--max-size', '1', '--max-ratio', '50')).code, 0);
});
