import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, Redactor } from '../../core/secrets/redact.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eXoifQ.c2lnbmF0dXJlLXZhbHVl';

test('secret headers are masked by name, in any case, keeping the Basic or Bearer scheme', () => {
  const r = new Redactor();
  const out = r.headers({
    Authorization: `Bearer ${JWT}`,
    'proxy-authorization': 'Basic dXNlcjpwYXNz',
    'OCP-APIM-SUBSCRIPTION-KEY': 'abcdef123456',
    Cookie: 'session=1',
    'set-cookie': ['a=1', 'b=2'],
    'X-Reference-Id': '3f1c2b7a-9d4e-4c1a-8b2f-0e6d5a4c3b21',
    'x-skipped': undefined,
  });
  assert.deepEqual(out, {
    Authorization: `Bearer ${REDACTED}`,
    'proxy-authorization': `Basic ${REDACTED}`,
    'OCP-APIM-SUBSCRIPTION-KEY': REDACTED,
    Cookie: REDACTED,
    'set-cookie': REDACTED,
    'X-Reference-Id': '3f1c2b7a-9d4e-4c1a-8b2f-0e6d5a4c3b21',
  });
});

test('an Authorization header without a known scheme is masked whole', () => {
  assert.deepEqual(new Redactor().headers({ authorization: 'Token abc' }), { authorization: REDACTED });
});

test('other headers have JWTs and known secrets masked', () => {
  const r = new Redactor();
  r.add('my-subscription-key');
  assert.deepEqual(r.headers({ 'x-callback-url': `http://cb/?t=${JWT}`, 'x-echo': 'key my-subscription-key here' }), {
    'x-callback-url': `http://cb/?t=${REDACTED}`,
    'x-echo': `key ${REDACTED} here`,
  });
});

test('json() masks apiKey, access_token, refresh_token, password and client_secret fields at any depth', () => {
  const r = new Redactor();
  const input = {
    apiKey: 'f1db798c98df4bcf83b538175893bbf0',
    nested: { access_token: 'opaque-token', refresh_token: 'r-token', list: [{ password: 'p', client_secret: 's', keep: 'v' }] },
    token_type: 'Bearer',
    expires_in: 3600,
    nothing: null,
  };
  assert.deepEqual(r.json(input), {
    apiKey: REDACTED,
    nested: { access_token: REDACTED, refresh_token: REDACTED, list: [{ password: REDACTED, client_secret: REDACTED, keep: 'v' }] },
    token_type: 'Bearer',
    expires_in: 3600,
    nothing: null,
  });
  // The input is not changed.
  assert.equal(input.apiKey, 'f1db798c98df4bcf83b538175893bbf0');
});

test('json() masks JWTs and known secrets inside string values', () => {
  const r = new Redactor();
  r.add('secret-value-1');
  assert.deepEqual(r.json({ note: `token ${JWT}`, list: ['secret-value-1', 'fine'] }), {
    note: `token ${REDACTED}`,
    list: [REDACTED, 'fine'],
  });
});

test('text() masks JWT-shaped strings anywhere', () => {
  const r = new Redactor();
  assert.equal(r.text(`{"access_token":"${JWT}","x":1}`), `{"access_token":"${REDACTED}","x":1}`);
  assert.equal(r.text(`Bearer ${JWT} and again ${JWT}`), `Bearer ${REDACTED} and again ${REDACTED}`);
  assert.equal(r.text('eyJ.short.x is no JWT'), 'eyJ.short.x is no JWT');
  assert.equal(r.text('nothing secret here'), 'nothing secret here');
});

test('added secrets are masked wherever they appear, every occurrence', () => {
  const r = new Redactor();
  r.add('sub-key-123456');
  assert.equal(r.text('a sub-key-123456 b sub-key-123456'), `a ${REDACTED} b ${REDACTED}`);
  assert.ok(r.known.has('sub-key-123456'));
});

test('secrets shorter than 6 characters, empty or undefined are ignored', () => {
  const r = new Redactor();
  r.add('abcde');
  r.add('');
  r.add(undefined);
  assert.equal(r.known.size, 0);
  assert.equal(r.text('abcde is kept'), 'abcde is kept');
  r.add('abcdef');
  assert.equal(r.text('abcdef is not'), `${REDACTED} is not`);
});

test('addBasicCredential masks the API key and the base64 of user:key, as in a Basic header', () => {
  const r = new Redactor();
  const userId = '7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f';
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  r.addBasicCredential(userId, apiKey);
  const b64 = Buffer.from(`${userId}:${apiKey}`).toString('base64');
  assert.equal(r.text(`Authorization: Basic ${b64}`), `Authorization: Basic ${REDACTED}`);
  assert.equal(r.text(`{"apiKey":"${apiKey}"}`), `{"apiKey":"${REDACTED}"}`);
  // The user id is not a secret.
  assert.ok(r.text(userId).includes(userId));
  assert.ok(r.known.has(apiKey));
  assert.ok(r.known.has(b64));
});

test('a body that is not JSON (cut off halfway) still has its secret fields masked, by their shape', () => {
  const r = new Redactor();
  assert.equal(r.body('{"apiKey":"25067698da33'), `{"apiKey":"${REDACTED}"`);
  assert.equal(
    r.body('{"access_token" : "abc.def", "expires_in": 3600, "refresh_token":"zz'),
    `{"access_token" : "${REDACTED}", "expires_in": 3600, "refresh_token":"${REDACTED}"`,
  );
  assert.equal(r.body('<html><body>apiKey</body></html>'), '<html><body>apiKey</body></html>');
});

test('a secret is masked in the names of a JSON body as in its values', () => {
  const r = new Redactor();
  r.add('sub-key-123456', 'subscription key');
  assert.equal(r.body('{"sub-key-123456":{"echo":"sub-key-123456"}}'), `{"${REDACTED}":{"echo":"${REDACTED}"}}`);
});

test('masking an escaped secret in JSON text takes whole escapes, so the JSON still parses', () => {
  const r = new Redactor();
  r.add('sub-key-123456', 'subscription key');
  const escaped = JSON.stringify({ echo: 'sub-key-123456'.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`), next: 'n' });
  const masked = r.text(escaped);
  assert.deepEqual(JSON.parse(masked), { echo: REDACTED, next: 'n' });
  // A backslash just before a secret goes with it, rather than be left to escape the mask's first character.
  r.add('tab-key-123456', 'subscription key');
  assert.deepEqual(JSON.parse(r.text('{"echo":"\\tab-key-123456"}')), { echo: REDACTED });
});

test('seen() names each known secret in a text by its kind and how it was written, never its value', () => {
  const r = new Redactor();
  r.add('sub-key-123456', 'subscription key');
  r.addBasicCredential('7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f', 'f1db798c98df4bcf83b538175893bbf0');
  assert.deepEqual(r.seen(`x ${Buffer.from('sub-key-123456').toString('hex')} y`), [{ kind: 'subscription key', encoding: 'hex-encoded' }]);
  assert.deepEqual(r.seen('f1db798c98df4bcf83b538175893bbf0'), [{ kind: 'API key', encoding: 'in the clear' }]);
  assert.deepEqual(r.seen('nothing here'), []);
});
