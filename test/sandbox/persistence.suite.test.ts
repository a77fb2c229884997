/**
 * The promise of --data, kept by a real process: `momo-harness sandbox --data <dir>` under a load of concurrent
 * creations is killed with SIGKILL mid-load and started again on the same directory. Every creation answered
 * 201 or 202 reads back; none that was refused or never sent exists; payments pending at the kill settle after
 * the restart and call back; the API user, its key and its token still work.
 *
 * A creation in flight at the kill (sent, no answer) may or may not exist: it may have been made durable with
 * its answer lost in the kill, or not have been written at all. Either is right, and the test accepts both.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { statusQueryOf } from '../../core/catalogue/routes.ts';
import type { Product } from '../../core/products.ts';
import { KEYS, basic, eventually, path, payer } from '../support/sandbox.ts';
import { startCli } from '../support/sandbox-cli.ts';

const IN_FLIGHT = 48;
/** Creations answered 202 before the kill: enough that the kill falls in the middle of the load. */
const ACCEPTED_BEFORE_KILL = 400;
const DELAYED_SUCCESS_MS = 3000;

const directory = mkdtempSync(join(tmpdir(), 'momo-sandbox-kill-'));
const agent = new Agent({ connections: IN_FLIGHT, pipelining: 1 });
after(async () => {
  rmSync(directory, { recursive: true, force: true });
  await agent.close();
});

type Answered = 'accepted' | 'refused' | 'unanswered';

interface Sandbox {
  base: string;
  kill(): Promise<void>;
}

async function startOnDirectory(): Promise<Sandbox> {
  const { child, out, exited } = startCli(
    ['--port', '0', '--data', directory, '--delayed-success-ms', String(DELAYED_SUCCESS_MS), '--log-level', 'warn'],
    {},
    120_000,
  );
  const base = await eventually(async () => /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out.stdout)?.[1], { timeoutMs: 30_000 }).catch(
    (error: Error) => {
      child.kill('SIGKILL');
      throw new Error(`the sandbox did not start: ${error.message}\n${out.stderr}`);
    },
  );
  await eventually(async () => (out.stdout.includes('health:') ? true : undefined), { timeoutMs: 10_000 });
  return {
    base,
    kill: async () => {
      child.kill('SIGKILL');
      const { signal } = await exited;
      assert.equal(signal, 'SIGKILL');
    },
  };
}

async function call(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string) {
  const response = await request(url, { method, headers, ...(body !== undefined ? { body } : {}), dispatcher: agent });
  const text = await response.body.text();
  return { status: response.statusCode, text };
}

interface Credentials {
  product: Product;
  userId: string;
  apiKey: string;
  token: string;
}

async function provision(base: string, product: Product): Promise<Credentials> {
  const key = { 'ocp-apim-subscription-key': KEYS[product] };
  const userId = randomUUID();
  const user = await call(
    'POST',
    `${base}${path('createApiUser')}`,
    { ...key, 'x-reference-id': userId, 'content-type': 'application/json' },
    '{"providerCallbackHost":"127.0.0.1"}',
  );
  assert.equal(user.status, 201, user.text);
  const created = await call('POST', `${base}${path('createApiKey', undefined, { referenceId: userId })}`, key);
  assert.equal(created.status, 201, created.text);
  const { apiKey } = JSON.parse(created.text) as { apiKey: string };
  return { product, userId, apiKey, token: await tokenOf(base, product, userId, apiKey) };
}

async function tokenOf(base: string, product: Product, userId: string, apiKey: string): Promise<string> {
  const answer = await call('POST', `${base}${path('createAccessToken', product)}`, {
    'ocp-apim-subscription-key': KEYS[product],
    authorization: basic(userId, apiKey),
  });
  assert.equal(answer.status, 200, answer.text);
  return (JSON.parse(answer.text) as { access_token: string }).access_token;
}

const headersOf = (caller: Credentials) => ({
  'ocp-apim-subscription-key': KEYS[caller.product],
  authorization: `Bearer ${caller.token}`,
  'x-target-environment': 'sandbox',
  'content-type': 'application/json',
});

/** One creation of the load, and what its answer says must be true after the restart. */
interface Creation {
  id: string;
  operation: OperationId;
  caller: Credentials;
  delayed: boolean;
  answered?: Answered;
}

/** The load's n-th creation: mostly payments that succeed at once, some delayed with a callback, some refused. */
function creationOf(n: number, collector: Credentials, payerOut: Credentials, callbackBase: string) {
  const id = randomUUID();
  const delayed = n % 10 === 3;
  const refusedCurrency = n % 7 === 5;
  const malformed = n % 11 === 6;
  const deposit = n % 2 === 1 && !delayed;
  const caller = deposit ? payerOut : collector;
  const operation: OperationId = deposit ? 'deposit' : 'requestToPay';
  const party = payer(delayed ? '46733123454' : '46733123499');
  const body = malformed
    ? '{"amount": "1",'
    : JSON.stringify({
        amount: '1',
        currency: refusedCurrency ? 'XOF' : 'EUR',
        externalId: String(n),
        ...(deposit ? { payee: party } : { payer: party }),
      });
  const headers: Record<string, string> = { ...headersOf(caller), 'x-reference-id': id };
  if (delayed) headers['x-callback-url'] = `${callbackBase}/${id}`;
  const creation: Creation = { id, operation, caller, delayed };
  return { creation, headers, body };
}

test('kill -9 under concurrent creations: every creation answered reads back after the restart, none refused or unsent exists, and pending ones settle and call back', async (t) => {
  const callbacks = new Map<string, unknown[]>();
  const listener = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      const id = req.url!.split('/').at(-1)!;
      callbacks.set(id, [...(callbacks.get(id) ?? []), JSON.parse(raw)]);
      res.end();
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const callbackBase = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
  t.after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  const first = await startOnDirectory();
  let killed = false;
  try {
    const collector = await provision(first.base, 'collection');
    const payerOut = await provision(first.base, 'disbursement');
    const creations: Creation[] = [];
    let accepted = 0;
    let sent = 0;
    let killing: Promise<void> | undefined;
    const worker = async () => {
      while (!killed) {
        const { creation, headers, body } = creationOf(sent++, collector, payerOut, callbackBase);
        creations.push(creation);
        try {
          const answer = await call('POST', `${first.base}${path(creation.operation, creation.caller.product)}`, headers, body);
          creation.answered = answer.status === 202 ? 'accepted' : 'refused';
          assert.ok(answer.status === 202 || answer.status === 400 || answer.status === 500, `${answer.status} ${answer.text}`);
          if (answer.status === 202) accepted += 1;
        } catch {
          creation.answered = 'unanswered';
        }
        if (accepted >= ACCEPTED_BEFORE_KILL && !killing) {
          killed = true;
          killing = first.kill();
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await killing;
    const neverSent = Array.from({ length: 20 }, () => randomUUID());

    const second = await startOnDirectory();
    try {
      // The API user, its key and the token of the first start all still work.
      assert.ok((await tokenOf(second.base, 'collection', collector.userId, collector.apiKey)).length > 0);
      const statusOf = async (creation: Pick<Creation, 'id' | 'operation' | 'caller'>) => {
        const url = `${second.base}${path(statusQueryOf(creation.operation), creation.caller.product, { referenceId: creation.id })}`;
        return call('GET', url, headersOf(creation.caller));
      };
      const counts = { accepted: 0, refused: 0, unanswered: 0, unansweredKept: 0 };
      for (const creation of creations) {
        const { status, text } = await statusOf(creation);
        counts[creation.answered!] += 1;
        if (creation.answered === 'accepted')
          assert.equal(status, 200, `${creation.id} was answered 202 before the kill and reads ${status} ${text}`);
        if (creation.answered === 'refused')
          assert.equal(status, 404, `${creation.id} was refused before the kill and reads ${status} ${text}`);
        if (creation.answered === 'unanswered') {
          assert.ok(status === 200 || status === 404, `${status} ${text}`);
          if (status === 200) counts.unansweredKept += 1;
        }
      }
      for (const id of neverSent) assert.equal((await statusOf({ id, operation: 'requestToPay', caller: collector })).status, 404);
      t.diagnostic(
        `${creations.length} creations sent, ${counts.accepted} accepted, ${counts.refused} refused, ${counts.unanswered} in flight at the kill (${counts.unansweredKept} of them kept)`,
      );
      assert.ok(counts.accepted >= ACCEPTED_BEFORE_KILL && counts.refused > 0, JSON.stringify(counts));

      // Payments pending at the kill settle after the restart, each calling back once with its final status.
      const delayed = creations.filter((c) => c.delayed && c.answered === 'accepted');
      assert.ok(delayed.length > 0, 'no delayed payment was accepted before the kill');
      for (const creation of delayed) {
        const final = await eventually(
          async () => {
            const { text } = await statusOf(creation);
            const record = JSON.parse(text) as { status: string };
            return record.status === 'SUCCESSFUL' && callbacks.has(creation.id) ? record : undefined;
          },
          { timeoutMs: DELAYED_SUCCESS_MS + 20_000, intervalMs: 100 },
        );
        assert.deepEqual(callbacks.get(creation.id), [final], `the callback of ${creation.id}`);
      }
    } finally {
      await second.kill();
    }
  } finally {
    if (!killed) await first.kill();
  }
});

test("a directory that is not the sandbox's is refused in one line, exit 2, and left as it is", async () => {
  const foreign = mkdtempSync(join(tmpdir(), 'momo-sandbox-foreign-'));
  try {
    writeFileSync(join(foreign, 'notes.txt'), 'mine');
    const { out, exited } = startCli(['--port', '0', '--data', foreign]);
    const { code } = await exited;
    assert.equal(code, 2, out.stderr);
    assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
    assert.match(out.stderr, /is not a sandbox data directory/);
    assert.doesNotMatch(out.stderr, /^\s+at /m);
  } finally {
    rmSync(foreign, { recursive: true, force: true });
  }
});
