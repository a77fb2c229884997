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
