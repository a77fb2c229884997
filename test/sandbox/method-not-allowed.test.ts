/**
 * A method a known path does not take is 405 with Allow, whatever the request carries: every path of the
 * catalogue, every other method, QUERY included (Schemathesis sent QUERY to every path and met 400 "must provide a
 * Content-Type header", Fastify's check of a QUERY's body, which ran before the method's). Unknown paths stay 404.
 * QUERY goes over a socket byte for byte: Node's HTTP parser takes it (Node 20), and so must the sandbox.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { METHODS } from 'node:http';
import { pathOf, routes } from '../../core/catalogue/routes.ts';
import { rawRequest } from '../support/raw-http.ts';
import { startListeningSandbox, type ListeningSandbox } from '../support/sandbox.ts';

/** Every path the catalogue serves, its parameters filled in, with the methods declared there. */
function servedPaths(): Map<string, Set<string>> {
  const params = {
    referenceId: randomUUID(),
    currency: 'EUR',
    accountHolderIdType: 'msisdn',
    accountHolderId: '46733123450',
    accountHolderMSISDN: '46733123450',
  };
  const paths = new Map<string, Set<string>>();
  for (const route of routes()) {
    const path = pathOf(route.operation.id, route.product, params);
    paths.set(path, (paths.get(path) ?? new Set()).add(route.method));
  }
  return paths;
}

const allowOf = (declared: Set<string>) => [...declared, ...(declared.has('GET') ? ['HEAD'] : [])].join(', ');

/** The value of the Allow header in a head of an answer, if there is one. */
const allowHeader = (head: string) => /\r\nallow: ([^\r]*)/i.exec(head)?.[1];

describe('a method a known path does not take', () => {
  let sandbox: ListeningSandbox;
  before(async () => {
    sandbox = await startListeningSandbox();
  });
  after(() => sandbox.close());

  test("Node's HTTP parser takes QUERY", () => {
    assert.ok(METHODS.includes('QUERY'), `Node ${process.version} lists no QUERY method`);
  });

  test('is 405 with the declared methods in Allow, on every path of the catalogue, for every other method', async () => {
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;
    for (const [path, declared] of servedPaths()) {
      for (const method of methods.filter((m) => !declared.has(m))) {
        // With a body of a media type no operation takes: the method is refused, not the body.
        const res = await sandbox.app.inject({ method, url: path, headers: { 'content-type': 'text/plain' }, payload: 'x' });
        assert.equal(res.statusCode, 405, `${method} ${path}: ${res.body}`);
        assert.equal(res.headers.allow, allowOf(declared), `${method} ${path}`);
        assert.equal(res.json().statusCode, 405);
      }
    }
  });

  test('QUERY, sent over a socket without a Content-Type as Schemathesis sent it, is 405 on every path of the catalogue', async () => {
    for (const [path, declared] of servedPaths()) {
      const res = await rawRequest(sandbox.port, `QUERY ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 405, `QUERY ${path}: ${res.body}`);
      assert.equal(allowHeader(res.head), allowOf(declared), `QUERY ${path}`);
      assert.match(res.body, /"QUERY is not served at /);
    }
  });

  test("is 405 at the sandbox's own paths too; QUERY with a JSON body as well", async () => {
    for (const path of ['/health', '/openapi.json', '/profile']) {
      const body = '{"a":1}';
      const res = await rawRequest(
        sandbox.port,
        `QUERY ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      assert.equal(res.status, 405, `QUERY ${path}: ${res.body}`);
      assert.equal(allowHeader(res.head), 'GET, HEAD', path);
    }
  });

  test('an unknown path stays 404, for QUERY too', async () => {
    for (const method of ['QUERY', 'GET', 'POST']) {
      const res = await rawRequest(
        sandbox.port,
        `${method} /collection/v1_0/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(res.status, 404, `${method}: ${res.body}`);
      assert.equal(allowHeader(res.head), undefined);
    }
  });
});
