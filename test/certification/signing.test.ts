/**
 * Signed bundles: a reviewer who holds the signer's public key checks who made a bundle, not only that it is
 * whole. Each way of getting it wrong is caught, and the message says which.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { create, extract } from 'tar';
import { MANIFEST_FILE, sha256, writeBundle, type Manifest } from '../../conformance/certification/bundle.ts';
import { generateKeys } from '../../conformance/certification/keygen.ts';
import {
  ATTESTATION_FILE,
  PAYLOAD_TYPE,
  keyIdOf,
  readPrivateKey,
  readPublicKey,
  signStatement,
  statementOf,
  type Envelope,
  type Statement,
} from '../../conformance/certification/signing.ts';
import { runVerify } from '../../conformance/certification/verify.ts';
import { filesUnder } from '../../harness/secrets/leak-scan.ts';
import { BUNDLE_ABOUT as ABOUT } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'momo-signing-test-'));
const run = (argv: string[]) => {
  const lines: string[] = [];
  return { code: generateKeys(argv, dir, (line) => lines.push(line)), output: lines.join('\n') };
};
assert.equal(run(['--out', 'lab']).code, 0);
assert.equal(run(['--out', 'intruder']).code, 0);
const LAB = { private: join(dir, 'lab.key.pem'), public: join(dir, 'lab.pub.pem') };
const INTRUDER = { private: join(dir, 'intruder.key.pem'), public: join(dir, 'intruder.pub.pem') };

/** A bundle of a few files signed with a private key file. */
async function signedBundle(keyFile: string): Promise<string> {
  const source = mkdtempSync(join(dir, 'source-'));
  const files = { 'summary.json': '{"exitCode":0}\n', 'index.html': '<h1>Summary</h1>\n', 'spec.md': '# The spec\n' };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(source, name), text);
  const bundle = join(source, 'certification-test.tar.gz');
  const key = readPrivateKey(keyFile);
  await writeBundle(
    bundle,
    [
      { path: 'conformance/summary.json', source: join(source, 'summary.json') },
      { path: 'certification/index.html', source: join(source, 'index.html') },
      { path: 'spec/momo-api-spec.md', source: join(source, 'spec.md') },
    ],
    ABOUT,
    (subjects) =>
      signStatement(
        statementOf(subjects, { result: 'PASSED', configuration: [], passedTests: ['COL-RTP-202'], warnedTests: [], failedTests: [] }),
        key,
      ),
  );
  return bundle;
}

/** Unpacks a bundle, lets `change` alter the unpacked folder, and packs it again. */
async function repack(bundle: string, change: (root: string) => void): Promise<string> {
  const root = mkdtempSync(join(dir, 'unpacked-'));
  await extract({ file: bundle, cwd: root });
  change(root);
  const altered = `${root}-altered.tar.gz`;
  await create(
    { gzip: true, file: altered, cwd: root },
    filesUnder(root).map((file) => relative(root, file)),
  );
  return altered;
}

async function verify(bundle: string, key?: string): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await runVerify([bundle, ...(key ? ['--key', key] : [])], dir, (line) => lines.push(line));
  return { code, output: lines.join('\n') };
}

/** Rewrites the manifest so that it lists a file's new SHA-256: what an intruder does after altering the file. */
function alterWithManifest(root: string): void {
  writeFileSync(join(root, 'conformance/summary.json'), '{"exitCode":1}\n');
  const manifest = JSON.parse(readFileSync(join(root, MANIFEST_FILE), 'utf8')) as Manifest;
  for (const f of manifest.files) if (f.path === 'conformance/summary.json') f.sha256 = sha256('{"exitCode":1}\n');
  writeFileSync(join(root, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Signs the unpacked bundle's files again with another key: the statement over its files as they now are. */
function resign(root: string, keyFile: string, keyId?: string): void {
  const subjects = filesUnder(root)
    .map((file) => relative(root, file))
    .filter((name) => name !== ATTESTATION_FILE)
    .map((name) => ({ name, digest: { sha256: sha256(readFileSync(join(root, name))) } }));
  const old = JSON.parse(readFileSync(join(root, ATTESTATION_FILE), 'utf8')) as Envelope;
  const statement = JSON.parse(Buffer.from(old.payload, 'base64').toString()) as Statement;
  const envelope = JSON.parse(signStatement(statementOf(subjects, statement.predicate), readPrivateKey(keyFile))) as Envelope;
  if (keyId) envelope.signatures[0]!.keyid = keyId;
  writeFileSync(join(root, ATTESTATION_FILE), JSON.stringify(envelope));
}

test('keygen writes a PEM pair, the private key readable by its owner alone, and never overwrites', () => {
  assert.match(readFileSync(LAB.private, 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  assert.match(readFileSync(LAB.public, 'utf8'), /^-----BEGIN PUBLIC KEY-----/);
  assert.equal(statSync(LAB.private).mode & 0o777, 0o600);
  const before = readFileSync(LAB.private, 'utf8');
  const again = run(['--out', 'lab']);
  assert.equal(again.code, 2);
  assert.match(again.output, /exists already, and a key is never overwritten/);
  assert.equal(readFileSync(LAB.private, 'utf8'), before);
});

test('a signed bundle holds an in-toto statement over every file in a DSSE envelope, and verifies with its key (exit 0)', async () => {
  const bundle = await signedBundle(LAB.private);
  const root = mkdtempSync(join(dir, 'look-'));
  await extract({ file: bundle, cwd: root });
  const envelope = JSON.parse(readFileSync(join(root, ATTESTATION_FILE), 'utf8')) as Envelope;
  assert.equal(envelope.payloadType, PAYLOAD_TYPE);
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as Statement;
  assert.equal(statement._type, 'https://in-toto.io/Statement/v1');
  assert.equal(statement.predicateType, 'https://in-toto.io/attestation/test-result/v0.1');
  assert.deepEqual(
    statement.subject.map((s) => s.name),
    [MANIFEST_FILE, 'conformance/summary.json', 'certification/index.html', 'spec/momo-api-spec.md'],
  );
  assert.equal(statement.subject[0]!.digest.sha256, sha256(readFileSync(join(root, MANIFEST_FILE))));
  assert.equal(statement.predicate.result, 'PASSED');

  const checked = await verify(bundle, LAB.public);
  assert.equal(checked.code, 0, checked.output);
  assert.match(checked.output, /signed by SHA256:[0-9a-f]{64}, the key of .*lab\.pub\.pem.*result PASSED/);
  const unchecked = await verify(bundle);
  assert.equal(unchecked.code, 0);
  assert.match(unchecked.output, /signed, but the signature was not checked/);
});

test('a tampered file is caught, named, against the manifest and the signature', async () => {
  const altered = await repack(await signedBundle(LAB.private), (root) =>
    writeFileSync(join(root, 'conformance/summary.json'), '{"exitCode":1}\n'),
  );
  const { code, output } = await verify(altered, LAB.public);
  assert.equal(code, 1);
  assert.match(output, /conformance\/summary\.json: its SHA-256 is not the manifest's \(altered\)/);
  assert.match(output, /conformance\/summary\.json: its SHA-256 is not the signed one \(altered after signing\)/);
});

test('a tampered manifest (rewritten to match an altered file) passes the hashes but not the signature', async () => {
  const altered = await repack(await signedBundle(LAB.private), alterWithManifest);
  assert.equal((await verify(altered)).code, 0, 'without the key, a rewritten manifest goes unseen: why a reviewer keeps the key');
  const { code, output } = await verify(altered, LAB.public);
  assert.equal(code, 1);
  assert.match(output, /manifest\.json: TAMPERED MANIFEST, its SHA-256 is not the signed one/);
  assert.doesNotMatch(output, /does not match its manifest/);
});

test('a bundle signed again with another key is caught, whichever key id it names', async () => {
  const genuine = await signedBundle(LAB.private);
  const own = await verify(
    await repack(genuine, (root) => {
      alterWithManifest(root);
      return resign(root, INTRUDER.private);
    }),
    LAB.public,
  );
  assert.equal(own.code, 1);
  assert.match(own.output, /SIGNED BY ANOTHER KEY: the bundle is signed by SHA256:\w+, not by the key you gave/);
  const labId = keyIdOf(readPublicKey(LAB.public));
  const spoofed = await verify(
    await repack(genuine, (root) => {
      alterWithManifest(root);
      return resign(root, INTRUDER.private, labId);
    }),
    LAB.public,
  );
  assert.equal(spoofed.code, 1);
  assert.match(spoofed.output, /RE-SIGNED: the signature names your key \(SHA256:\w+\) but does not verify under it/);
});

test('a genuine bundle checked with the wrong public key is caught as such', async () => {
  const { code, output } = await verify(await signedBundle(LAB.private), INTRUDER.public);
  assert.equal(code, 1);
  assert.match(output, /WRONG KEY or SIGNED BY ANOTHER KEY: the bundle is signed by SHA256:\w+, not by the key you gave/);
});

test('an unsigned bundle fails a check with a key', async () => {
  const source = mkdtempSync(join(dir, 'unsigned-'));
  writeFileSync(join(source, 'a.json'), '{}\n');
  const bundle = join(source, 'b.tar.gz');
  await writeBundle(bundle, [{ path: 'conformance/a.json', source: join(source, 'a.json') }], { ...ABOUT, spec: null });
  const { code, output } = await verify(bundle, LAB.public);
  assert.equal(code, 1);
  assert.match(output, /NOT SIGNED/);
});

test('a key file that cannot be used is a clear error, exit 2, never a stack trace', async () => {
  const bundle = await signedBundle(LAB.private);
  writeFileSync(join(dir, 'garbage.pem'), 'not a key\n');
  const cases: [string, RegExp][] = [
    [join(dir, 'missing.pem'), /there is no such file/],
    [join(dir, 'garbage.pem'), /it is not a PEM public key/],
    [LAB.private, /it holds a private key; give the public key/],
    [dir, /it cannot be read \(EISDIR\)/],
  ];
  for (const [key, message] of cases) {
    const { code, output } = await verify(bundle, key);
    assert.equal(code, 2, output);
    assert.match(output, message);
    assert.doesNotMatch(output, /\n\s+at /);
  }
  assert.throws(() => readPrivateKey(LAB.public), /it holds a public key; signing needs the private key/);
});

test('run --sign-key with a key that cannot sign stops before the target is touched, exit 2, one line', async () => {
  const { runConformance } = await import('../../conformance/runner/conformance.ts');
  for (const [key, message] of [
    [join(dir, 'missing.key.pem'), /there is no such file/],
    [LAB.public, /it holds a public key; signing needs the private key/],
  ] as const) {
    const lines: string[] = [];
    const code = await runConformance({ argv: ['--sign-key', key], env: {}, cwd: dir, log: (line) => lines.push(line) });
    assert.equal(code, 2);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, message);
  }
});
