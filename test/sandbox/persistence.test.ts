/**
 * --data: the sandbox's state kept in a directory across restarts. Restarting on the same directory gives back
 * API users, keys, tokens, transactions, balances, consents and pending outcomes, which then settle and call
 * back; the journal's torn last line is recovered, and every other damage, a foreign or newer directory and a
 * second sandbox are refused with the directory left as it was; compaction keeps the directory bounded and
 * forgets what retention forgets. Time is the sandbox's ManualClock, carried from one start to the next.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { statusQueryOf } from '../../core/catalogue/routes.ts';
import type { Product } from '../../core/products.ts';
import { ManualClock } from '../../sandbox/domain/clock.ts';
import { DataDirectoryError, LOCK_FILE, MARKER_FILE } from '../../sandbox/domain/journal.ts';
import {
  KEYS,
  basic,
  consentToken,
  path,
  payer,
  requestToPayBody,
  startSandbox,
  type Caller,
  type TestSandbox,
} from '../support/sandbox.ts';

const directories: string[] = [];
after(() => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

function newDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'momo-sandbox-data-'));
  directories.push(dir);
  return dir;
}

/**
 * A sandbox on `dir`, on the clock given (a restart goes on with the clock of the start before). Its delayed
 * outcomes take longer than a consent's interval, so that a test can grant one while a payment is still pending.
 */
function startOn(dir: string, clock = new ManualClock(Date.UTC(2026, 0, 1)), compactAfterBytes?: number): Promise<TestSandbox> {
  return startSandbox(
    { dataDir: dir, delayedSuccessMs: 5000, pendingTimeoutMs: 10_000 },
    { clock, ...(compactAfterBytes ? { dataDirectory: { compactAfterBytes } } : {}) },
  );
}

/** What a start on `dir` is refused with. */
async function refusal(dir: string): Promise<DataDirectoryError> {
  try {
    const sandbox = await startOn(dir);
    await sandbox.close();
  } catch (error) {
    assert.ok(error instanceof DataDirectoryError, `expected a DataDirectoryError, got ${String(error)}`);
    assert.ok(!error.message.includes('\n'), `the message is one line: ${error.message}`);
    return error;
  }
  assert.fail(`a sandbox started on ${dir}`);
}

/** Every file of a directory with its bytes: to show that a refused start left it as it was. */
function contentsOf(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name), 'latin1')]),
  );
}

const journalsOf = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('journal-'));
const snapshotsOf = (dir: string) => readdirSync(dir).filter((name) => /^snapshot-\d+\.jsonl$/.test(name));
const newestJournal = (dir: string) => join(dir, journalsOf(dir).sort().at(-1)!);

async function create(sandbox: TestSandbox, caller: Caller, id: OperationId, body: unknown, headers: Record<string, string> = {}) {
  const referenceId = randomUUID();
  const response = await sandbox.call({
    method: 'POST',
    url: path(id, caller.product),
    headers: { ...caller.headers, 'x-reference-id': referenceId, ...headers },
    payload: body,
  });
  assert.equal(response.statusCode, 202, response.body);
  return referenceId;
}

async function statusOf(sandbox: TestSandbox, caller: Caller, id: OperationId, referenceId: string) {
  const response = await sandbox.call({
    method: 'GET',
    url: path(statusQueryOf(id), caller.product, { referenceId }),
    headers: caller.headers,
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as { status: string; reason?: string; financialTransactionId?: string };
}

async function balanceOf(sandbox: TestSandbox, caller: Caller) {
  const response = await sandbox.call({ method: 'GET', url: path('getBalance', caller.product), headers: caller.headers });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { availableBalance: string }).availableBalance;
}

async function tokenFor(sandbox: TestSandbox, product: Product, userId: string, apiKey: string) {
  return sandbox.call({
    method: 'POST',
    url: path('createAccessToken', product),
    headers: { 'ocp-apim-subscription-key': KEYS[product], authorization: basic(userId, apiKey) },
  });
}

const FORM = 'application/x-www-form-urlencoded';

async function bcAuthorize(sandbox: TestSandbox, caller: Caller, headers: Record<string, string> = {}) {
  const response = await sandbox.call({
    method: 'POST',
    url: path('bcAuthorize', caller.product),
    headers: { ...caller.headers, 'content-type': FORM, ...headers },
    payload: 'login_hint=ID:46733123450/MSISDN&scope=profile&access_type=offline',
  });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { auth_req_id: string }).auth_req_id;
}

const notify = (sandbox: TestSandbox, caller: Caller, referenceId: string) =>
  sandbox.call({
    method: 'POST',
    url: path('deliveryNotification', caller.product, { referenceId }),
    headers: caller.headers,
    payload: { notificationMessage: 'Thanks' },
  });

const ciba = (authReqId: string) => `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`;

/** A callback listener on 127.0.0.1 that answers 200 and keeps each body it is sent. */
async function listen(): Promise<{ url: string; bodies: unknown[]; close(): Promise<void> }> {
  const bodies: unknown[] = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      raw += chunk;
    });
    request.on('end', () => {
      bodies.push(JSON.parse(raw));
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('--data: restarting on the same directory', () => {
  test('keeps API users, keys, tokens, transactions, balances and consents, and pending outcomes settle after it with their callbacks', async () => {
    const dir = newDirectory();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const listener = await listen();
    const first = await startOn(dir, clock);
    const collector = await first.provision('collection');
    const payerOut = await first.provision('disbursement');
    const paid = await create(first, collector, 'requestToPay', requestToPayBody('46733123499', '40'));
    const delayed = await create(first, collector, 'requestToPay', requestToPayBody('46733123454', '5'), {
      'x-callback-url': listener.url,
    });
    const expiring = await create(first, collector, 'requestToPay', requestToPayBody('46733123453', '6'));
    const failed = await create(first, collector, 'requestToPay', requestToPayBody('46733123451', '7'));
    const deposited = await create(first, payerOut, 'deposit', {
      amount: '15',
      currency: 'EUR',
      externalId: 'd-1',
      payee: payer('46733123499'),
    });
    const refunded = await create(first, payerOut, 'refund', {
      amount: '10',
      currency: 'EUR',
      externalId: 'r-1',
      referenceIdToRefund: paid,
    });
    const notified = await notify(first, collector, paid);
    assert.equal(notified.statusCode, 200, notified.body);
    const redeemed = await bcAuthorize(first, collector);
    const waiting = await bcAuthorize(first, collector);
    clock.advance(1000);
    const granted = await consentToken(first, collector, ciba(redeemed));
    assert.equal(granted.statusCode, 200, granted.body);
    const refreshToken = (granted.json() as { refresh_token: string }).refresh_token;
    const before = {
      paid: await statusOf(first, collector, 'requestToPay', paid),
      failed: await statusOf(first, collector, 'requestToPay', failed),
      deposited: await statusOf(first, payerOut, 'deposit', deposited),
      refunded: await statusOf(first, payerOut, 'refund', refunded),
      collection: await balanceOf(first, collector),
      disbursement: await balanceOf(first, payerOut),
    };
    assert.equal((await statusOf(first, collector, 'requestToPay', delayed)).status, 'PENDING');
    await first.close();

    const second = await startOn(dir, clock);
    try {
      assert.deepEqual(second.data?.recovered, { apiUsers: 2, transactions: 6, resumed: 2, consents: 2 });
      // The tokens of the first start open the second: the directory keeps the secret that signs them.
      assert.deepEqual(await statusOf(second, collector, 'requestToPay', paid), before.paid);
      assert.deepEqual(await statusOf(second, collector, 'requestToPay', failed), before.failed);
      assert.deepEqual(await statusOf(second, payerOut, 'deposit', deposited), before.deposited);
      assert.deepEqual(await statusOf(second, payerOut, 'refund', refunded), before.refunded);
      assert.equal(await balanceOf(second, collector), before.collection);
      assert.equal(await balanceOf(second, payerOut), before.disbursement);
      assert.equal(before.collection, '1000040', 'the request to pay credited the collection account');
      assert.equal(before.disbursement, '999975', 'the deposit and the refund debited the disbursement account');
      // The API key still opens a token, and the API user is there.
      assert.equal((await tokenFor(second, 'collection', collector.userId, collector.apiKey)).statusCode, 200);
      const user = await second.call({
        method: 'GET',
        url: path('getApiUser', undefined, { referenceId: collector.userId }),
        headers: { 'ocp-apim-subscription-key': KEYS.collection },
      });
      assert.deepEqual(user.json(), { providerCallbackHost: '127.0.0.1', targetEnvironment: 'sandbox' });
      // A creation is still known: its id is taken, and a refund sees what was refunded before.
      const again = await second.call({
        method: 'POST',
        url: path('requestToPay', 'collection'),
        headers: { ...collector.headers, 'x-reference-id': paid },
        payload: requestToPayBody(),
      });
      assert.equal(again.statusCode, 409, again.body);
      const overRefund = await create(second, payerOut, 'refund', {
        amount: '35',
        currency: 'EUR',
        externalId: 'r-2',
        referenceIdToRefund: paid,
      });
      assert.deepEqual(await statusOf(second, payerOut, 'refund', overRefund), {
        amount: '35',
        currency: 'EUR',
        externalId: 'r-2',
        payee: payer('46733123499'),
        status: 'FAILED',
        reason: 'NOT_ALLOWED',
      });
      // The delivery notification's cooldown goes on.
      const notifiedAgain = await notify(second, collector, paid);
      assert.equal(notifiedAgain.statusCode, 429, notifiedAgain.body);
      // Consents: the redeemed one refreshes, the waiting one is redeemed now, once.
      assert.equal((await consentToken(second, collector, `grant_type=refresh_token&refresh_token=${refreshToken}`)).statusCode, 200);
      assert.equal((await consentToken(second, collector, ciba(waiting))).statusCode, 200);
      assert.equal((await consentToken(second, collector, ciba(redeemed))).statusCode, 400);
      // The pending outcomes settle when their time comes, and the delayed one calls back.
      second.clock.advance(second.settings.delayedSuccessMs);
      await second.context.callbacks.settled();
      const settled = await statusOf(second, collector, 'requestToPay', delayed);
      assert.equal(settled.status, 'SUCCESSFUL');
      assert.deepEqual(listener.bodies, [{ ...settled }]);
      second.clock.advance(second.settings.pendingTimeoutMs);
      assert.deepEqual(
        { ...(await statusOf(second, collector, 'requestToPay', expiring)) },
        {
          amount: '6',
          currency: 'EUR',
          externalId: 'ext-1',
          payer: payer('46733123453'),
          payerMessage: 'Pay for goods',
          payeeNote: 'Thanks',
          status: 'FAILED',
          reason: 'EXPIRED',
        },
      );
      assert.equal(await balanceOf(second, collector), '1000045', 'the delayed payment credited the account after the restart');
    } finally {
      await second.close();
      await listener.close();
    }
    // What settled after the restart is kept too.
    const third = await startOn(dir, clock);
    try {
      assert.equal((await statusOf(third, collector, 'requestToPay', delayed)).status, 'SUCCESSFUL');
      assert.equal((await statusOf(third, collector, 'requestToPay', expiring)).status, 'FAILED');
      assert.equal(third.data?.recovered.resumed, 0);
      assert.equal(await balanceOf(third, collector), '1000045');
    } finally {
      await third.close();
    }
  });

  test('a pending outcome whose time passed while the sandbox was down settles at once when it starts, and calls back', async () => {
    const dir = newDirectory();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const listener = await listen();
    const first = await startOn(dir, clock);
    const caller = await first.provision('collection');
    const delayed = await create(first, caller, 'requestToPay', requestToPayBody('46733123454', '5'), { 'x-callback-url': listener.url });
    await first.close();
    clock.advance(10 * first.settings.delayedSuccessMs);
    const second = await startOn(dir, clock);
    try {
      second.clock.advance(0);
      await second.context.callbacks.settled();
      const status = await statusOf(second, caller, 'requestToPay', delayed);
      assert.equal(status.status, 'SUCCESSFUL');
      assert.deepEqual(listener.bodies, [{ ...status }]);
    } finally {
      await second.close();
      await listener.close();
    }
  });

  test('a creation is answered once its record is in the journal', async () => {
    const dir = newDirectory();
    const sandbox = await startOn(dir);
    try {
      const caller = await sandbox.provision('collection');
      const id = await create(sandbox, caller, 'requestToPay', requestToPayBody());
      const journal = readFileSync(newestJournal(dir), 'utf8');
      assert.ok(journal.includes(`"referenceId":"${id}"`), 'the 202 came before its record was written');
      assert.ok(journal.includes(`"apiKey":"${caller.apiKey}"`), 'the API key was answered before it was written');
    } finally {
      await sandbox.close();
    }
  });

  test("a journal's last line cut short by a crash is left out, and the rest is read back", async () => {
    const dir = newDirectory();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const first = await startOn(dir, clock);
    const caller = await first.provision('collection');
    const kept = await create(first, caller, 'requestToPay', requestToPayBody());
    await first.close();
    appendFileSync(newestJournal(dir), `{"t":"tx","at":${clock.now()},"tx":{"kind":"requesttopay","referenceId":"cut-sh`);
    const second = await startOn(dir, clock);
    try {
      assert.equal((await statusOf(second, caller, 'requestToPay', kept)).status, 'SUCCESSFUL');
      assert.equal(second.data?.recovered.transactions, 1);
      for (const name of journalsOf(dir))
        assert.ok(!readFileSync(join(dir, name), 'utf8').includes('cut-sh'), `${name} still holds the cut line`);
    } finally {
      await second.close();
    }
  });
});

describe('--data: what is refused, with the directory left as it was', () => {
  async function directoryWithState(): Promise<string> {
    const dir = newDirectory();
    const sandbox = await startOn(dir);
    const caller = await sandbox.provision('collection');
    await create(sandbox, caller, 'requestToPay', requestToPayBody());
    await create(sandbox, caller, 'requestToPay', requestToPayBody());
    await sandbox.close();
    // Started again, so that the snapshot holds records and the journal a change.
    const again = await startOn(dir);
    await create(again, caller, 'requestToPay', requestToPayBody());
    await create(again, caller, 'requestToPay', requestToPayBody());
    await again.close();
    return dir;
  }

  test('a damaged line before the end of the journal', async () => {
    const dir = await directoryWithState();
    const journal = newestJournal(dir);
    const lines = readFileSync(journal, 'utf8').split('\n');
    lines.splice(1, 1, '{"t":"tx","at":1,"tx":{"kind":"requesttopay"');
    writeFileSync(journal, lines.join('\n'));
    const before = contentsOf(dir);
    const error = await refusal(dir);
    assert.match(error.message, /journal-\d+\.jsonl line 2 cannot be read \(not JSON\); the directory was left as it is/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a line longer than any record, without an end, is damage: refused without reading it whole', async () => {
    const dir = await directoryWithState();
    appendFileSync(newestJournal(dir), 'x'.repeat(17 * 1024 * 1024));
    const before = contentsOf(dir);
    const error = await refusal(dir);
    assert.match(error.message, /journal-\d+\.jsonl line \d+ cannot be read \(it is longer than 16 MiB without an end\)/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a line that is JSON but not a record of the format', async () => {
    const dir = await directoryWithState();
    appendFileSync(newestJournal(dir), '{"t":"tx","at":1,"tx":{"kind":"requesttopay"}}\n');
    const before = contentsOf(dir);
    const error = await refusal(dir);
    assert.match(error.message, /journal-\d+\.jsonl line \d+ cannot be read \(.*must have required property/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a snapshot cut short', async () => {
    const dir = await directoryWithState();
    const snapshot = join(dir, snapshotsOf(dir)[0]!);
    writeFileSync(snapshot, readFileSync(snapshot, 'utf8').split('\n').slice(0, 2).join('\n').concat('\n'));
    const before = contentsOf(dir);
    assert.match((await refusal(dir)).message, /snapshot-\d+\.jsonl cannot be read \(the snapshot has no end line/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a directory that holds files and no marker: not ours', async () => {
    const dir = newDirectory();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const error = await refusal(dir);
    assert.match(error.message, /is not a sandbox data directory: it holds a file \(notes\.txt\) and no momo-sandbox\.json/);
    assert.deepEqual(contentsOf(dir), { 'notes.txt': 'mine' });
  });

  test("a marker of another program's format", async () => {
    const dir = newDirectory();
    writeFileSync(join(dir, MARKER_FILE), '{"format":"something else","version":1}');
    const before = contentsOf(dir);
    assert.match((await refusal(dir)).message, /is not a sandbox data marker/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a directory, or a journal, of a later format', async () => {
    const dir = await directoryWithState();
    const marker = JSON.parse(readFileSync(join(dir, MARKER_FILE), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, MARKER_FILE), JSON.stringify({ ...marker, version: 2 }));
    let before = contentsOf(dir);
    assert.match(
      (await refusal(dir)).message,
      /was written in format 2 of the sandbox's data, by a later momo-harness; this one reads format 1/,
    );
    assert.deepEqual(contentsOf(dir), before);

    writeFileSync(join(dir, MARKER_FILE), JSON.stringify(marker));
    const journal = newestJournal(dir);
    writeFileSync(journal, readFileSync(journal, 'utf8').replace('"version":1', '"version":2'));
    before = contentsOf(dir);
    assert.match((await refusal(dir)).message, /format 2/);
    assert.deepEqual(contentsOf(dir), before);
  });

  test('a second sandbox on a directory in use; a lock left by a process that is gone is taken over', async () => {
    const dir = newDirectory();
    const first = await startOn(dir);
    try {
      assert.match((await refusal(dir)).message, /is in use by this process; one sandbox at a time may use a data directory/);
    } finally {
      await first.close();
    }
    assert.ok(!readdirSync(dir).includes(LOCK_FILE), 'a sandbox that closes lets the directory go');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: Number(gone.stdout), host: (await import('node:os')).hostname() }));
    const second = await startOn(dir);
    await second.close();
  });
});

describe('--data: the directory stays bounded', () => {
  test('a journal that outgrows its snapshot begins a new generation, and what retention forgot is not carried into it', async () => {
    const dir = newDirectory();
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const first = await startOn(dir, clock, 8 * 1024);
    const caller = await first.provision('collection');
    const early: string[] = [];
    for (let i = 0; i < 40; i += 1) early.push(await create(first, caller, 'requestToPay', requestToPayBody('46733123499', '1')));
    const generation = (names: string[]) => Math.max(...names.map((name) => Number(/-(\d+)\./.exec(name)![1])));
    const startedAt = generation(snapshotsOf(dir));
    // Past the retention age: the early transactions are forgotten, and the snapshots after it leave them out.
    clock.advance(first.settings.retentionMaxAgeMs + 1);
    const renewed = await tokenFor(first, 'collection', caller.userId, caller.apiKey);
    caller.headers.authorization = `Bearer ${(renewed.json() as { access_token: string }).access_token}`;
    const late: string[] = [];
    for (let i = 0; i < 80; i += 1) late.push(await create(first, caller, 'requestToPay', requestToPayBody('46733123499', '1')));
    await new Promise<void>((resolve) => first.context.callbacks.settled().then(() => resolve()));
    await first.close();
    assert.ok(generation(snapshotsOf(dir)) > startedAt + 1, `no new generation began: ${readdirSync(dir).join(', ')}`);
    assert.equal(snapshotsOf(dir).length, 1, `older snapshots are deleted: ${readdirSync(dir).join(', ')}`);
    assert.equal(journalsOf(dir).length, 1, `older journals are deleted: ${readdirSync(dir).join(', ')}`);
    const snapshot = readFileSync(join(dir, snapshotsOf(dir)[0]!), 'utf8');
    assert.ok(!early.some((id) => snapshot.includes(id)), 'a forgotten transaction was carried into the snapshot');
    const total = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    assert.ok(total < 120 * 1024, `the directory holds ${total} bytes`);

    const second = await startOn(dir, clock);
    try {
      assert.equal(second.data?.recovered.transactions, 80);
      for (const id of late) assert.equal((await statusOf(second, caller, 'requestToPay', id)).status, 'SUCCESSFUL');
      assert.equal(await balanceOf(second, caller), String(1_000_000 + 120), 'the balance counts the forgotten payments too');
    } finally {
      await second.close();
    }
  });
});

describe('without --data', () => {
  test('nothing is written and no change is journaled', async () => {
    const sandbox = await startSandbox();
    try {
      assert.equal(sandbox.data, undefined);
      assert.equal(sandbox.context.state.journal, undefined);
      const caller = await sandbox.provision('collection');
      await create(sandbox, caller, 'requestToPay', requestToPayBody());
      assert.equal(sandbox.context.state.journal, undefined);
    } finally {
      await sandbox.close();
    }
  });
});

test('a directory that cannot be made is refused in one line', async () => {
  const parent = newDirectory();
  writeFileSync(join(parent, 'file'), '');
  const error = await refusal(join(parent, 'file', 'data'));
  assert.match(error.message, /cannot make the directory/);
  mkdirSync(join(parent, 'ok'));
});
