import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { path, requestToPayBody, startListeningSandbox, type Caller, type ListeningSandbox } from '../support/sandbox.ts';

/**
 * The cases of ../shared/attacks/raw-http.mjs, each with the answers it may get: malformed request lines and
 * headers, smuggling, oversized and endless bodies, prototype-pollution keys in JSON, forms, queries and headers,
 * invalid UTF-8, NUL bytes, pipelining, a desync, Expect: 100-continue, encoded traversal and bad percent-encoding.
 * The sandbox answers each as HTTP allows, stores nothing it refused, and serves on unchanged after all of them.
 */

interface Received {
  text: string;
  statuses: number[];
}

/** Sends raw bytes on a connection of their own; collects what comes back until close or `quietMs` of silence. */
function exchange(port: number, bytes: string | Buffer, quietMs = 1000): Promise<Received> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ text, statuses: [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1])) });
    };
    const quiet = () => {
      clearTimeout(timer);
      timer = setTimeout(finish, quietMs);
    };
    socket.on('connect', () => {
      socket.write(bytes);
      quiet();
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      quiet();
    });
    socket.on('error', () => {
      /* a reset is one way of refusing; what was received is judged */
    });
    socket.on('close', finish);
  });
}

interface AttackCase {
  name: string;
  bytes: string | Buffer;
  /** The first status it may get ('none': the connection closed without an answer). */
  first?: ReadonlyArray<number | 'none'>;
  /** Or a judgement of every status received. */
  all?: (statuses: number[]) => boolean;
}

function attackCases(caller: Caller): AttackCase[] {
  const auth = Object.entries(caller.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const creationPath = path('requestToPay');
  const post = (body: string, extra = '') =>
    `POST ${creationPath} HTTP/1.1\r\nHost: x\r\n${auth}X-Reference-Id: ${randomUUID()}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;
  const postBytes = (body: Buffer) =>
    Buffer.concat([
      Buffer.from(
        `POST ${creationPath} HTTP/1.1\r\nHost: x\r\n${auth}X-Reference-Id: ${randomUUID()}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      ),
      body,
    ]);
  const form = (body: string) =>
    `POST ${path('bcAuthorize', 'collection')} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/x-www-form-urlencoded\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  const chunkedCreation = (chunks: string) =>
    `POST ${creationPath} HTTP/1.1\r\nHost: x\r\n${auth}X-Reference-Id: ${randomUUID()}\r\nContent-Type: application/json\r\n` +
    `Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}`;
  const payer = '"payer":{"partyIdType":"MSISDN","partyId":"46733123000"}';
  const statusOf = (id: string) => `GET ${path('getRequestToPayStatus', 'collection', { referenceId: id })}`;
  return [
    { name: 'a request line of garbage', bytes: 'GARBAGE\r\n\r\n', first: [400, 'none'] },
    { name: 'an HTTP/0.9 request line', bytes: 'GET /health\r\n\r\n', first: [200, 400] },
    { name: 'HTTP version 9.9', bytes: 'GET /health HTTP/9.9\r\nHost: x\r\n\r\n', first: [400, 505, 'none'] },
    { name: 'a NUL in the target', bytes: 'GET /hea\0lth HTTP/1.1\r\nHost: x\r\n\r\n', first: [400] },
    { name: 'a NUL in a header value', bytes: 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n', first: [400] },
    { name: 'bare LF line ends', bytes: 'GET /health HTTP/1.1\nHost: x\n\n', first: [200, 400] },
    { name: 'an obs-fold header', bytes: 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n', first: [200, 400] },
    { name: 'a space before a colon', bytes: 'GET /health HTTP/1.1\r\nHost : x\r\n\r\n', first: [400] },
    { name: 'no Host on HTTP/1.1', bytes: 'GET /health HTTP/1.1\r\n\r\n', first: [200, 400] },
    {
      name: 'an absolute-form target on another host',
      bytes: 'GET http://169.254.169.254/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      first: [200, 400, 404],
    },
    { name: 'a target of 100 KiB', bytes: `GET /${'a'.repeat(100 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`, first: [400, 414, 431] },
    { name: 'a header of 17 KiB', bytes: `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, first: [400, 431] },
    { name: 'a header of 65 KiB', bytes: `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(65 * 1024)}\r\n\r\n`, first: [400, 431] },
    {
      name: 'headers of 1 MiB in all',
      bytes: `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 1024 }, (_, i) => `X-H${i}: ${'b'.repeat(1000)}\r\n`).join('')}\r\n`,
      first: [400, 431],
    },
    {
      name: '3000 small headers',
      bytes: `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `a${i}: b\r\n`).join('')}\r\n`,
      first: [200, 400, 431],
    },
    { name: 'two different Content-Lengths', bytes: post('{"a":1}', 'Content-Length: 9\r\n'), first: [400] },
    { name: 'the same Content-Length twice', bytes: post('{"a":1}', 'Content-Length: 7\r\n'), first: [400] },
    {
      name: 'Content-Length with Transfer-Encoding: chunked (CL.TE smuggling)',
      bytes:
        'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n',
      all: (statuses) => statuses[0] === 400 && !statuses.includes(404),
    },
    {
      name: 'Transfer-Encoding: xchunked',
      bytes: 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n',
      first: [400, 404, 501],
    },
    {
      name: 'Transfer-Encoding: chunked, identity',
      bytes: 'POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 3\r\n\r\nabc',
      first: [400],
    },
    { name: 'a chunk size that overflows', bytes: chunkedCreation('FFFFFFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n'), first: [400, 413] },
    {
      name: 'a body of 64 KiB and one byte',
      bytes: post(`{"amount":"1","currency":"EUR",${payer},"payerMessage":"${'x'.repeat(64 * 1024)}"}`),
      first: [413],
    },
    {
      name: 'a chunked body of 1 MiB',
      bytes: chunkedCreation(`${Array.from({ length: 16 }, () => `10000\r\n${' '.repeat(0x10000)}\r\n`).join('')}0\r\n\r\n`),
      first: [413],
    },
    {
      name: 'a Content-Length of 10 GB, a few bytes sent',
      bytes: post('{}').replace(/Content-Length: \d+/, 'Content-Length: 10000000000'),
      first: [400, 413],
    },
    { name: 'a negative Content-Length', bytes: post('{}').replace(/Content-Length: \d+/, 'Content-Length: -1'), first: [400] },
    {
      name: 'a JSON array nested 30 000 deep',
      bytes: post(`{"amount":${'['.repeat(30_000)}${']'.repeat(30_000)},"currency":"EUR"}`),
      first: [400],
    },
    {
      // Unknown fields are ignored by default (the named reading unknownFields): the currency is missing, a business refusal.
      name: 'a JSON object nested 10 000 deep under an unknown key',
      bytes: post(`{"x":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`),
      all: (statuses) => statuses[0] === 400 || statuses[0] === 500,
    },
    {
      name: 'a JSON __proto__ key',
      bytes: post(`{"amount":"1","currency":"EUR",${payer},"__proto__":{"status":"FAILED","isAdmin":true}}`),
      first: [400],
    },
    {
      name: 'a JSON __proto__ key spelled with escapes',
      bytes: post(`{"amount":"1","currency":"EUR",${payer},"\\u005f\\u005fproto__":{"polluted":1}}`),
      first: [400],
    },
    {
      name: 'a JSON constructor.prototype',
      bytes: post(
        '{"amount":"1","currency":"EUR","payer":{"partyIdType":"MSISDN","partyId":"46733123000","constructor":{"prototype":{"polluted":1}}}}',
      ),
      first: [400],
    },
    {
      name: 'form fields __proto__[…] and constructor[prototype][…]',
      bytes: form(
        '__proto__[polluted]=1&constructor[prototype][polluted]=1&__proto__=x&login_hint=ID:46733123000/MSISDN&scope=openid&access_type=online',
      ),
      first: [200, 400],
    },
    {
      name: 'form fields named __proto__, constructor and hasOwnProperty',
      bytes: form('__proto__=x&constructor=y&login_hint=ID:46733123000/MSISDN&scope=openid&access_type=online&hasOwnProperty=1'),
      first: [200, 400],
    },
    {
      name: 'a query of __proto__[…]',
      bytes: 'GET /health?__proto__[polluted]=1&constructor[prototype][polluted]=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      first: [200],
    },
    {
      name: 'a header named __proto__',
      bytes: 'GET /health HTTP/1.1\r\nHost: x\r\n__proto__: polluted\r\nConnection: close\r\n\r\n',
      first: [200, 400],
    },
    {
      name: 'invalid UTF-8 inside a JSON string',
      bytes: postBytes(
        Buffer.concat([
          Buffer.from(`{"amount":"1","currency":"EUR",${payer},"payerMessage":"A`),
          Buffer.from([0xff, 0xfe, 0xc3]),
          Buffer.from('"}'),
        ]),
      ),
      first: [202, 400],
    },
    {
      name: 'invalid UTF-8 in a header',
      bytes: Buffer.concat([
        Buffer.from(`${statusOf(randomUUID())} HTTP/1.1\r\nHost: x\r\n${auth}X-Extra: `),
        Buffer.from([0xff, 0xc0, 0x80]),
        Buffer.from('\r\nConnection: close\r\n\r\n'),
      ]),
      first: [400, 404],
    },
    // Control characters in free text are the named reading freeText: refused only under --strict.
    {
      name: 'an escaped NUL in payerMessage',
      bytes: post(`{"amount":"1","currency":"EUR",${payer},"payerMessage":"a\\u0000b"}`),
      first: [202, 400],
    },
    { name: 'a raw NUL in a JSON body', bytes: post(`{"amount":"1","currency":"EUR",${payer},"payerMessage":"a\0b"}`), first: [400] },
    {
      name: 'three pipelined GETs',
      bytes:
        'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /profile HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      all: (statuses) => statuses.join() === '200,200,404',
    },
    {
      name: '200 pipelined GETs in one write',
      bytes: Array.from(
        { length: 200 },
        (_, i) => `GET /health HTTP/1.1\r\nHost: x\r\n${i === 199 ? 'Connection: close\r\n' : ''}\r\n`,
      ).join(''),
      all: (statuses) => statuses.length === 200 && statuses.every((s) => s === 200),
    },
    {
      name: 'a POST of Content-Length 0, then bytes that look like a request',
      bytes: 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      all: (statuses) => statuses.length === 2,
    },
    {
      name: 'Expect: 100-continue on a creation',
      bytes: post(JSON.stringify(requestToPayBody('46733123000', '1')), 'Expect: 100-continue\r\n'),
      all: (statuses) => statuses.includes(202),
    },
    {
      name: 'an encoded traversal in the path',
      bytes: `${statusOf('..%2f..%2fhealth')} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
      first: [400, 404],
    },
    {
      name: 'a malformed percent-encoding',
      bytes: `${statusOf('%E0%A4%A')} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
      first: [400],
    },
  ];
}

describe('the raw HTTP attacks of ../shared/attacks/raw-http.mjs', () => {
  let sandbox: ListeningSandbox;
  let caller: Caller;

  before(async () => {
    sandbox = await startListeningSandbox();
    caller = await sandbox.provision('collection');
  });
  after(async () => {
    await sandbox.close();
  });

  /** A creation and its status read through a fresh connection: the sandbox still serves its API. */
  async function servesOn(): Promise<void> {
    const id = randomUUID();
    const headers = { ...caller.headers, 'x-reference-id': id, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${sandbox.port}`;
    const created = await fetch(`${base}${path('requestToPay')}`, { method: 'POST', headers, body: JSON.stringify(requestToPayBody()) });
    assert.equal(created.status, 202, 'a creation after the attacks is accepted');
    const read = await fetch(`${base}${path('getRequestToPayStatus', 'collection', { referenceId: id })}`, { headers: caller.headers });
    assert.equal(read.status, 200, 'its status is read');
  }

  test('each is answered as HTTP allows, and the sandbox serves on unchanged', async () => {
    const openApi = async () => (await fetch(`http://127.0.0.1:${sandbox.port}/openapi.json`)).text();
    const before = await openApi();
    const departures: string[] = [];
    for (const attack of attackCases(caller)) {
      const { statuses, text } = await exchange(sandbox.port, attack.bytes);
      const first = statuses[0] ?? 'none';
      const held = attack.all ? attack.all(statuses) : attack.first!.includes(first);
      if (!held) departures.push(`${attack.name}: got ${statuses.join(',') || 'no answer'}: ${text.slice(0, 200)}`);
    }
    assert.deepEqual(departures, [], 'every attack gets an answer it may get');
    assert.equal(await openApi(), before, '/openapi.json is unchanged');
    const probe = {} as Record<string, unknown>;
    assert.equal(probe.polluted, undefined, 'Object.prototype is not polluted');
    assert.equal(probe.isAdmin, undefined, 'Object.prototype is not polluted');
    await servesOn();
  });

  test('a creation refused for its __proto__ key stores nothing', async () => {
    const id = randomUUID();
    const body = '{"amount":"1","currency":"EUR","payer":{"partyIdType":"MSISDN","partyId":"46733123000"},"__proto__":{"x":1}}';
    const headers = { ...caller.headers, 'x-reference-id': id, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${sandbox.port}`;
    assert.equal((await fetch(`${base}${path('requestToPay')}`, { method: 'POST', headers, body })).status, 400, 'the creation is refused');
    const read = await fetch(`${base}${path('getRequestToPayStatus', 'collection', { referenceId: id })}`, { headers: caller.headers });
    assert.equal(read.status, 404, 'no payment was stored under its reference id');
  });
});
