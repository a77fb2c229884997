import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../sandbox/domain/clock.ts';
import { TokenAuthority } from '../../sandbox/domain/tokens.ts';

const base64url = (text: string) => Buffer.from(text).toString('base64url');

describe('the token authority', () => {
  it('remembers a checked token, and never lets a forged one borrow its signature', () => {
    const clock = new ManualClock();
    const authority = new TokenAuthority('a secret of the sandbox', clock);
    const token = authority.issue({ sub: 'user-a', prd: 'collection', use: 'access' }, 3600);
    const good = authority.check(token, undefined, 'access');
    assert.ok(good.ok && good.claims.sub === 'user-a');
    // Checked again from memory: the same claims.
    assert.deepEqual(authority.check(token, undefined, 'access'), good);

    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${base64url(JSON.stringify({ ...claims, sub: 'user-b' }))}.${signature}`;
    const refused = authority.check(forged, undefined, 'access');
    assert.deepEqual(refused, { ok: false, description: 'The access token is malformed or its signature is not valid.' });
    // The forgery did not displace the good token either.
    assert.deepEqual(authority.check(token, undefined, 'access'), good);
    // Two clients' tokens in turn: each request finds its own token's claims, whether or not it came last.
    const second = authority.issue({ sub: 'user-c', prd: 'collection', use: 'access' }, 3600);
    for (const [each, sub] of [
      [second, 'user-c'],
      [token, 'user-a'],
      [second, 'user-c'],
      [second, 'user-c'],
      [token, 'user-a'],
    ] as const) {
      const check = authority.check(each, undefined, 'access');
      assert.ok(check.ok && check.claims.sub === sub, `${sub}'s token came back as ${JSON.stringify(check)}`);
    }

    const other = new TokenAuthority('another secret', clock);
    assert.equal(other.check(token, undefined, 'access').ok, false, 'another secret signs other tokens');
    assert.equal(authority.check('not.a.token', undefined, 'access').ok, false);
    assert.equal(authority.check('', undefined, 'access').ok, false);
    clock.advance(3601_000);
    assert.deepEqual(authority.check(token, undefined, 'access'), { ok: false, description: 'The access token expired.' });
  });
});
