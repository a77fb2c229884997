import { defineParameterType } from '@cucumber/cucumber';
import { TEST_NUMBERS, type TestNumber, type TestNumberName } from '../../core/test-numbers.ts';

/** A payer or payee of the sandbox, known by how their wallet behaves (core/test-numbers.ts). */
export interface Party {
  phrase: string;
  msisdn: string;
  /** The final status the sandbox gives their payments, and the reason when FAILED; PENDING: never final. */
  outcome: 'SUCCESSFUL' | 'FAILED' | 'PENDING';
  reason?: string;
  /** The outcome arrives only after a delay (the live sandbox: ~25–30 s). */
  slow?: boolean;
}

/** The customers of the features, in the domain's words, each one a test number. */
const PHRASES: Record<string, TestNumberName> = {
  'who approves': 'ordinary',
  'whose number only ends like a failing one': 'endsLikeFailing',
  'who approves after a while': 'approvesAfterAWhile',
  'who never answers': 'neverAnswers',
  'whose wallet fails': 'failsAtOnce',
  'who rejects the payment': 'rejects',
  'who lets the payment expire': 'letsExpire',
  // Documented by SDKs, not observed on the live sandbox (real-api-notes: uncertain).
  'who cannot be found': 'notFound',
  'who may not receive': 'mayNotReceive',
  'who is not allowed to transact': 'notAllowed',
  'whose wallet is in another target environment': 'otherEnvironment',
  'whose wallet refuses the callback host': 'refusesCallbackHost',
  'whose wallet does not take the currency': 'wrongCurrency',
  'whose payment the service fails to process': 'processingFails',
  // The payment FAILS with the reason SERVICE_UNAVAILABLE: an outcome the status record reports, not the
  // target being unavailable (the record itself is answered 200, and judged like any other).
  'whose wallet service is unavailable': 'serviceUnavailable',
  // For account-holder checks (§4.2 #8): the reference sandbox's holders that are not registered or not
  // active. As payers, their payments end as those test numbers do.
  'who is not registered': 'failsAtOnce',
  'whose account is inactive': 'rejects',
};

const PARTIES: Party[] = Object.entries(PHRASES).map(([phrase, name]) => {
  const { msisdn, payment } = TEST_NUMBERS[name] as TestNumber;
  return {
    phrase,
    msisdn,
    outcome: payment.status,
    ...(payment.reason ? { reason: payment.reason } : {}),
    ...(payment.delayed ? { slow: true } : {}),
  };
});

const byPhrase = new Map(PARTIES.map((p) => [p.phrase, p]));
// Longest first, so "who approves after a while" is not read as "who approves".
const alternatives = [...byPhrase.keys()].sort((a, b) => b.length - a.length).map((p) => p.replace(/ /g, '\\s'));

defineParameterType({
  name: 'party',
  regexp: new RegExp(`(?:a|the) (?:payer|payee|customer) (${alternatives.join('|')})`),
  transformer: (phrase: string) => byPhrase.get(phrase.replace(/\s/g, ' '))!,
});

export const ORDINARY_CUSTOMER = byPhrase.get('who approves')!;
