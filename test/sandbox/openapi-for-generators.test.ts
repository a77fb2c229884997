/**
 * The OpenAPI document as code generators and request generators read it: only the API's schemas, records a
 * generator can type, titled error bodies, operationIds that become clean method names, a server that is the
 * address the document was asked at (never a caller's text), and no request it calls valid that the sandbox
 * refuses for its form (the two Schemathesis found: an msisdn account-holder id "0", a scope "0").
 * test/interop/openapi-client.interop.test.ts generates a client from it and runs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bindingOf, bodySchemasOf, routes } from '../../core/catalogue/routes.ts';
import { PROFILES, behaviourOf } from '../../core/profiles.ts';
import { ajv, schemaDocuments, schemaId } from '../../core/validation/schemas.ts';
import { serverUrlOf } from '../../sandbox/http/openapi.ts';
import { loadModel, type ApiModel } from '../../sandbox-quality/fuzz/openapi-model.ts';
import { operationsOf, refsIn, servedDocument, type OpenApiDocument } from '../support/openapi.ts';
import { rawRequest } from '../support/raw-http.ts';
import { path, startListeningSandbox, startSandbox, type Caller, type ListeningSandbox, type TestSandbox } from '../support/sandbox.ts';

const componentOf = (ref: string) => ref.replace('#/components/schemas/', '').split('/')[0]!;
const componentName = (schema: string) =>
  schema
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** The components a value refers to, and those they refer to in turn. */
function reachedFrom(value: unknown, schemas: Record<string, unknown>): Set<string> {
  const reached = new Set<string>();
  const pending = refsIn(value).map(componentOf);
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (reached.has(name)) continue;
    reached.add(name);
    pending.push(...refsIn(schemas[name]).map(componentOf));
  }
  return reached;
}

/** Every keyword of a schema at any depth, but inside the x-conditions extension. */
function keywordsIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keywordsIn(v, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'x-conditions') continue;
      found.add(key);
      keywordsIn(inner, found);
    }
  }
  return found;
}

describe('the OpenAPI document, for generators', () => {
  const documents = new Map<string, OpenApiDocument>();
  before(async () => {
    for (const profile of PROFILES)
      for (const strict of [false, true])
        documents.set(`${profile}${strict ? ' --strict' : ''}`, await servedDocument({ profile, strict }));
  });

  test("components hold the API's schemas, those the operations refer to and those they refer to, and nothing else", () => {
    for (const [mode, doc] of documents) {
      const schemas = doc.components.schemas;
      const reached = reachedFrom(doc.paths, schemas);
      assert.deepEqual(
        Object.keys(schemas).sort(),
        [...reached].sort(),
        `${mode}: a component no operation reaches, or a reference to none`,
      );
      // Every body the catalogue names is there; the harness's own reports and catalogues are not.
      const profile = mode.startsWith('mtn-sandbox') ? 'mtn-sandbox' : 'spec';
      for (const route of routes()) {
        const { errors } = bindingOf(route.operation.id, route.product ?? 'collection');
        for (const response of Object.values(route.operation.responses))
          for (const schema of bodySchemasOf(response, errors, behaviourOf(profile)))
            assert.ok(componentName(schema) in schemas, `${mode}: ${schema} of ${route.operation.id}`);
        if (route.operation.request !== 'none') assert.ok(componentName(route.operation.request.schema) in schemas);
      }
      for (const own of ['har', 'certification-report', 'certification-manifest', 'capacity-report', 'requirements-catalogue', 'waivers'])
        assert.ok(!(componentName(own) in schemas), `${mode}: ${own} is the harness's, not the API's`);
    }
  });

  test('the records the sandbox answers with hold no condition, negation or union a generator drops; x-conditions keeps the conditions', () => {
    for (const [mode, doc] of documents) {
      const requested = reachedFrom(
        operationsOf(doc).map((op) => [op.parameters, op.requestBody]),
        doc.components.schemas,
      );
      for (const [name, schema] of Object.entries(doc.components.schemas)) {
        if (requested.has(name)) continue;
        const kept = [...keywordsIn(schema)].filter((k) => ['if', 'then', 'else', 'not', 'oneOf'].includes(k));
        assert.deepEqual(kept, [], `${mode}: ${name}`);
      }
      const schemas = doc.components.schemas;
      assert.equal(schemas.FailureReason!.type, 'string', `${mode}: the sandbox sends the bare code`);
      assert.equal(schemas.AccountHolderStatus?.type ?? schemas.AccountHolderStatusObserved?.type, 'object', `${mode}: {"result": …}`);
      // The status records' conditions, as the schema files write them.
      for (const record of ['request-to-pay-status', 'deposit-status', 'refund-status']) {
        const file = schemaDocuments.find((d) => d.$id === schemaId(record))!;
        assert.deepEqual(schemas[componentName(record)]!['x-conditions'], file.allOf, `${mode}: ${record}`);
      }
    }
  });

  test('the conditions kept aside still judge an answer, as the fuzzer reads the document', () => {
    const model = loadModel(documents.get('spec'));
    const status = model.validatorOf('RequestToPayStatus');
    assert.equal(status({ currency: 'EUR', status: 'FAILED', reason: 'APPROVAL_REJECTED' }), true);
    assert.equal(status({ currency: 'EUR', status: 'FAILED' }), false, 'a FAILED record names its reason');
    assert.equal(status({ currency: 'EUR', status: 'PENDING', reason: 'APPROVAL_REJECTED' }), false, 'only a FAILED one does');
    assert.equal(status({ currency: 'EUR', status: 'PENDING', financialTransactionId: '1' }), false, 'only a SUCCESSFUL one has an id');
  });

  test('every error body has a title: its component, or the union of components it is', () => {
    for (const [mode, doc] of documents) {
      for (const op of operationsOf(doc)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (!schema || Number(status) < 400) continue;
          const title = typeof schema.$ref === 'string' ? doc.components.schemas[componentOf(schema.$ref)]!.title : schema.title;
          assert.ok(typeof title === 'string' && title.length > 0, `${mode}: ${status} of ${op.operationId}`);
        }
      }
    }
  });

  test('operationIds are whole camel-case words, the group and the catalogue id, and unique', () => {
    for (const [mode, doc] of documents) {
      const ops = operationsOf(doc);
      for (const op of ops) {
        assert.match(op.operationId, /^[a-z]+(?:[A-Z][a-z0-9]+)*$/, `${mode}: ${op.operationId} splits into words at its capitals`);
        assert.equal(op.operationId.toLowerCase(), `${op.tags[0]}${op['x-operation']}`.toLowerCase(), op.operationId);
      }
      assert.equal(new Set(ops.map((op) => op.operationId)).size, ops.length, `${mode}: unique`);
      assert.ok(
        ops.some((op) => op.operationId === 'collectionCreateOauthToken'),
        'OAuth is one word, as generators split it',
      );
    }
  });
});

describe('servers: where the document was asked for', () => {
  let sandbox: ListeningSandbox;
  before(async () => {
    sandbox = await startListeningSandbox();
  });
  after(() => sandbox.close());

  const serversAt = async (host: string | undefined) => {
    const answer = await rawRequest(
      sandbox.port,
      host === undefined
        ? 'GET /openapi.json HTTP/1.0\r\n\r\n'
        : `GET /openapi.json HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(answer.status, 200, answer.head);
    return { servers: (JSON.parse(answer.body) as OpenApiDocument).servers, text: answer.body };
  };

  test("a host name or address with its port is the server's URL", async () => {
    for (const host of [
      'sandbox.example:9000',
      'localhost',
      '127.0.0.1:8080',
      '[::1]:8080',
      'momo_sandbox:80',
      `127.0.0.1:${sandbox.port}`,
    ])
      assert.deepEqual((await serversAt(host)).servers, [{ url: `http://${host}` }], host);
  });

  test('a hostile or absent Host never reaches the document: the listening address stands in', async () => {
    const listening = [{ url: `http://127.0.0.1:${sandbox.port}` }];
    const hostile = [
      'evil.example/path',
      'user@evil.example',
      'evil.example"><script>alert(1)</script>',
      'javascript:alert(1)',
      'evil.example:99999',
      'evil.example:80:81',
      'evil.example#x',
      'evil.example?x=1',
      '[not-an-address]',
      '-evil.example',
      'evil..example',
      `${'a'.repeat(300)}.example`,
    ];
    for (const host of hostile) {
      const { servers, text } = await serversAt(host);
      assert.deepEqual(servers, listening, host);
      assert.equal(text.includes(host), false, `${host} appears in the document`);
    }
    assert.deepEqual((await serversAt(undefined)).servers, listening, 'HTTP/1.0 without a Host');
  });

  test('listening on every address, the loopback address stands in for it', () => {
    assert.equal(serverUrlOf(undefined, { address: '0.0.0.0', family: 'IPv4', port: 8080 }), 'http://127.0.0.1:8080');
    assert.equal(serverUrlOf('a b', { address: '::', family: 'IPv6', port: 8080 }), 'http://[::1]:8080');
    assert.equal(serverUrlOf(undefined, { address: '::1', family: 'IPv6', port: 9 }), 'http://[::1]:9');
  });
});

describe('what the document calls valid, the sandbox takes (the cases Schemathesis found)', () => {
  let sandbox: TestSandbox;
  let caller: Caller;
  let doc: OpenApiDocument;
  let model: ApiModel;
  before(async () => {
    sandbox = await startSandbox({ scopes: ['profile', 'openid', 'a.b'] });
    caller = await sandbox.provision('collection');
    doc = (await sandbox.call({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument;
    model = loadModel(doc);
  });
  after(() => sandbox.close());

  const operation = (operationId: string) => model.operations.find((op) => op.id === operationId)!;

  test('an account-holder id is valid by the document exactly when its type takes it; "0" is no msisdn', async () => {
    const holder = operation('collectionAccountHolderActive');
    const parameter = holder.parameters.find((p) => p.name === 'accountHolderId')!;
    const dependsOn = doc.paths[holder.path]!.get!.parameters!.find((p) => p.name === 'accountHolderId')!['x-depends-on']!;
    assert.equal(dependsOn.parameter, 'accountHolderIdType');
    const ids = [
      '0',
      '46733123450',
      '+46733123450',
      '4673312',
      '467331234501234567',
      'holder@example.com',
      'a b@example.com',
      '0E8A4F2C-6D1B-4B7E-9A3C-5D2F1E0B7C6A',
      'not-a-uuid',
    ];
    for (const [type, form] of Object.entries(dependsOn.forms as Record<string, { $ref?: string }>)) {
      const fits = form.$ref ? model.validatorOf(componentOf(form.$ref)) : ajv.compile(form);
      for (const id of ids) {
        const url = path('accountHolderActive', 'collection', { accountHolderIdType: type, accountHolderId: id });
        const answer = await sandbox.call({ method: 'GET', url, headers: caller.headers });
        assert.equal(
          fits(id),
          answer.statusCode === 200,
          `${type} ${id}: the document's form against the sandbox's ${answer.statusCode} ${answer.body}`,
        );
        if (answer.statusCode === 200) assert.equal(parameter.validate(id), true, `${id} fits the parameter's schema`);
        else assert.equal(answer.statusCode, 400, answer.body);
      }
    }
    assert.equal(parameter.validate('0'), false, 'the document calls "0" no account-holder id of any type');
  });

  test('a scope is valid by the document exactly when bc-authorize takes it: the sandbox\'s own scopes (--scopes), and "0" is none', async () => {
    const authorize = operation('collectionBcAuthorize');
    const form = (scope: string) => ({ login_hint: 'ID:46733123450/MSISDN', scope, access_type: 'offline' });
    const scopes = [
      '0',
      'profile',
      'openid profile',
      '  a.b   openid ',
      'a.b',
      'axb',
      'a',
      'PROFILE',
      'profile,openid',
      'profile\topenid',
      ' ',
      'profile banana',
    ];
    for (const scope of scopes) {
      const answer = await sandbox.call({
        method: 'POST',
        url: path('bcAuthorize', 'collection'),
        headers: { ...caller.headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form(scope)).toString(),
      });
      assert.equal(
        authorize.body!.validate(form(scope)),
        answer.statusCode === 200,
        `${JSON.stringify(scope)}: ${answer.statusCode} ${answer.body}`,
      );
    }
  });
});
