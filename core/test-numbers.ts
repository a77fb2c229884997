/**
 * The sandbox's test numbers (real-api-notes.md): MSISDNs whose payments end a known way, and whose
 * account-holder check answers a known way. The reference sandbox serves them, the conformance steps name their
 * customers by them, and the load scripts pay them; this table is the one place they are written.
 */

/** What a payment becomes when this number is its payer (request to pay) or payee (deposit, refund). */
export interface PaymentOutcome {
  /** PENDING: the payer never answers, and the payment times out after the pending timeout. */
  status: 'SUCCESSFUL' | 'FAILED' | 'PENDING';
  reason?: string;
  /** The outcome comes only after the sandbox's delayed-success time (the live sandbox: about 25–30 s). */
  delayed?: boolean;
}

/** The holder's status, as the account-holder check (§4.2 #8, §4.3 #12) answers it. */
export type HolderStatus = { kind: 'status'; active: boolean };

/** An error the account-holder check answers instead; its status and code are kept as written, for the sandbox to hold them to the catalogue. */
export type HolderError<Status extends number = number, Code extends string = string> = {
  kind: 'error';
  httpStatus: Status;
  code: Code;
  message: string;
};

/** What the account-holder check (§4.2 #8, §4.3 #12) answers for a holder. */
export type HolderAnswer = HolderStatus | HolderError;

export interface TestNumber {
  msisdn: string;
  payment: PaymentOutcome;
  /** The answer of the account-holder check, by the value of the profiles' accountHolderErrors difference. */
  holder: { spec: HolderAnswer; documented: HolderAnswer };
  /** observed: seen on the live sandbox; documented: the SDKs say so, nobody saw it (real-api-notes: uncertain). */
  source: 'observed' | 'documented';
}

const ACTIVE: HolderStatus = { kind: 'status', active: true };
const INACTIVE: HolderStatus = { kind: 'status', active: false };
const same = <const Answer extends HolderAnswer>(answer: Answer) => ({ spec: answer, documented: answer });
const error = <const Status extends number, const Code extends string>(
  httpStatus: Status,
  code: Code,
  message: string,
): HolderError<Status, Code> => ({ kind: 'error', httpStatus, code, message });
const failed = (reason: string): PaymentOutcome => ({ status: 'FAILED', reason });

export const TEST_NUMBERS = {
  /** Any number outside the table: its payments succeed at once, and it is a registered, active holder. */
  ordinary: { msisdn: '46733123499', payment: { status: 'SUCCESSFUL' }, holder: same(ACTIVE), source: 'observed' },
  /**
   * Another country's customer whose number only ends as failsAtOnce's (its last six digits): a number outside the
   * table all the same, whose payments succeed at once (real-api-notes: any other valid MSISDN).
   */
  endsLikeFailing: { msisdn: '256772123450', payment: { status: 'SUCCESSFUL' }, holder: same(ACTIVE), source: 'observed' },
  failsAtOnce: {
    msisdn: '46733123450',
    payment: failed('INTERNAL_PROCESSING_ERROR'),
    // Not registered: per §4.2 #8 {result: false}; the SDKs document 404 RESOURCE_NOT_FOUND.
    holder: { spec: INACTIVE, documented: error(404, 'RESOURCE_NOT_FOUND', 'Requested resource was not found.') },
    source: 'observed',
  },
  rejects: { msisdn: '46733123451', payment: failed('APPROVAL_REJECTED'), holder: same(INACTIVE), source: 'observed' },
  letsExpire: {
    msisdn: '46733123452',
    payment: failed('EXPIRED'),
    holder: same(error(500, 'NOT_ALLOWED', 'Authorization failed. Insufficient permissions.')),
    source: 'observed',
  },
  neverAnswers: {
    msisdn: '46733123453',
    payment: { status: 'PENDING' },
    holder: same(error(500, 'NOT_ALLOWED_TARGET_ENVIRONMENT', 'Access to target environment is forbidden.')),
    source: 'observed',
  },
  approvesAfterAWhile: {
    msisdn: '46733123454',
    payment: { status: 'SUCCESSFUL', delayed: true },
    holder: same(error(500, 'INTERNAL_PROCESSING_ERROR', 'An internal error occurred while processing.')),
    source: 'observed',
  },
  notFound: {
    msisdn: '46733123455',
    payment: failed('PAYER_NOT_FOUND'),
    holder: { spec: ACTIVE, documented: error(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable, please try again later.') },
    source: 'documented',
  },
  mayNotReceive: { msisdn: '46733123456', payment: failed('PAYEE_NOT_ALLOWED_TO_RECEIVE'), holder: same(ACTIVE), source: 'documented' },
  notAllowed: { msisdn: '46733123457', payment: failed('NOT_ALLOWED'), holder: same(ACTIVE), source: 'documented' },
  otherEnvironment: {
    msisdn: '46733123458',
    payment: failed('NOT_ALLOWED_TARGET_ENVIRONMENT'),
    holder: same(ACTIVE),
    source: 'documented',
  },
  refusesCallbackHost: { msisdn: '46733123459', payment: failed('INVALID_CALLBACK_URL_HOST'), holder: same(ACTIVE), source: 'documented' },
  wrongCurrency: { msisdn: '46733123460', payment: failed('INVALID_CURRENCY'), holder: same(ACTIVE), source: 'documented' },
  processingFails: { msisdn: '46733123461', payment: failed('INTERNAL_PROCESSING_ERROR'), holder: same(ACTIVE), source: 'documented' },
  serviceUnavailable: { msisdn: '46733123462', payment: failed('SERVICE_UNAVAILABLE'), holder: same(ACTIVE), source: 'documented' },
  // 46733123463 (COULD_NOT_PERFORM_TRANSACTION) is left out: that code is in none of the spec's sets.
} satisfies Record<string, TestNumber>;

export type TestNumberName = keyof typeof TEST_NUMBERS;

/**
 * A second number outside the table, for a second customer who approves ("any other valid MSISDN", real-api-notes:
 * SUCCESSFUL at once): two customers' consents held at once are told apart by it.
 */
export const ANOTHER_ORDINARY_MSISDN = '46733123498';

/** An entry of the table, its literals kept. */
export type TestNumberEntry = (typeof TEST_NUMBERS)[TestNumberName];

/** The entry of an MSISDN (with or without a leading +), or undefined for a number outside the table. */
export function testNumberOf(msisdn: string): TestNumberEntry | undefined {
  const bare = msisdn.replace(/^\+/, '');
  return Object.values(TEST_NUMBERS).find((n) => n.msisdn === bare && n !== TEST_NUMBERS.ordinary);
}
