/**
 * The operation catalogue held against the spec's own text (requirements/momo-api-spec.md): each of the 19
 * operations the spec counts is at the method, path and host the spec gives. The spec is a document, not a
 * source file, so this is the one place a path is checked against something other than the catalogue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OPERATIONS, OPERATION_IDS, type OperationId } from '../../core/catalogue/operations.ts';
import { SPEC_OPERATIONS, bindingOf, pathOf, productsOf, routes, specOperationOf, urlOf } from '../../core/catalogue/routes.ts';
import { isProduct, type Product } from '../../core/products.ts';
import { SPEC_FILE } from '../../conformance/certification/finished-run.ts';

const spec = readFileSync(SPEC_FILE, 'utf8');
/** Path parameters compare by place, not by name: the spec writes {X-Reference-Id} and <resourceId> where the catalogue has {referenceId}. */
const shape = (path: string) => path.replace(/\{[^}]+\}|<[^>]+>/g, '{}');
/** "METHOD `path`" as the spec writes each operation, with the host its table row or heading gives. */
const specified = [...spec.matchAll(/\b(GET|POST) `(\/[^`]*)`([^\n]*)/g)].map(([, method, path, rest]) => ({
  method: method!,
  path: shape(path!),
  host: /\{sandbox_url\}/.test(rest!) ? 'provisioning' : /\{base_url\}/.test(rest!) ? 'gateway' : undefined,
}));

/** The operation and product each of the spec's 19 is, by the product its title names (provisioning: any). */
function specBindings(): { id: OperationId; product: Product; key: string }[] {
  return SPEC_OPERATIONS.map((counted) => {
    const id = OPERATION_IDS.find((op) => OPERATIONS[op].spec?.some((s) => s.key === counted.key))!;
    const titled = counted.title.split(':')[0]!;
    return { id, product: isProduct(titled) ? titled : productsOf(id)[0]!, key: counted.key };
  });
}

test("the catalogue counts the 19 operations of the spec, each once, in the spec's order", () => {
  assert.deepEqual(
    SPEC_OPERATIONS.map((o) => o.key),
    [
      '4.2 #1',
      '4.2 #2',
      '4.2 #3',
      '4.2 #4',
      '4.2 #5',
      '4.2 #6',
      '4.2 #7',
      '4.2 #8',
      '4.3 #9',
      '4.3 #10',
      '4.3 #11',
      '4.3 #12',
      '4.4 #13',
      '4.5 #14',
      '4.5 #15',
      '4.5 #16',
      '4.6 request to pay',
      '4.6 refund',
      '4.6 deposit',
    ],
  );
});

test('each operation the spec counts is at the method, path and host the spec gives', () => {
  for (const { id, product, key } of specBindings()) {
    const path = shape(pathOf(id, product));
    const { method } = OPERATIONS[id];
    // §4.6 names a status query by the tail of its path ("GET /refund/{referenceId}").
    const found = specified.find((s) => s.method === method && (s.path === path || (key.startsWith('4.6') && path.endsWith(s.path))));
    assert.ok(found, `${id} (${product}, §${key}): the spec has no ${method} \`${path}\``);
    if (found.host)
      assert.equal(bindingOf(id, product).host, found.host, `${id} (${product}, §${key}) is on the spec's ${found.host} host`);
  }
});

test('the spec operation a binding counts as is the one its catalogue entry names', () => {
  for (const { id, product, key } of specBindings()) assert.equal(specOperationOf(id, product), key);
  assert.equal(specOperationOf('getBalance', 'collection'), undefined, 'the collection balance without a currency is none of the 19');
});

test('every path of the catalogue is unique per method, and every parameter of a path is declared', () => {
  const seen = new Set<string>();
  for (const route of routes()) {
    const key = `${route.method} ${shape(route.path)}`;
    assert.ok(!seen.has(key), `two routes at ${key}`);
    seen.add(key);
    const named = [...route.path.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]);
    assert.deepEqual(
      named.sort(),
      Object.keys(route.operation.params ?? {}).sort(),
      `${route.operation.id}: its path parameters and params differ`,
    );
  }
});

test("a URL is built on the binding's host, with its parameters percent-encoded", () => {
  const bases = { gateway: 'https://gw.example', provisioning: 'https://sb.example' };
  assert.equal(
    urlOf('createAccessToken', 'collection', bases),
    `https://sb.example${pathOf('createAccessToken', 'collection')}`,
    'the collection token is on {sandbox_url} (§4.2)',
  );
  assert.equal(urlOf('createAccessToken', 'disbursement', bases), `https://gw.example${pathOf('createAccessToken', 'disbursement')}`);
  assert.equal(
    pathOf('createAccessToken', 'remittance').replace('remittance', '{product}'),
    OPERATIONS.createAccessToken.path,
    'a product-named path names its product',
  );
  assert.equal(
    urlOf('getRequestToPayStatus', 'collection', bases, { referenceId: 'a/b c' }),
    `https://gw.example${pathOf('requestToPay', 'collection')}/a%2Fb%20c`,
  );
  assert.throws(() => pathOf('requestToPay', 'disbursement'), /not served under disbursement/);
  assert.throws(() => pathOf('getApiUser', undefined, {}), /needs the parameter referenceId/);
});

test('every response documents its source, and every error status of a business operation a schema', () => {
  for (const id of OPERATION_IDS) {
    for (const [status, response] of Object.entries(OPERATIONS[id].responses)) {
      assert.ok(['spec', 'live', 'sandbox'].includes(response.source), `${id} ${status}`);
      if (Number(status) >= 400) assert.ok(response.body !== undefined, `${id} ${status} has no body schema`);
    }
  }
});
