import type { ClientNote } from './support/types.ts';

const UPPER_CASE_HOLDER_KIND = {
  rule: 'account-holder-kind-case',
  what: 'isPayerActive(id) names the kind of id in upper case by default: GET /collection/v1_0/accountholder/MSISDN/{id}/active (its disbursement twin lower-cases it).',
  workaround: 'pass the kind in lower case as the second argument: isPayerActive(id, "msisdn").',
};

/**
 * What the suite knows of the clients' bugs beyond what the sandbox's client report finds: where each comes
 * from in the client's code, and the workaround. The sandbox finds the bugs (docs/interop.md is made from its
 * reports); a note only explains one. A flow that fails with nothing but a refusal of the sandbox
 * (request-refused) is the client's bug only when a note here says so, after someone has read the client's
 * code; otherwise the sandbox may be wrong, and the suite fails. A note no run finds any more fails it too.
 */
export const CLIENT_NOTES: readonly ClientNote[] = [
  { client: 'mtn-momo', ...UPPER_CASE_HOLDER_KIND },
  { client: 'code-coast-momo-api', ...UPPER_CASE_HOLDER_KIND },
  {
    client: 'mtn-momo-sdk',
    rule: 'reference-id-v4',
    what: 'processPayment() polls through pollPaymentStatus, which lib/index.js declares twice; the second declaration, pollPaymentStatus(transactionIdOrRef), wins and is called with an object, so it provisions an API user with the X-Reference-Id "[object Object]".',
    workaround: 'none through processPayment(); the payment itself is made and reads SUCCESSFUL with the status query.',
  },
];
