import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { CallbackReceiver } from '../../harness/callbacks/receiver.ts';

interface Sent {
  status: number;
  body: string;
}

/** A raw HTTP request with node:http, so that the test controls method, path, headers and body exactly. */
function send(url: string, method: string, body?: string | Buffer, contentType?: string): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (contentType) headers['content-type'] = contentType;
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const ID = 'A1B2C3D4-0000-4000-8000-00000000000A';

async function withReceiver(fn: (receiver: CallbackReceiver) => Promise<void>): Promise<void> {
  const receiver = new CallbackReceiver('127.0.0.1');
  await receiver.start(0);
  try {
    await fn(receiver);
  } finally {
    await receiver.stop();
  }
}

/** The secret segment of a receiver's callback URLs. */
const secretOf = (receiver: CallbackReceiver) => new URL(receiver.urlFor('probe')).pathname.split('/')[2]!;

test('urlFor gives http://host:port/callbacks/<secret>/<id> on the port it listens on, the secret new for each receiver', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor(ID);
    assert.match(
      url,
      /^http:\/\/127\.0\.0\.1:\d+\/callbacks\/[A-Za-z0-9_-]{16}\/A1B2C3D4-0000-4000-8000-00000000000A\?order=[A-Za-z0-9_-]{8}$/,
    );
    assert.equal(receiver.urlFor(ID), url, 'the same URL each time it is asked for the same transaction');
    await withReceiver(async (other) => assert.notEqual(secretOf(other), secretOf(receiver)));
    const port = Number(new URL(url).port);
    assert.ok(port > 0);
    const sent = await send(url, 'PUT', '{}', 'application/json');
    assert.equal(sent.status, 200);
  });
});

test('the host given is the one in the URL, whatever address it binds', async () => {
  const receiver = new CallbackReceiver('callbacks.example.com');
  await receiver.start(0);
  try {
    assert.match(receiver.urlFor('x1'), /^http:\/\/callbacks\.example\.com:\d+\/callbacks\/[A-Za-z0-9_-]+\/x1\?order=[A-Za-z0-9_-]+$/);
  } finally {
    await receiver.stop();
  }
});

test('with a public base URL, the callback URLs are <base>/callbacks/<secret>/<id>, and callbacks sent to the port it listens on are kept', async () => {
  const receiver = new CallbackReceiver('abc.example.app', { publicBaseUrl: 'https://abc.example.app/' });
  await receiver.start(0);
  try {
    assert.equal(receiver.baseUrl, 'https://abc.example.app');
    const url = new URL(receiver.urlFor(ID));
    assert.equal(`${url.origin}${url.pathname}`, `https://abc.example.app/callbacks/${secretOf(receiver)}/${ID}`);
    // What the tunnel forwards arrives on the local port.
    const local = `http://127.0.0.1:${receiver.listeningPort}${url.pathname}${url.search}`;
    assert.equal((await send(local, 'PUT', '{"status":"SUCCESSFUL"}', 'application/json')).status, 200);
    assert.deepEqual(
      receiver.callbacksFor(ID).map((c) => c.body),
      [{ status: 'SUCCESSFUL' }],
    );
    assert.equal(receiver.unsolicited().length, 0);
  } finally {
    await receiver.stop();
  }
});

test('a fixed port and bind address are used as given; a taken port is reported clearly', async () => {
  const first = new CallbackReceiver('127.0.0.1', { bind: '127.0.0.1' });
  await first.start(0);
  const port = first.listeningPort;
  try {
    assert.ok(first.urlFor('p1').startsWith(`http://127.0.0.1:${port}/callbacks/${secretOf(first)}/p1?order=`), first.urlFor('p1'));
    const second = new CallbackReceiver('127.0.0.1', { bind: '127.0.0.1' });
    await assert.rejects(second.start(port), (error: Error) => {
      assert.match(error.message, new RegExp(`^The callback receiver cannot listen on 127\\.0\\.0\\.1 port ${port}: the port is taken`));
      return true;
    });
    await second.stop();
  } finally {
    await first.stop();
  }
  // The port is free again: a receiver bound to every address takes it, and is reached over loopback.
  const fixed = new CallbackReceiver('127.0.0.1', { bind: '0.0.0.0' });
  await fixed.start(port);
  try {
    assert.equal(fixed.listeningPort, port);
    assert.equal((await send(fixed.urlFor('p2'), 'PUT', '{}', 'application/json')).status, 200);
    assert.equal(fixed.callbacksFor('p2').length, 1);
  } finally {
    await fixed.stop();
  }
});

test('PUT and POST callbacks with JSON are recorded with method, path, body and content type; the id is case-insensitive', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor(ID);
    const before = Date.now();
    const put = await send(url, 'PUT', '{"status":"SUCCESSFUL","amount":"5"}', 'application/json');
    const post = await send(url, 'POST', '{"status":"FAILED"}', 'application/json; charset=utf-8');
    assert.equal(put.status, 200);
    assert.equal(post.status, 200);
    const got = receiver.callbacksFor(ID.toLowerCase());
    assert.equal(got.length, 2);
    assert.equal(got[0]!.method, 'PUT');
    assert.equal(got[0]!.path, `${new URL(url).pathname}${new URL(url).search}`);
    assert.equal(got[0]!.contentType, 'application/json');
    assert.deepEqual(got[0]!.body, { status: 'SUCCESSFUL', amount: '5' });
    assert.equal(got[0]!.rawBody, '{"status":"SUCCESSFUL","amount":"5"}');
    assert.ok(got[0]!.receivedAt >= before);
    assert.equal(got[1]!.method, 'POST');
    assert.equal(got[1]!.contentType, 'application/json; charset=utf-8');
    assert.deepEqual(got[1]!.body, { status: 'FAILED' });
    assert.equal(receiver.callbacksFor(ID).length, 2);
    assert.equal(receiver.callbacksFor(ID.toUpperCase()).length, 2);
    assert.equal(receiver.callbacksFor('another-id').length, 0);
    assert.deepEqual(receiver.unsolicited(), []);
  });
});

test('a callback without the query of the URL handed out, or with another, did not arrive there: it is nobody’s', async () => {
  await withReceiver(async (receiver) => {
    const url = new URL(receiver.urlFor(ID));
    const bare = `${url.origin}${url.pathname}`;
    assert.equal((await send(bare, 'PUT', '{}', 'application/json')).status, 200);
    assert.equal((await send(`${bare}?order=other`, 'PUT', '{}', 'application/json')).status, 200);
    assert.equal((await send(`${url.href}&more=1`, 'PUT', '{}', 'application/json')).status, 200);
    assert.equal(receiver.callbacksFor(ID).length, 0, 'none came to the URL given');
    assert.equal(receiver.unsolicited().length, 3);
    assert.equal((await send(url.href, 'PUT', '{}', 'application/json')).status, 200);
    assert.equal(receiver.callbacksFor(ID).length, 1);
  });
});

test("a callback sent to the id in another case is still the transaction's", async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor(ID);
    await send(url.replace(ID, ID.toLowerCase()), 'PUT', '{"a":1}', 'application/json');
    assert.equal(receiver.callbacksFor(ID).length, 1);
    assert.deepEqual(receiver.unsolicited(), []);
  });
});

test('duplicates are kept', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor('dup-1');
    await send(url, 'PUT', '{"status":"SUCCESSFUL"}', 'application/json');
    await send(url, 'PUT', '{"status":"SUCCESSFUL"}', 'application/json');
    const got = receiver.callbacksFor('dup-1');
    assert.equal(got.length, 2);
    assert.deepEqual(
      got.map((c) => c.body),
      [{ status: 'SUCCESSFUL' }, { status: 'SUCCESSFUL' }],
    );
  });
});

test('callbacks to an id never handed out, or to any other path than the exact URL given, are unsolicited', async () => {
  await withReceiver(async (receiver) => {
    const url = new URL(receiver.urlFor('expected-1'));
    const { origin } = url;
    const secret = secretOf(receiver);
    await send(`${origin}/callbacks/${secret}/never-given`, 'PUT', '{"x":1}', 'application/json');
    await send(`${origin}/elsewhere/expected-1`, 'POST', '{"y":2}', 'application/json');
    await send(`${origin}${url.pathname}/anything${url.search}`, 'PUT', '{"after":1}', 'application/json');
    await send(`${origin}${url.pathname}?retry=1`, 'PUT', '{"query":1}', 'application/json');
    await send(url.href, 'PUT', '{"z":3}', 'application/json');
    const unsolicited = receiver.unsolicited();
    assert.deepEqual(
      unsolicited.map((c) => c.path),
      [
        `/callbacks/${secret}/never-given`,
        '/elsewhere/expected-1',
        `/callbacks/${secret}/expected-1/anything${url.search}`,
        `/callbacks/${secret}/expected-1?retry=1`,
      ],
    );
    assert.equal(unsolicited[0]!.referenceId, 'never-given');
    assert.equal(unsolicited[1]!.referenceId, undefined);
    assert.deepEqual(unsolicited[1]!.body, { y: 2 });
    assert.deepEqual(
      receiver.callbacksFor('expected-1').map((c) => c.body),
      [{ z: 3 }],
    );
  });
});

test('a callback that knows the reference id but not the secret segment is unsolicited: a forged callback sways no verdict', async () => {
  await withReceiver(async (receiver) => {
    const url = new URL(receiver.urlFor(ID));
    await send(`${url.origin}/callbacks/${ID}`, 'PUT', '{"status":"SUCCESSFUL"}', 'application/json');
    await send(`${url.origin}/callbacks/guessed-secret/${ID}`, 'PUT', '{"status":"SUCCESSFUL"}', 'application/json');
    assert.equal(receiver.callbacksFor(ID).length, 0);
    assert.equal(receiver.unsolicited().length, 2);
  });
});

test('a body over 256 KiB is refused with 413 and not recorded', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor('big-1');
    const big = `{"pad":"${'x'.repeat(300 * 1024)}"}`;
    const sent = await send(url, 'PUT', big, 'application/json').catch((error: Error & { code?: string }) => ({
      status: -1,
      body: `${error.code ?? ''} ${error.message}`,
    }));
    assert.equal(sent.status, 413, `the client saw: ${sent.body}`);
    assert.equal(receiver.callbacksFor('big-1').length, 0);
    assert.equal(receiver.unsolicited().length, 0);
    // The receiver still works afterwards, and a body just under the limit is accepted.
    const justUnder = `{"pad":"${'y'.repeat(256 * 1024 - 20)}"}`;
    assert.equal((await send(url, 'PUT', justUnder, 'application/json')).status, 200);
    assert.equal(receiver.callbacksFor('big-1').length, 1);
  });
});

test('a body over 256 KiB is not recorded, and the receiver keeps working', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor('big-2');
    const big = `{"pad":"${'x'.repeat(300 * 1024)}"}`;
    await send(url, 'PUT', big, 'application/json').catch(() => undefined);
    assert.equal(receiver.callbacksFor('big-2').length, 0);
    assert.equal((await send(url, 'PUT', '{"ok":true}', 'application/json')).status, 200);
    assert.deepEqual(
      receiver.callbacksFor('big-2').map((c) => c.body),
      [{ ok: true }],
    );
  });
});

test('a body that is not JSON is recorded with body undefined and its raw text', async () => {
  await withReceiver(async (receiver) => {
    const url = receiver.urlFor('text-1');
    assert.equal((await send(url, 'POST', 'status=SUCCESSFUL', 'application/x-www-form-urlencoded')).status, 200);
    assert.equal((await send(url, 'PUT', '{"broken":', 'application/json')).status, 200);
    assert.equal((await send(url, 'POST')).status, 200);
    const got = receiver.callbacksFor('text-1');
    assert.equal(got.length, 3);
    assert.equal(got[0]!.body, undefined);
    assert.equal(got[0]!.rawBody, 'status=SUCCESSFUL');
    assert.equal(got[0]!.contentType, 'application/x-www-form-urlencoded');
    assert.equal(got[1]!.body, undefined);
    assert.equal(got[1]!.rawBody, '{"broken":');
    assert.equal(got[2]!.body, undefined);
    assert.equal(got[2]!.rawBody, '');
    assert.equal(got[2]!.contentType, undefined);
  });
});

test('stop() closes the listener: a later request fails', async () => {
  const receiver = new CallbackReceiver('127.0.0.1');
  await receiver.start(0);
  const url = receiver.urlFor('stop-1');
  assert.equal((await send(url, 'PUT', '{}', 'application/json')).status, 200);
  await receiver.stop();
  await assert.rejects(send(url, 'PUT', '{}', 'application/json'), (error: Error & { code?: string }) => error.code === 'ECONNREFUSED');
  // A second stop is harmless.
  await receiver.stop();
});

test('a callback path with a malformed percent-encoding is answered and kept as unsolicited; the receiver keeps working', async () => {
  await withReceiver(async (receiver) => {
    const url = new URL(receiver.urlFor('ok-1'));
    const sent = await Promise.race([
      send(`${url.origin}/callbacks/${secretOf(receiver)}/%E0%A4%A`, 'PUT', '{"a":1}', 'application/json').catch(
        (error: Error & { code?: string }) => ({ status: -1, body: `${error.code ?? ''} ${error.message}` }),
      ),
      new Promise<Sent>((resolve) => setTimeout(() => resolve({ status: -2, body: 'no answer within 1 s' }), 1000)),
    ]);
    assert.equal(sent.status, 200, sent.body);
    assert.equal(receiver.unsolicited().length, 1);
    assert.equal(receiver.unsolicited()[0]!.path, `/callbacks/${secretOf(receiver)}/%E0%A4%A`);
    assert.equal((await send(url.href, 'PUT', '{}', 'application/json')).status, 200);
  });
});
