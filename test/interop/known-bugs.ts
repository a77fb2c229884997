import type { ClientBug } from './support/types.ts';

const LOWER_CASE_HOLDER_TYPE = {
  what: 'isPayerActive(id) names the kind of id in upper case by default: GET /collection/v1_0/accountholder/MSISDN/{id}/active (its disbursement twin lower-cases it).',
  contradicts:
    'spec §4.2 #8: accountHolderIdType "must be lowercase"; the provider\'s collection definition: "accountHolderId should explicitly be in small letters". The sandbox answers 400 naming the allowed values.',
  evidence: { method: 'GET', path: /^\/collection\/v1_0\/accountholder\/MSISDN\//, status: 400 },
  workaround: 'pass the kind in lower case as the second argument: isPayerActive(id, "msisdn").',
};

/**
 * The published clients' own departures from the API, each shown by an exchange of the flow it breaks. A flow
 * that fails for any other reason fails the interop suite: the sandbox refused what it should take.
 */
export const KNOWN_BUGS: readonly ClientBug[] = [
  { client: 'mtn-momo', flow: 'collection: whether a payer is active (isPayerActive)', ...LOWER_CASE_HOLDER_TYPE },
  { client: 'code-coast-momo-api', flow: 'collection: whether a payer is active (isPayerActive)', ...LOWER_CASE_HOLDER_TYPE },
  {
    client: 'mtn-momo-sdk',
    flow: 'collection: provisions, pays and polls until the payment is final',
    what: 'processPayment() polls through pollPaymentStatus, which lib/index.js declares twice; the second declaration, pollPaymentStatus(transactionIdOrRef), wins and is called with an object, so it provisions an API user with the X-Reference-Id "[object Object]".',
    contradicts:
      'spec §2.5 and §4.5 #14: X-Reference-Id is a UUID version 4; the live sandbox answers 400 to one that is not (real-api-notes).',
    evidence: { method: 'POST', path: /^\/v1_0\/apiuser$/, status: 400 },
    workaround: 'none through processPayment(); the payment itself is made and reads SUCCESSFUL with the status query.',
  },
];
