import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertSchema, path, requestToPayBody, startSandbox } from '../support/sandbox.ts';

test('a request to pay from provisioning to a SUCCESSFUL status', async () => {
  const sandbox = await startSandbox();
  try {
    const caller = await sandbox.provision('collection');
    const id = randomUUID();
    const created = await sandbox.call({
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...caller.headers, 'x-reference-id': id },
      payload: requestToPayBody('46733123499', '12.50'),
    });
    assert.equal(created.statusCode, 202, created.body);
    const status = await sandbox.call({
      method: 'GET',
      url: path('getRequestToPayStatus', undefined, { referenceId: id }),
      headers: caller.headers,
    });
    assert.equal(status.statusCode, 200);
    const record = status.json();
    assertSchema('request-to-pay-status', record);
    assert.equal(record.status, 'SUCCESSFUL');
    assert.equal(record.amount, '12.5');
  } finally {
    await sandbox.close();
  }
});
