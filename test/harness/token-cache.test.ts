import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenCache } from '../../harness/client/token-cache.ts';

/** A fetch that counts its calls per key and answers token-<key>-<n>, with a settable lifetime. */
function counter(lifetimeSeconds = 3600) {
  const calls: string[] = [];
  const fetch = async (key: string) => {
    calls.push(key);
    return { accessToken: `token-${key}-${calls.filter((k) => k === key).length}`, lifetimeSeconds };
  };
  return { calls, fetch };
}

test('one fetch serves many gets of the same key; another key has its own token', async () => {
  const { calls, fetch } = counter();
  const cache = new TokenCache({ fetch, now: () => 1_000 });
  for (let i = 0; i < 5; i++) assert.equal(await cache.get('collection:u1'), 'token-collection:u1-1');
  assert.deepEqual(calls, ['collection:u1']);
  assert.equal(cache.fetches, 1);
  assert.equal(await cache.get('disbursement:u2'), 'token-disbursement:u2-1');
  assert.deepEqual(calls, ['collection:u1', 'disbursement:u2']);
  assert.equal(cache.fetches, 2);
});

test('concurrent gets share one fetch', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let calls = 0;
  const cache = new TokenCache({
    fetch: async () => {
      calls += 1;
      await gate;
      return { accessToken: `shared-${calls}`, lifetimeSeconds: 3600 };
    },
  });
  const gets = Array.from({ length: 10 }, () => cache.get('k'));
  release();
  const tokens = await Promise.all(gets);
  assert.equal(calls, 1);
  assert.deepEqual(tokens, Array(10).fill('shared-1'));
  assert.equal(cache.fetches, 1);
});

test('refresh before expiry: lifetime 100 s and refreshBeforeMs 60 s refreshes 20 s early (a fifth of the lifetime)', async () => {
  let now = 0;
  const { calls, fetch } = counter(100);
  const cache = new TokenCache({ fetch, refreshBeforeMs: 60_000, now: () => now });
  assert.equal(await cache.get('k'), 'token-k-1');
  now = 79_000;
  assert.equal(await cache.get('k'), 'token-k-1');
  assert.equal(calls.length, 1);
  now = 81_000;
  assert.equal(await cache.get('k'), 'token-k-2');
  assert.equal(calls.length, 2);
  assert.equal(cache.fetches, 2);
  // The new token counts from 81 s: used until 161 s, refreshed after.
  now = 160_000;
  assert.equal(await cache.get('k'), 'token-k-2');
  now = 161_500;
  assert.equal(await cache.get('k'), 'token-k-3');
});

test('refreshBeforeMs applies when it is shorter than a fifth of the lifetime', async () => {
  let now = 0;
  const { calls, fetch } = counter(3600);
  const cache = new TokenCache({ fetch, refreshBeforeMs: 60_000, now: () => now });
  await cache.get('k');
  now = 3_539_000; // 1 s before expiry - 60 s
  assert.equal(await cache.get('k'), 'token-k-1');
  now = 3_541_000;
  assert.equal(await cache.get('k'), 'token-k-2');
  assert.equal(calls.length, 2);
});

test('the default margin is 60 s', async () => {
  let now = 0;
  const { calls, fetch } = counter(3600);
  const cache = new TokenCache({ fetch, now: () => now });
  await cache.get('k');
  now = 3_539_000;
  await cache.get('k');
  assert.equal(calls.length, 1);
  now = 3_540_000;
  await cache.get('k');
  assert.equal(calls.length, 2);
});

test('invalidate forces a fetch of that key only', async () => {
  const { calls, fetch } = counter();
  const cache = new TokenCache({ fetch, now: () => 0 });
  await cache.get('a');
  await cache.get('b');
  cache.invalidate('a');
  assert.equal(await cache.get('a'), 'token-a-2');
  assert.equal(await cache.get('b'), 'token-b-1');
  assert.deepEqual(calls, ['a', 'b', 'a']);
  assert.equal(cache.fetches, 3);
});

test('a failed fetch is not cached: the error reaches every waiting get, and the next get retries', async () => {
  let attempt = 0;
  const cache = new TokenCache({
    fetch: async () => {
      attempt += 1;
      if (attempt === 1) throw new Error('token endpoint said 500');
      return { accessToken: `ok-${attempt}`, lifetimeSeconds: 3600 };
    },
    now: () => 0,
  });
  const results = await Promise.allSettled([cache.get('k'), cache.get('k')]);
  assert.equal(attempt, 1);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.match(String((r as PromiseRejectedResult).reason), /token endpoint said 500/);
  }
  assert.equal(cache.fetches, 0);
  assert.equal(await cache.get('k'), 'ok-2');
  assert.equal(attempt, 2);
  assert.equal(cache.fetches, 1);
  assert.equal(await cache.get('k'), 'ok-2');
  assert.equal(attempt, 2);
});
