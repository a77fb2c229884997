/**
 * A hostile target echoes a secret back in some encoding: every encoding is planted for a subscription key,
 * an API key and a Basic credential, and each must be masked by the Redactor, found by the leak scan in a
 * written report, and reported by secretsDisclosed for an operation that does not issue it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDACTED, Redactor } from '../../core/secrets/redact.ts';
import { scanForSecrets } from '../../harness/secrets/leak-scan.ts';
import { secretsDisclosed } from '../../harness/secrets/disclosure.ts';
import { SecretFinder, formsOf } from '../../core/secrets/encodings.ts';

// A subscription key with characters that URL-encoding and JSON escaping change (a space, '/', '+', '=').
const SUBSCRIPTION_KEY = 'primary key/2026+collection=7';
const USER_ID = '7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f';
const API_KEY = 'f1db798c98df4bcf83b538175893bbf0';
const BASIC = Buffer.from(`${USER_ID}:${API_KEY}`).toString('base64');

const SECRETS = [
  { kind: 'subscription key', value: SUBSCRIPTION_KEY, issuedBy: undefined },
  { kind: 'API key', value: API_KEY, issuedBy: 'createApiKey' },
  { kind: 'Basic credential', value: BASIC, issuedBy: 'createApiKey' },
] as const;

function redactorOfTheRun(): Redactor {
  const redactor = new Redactor();
  redactor.add(SUBSCRIPTION_KEY, 'subscription key');
  redactor.addBasicCredential(USER_ID, API_KEY);
  return redactor;
}

// Bytes around the secret, so that it is encoded inside a longer value as a target would echo it; 0xfb and
// 0xff make '+' and '/' (base64) or '-' and '_' (base64url) likely next to it.
const BEFORE = Buffer.from([0xfb, 0xff, 0xbf, 0x7e, 0x01]);
const AFTER = Buffer.from(' echoed back', 'utf8');

function embedded(secret: string, offset: number): Buffer {
  // Two whole 3-byte groups, then `offset` more bytes: the secret starts at that offset of a group.
  return Buffer.concat([BEFORE.subarray(0, 3), BEFORE.subarray(0, 3), BEFORE.subarray(0, offset), Buffer.from(secret), AFTER]);
}

function percentEncodedEveryByte(secret: string, upper: boolean): string {
  return [...Buffer.from(secret)]
    .map((b) => `%${b.toString(16).padStart(2, '0')}`)
    .map((p) => (upper ? p.toUpperCase() : p))
    .join('');
}

function unicodeEscaped(secret: string, which: (index: number) => boolean): string {
  return [...secret].map((c, i) => (which(i) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
}

function wrapped(text: string, columns: number, lineBreak: string): string {
  return text.match(new RegExp(`.{1,${columns}}`, 'g'))!.join(lineBreak);
}

/** Every form a hostile target could echo a secret in, by name. */
function plantings(secret: string): [string, string][] {
  const bytes = Buffer.from(secret);
  const forms: [string, string][] = [
    ['in the clear', secret],
    ['hex, lower case', bytes.toString('hex')],
    ['hex, upper case', bytes.toString('hex').toUpperCase()],
  ];
  for (const offset of [0, 1, 2]) {
    forms.push([
      `base64 of the secret alone, after ${offset} bytes`,
      Buffer.concat([BEFORE.subarray(0, offset), bytes]).toString('base64'),
    ]);
    forms.push([`base64 inside a longer value, at offset ${offset}`, embedded(secret, offset).toString('base64')]);
    forms.push([`base64url inside a longer value, at offset ${offset}`, embedded(secret, offset).toString('base64url')]);
  }
  forms.push(
    ['URL-encoded, every byte, lower-case hex', percentEncodedEveryByte(secret, false)],
    ['URL-encoded, every byte, upper-case hex', percentEncodedEveryByte(secret, true)],
    ['URL-encoded, reserved characters only', encodeURIComponent(secret)],
    ['form-encoded, + for a space', new URLSearchParams({ k: secret }).toString().slice(2)],
    ['JSON \\u escapes of every character', unicodeEscaped(secret, () => true)],
    ['JSON \\u escapes of every other character', unicodeEscaped(secret, (i) => i % 2 === 0)],
    ['JSON with escaped slashes', JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/')],
    ['JSON inside JSON, \\u escapes', JSON.stringify(unicodeEscaped(secret, (i) => i % 3 === 0)).slice(1, -1)],
    ['split by a line break in the middle', `${secret.slice(0, 4)}\n${secret.slice(4)}`],
    ['split by CRLF every 5 characters', wrapped(secret, 5, '\r\n')],
    ['hex split every 10 characters', wrapped(bytes.toString('hex'), 10, '\n')],
    ['MIME base64 at 76 columns, CRLF', wrapped(Buffer.concat([randomish(40), bytes, AFTER]).toString('base64'), 76, '\r\n')],
    ['MIME base64 at 64 columns, LF', wrapped(Buffer.concat([randomish(41), bytes, AFTER]).toString('base64'), 64, '\n')],
    [
      'base64 wrapped at 76 columns, inside JSON (escaped \\r\\n)',
      JSON.stringify(wrapped(Buffer.concat([randomish(42), bytes]).toString('base64'), 76, '\r\n')).slice(1, -1),
    ],
    ['base64 URL-encoded', encodeURIComponent(embedded(secret, 1).toString('base64'))],
    ['URL-encoded, wrapped at 7 columns (inside the escapes)', wrapped(percentEncodedEveryByte(secret, true), 7, '\r\n')],
    [
      'JSON \\u escapes, wrapped at 5 columns (inside the escapes)',
      wrapped(
        unicodeEscaped(secret, () => true),
        5,
        '\n',
      ),
    ],
  );
  return forms;
}

/** Bytes that look random but are the same on every run. */
function randomish(length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (i * 167 + 13) % 256));
}

for (const { kind, value, issuedBy } of SECRETS) {
  for (const [how, planted] of plantings(value)) {
    test(`${kind}, ${how}: masked, found by the leak scan, and a disclosure outside ${issuedBy ?? 'every operation'}`, () => {
      const redactor = redactorOfTheRun();

      // (1) The Redactor masks it in text, in a JSON body, and in a JSON value, and leaves the structure.
      const text = redactor.text(`echo: ${planted} :end`);
      assert.ok(text.includes(REDACTED), text);
      assert.ok(text.startsWith('echo: ') && text.endsWith(' :end'), text);
      assert.deepEqual(redactor.seen(text), [], text);
      const body = redactor.body(JSON.stringify({ echo: `before ${planted} after`, [planted]: 1 }));
      const parsed = JSON.parse(body) as Record<string, unknown>;
      assert.deepEqual(redactor.seen(body), [], body);
      assert.match(String(parsed.echo), /^before .*\[REDACTED\].* after$/s);
      const asJson = JSON.stringify(redactor.json({ list: [planted] }));
      assert.deepEqual(redactor.seen(asJson), [], asJson);
      // Masked inside JSON text as written (a report's own escaping), it is still JSON.
      const inReport = redactor.text(JSON.stringify({ body: JSON.stringify({ echo: planted }) }));
      assert.doesNotThrow(() => JSON.parse(JSON.parse(inReport).body), inReport);
      assert.deepEqual(redactor.seen(inReport), [], inReport);

      // (2) The leak scan finds it in a written report, in the clear and inside the report's JSON.
      const dir = mkdtempSync(join(tmpdir(), 'momo-encoded-leak-'));
      writeFileSync(join(dir, 'evidence.txt'), `response body: ${planted}\n`);
      writeFileSync(
        join(dir, 'messages.ndjson'),
        `${JSON.stringify({ attachment: { body: JSON.stringify({ response: { body: planted } }) } })}\n`,
      );
      const number = SECRETS.findIndex((s) => s.value === value) + 1;
      const leaks = scanForSecrets(
        dir,
        SECRETS.map((s) => s.value),
      );
      for (const file of ['evidence.txt', 'messages.ndjson']) {
        assert.ok(
          leaks.some((leak) => leak.file === file && leak.kind.startsWith(`configured secret #${number} (`)),
          `${file}: ${JSON.stringify(leaks)}`,
        );
      }
      assert.ok(leaks.every((leak) => !leak.kind.includes(value) && !leak.kind.includes(planted)));

      // (3) A response of another operation that carries it discloses it, named by kind, never shown.
      const disclosed = secretsDisclosed('requestToPay', `{"echo":"${planted}"}`, redactor);
      assert.ok(
        disclosed.some((d) => d.startsWith(`a ${kind}`) || d.startsWith(`an ${kind}`)),
        JSON.stringify(disclosed),
      );
      assert.ok(disclosed.every((d) => !d.includes(value) && !d.includes(planted)));
      if (issuedBy) assert.deepEqual(secretsDisclosed(issuedBy, `{"echo":"${planted}"}`, redactor), []);
      else assert.ok(secretsDisclosed('createApiKey', planted, redactor).length > 0, 'a subscription key is issued by no operation');
    });
  }
}

test('each sighting says how the secret was written', () => {
  const redactor = redactorOfTheRun();
  const how = (text: string) =>
    redactor
      .seen(text)
      .filter((s) => s.kind === 'subscription key')
      .map((s) => s.encoding);
  assert.deepEqual(how(SUBSCRIPTION_KEY), ['in the clear']);
  assert.deepEqual(how(Buffer.from(SUBSCRIPTION_KEY).toString('hex')), ['hex-encoded']);
  assert.deepEqual(how(embedded(SUBSCRIPTION_KEY, 2).toString('base64')), ['base64-encoded']);
  assert.deepEqual(how(percentEncodedEveryByte(SUBSCRIPTION_KEY, false)), ['URL-encoded']);
  assert.deepEqual(how(unicodeEscaped(SUBSCRIPTION_KEY, () => true)), ['JSON-escaped']);
  assert.deepEqual(how(wrapped(Buffer.from(SUBSCRIPTION_KEY).toString('hex'), 8, '\r\n')), ['hex-encoded, split across lines']);
  assert.deepEqual(secretsDisclosed('getBalance', wrapped(embedded(SUBSCRIPTION_KEY, 1).toString('base64'), 10, '\n'), redactor), [
    'a subscription key (base64-encoded, split across lines)',
  ]);
});

test('tokens are disclosed outside the operation that issues them, and a secret of no known kind everywhere', () => {
  const redactor = new Redactor();
  redactor.add('access-token-0123456789', 'access token');
  redactor.add('refresh-token-0123456789', 'refresh token');
  redactor.add('consent-token-0123456789', 'consent token');
  redactor.add('opaque-secret-0123456789');
  assert.deepEqual(secretsDisclosed('createAccessToken', '{"access_token":"access-token-0123456789"}', redactor), []);
  assert.deepEqual(
    secretsDisclosed(
      'createOAuthToken',
      '{"access_token":"consent-token-0123456789","refresh_token":"refresh-token-0123456789"}',
      redactor,
    ),
    [],
  );
  assert.deepEqual(secretsDisclosed('requestToPay', Buffer.from('refresh-token-0123456789').toString('hex'), redactor), [
    'a refresh token (hex-encoded)',
  ]);
  assert.deepEqual(secretsDisclosed('createOAuthToken', 'access-token-0123456789', redactor), ['an access token (in the clear)']);
  assert.deepEqual(secretsDisclosed('createApiKey', 'opaque-secret-0123456789', redactor), ['a secret of the run (in the clear)']);
  assert.deepEqual(secretsDisclosed('requestToPay', '{"status":"PENDING"}', redactor), []);
});

test('a backslash before a secret that starts with n is not taken for an escaped line break', () => {
  const redactor = new Redactor();
  redactor.add('nkey-0123456789', 'subscription key');
  assert.equal(redactor.text('path\\nkey-0123456789'), `path${REDACTED}`);
  assert.equal(redactor.text('path\\\\nkey-012%33456789'), `path${REDACTED}`);
  assert.deepEqual(secretsDisclosed('requestToPay', '"\\\\nkey-0123456789"', redactor), ['a subscription key (in the clear)']);
});

test('innocent text is left alone: ids, ordinary bodies, long random base64 and hex', () => {
  const redactor = redactorOfTheRun();
  const finder = new SecretFinder(SECRETS.map((s) => s.value));
  const innocent = [
    '3f1c2b7a-9d4e-4c1a-8b2f-0e6d5a4c3b21',
    JSON.stringify({
      amount: '12.50',
      currency: 'EUR',
      externalId: '1',
      payer: { partyIdType: 'MSISDN', partyId: '46733123454' },
      payerMessage: 'Pay for the primary key/2026 order',
      status: 'SUCCESSFUL',
    }),
    JSON.stringify({ referenceId: USER_ID, providerCallbackHost: 'example.com', note: 'a\\nb\\u0041%41\r\n' }),
    wrapped(randomBytes(1024 * 1024).toString('base64'), 76, '\r\n'),
    randomBytes(256 * 1024).toString('base64url'),
    randomBytes(256 * 1024).toString('hex'),
    Buffer.from(`${USER_ID}:another-key-entirely`).toString('base64'),
  ];
  for (const text of innocent) {
    assert.deepEqual(finder.find(text), [], text.slice(0, 80));
    assert.equal(redactor.text(text), text);
    if (text.startsWith('{')) assert.equal(redactor.body(text), text);
  }
  const dir = mkdtempSync(join(tmpdir(), 'momo-innocent-'));
  for (const [i, text] of innocent.entries()) writeFileSync(join(dir, `report-${i}.txt`), text);
  assert.deepEqual(
    scanForSecrets(
      dir,
      SECRETS.map((s) => s.value),
    ),
    [],
  );
});

test('base64 is searched for at each of the 3 offsets a secret can start at, by the part its bytes alone decide', () => {
  const base64 = formsOf('abcdef')
    .filter((f) => f.encoding === 'base64')
    .map((f) => f.text);
  // base64 of 'abcdef' after 0, 1 and 2 bytes is YWJjZGVm, AGFiY2RlZg==, AABhYmNkZWY=: less their ends.
  assert.deepEqual(base64, ['YWJjZGVm', 'FiY2RlZ', 'hYmNkZW']);
  for (const offset of [0, 1, 2]) {
    for (const before of [Buffer.alloc(offset), Buffer.alloc(offset, 0xff), randomBytes(offset + 3 * 5)]) {
      const encoded = Buffer.concat([before, Buffer.from('abcdef'), randomBytes(4)]).toString('base64');
      assert.ok(
        base64.some((middle) => encoded.includes(middle)),
        `${encoded} after ${before.length} bytes`,
      );
    }
  }
});

test('a report larger than one piece of the scan is read whole, and a secret across two pieces is found', () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-large-report-'));
  const filler = 'x'.repeat(8 * 1024 * 1024 - 10);
  writeFileSync(join(dir, 'large.txt'), `${filler}${Buffer.from(SUBSCRIPTION_KEY).toString('hex')}\n${'y'.repeat(1024)}`);
  writeFileSync(join(dir, 'larger.txt'), `${filler}${filler}${filler}... ${API_KEY}`);
  assert.deepEqual(
    scanForSecrets(dir, [SUBSCRIPTION_KEY, API_KEY])
      .map((l) => `${l.file}: ${l.kind}`)
      .sort(),
    ['large.txt: configured secret #1 (hex-encoded)', 'larger.txt: configured secret #2 (in the clear)'],
  );
});

test('any secret, in any planted form, cut by line breaks anywhere, between any text: masked to nothing left, and JSON stays JSON', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9+/=_ .:-]{6,40}$/).filter((s) => s.trim() === s);
  const around = fc.string({ maxLength: 20 });
  // Line breaks anywhere in the planted form: where, and which.
  const breaks = fc.array(fc.tuple(fc.nat(), fc.constantFrom('\n', '\r\n')), { maxLength: 4 });
  fc.assert(
    fc.property(secret, around, around, fc.nat(), breaks, (value, before, after, pick, lineBreaks) => {
      const redactor = new Redactor();
      redactor.add(value, 'subscription key');
      const forms = plantings(value);
      let [, planted] = forms[pick % forms.length]!;
      for (const [at, lineBreak] of lineBreaks)
        planted = `${planted.slice(0, at % planted.length)}${lineBreak}${planted.slice(at % planted.length)}`;
      const text = `${before}${planted}${after}`;
      assert.deepEqual(redactor.seen(redactor.text(text)), []);
      const report = redactor.text(JSON.stringify({ body: text }));
      assert.doesNotThrow(() => JSON.parse(report), report);
      assert.deepEqual(redactor.seen(report), []);
      assert.deepEqual(redactor.seen(redactor.body(JSON.stringify({ body: text }))), []);
    }),
    { numRuns: 500, seed: 20260310 },
  );
});
