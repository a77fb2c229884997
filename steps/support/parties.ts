import { defineParameterType } from '@cucumber/cucumber';

/** A payer or payee of the sandbox, known by how their wallet behaves (real-api-notes: the test numbers). */
export interface Party {
  phrase: string;
  msisdn: string;
  /** The final status the sandbox gives their payments, and the reason when FAILED; PENDING: never final. */
  outcome: 'SUCCESSFUL' | 'FAILED' | 'PENDING';
  reason?: string;
  /** The outcome arrives only after a delay (the live sandbox: ~25–30 s). */
  slow?: boolean;
}

const PARTIES: Party[] = [
  { phrase: 'who approves', msisdn: '46733123499', outcome: 'SUCCESSFUL' },
  { phrase: 'who approves after a while', msisdn: '46733123454', outcome: 'SUCCESSFUL', slow: true },
  { phrase: 'who never answers', msisdn: '46733123453', outcome: 'PENDING' },
  { phrase: 'whose wallet fails', msisdn: '46733123450', outcome: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' },
  { phrase: 'who rejects the payment', msisdn: '46733123451', outcome: 'FAILED', reason: 'APPROVAL_REJECTED' },
  { phrase: 'who lets the payment expire', msisdn: '46733123452', outcome: 'FAILED', reason: 'EXPIRED' },
  // Documented by SDKs, not observed on the live sandbox (real-api-notes: uncertain).
  { phrase: 'who cannot be found', msisdn: '46733123455', outcome: 'FAILED', reason: 'PAYER_NOT_FOUND' },
  { phrase: 'who may not receive', msisdn: '46733123456', outcome: 'FAILED', reason: 'PAYEE_NOT_ALLOWED_TO_RECEIVE' },
  { phrase: 'who is not allowed to transact', msisdn: '46733123457', outcome: 'FAILED', reason: 'NOT_ALLOWED' },
  { phrase: 'whose wallet is in another target environment', msisdn: '46733123458', outcome: 'FAILED', reason: 'NOT_ALLOWED_TARGET_ENVIRONMENT' },
  { phrase: 'whose wallet refuses the callback host', msisdn: '46733123459', outcome: 'FAILED', reason: 'INVALID_CALLBACK_URL_HOST' },
  { phrase: 'whose wallet does not take the currency', msisdn: '46733123460', outcome: 'FAILED', reason: 'INVALID_CURRENCY' },
  { phrase: 'whose payment the service fails to process', msisdn: '46733123461', outcome: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' },
  // The payment FAILS with the reason SERVICE_UNAVAILABLE: an outcome the status record reports, not the
  // target being unavailable (the record itself is answered 200, and judged like any other).
  { phrase: 'whose wallet service is unavailable', msisdn: '46733123462', outcome: 'FAILED', reason: 'SERVICE_UNAVAILABLE' },
  // For account-holder checks (§4.2 #8): the reference sandbox's holders that are not registered or not
  // active. As payers, their payments end as the test numbers …450 and …451 above.
  { phrase: 'who is not registered', msisdn: '46733123450', outcome: 'FAILED', reason: 'INTERNAL_PROCESSING_ERROR' },
  { phrase: 'whose account is inactive', msisdn: '46733123451', outcome: 'FAILED', reason: 'APPROVAL_REJECTED' },
];

const byPhrase = new Map(PARTIES.map((p) => [p.phrase, p]));
// Longest first, so "who approves after a while" is not read as "who approves".
const alternatives = [...byPhrase.keys()].sort((a, b) => b.length - a.length).map((p) => p.replace(/ /g, '\\s'));

defineParameterType({
  name: 'party',
  regexp: new RegExp(`(?:a|the) (?:payer|payee|customer) (${alternatives.join('|')})`),
  transformer: (phrase: string) => byPhrase.get(phrase.replace(/\s/g, ' '))!,
});

export const ORDINARY_CUSTOMER = byPhrase.get('who approves')!;
