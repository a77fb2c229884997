import { fail, sleep } from 'k6';
import { create, readStatus, type Account, type Creation } from './api.ts';
import { expectAnswer } from './checks.ts';
import { statusQueryOf } from '../../core/catalogue/routes.ts';
import { config } from './config.ts';
import { requestToPayBody } from './payloads.ts';
import { lostTransactions, timeToFinal } from './metrics.ts';
import { bearer, refused } from './tokens.ts';

/** Creates a transaction with the VU's cached token; returns its reference id once accepted (202). */
export function createTransaction(kind: Creation, account: Account, body: object | string, withCallback = false): string | undefined {
  const callbackUrl =
    withCallback && config.callbackUrl
      ? // The receiver measures callback latency from the creation time in the URL.
        (referenceId: string) => `${config.callbackUrl}/callbacks/${referenceId}?createdAt=${Date.now()}`
      : undefined;
  const { response, referenceId } = create(kind, bearer(account), body, callbackUrl);
  // Read once: each read of a k6 response's field goes through Go's reflection.
  const { status } = response;
  refused(account, status);
  // Accepted creations are counted by k6 itself (http_req_failed{op:...}); see errorRateOf in slo.ts.
  expectAnswer(kind, response, 202, undefined, status);
  return status === 202 ? referenceId : undefined;
}

/**
 * Polls a transaction until its status is final, and records the time from its acceptance. A transaction
 * whose status cannot be read (404 after a 202) by the deadline is lost, which must never happen.
 */
export function awaitFinal(
  kind: Creation,
  account: Account,
  referenceId: string,
  acceptedAt: number,
  options: { deadlineMs: number; intervalMs: number },
): string | undefined {
  const deadline = acceptedAt + options.deadlineMs;
  let readable = false;
  for (;;) {
    const response = readStatus(kind, bearer(account), referenceId);
    refused(account, response.status);
    if (response.status === 200) {
      readable = true;
      const record = expectAnswer(statusQueryOf(kind), response, 200) as { status?: string } | undefined;
      if (record?.status === 'SUCCESSFUL' || record?.status === 'FAILED') {
        timeToFinal.add(Date.now() - acceptedAt);
        return record.status;
      }
    }
    if (Date.now() + options.intervalMs > deadline) break;
    // Polling is the client's own pacing here, not think time: the next look is one interval on.
    sleep(options.intervalMs / 1000);
  }
  if (!readable) lostTransactions.add(1);
  return undefined;
}

/** Successful requests to pay for refunds to draw on, a small amount at a time; made in setup(), which fails without any. */
export function refundablePayments(account: Account, count = 20): string[] {
  const refundable: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = createTransaction('requestToPay', account, requestToPayBody('100000'));
    if (id) refundable.push(id);
  }
  if (refundable.length === 0) fail('setup: no request to pay was accepted, so there is nothing to refund');
  return refundable;
}
