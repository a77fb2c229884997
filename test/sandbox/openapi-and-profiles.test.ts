import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { servedOperations, startSandbox } from '../support/sandbox.ts';
import { DIFFERENCES, PROFILES, behaviourOf } from '../../core/profiles.ts';
import { bindingOf, pathOf, routes } from '../../core/catalogue/routes.ts';
import { operationIdOf } from '../../sandbox/http/openapi.ts';
import { refsIn } from '../support/openapi.ts';

test('the OpenAPI document lists every operation the sandbox serves, and every reference in it resolves', async () => {
  const sandbox = await startSandbox();
  try {
    const response = await sandbox.call({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    const doc = response.json();
    assert.equal(doc.openapi, '3.1.0');
    const documented = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    const served = servedOperations().map((op) => `${op.method} ${op.url.replace(/:([A-Za-z]+)/g, '{$1}')} ${op.id}`);
    assert.deepEqual(documented.sort(), served.sort());
    for (const ref of refsIn(doc)) {
      assert.ok(ref.startsWith('#/'), `not a local reference: ${ref}`);
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((node, token) => (node as Record<string, unknown> | undefined)?.[token], doc);
      assert.ok(target !== undefined, `unresolved $ref ${ref}`);
    }
    assert.equal(JSON.stringify(doc).includes('$id'), false, 'component schemas carry no $id of their own');
  } finally {
    await sandbox.close();
  }
});

test('the OpenAPI document marks the operations beyond the spec, and carries the strict readings only under --strict', async () => {
  const documentOf = async (strict: boolean) => {
    const sandbox = await startSandbox({ strict });
    try {
      return (await sandbox.call({ method: 'GET', url: '/openapi.json' })).json();
    } finally {
      await sandbox.close();
    }
  };
  const lenient = await documentOf(false);
  const marked = Object.values(
    lenient.paths as Record<string, Record<string, { operationId: string; 'x-beyond-spec'?: true; description: string }>>,
  )
    .flatMap((methods) => Object.values(methods))
    .filter((op) => op['x-beyond-spec']);
  const beyond = routes()
    .filter((r) => r.product !== undefined && bindingOf(r.operation.id, r.product).beyondSpec !== undefined)
    .map(operationIdOf);
  assert.deepEqual(marked.map((op) => op.operationId).sort(), beyond.sort());
  assert.ok(
    beyond.includes('disbursementTransfer') &&
      beyond.includes('remittanceAccountHolderActive') &&
      beyond.includes('collectionRequestToWithdrawV2'),
    beyond.join(', '),
  );
  for (const op of marked) assert.match(op.description, /^Beyond the spec: .*Source: /);

  assert.equal(JSON.stringify(lenient).includes('strictReading'), false, 'the keyword of the schema files never reaches the document');
  const amount = (doc: { components: { schemas: Record<string, { pattern?: string; allOf?: unknown[] }> } }) =>
    doc.components.schemas.Amount!;
  assert.equal(amount(lenient).pattern, undefined, 'without --strict the amount is any string');
  assert.equal(amount(lenient).allOf, undefined);
  const strict = await documentOf(true);
  assert.ok(amount(strict).pattern !== undefined, 'under --strict the amount must be a positive decimal, as a pattern of its own');
  const bcAuthorize = (doc: typeof lenient) => Object.keys(doc.paths[pathOf('bcAuthorize', 'collection')].post.requestBody.content);
  assert.deepEqual(bcAuthorize(lenient), ['application/x-www-form-urlencoded', 'application/json']);
  assert.deepEqual(bcAuthorize(strict), ['application/x-www-form-urlencoded']);
});

test('every profile difference has an explanation, differs between the profiles and is in docs/sandbox.md', () => {
  const doc = readFileSync(new URL('../../docs/sandbox.md', import.meta.url), 'utf8');
  for (const [key, difference] of Object.entries(DIFFERENCES)) {
    assert.ok(difference.explanation.length > 40, `${key} needs a real explanation`);
    assert.notDeepEqual(difference.spec, difference['mtn-sandbox'], `${key} does not differ`);
    assert.ok(doc.includes(`| ${key} |`), `docs/sandbox.md's profile table lacks ${key}`);
  }
  for (const profile of PROFILES) assert.equal(Object.keys(behaviourOf(profile)).length, Object.keys(DIFFERENCES).length);
});

test('GET /profile shows the active profile and each difference with its explanation', async () => {
  const sandbox = await startSandbox({ profile: 'mtn-sandbox' });
  try {
    const body = (await sandbox.call({ method: 'GET', url: '/profile' })).json();
    assert.equal(body.profile, 'mtn-sandbox');
    assert.equal(body.differences.tokenFailureStatus.active, 500);
    assert.equal(body.differences.tokenType.active, 'access_token');
    assert.match(body.differences.tokenType.explanation, /access_token/);
  } finally {
    await sandbox.close();
  }
});

test('GET /health needs no subscription key and counts what the sandbox holds', async () => {
  const sandbox = await startSandbox();
  try {
    await sandbox.provision('collection');
    const body = (await sandbox.call({ method: 'GET', url: '/health' })).json();
    assert.equal(body.status, 'ok');
    assert.equal(body.profile, 'spec');
    assert.equal(body.records.apiUsers, 1);
  } finally {
    await sandbox.close();
  }
});
