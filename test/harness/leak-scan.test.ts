import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForSecrets, searchedDigest } from '../../harness/secrets/leak-scan.ts';

const KEY = 'subscription-key-0123456789';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';

function reportsWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'momo-leaks-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test('redacted reports hold no secret', () => {
  const dir = reportsWith({
    'summary.json': '{"verdict":"passed","headers":{"Authorization":"Bearer [REDACTED]","Ocp-Apim-Subscription-Key":"[REDACTED]"}}',
    'messages.ndjson': '{"attachment":{"body":"{\\"apiKey\\":\\"[REDACTED]\\",\\"refresh_token\\":\\"[REDACTED]\\"}"}}',
    'junit.xml': '<testcase name="Basic authentication is refused"/>',
  });
  assert.deepEqual(scanForSecrets(dir, [KEY]), []);
});

test('a file whose bytes were searched already is read once; one that differs in a byte is searched again', () => {
  const text = `{"key":"${KEY}"}`;
  const dir = reportsWith({ 'same.json': text, 'changed.json': `${text} ` });
  const searched = searchedDigest();
  searched.update(Buffer.from(text));
  // What the first search found is named by this file's path too, without reading it again.
  const leaks = scanForSecrets(dir, [KEY], new Map([[searched.digest(), [{ file: 'bundle:same.json', kind: 'found there' }]]]));
  assert.deepEqual(leaks.map((l) => `${l.file}: ${l.kind}`).sort(), [
    'changed.json: configured secret #1 (in the clear)',
    'same.json: found there',
  ]);
  assert.deepEqual(
    scanForSecrets(dir, [KEY])
      .map((l) => l.file)
      .sort(),
    ['changed.json', 'same.json'],
  );
});

test('a configured secret, in the clear or base64-encoded, is found and named by file, never shown', () => {
  const dir = reportsWith({ 'a/evidence.json': `{"key":"${KEY}"}`, 'b.txt': Buffer.from(KEY).toString('base64') });
  const leaks = scanForSecrets(dir, [KEY]);
  assert.deepEqual(leaks.map((l) => l.file).sort(), ['a/evidence.json', 'b.txt']);
  assert.ok(leaks.every((l) => !JSON.stringify(l).includes(KEY)));
});

test('credentials are found by their shape: a JWT, a Basic credential, an apiKey or refresh token in the clear', () => {
  const dir = reportsWith({
    'jwt.html': `<pre>Bearer ${JWT}</pre>`,
    'basic.json': '{"Authorization":"Basic YWJjZGVmZ2hpams6bG1ub3BxcnN0dXZ3eHl6"}',
    'key.ndjson': '{"body":"{\\"apiKey\\":\\"0123456789abcdef0123456789abcdef\\"}"}',
    'refresh.json': '{"refresh_token":"4b1a1b1e-3f7e-4a8e-9c2b-5d1e2f3a4b5c"}',
  });
  const kinds = Object.fromEntries(scanForSecrets(dir, []).map((l) => [l.file, l.kind]));
  assert.deepEqual(kinds, {
    'jwt.html': 'a JWT (access or consent token)',
    'basic.json': 'a Basic credential',
    'key.ndjson': 'an apiKey value',
    'refresh.json': 'a refresh_token value',
  });
});

test('secrets shorter than six characters are not searched for (they would match everywhere)', () => {
  const dir = reportsWith({ 'x.txt': 'abc and more' });
  assert.deepEqual(scanForSecrets(dir, ['abc']), []);
});

test('a configured secret echoed in another encoding is found, and the finding says how it was written', () => {
  const hex = Buffer.from(KEY).toString('hex');
  const dir = reportsWith({
    'hex.txt': hex.toUpperCase(),
    'offset.txt': Buffer.from(`\u0001${KEY}!`).toString('base64url'),
    'url.txt': encodeURIComponent(KEY).replace(/-/g, '%2D'),
    'escaped.ndjson': JSON.stringify({
      body: JSON.stringify({ echo: KEY.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) }),
    }),
    'wrapped.eml': `${hex.slice(0, 20)}\r\n${hex.slice(20)}`,
  });
  assert.deepEqual(Object.fromEntries(scanForSecrets(dir, [KEY]).map((l) => [l.file, l.kind])), {
    'hex.txt': 'configured secret #1 (hex-encoded)',
    // Its middle has no '+' or '/', so base64url writes it as base64 does.
    'offset.txt': 'configured secret #1 (base64-encoded)',
    'url.txt': 'configured secret #1 (URL-encoded)',
    'escaped.ndjson': 'configured secret #1 (JSON-escaped)',
    'wrapped.eml': 'configured secret #1 (hex-encoded, split across lines)',
  });
});
