import { randomUUID } from 'node:crypto';

/**
 * Raw HTTP/1.x requests that a hostile or broken caller sends, each written whole on a connection of its own:
 * oversized and duplicated headers, bad chunking, pipelining, deep JSON, NUL bytes, invalid methods and
 * versions, absurd lengths, refused upgrades, and bytes that are not HTTP at all. Some are refused by Node's
 * parser, some by the sandbox, some are served; a few leave their connection open, waiting for more.
 */
export interface MalformedRequest {
  name: string;
  bytes: string | Buffer;
}

/** `headers` are those of a caller of the collection product (subscription key, Bearer token, target environment). */
export function malformedRequests(creationPath: string, headers: Record<string, string>): MalformedRequest[] {
  const host = 'Host: 127.0.0.1\r\n';
  const caller = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const creation = (body: string, extra = '') =>
    `POST ${creationPath} HTTP/1.1\r\n${host}${caller}x-reference-id: ${randomUUID()}\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
  const chunked = (chunks: string) =>
    `POST ${creationPath} HTTP/1.1\r\n${host}${caller}x-reference-id: ${randomUUID()}\r\ncontent-type: application/json\r\n` +
    `transfer-encoding: chunked\r\n\r\n${chunks}`;
  const health = (extra = '', version = 'HTTP/1.1') => `GET /health ${version}\r\n${host}${extra}\r\n`;
  const bodyOf = (amount: string) =>
    JSON.stringify({ amount, currency: 'EUR', externalId: 'e', payer: { partyIdType: 'MSISDN', partyId: '46733123450' } });

  return [
    { name: 'a header of 20 KB', bytes: health(`x-big: ${'a'.repeat(20_000)}\r\n`) },
    { name: '3000 headers', bytes: health(Array.from({ length: 3000 }, (_, i) => `x-h${i}: v\r\n`).join('')) },
    { name: 'a URL of 100 KB', bytes: `GET /${'a'.repeat(100_000)} HTTP/1.1\r\n${host}\r\n` },
    { name: 'two different Content-Lengths', bytes: creation('{}', 'content-length: 3\r\n') },
    { name: 'the same Content-Length twice', bytes: creation('{}', 'content-length: 2\r\n') },
    { name: 'two Hosts', bytes: health(host) },
    { name: 'a repeated X-Reference-Id', bytes: creation(bodyOf('1'), `x-reference-id: ${randomUUID()}\r\n`) },
    { name: 'Content-Length and Transfer-Encoding', bytes: creation('0\r\n\r\n', 'transfer-encoding: chunked\r\n') },
    { name: 'a chunk size that is not hex', bytes: chunked('zz\r\n{}\r\n0\r\n\r\n') },
    { name: 'a chunk size of 2^76', bytes: chunked('fffffffffffffffffff\r\n{}\r\n') },
    { name: 'a chunk without its CRLF', bytes: chunked('2\r\n{}0\r\n\r\n') },
    { name: 'chunked, then trailers', bytes: chunked(`2\r\n{}\r\n0\r\nx-trailer: 1\r\n\r\n`) },
    {
      name: 'Transfer-Encoding gzip, chunked',
      bytes: `POST ${creationPath} HTTP/1.1\r\n${host}transfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    },
    {
      name: 'Transfer-Encoding chunked, identity',
      bytes: `POST ${creationPath} HTTP/1.1\r\n${host}transfer-encoding: chunked, identity\r\n\r\n0\r\n\r\n`,
    },
    { name: 'three pipelined requests', bytes: health().repeat(3) },
    { name: '500 pipelined requests', bytes: health().repeat(500) },
    { name: 'a pipelined request, then garbage', bytes: `${health()}GARBAGE\r\n\r\n` },
    { name: 'pipelined creations', bytes: creation(bodyOf('1')) + creation(bodyOf('2')) },
    { name: 'JSON arrays nested 30 000 deep', bytes: creation(`${'['.repeat(30_000)}${']'.repeat(30_000)}`) },
    { name: 'JSON objects nested 5 000 deep', bytes: creation(`${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`) },
    {
      name: 'a body of 5 000 keys',
      bytes: creation(JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])))),
    },
    { name: 'a NUL in the URL', bytes: `GET /hea\0lth HTTP/1.1\r\n${host}\r\n` },
    { name: 'a NUL in a header value', bytes: health('x-a: a\0b\r\n') },
    { name: 'a NUL in a header name', bytes: health('x\0a: b\r\n') },
    { name: 'NULs in the body', bytes: creation(JSON.stringify({ amount: '1', currency: 'EUR', payerMessage: '\0'.repeat(100) })) },
    { name: 'an invalid method', bytes: `G@T /health HTTP/1.1\r\n${host}\r\n` },
    { name: 'a lower-case method', bytes: `get /health HTTP/1.1\r\n${host}\r\n` },
    { name: 'an unknown method', bytes: `BREW /health HTTP/1.1\r\n${host}\r\n` },
    { name: 'CONNECT', bytes: `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${host}\r\n` },
    { name: 'the HTTP/2 preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' },
    { name: 'HTTP/0.9', bytes: 'GET /health\r\n' },
    { name: 'HTTP/1.0', bytes: health('', 'HTTP/1.0') },
    { name: 'HTTP/1.2', bytes: health('', 'HTTP/1.2') },
    { name: 'HTTP/2.0 in a request line', bytes: health('', 'HTTP/2.0') },
    { name: 'a Content-Length of 10^23', bytes: `POST ${creationPath} HTTP/1.1\r\n${host}content-length: 99999999999999999999999\r\n\r\n` },
    { name: 'a negative Content-Length', bytes: `POST ${creationPath} HTTP/1.1\r\n${host}content-length: -1\r\n\r\n` },
    { name: 'a Content-Length of 1e3', bytes: `POST ${creationPath} HTTP/1.1\r\n${host}content-length: 1e3\r\n\r\n` },
    { name: 'a Content-Length over the body limit', bytes: creation('{').replace(/content-length: \d+/, 'content-length: 1000000') },
    { name: 'bare LF line ends', bytes: `GET /health HTTP/1.1\n${host.trim()}\n\n` },
    { name: 'bare CR line ends', bytes: `GET /health HTTP/1.1\r${host.trim()}\r\r` },
    { name: 'a header without a colon', bytes: health('no-colon\r\n') },
    { name: 'a space before a colon', bytes: `GET /health HTTP/1.1\r\nHost : x\r\n\r\n` },
    { name: 'a folded header', bytes: health('x-a: a\r\n  folded\r\n') },
    { name: 'percent-encoding that decodes to nothing', bytes: `GET ${creationPath}/%zz HTTP/1.1\r\n${host}${caller}\r\n` },
    {
      name: 'Expect: 100-continue, then no body',
      bytes: creation('').replace('content-length: 0', 'content-length: 10').replace('\r\n\r\n', '\r\nexpect: 100-continue\r\n\r\n'),
    },
    { name: 'an Expect the server does not know', bytes: health('expect: tea\r\n') },
    { name: 'a WebSocket upgrade', bytes: health('connection: upgrade\r\nupgrade: websocket\r\n') },
    {
      name: 'an h2c upgrade',
      bytes: health('connection: upgrade, http2-settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n'),
    },
    { name: 'empty lines only', bytes: '\r\n\r\n\r\n' },
    { name: '512 bytes of garbage', bytes: Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919) % 256)) },
    { name: 'a TLS ClientHello', bytes: Buffer.from('16030102000100010003030000000000', 'hex') },
  ];
}
