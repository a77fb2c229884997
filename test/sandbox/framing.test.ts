/**
 * A request whose body has no length the sandbox can trust is refused before any route answers it, and its
 * connection closed (RFC 9112 §6.3): from ../shared/attacks/raw-http.mjs, "Transfer-Encoding: xchunked" on
 * POST /health was answered 405 by the route, then 400 for the body read as a next request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { startSandbox, type TestSandbox } from '../support/sandbox.ts';

/** Writes raw bytes on a connection of their own; resolves with all that came back once the sandbox closed it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => void (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
    socket.setTimeout(5000, () => reject(new Error(`the connection stayed open; got ${JSON.stringify(data.slice(0, 200))}`)));
    socket.once('connect', () => socket.write(bytes));
  });
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

describe('request framing', () => {
  let sandbox: TestSandbox;
  let port: number;
  before(async () => {
    sandbox = await startSandbox();
    await sandbox.app.listen({ host: '127.0.0.1', port: 0 });
    port = (sandbox.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await sandbox.close();
  });

  // Node's parser refuses some itself (chunked, then another coding); the sandbox the rest, saying what to send.
  for (const [encoding, status, by] of [
    ['xchunked', 400, 'sandbox'],
    ['chunked, identity', 400, 'node'],
    ['identity', 400, 'sandbox'],
    ['gzip, chunked', 501, 'sandbox'],
  ] as const)
    test(`Transfer-Encoding: ${encoding} is answered ${status} before any route, and the connection closed`, async () => {
      const got = await exchange(
        port,
        `POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ${encoding}\r\n\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      // First the refusal; what follows on the connection is never routed (at most the parser's own 400 for the rest).
      assert.equal(statuses(got)[0], status, got);
      assert.ok(
        statuses(got).every((s) => s === 400 || s === 501),
        got,
      );
      if (by === 'sandbox') {
        assert.match(got, /Transfer-Encoding/);
        assert.match(got, /connection: close/i);
      }
    });

  test('chunked alone is served as before', async () => {
    const got = await exchange(
      port,
      'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
    );
    assert.deepEqual(statuses(got), [405], got);
  });
});
