/**
 * The sandbox's handlers are typed from the catalogue: their bodies from the request schemas (generated into
 * core/catalogue/request-bodies.generated.ts, which must be what schemas/ give, as must the status records of
 * core/catalogue/status-records.generated.ts), their path parameters and headers from the operation's, and the set
 * of handlers is the set of operations. The type-level half is checked by `npm run typecheck` (the
 * @ts-expect-error lines below fail it when the types stop refusing what they refuse).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RequestOf, RouteHandlers } from '../../sandbox/http/serving.ts';
import type { CreationId, StatusQueryId } from '../../core/catalogue/operations.ts';
import { TRANSACTIONS } from '../../core/catalogue/routes.ts';

test('the request-body and status-record types are what their schemas give (npm run generate:types)', () => {
  const script = fileURLToPath(new URL('../../scripts/generate-request-types.ts', import.meta.url));
  const check = spawnSync(process.execPath, ['--import', 'tsx', script, '--check'], { encoding: 'utf8' });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
});

test("the creations and status queries the types name are the catalogue's", () => {
  const creations: CreationId[] = [
    'requestToPay',
    'requestToWithdraw',
    'requestToWithdrawV2',
    'refund',
    'refundV2',
    'deposit',
    'depositV2',
    'transfer',
  ];
  const queries: StatusQueryId[] = [
    'getRequestToPayStatus',
    'getRequestToWithdrawStatus',
    'getRefundStatus',
    'getDepositStatus',
    'getTransferStatus',
  ];
  assert.deepEqual(TRANSACTIONS.map((t) => t.create).sort(), [...creations].sort());
  assert.deepEqual([...new Set(TRANSACTIONS.map((t) => t.status))].sort(), [...queries].sort());
});

// Type-level checks: each line below must be refused by the compiler.
export function typeChecks(
  handlers: RouteHandlers,
  payment: RequestOf<'requestToPay'>,
  query: RequestOf<'getRequestToPayStatus'>,
  balance: RequestOf<'getBalanceInCurrency'>,
  apiKey: RequestOf<'createApiKey'>,
): unknown[] {
  // @ts-expect-error a set of handlers that lacks one for an operation of the catalogue
  const missing: RouteHandlers = { createApiUser: handlers.createApiUser };
  // A header the operation requires is there (its route's schema holds the request to it); an optional one may not be.
  const referenceId: string = payment.headers['x-reference-id'];
  // @ts-expect-error X-Callback-Url is optional
  const callbackUrl: string = payment.headers['x-callback-url'];
  return [
    missing,
    referenceId,
    callbackUrl,
    // The guards admitted the caller of an operation that takes a credential, and its token's claims for a token.
    payment.caller.id,
    payment.claims.sub,
    payment.keyProduct,
    // @ts-expect-error provisioning takes no credential: no caller is admitted
    apiKey.caller.id,
    payment.body.amount,
    // @ts-expect-error a field the request-to-pay schema does not have
    payment.body.amount_due,
    query.params.referenceId,
    // @ts-expect-error a path parameter the status query does not have
    query.params.currency,
    balance.params.currency,
    // @ts-expect-error a status query takes no body
    query.body.amount,
  ];
}
