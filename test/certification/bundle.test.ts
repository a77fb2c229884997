import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { create, extract } from 'tar';
import { MANIFEST_FILE, readBundle, sha256, verifyBundle, writeBundle, type Manifest } from '../../conformance/certification/bundle.ts';
import { scanBundleForSecrets } from '../../conformance/certification/bundle.ts';
import { withoutSecrets } from '../../conformance/certification/finished-run.ts';
import { runVerify } from '../../conformance/certification/verify.ts';
import { loadConfig } from '../../harness/config.ts';
import { filesUnder, scanForSecrets, type Leak } from '../../harness/secrets/leak-scan.ts';
import { BUNDLE_ABOUT as ABOUT } from './fixtures.ts';

/** A bundle of three small files and a spec copy; returns its path and the folder it was made in. */
async function makeBundle(): Promise<{ bundle: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-bundle-test-'));
  const files = {
    'summary.json': '{"exitCode":0}\n',
    'junit.xml': '<testsuite/>\n',
    'index.html': '<h1>Summary</h1>\n',
    'spec.md': '# The spec\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const bundle = join(dir, 'certification-test.tar.gz');
  await writeBundle(
    bundle,
    [
      { path: 'conformance/summary.json', source: join(dir, 'summary.json') },
      { path: 'conformance/junit.xml', source: join(dir, 'junit.xml') },
      { path: 'certification/index.html', source: join(dir, 'index.html') },
      { path: 'spec/momo-api-spec.md', source: join(dir, 'spec.md') },
    ],
    ABOUT,
  );
  return { bundle, dir };
}

/** Unpacks a bundle, lets `change` alter the unpacked folder, and packs it again as another bundle. */
async function repack(bundle: string, change: (root: string) => void): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'momo-unpacked-'));
  await extract({ file: bundle, cwd: root });
  change(root);
  const altered = join(root, '..', `${root.split('/').pop()}-altered.tar.gz`);
  await create(
    { gzip: true, file: altered, cwd: root },
    filesUnder(root).map((file) => relative(root, file)),
  );
  return altered;
}

async function verifyOutput(bundle: string): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await runVerify([bundle], process.cwd(), (line) => lines.push(line));
  return { code, output: lines.join('\n') };
}

test('a bundle holds every file with its SHA-256 in the manifest, and verifies as intact (exit 0)', async () => {
  const { bundle } = await makeBundle();
  const files = await readBundle(bundle);
  assert.deepEqual(
    [...files.keys()],
    [MANIFEST_FILE, 'conformance/summary.json', 'conformance/junit.xml', 'certification/index.html', 'spec/momo-api-spec.md'],
  );
  const manifest = JSON.parse(files.get(MANIFEST_FILE)!.toString()) as Manifest;
  assert.deepEqual(
    manifest.files.find((f) => f.path === 'conformance/summary.json'),
    { path: 'conformance/summary.json', sha256: sha256('{"exitCode":0}\n'), bytes: 15 },
  );
  assert.equal(manifest.harness.version, '0.1.0');
  const check = await verifyBundle(bundle);
  assert.equal(check.intact, true);
  const { code, output } = await verifyOutput(bundle);
  assert.equal(code, 0, output);
  assert.match(output, /^Intact: .*certification-test\.tar\.gz\n {2}4 files match their SHA-256 in manifest\.json/);
});

test('a bundle with an altered file is tampered (exit 1), naming the file', async () => {
  const { bundle } = await makeBundle();
  const altered = await repack(bundle, (root) => writeFileSync(join(root, 'conformance/summary.json'), '{"exitCode":0} \n'));
  const { code, output } = await verifyOutput(altered);
  assert.equal(code, 1, output);
  assert.match(
    output,
    /TAMPERED: .* does not match its manifest:\n {2}- conformance\/summary\.json: its SHA-256 is not the manifest's \(altered\)$/,
  );
});

test('a bundle with a removed file, or an added one, is tampered, naming the file', async () => {
  const { bundle } = await makeBundle();
  const removed = await verifyOutput(await repack(bundle, (root) => rmSync(join(root, 'conformance/junit.xml'))));
  assert.equal(removed.code, 1, removed.output);
  assert.match(removed.output, /conformance\/junit\.xml: listed in the manifest but missing from the bundle \(removed\)/);
  const added = await verifyOutput(await repack(bundle, (root) => writeFileSync(join(root, 'certification/extra.html'), 'x')));
  assert.equal(added.code, 1, added.output);
  assert.match(added.output, /certification\/extra\.html: in the bundle but not in the manifest \(added\)/);
});

test("a manifest whose spec hash is not the spec copy's is tampered", async () => {
  const { bundle } = await makeBundle();
  const altered = await repack(bundle, (root) => {
    const manifest = JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8')) as Manifest;
    writeFileSync(
      join(root, MANIFEST_FILE),
      JSON.stringify({ ...manifest, spec: { path: 'spec/momo-api-spec.md', sha256: sha256('another spec') } }),
    );
  });
  const { code, output } = await verifyOutput(altered);
  assert.equal(code, 1, output);
  assert.match(output, /spec\/momo-api-spec\.md: the spec's SHA-256 in the manifest is not the one of the spec copy it lists/);
});

test('what is not a bundle cannot be read (exit 2), with the reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-unreadable-'));
  writeFileSync(join(dir, 'garbage.tar.gz'), 'this is not an archive');
  const garbage = await verifyOutput(join(dir, 'garbage.tar.gz'));
  assert.equal(garbage.code, 2, garbage.output);
  assert.match(garbage.output, /^Cannot read .*garbage\.tar\.gz as a certification bundle: it is not a gzipped tar archive/);

  mkdirSync(join(dir, 'plain'));
  writeFileSync(join(dir, 'plain', 'notes.txt'), 'no manifest here');
  await create({ gzip: true, file: join(dir, 'plain.tar.gz'), cwd: join(dir, 'plain') }, ['notes.txt']);
  const noManifest = await verifyOutput(join(dir, 'plain.tar.gz'));
  assert.equal(noManifest.code, 2, noManifest.output);
  assert.match(noManifest.output, /it has no manifest\.json/);

  const missing = await verifyOutput(join(dir, 'nothing.tar.gz'));
  assert.equal(missing.code, 2);
  assert.match(missing.output, /there is no such file/);
  const usage = await runVerify([], dir, () => {});
  assert.equal(usage, 2);
});

test("the manifest's configuration has no secret: keys redacted, credentials taken out of URLs", () => {
  const config = loadConfig({
    MOMO_BASE_URL: 'https://partner:s3cret-pass@sandbox.example.com',
    MOMO_COLLECTION_KEY: 'collection-key-123456',
    MOMO_DISBURSEMENT_KEY: 'disbursement-key-123456',
    MOMO_REMITTANCE_KEY: 'remittance-key-123456',
    MOMO_COLLECTION_USER_ID: '5b6a3c1e-8d2f-4a7b-9c0d-1e2f3a4b5c6d',
    MOMO_COLLECTION_API_KEY: 'api-key-abcdef123456',
  });
  const shown = withoutSecrets(config);
  const text = JSON.stringify(shown);
  for (const secret of ['s3cret-pass', 'collection-key-123456', 'disbursement-key-123456', 'remittance-key-123456', 'api-key-abcdef123456'])
    assert.ok(!text.includes(secret), `${secret} is in ${text}`);
  assert.equal(shown.baseUrl, 'https://sandbox.example.com');
  assert.deepEqual(shown.subscriptionKeys, { collection: '[REDACTED]', disbursement: '[REDACTED]', remittance: '[REDACTED]' });
  assert.deepEqual(shown.apiUsers, { collection: { userId: '5b6a3c1e-8d2f-4a7b-9c0d-1e2f3a4b5c6d', apiKey: '[REDACTED]' } });
  assert.equal(shown.profile, 'spec');
});

test('the leak scan reads inside a bundle and names the file that holds a secret', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-leaky-bundle-'));
  writeFileSync(join(dir, 'evidence.json'), '{"Ocp-Apim-Subscription-Key": "configured-key-987654"}');
  const bundle = join(dir, 'certification-leaky.tar.gz');
  await writeBundle(bundle, [{ path: 'conformance/evidence.json', source: join(dir, 'evidence.json') }], ABOUT);
  assert.deepEqual(await scanBundleForSecrets(bundle, ['configured-key-987654']), [
    { file: 'certification-leaky.tar.gz:conformance/evidence.json', kind: 'configured secret #1 (in the clear)' },
  ]);
});

test('a report the bundle holds byte for byte is searched once, in the bundle; one changed since is searched again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-bundle-once-'));
  const reports = join(dir, 'reports');
  mkdirSync(reports);
  writeFileSync(join(reports, 'evidence.json'), '{"Ocp-Apim-Subscription-Key": "configured-key-987654"}');
  const bundle = join(dir, 'certification.tar.gz');
  await writeBundle(bundle, [{ path: 'conformance/evidence.json', source: join(reports, 'evidence.json') }], ABOUT);
  const searched = new Map<string, Leak[]>();
  assert.equal((await scanBundleForSecrets(bundle, ['configured-key-987654'], searched)).length, 1);
  // Not read again, but named by its own path as well as in the bundle.
  assert.deepEqual(scanForSecrets(reports, ['configured-key-987654'], searched), [
    { file: 'evidence.json', kind: 'configured secret #1 (in the clear)' },
  ]);
  writeFileSync(join(reports, 'evidence.json'), '{"Ocp-Apim-Subscription-Key": "configured-key-987654", "later": 1}');
  assert.deepEqual(scanForSecrets(reports, ['configured-key-987654'], searched), [
    { file: 'evidence.json', kind: 'configured secret #1 (in the clear)' },
  ]);
});
