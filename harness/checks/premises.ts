import { observed, reading, spec, type Source } from '../../core/sources.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { ProfileName } from '../../core/profiles.ts';

/**
 * What a scenario takes for granted to set up its case: which API user calls, which product redeems a consent, which
 * test number approves, what a final state is called. Each premise has a source of its own, as a check does, and a
 * finding is no stronger than the weakest premise under it (harness/checks/check.ts).
 *
 * A scenario *assumes* a premise while it has not seen it hold, and an expectation that names it (Expectation.premises)
 * rests on it: when the answer is a refusal of the premise's own kind (`refusal`: the caller turned away, say) and the
 * premise is weaker in the run than the finding (a reading, or an observation in the spec profile), the departure may
 * be the premise not holding for this target rather than the target departing, and the scenario ends NOT TESTED,
 * naming the premise (judge.ts PremiseNotHeld). Any other departure (a 5xx, a wrong record, a deadline) is the
 * target's, whatever the premise. A premise the scenario has seen hold (the refund it rests on was accepted) weakens
 * nothing after. Where the expected value itself rests on the live service (a state's name, a test number's outcome),
 * the check says so in its definition's values instead.
 */
export interface Premise {
  /** What is taken for granted, in the domain's words. */
  statement: string;
  /** Where it comes from: one source, or one per profile (the live service's binding makes one an observation there). */
  source: Source | Readonly<Record<ProfileName, Source>>;
  /** The operations whose answers depend on it: only findings about them rest on it. */
  operations: readonly OperationId[] | 'all';
  /** What it means for the target, and for the run, when it does not hold: the report says it. */
  unheld: string;
  /** The answers that say it does not hold (a refusal of its kind); unset: any departure of an expectation resting on it. */
  refusal?: (answer: { status: number; json: unknown }) => boolean;
}

/** The source of a premise in a profile. */
export function premiseSource(premise: Premise, profile: ProfileName): Source {
  return 'kind' in premise.source ? premise.source : premise.source[profile];
}

const codeOf = (json: unknown): unknown =>
  (json as { code?: unknown; error?: unknown } | undefined)?.code ?? (json as { error?: unknown } | undefined)?.error;
const REFUSAL_CODES = new Set([
  'NOT_ALLOWED',
  'NOT_ALLOWED_TARGET_ENVIRONMENT',
  'PAYMENT_NOT_APPROVED',
  'RESOURCE_NOT_FOUND',
  'TRANSACTION_NOT_COMPLETED',
]);
/** The codes of a transaction refused for its size: a payer's limit, or too little money in the account. */
const LIMIT_CODES = new Set(['PAYER_LIMIT_REACHED', 'NOT_ENOUGH_FUNDS']);
/** A refusal of a part of a payment as the target's own rule: invalid data, or not allowed (set B). */
const partRefused = ({ status, json }: { status: number; json: unknown }): boolean => {
  const code = codeOf(json);
  return status === 400 || (status === 500 && typeof code === 'string' && REFUSAL_CODES.has(code));
};
const OAUTH_REFUSALS = new Set([
  'invalid_client',
  'unauthorized_client',
  'invalid_grant',
  'access_denied',
  'invalid_token',
  'login_failed',
]);

/**
 * The answers that turn a caller or a request away on its right to act (not on its data, and not in bad weather):
 * 401, 403, 404; a 400 or 500 whose code says not allowed or not found; an OAuth refusal of the client or the grant.
 */
function turnedAway({ status, json }: { status: number; json: unknown }): boolean {
  const code = codeOf(json);
  if (status === 401 || status === 403 || status === 404) return true;
  if (typeof code === 'string' && OAUTH_REFUSALS.has(code)) return status === 400 || status === 500;
  return (status === 400 || status === 500) && typeof code === 'string' && REFUSAL_CODES.has(code);
}

/** The answers that refuse to act on a transaction that did not end as the scenario took it to (409 not completed, say). */
function refusedForItsState({ status, json }: { status: number; json: unknown }): boolean {
  const code = codeOf(json);
  return [400, 404, 409, 410].includes(status) || (status === 500 && typeof code === 'string' && REFUSAL_CODES.has(code));
}

const TRANSACTION_OPERATIONS: readonly OperationId[] = [
  'requestToPay',
  'getRequestToPayStatus',
  'deliveryNotification',
  'refund',
  'getRefundStatus',
  'refundV2',
  'deposit',
  'getDepositStatus',
  'depositV2',
  'transfer',
  'getTransferStatus',
  'requestToWithdraw',
  'requestToWithdrawV2',
  'getRequestToWithdrawStatus',
  'getBalance',
  'getBalanceInCurrency',
];

const CREATION_OPERATIONS: readonly OperationId[] = [
  'requestToPay',
  'getRequestToPayStatus',
  'refund',
  'refundV2',
  'getRefundStatus',
  'deposit',
  'depositV2',
  'getDepositStatus',
];

const REFUND_OPERATIONS: readonly OperationId[] = ['refund', 'refundV2', 'getRefundStatus'];
const CONSENT_OPERATIONS: readonly OperationId[] = ['bcAuthorize', 'createOAuthToken', 'userInfo'];

export const PREMISES = {
  'balance-of-its-own': {
    statement: "a new API user's balance moves only with its own transactions",
    source: reading(
      "§2.9: availableBalance is the account's; §4.2 #4: the balance of the own account: whether an API user's account is its own or its subscription's, shared by the subscription's API users, the spec does not say",
    ),
    operations: ['getBalance', 'getBalanceInCurrency'],
    unheld:
      "Another API user's transaction moved this partner's balance: the target keeps one account for several API users (a subscription's, say), which the spec allows, and what a scenario's own transaction moves cannot be told from what the run's others move.",
  },
  'callback-retried': {
    statement: 'the target calls a callback address again after the address refused a delivery',
    source: reading(
      '§6: callback retries "not shown"; real-api-notes, callbacks: older docs say sent once, newer ones describe retries [uncertain]',
    ),
    operations: ['requestToPay', 'deposit', 'refund'],
    unheld:
      'Nothing came again after the callback address answered 500: the target does not retry, which the spec neither promises nor forbids, so what a retry carries is not tested.',
  },
  'large-amount-taken': {
    statement: 'the target takes a transaction of three thousand million and a quarter',
    source: reading('§2.2–§2.4 give the amount as a string and §8 shows no bounds: that a service takes one this large is our reading'),
    operations: ['requestToPay', 'deposit'],
    unheld:
      'The target refuses an amount this large (a limit of its own, which the spec neither gives nor forbids): how money moves at such a scale is not tested.',
    // Refused as invalid data, as not allowed, or as a limit or too little money (set A and B's codes for them).
    refusal: ({ status, json }) => {
      const code = codeOf(json);
      return status === 400 || (status === 500 && typeof code === 'string' && (REFUSAL_CODES.has(code) || LIMIT_CODES.has(code)));
    },
  },
  'duplicate-sent-at-once': {
    statement: 'of two creations sent at once under one reference id, one is seen accepted',
    source: reading(
      '§2.5: a reuse is refused with 409; when the careful client had to make one of the two again, a 409 to it may answer its own first attempt',
    ),
    operations: ['requestToPay', 'deposit', 'refund'],
    unheld:
      'Which of the two the target took could not be told: the weather made the careful client send one again, and no answer said 202.',
  },
  'funds-checked': {
    statement: 'the target fails a payout larger than the balance',
    source: reading(
      '§7 set B has NOT_ENOUGH_FUNDS, and §2.9 gives the available balance: that a payout larger than it fails, rather than overdraws, is our reading (core/profiles.ts READINGS)',
    ),
    operations: ['deposit', 'getDepositStatus', 'getBalance'],
    unheld:
      'A deposit of more than the balance succeeded: the target lets the account go below nothing (an overdraft the spec neither gives nor forbids), so two deposits that together overdraw it are no departure here.',
  },
  'partial-refund-taken': {
    statement: 'the target takes a refund of part of a payment',
    source: reading('§2.4 and §4.3 #9: a refund carries its own amount; that it may be less than the payment is our reading'),
    operations: REFUND_OPERATIONS,
    unheld: 'The target takes refunds only in full: the spec does not say a part of a payment may be refunded.',
    refusal: partRefused,
  },
  'another-part-refund-taken': {
    statement: 'the target takes a further refund of part of a payment that was refunded in part already',
    source: reading('§2.4 and §4.3 #9: a refund carries its own amount; that a payment may be refunded in several parts is our reading'),
    operations: REFUND_OPERATIONS,
    unheld:
      'The target takes one refund of part of a payment, and no further part: the spec does not say a payment may be refunded in parts.',
    refusal: partRefused,
  },
  'refund-by-another-api-user': {
    statement: 'a disbursement API user may refund a request to pay that a collection API user made',
    source: {
      spec: reading('§2.4 and §4.3 #9 say nothing of who may refund, nor whether an API user works across products'),
      'mtn-sandbox': observed(
        'real-api-notes, provisioning and tokens: an API user works only with the product it was provisioned under, so only a disbursement API user can refund a request to pay',
      ),
    },
    operations: REFUND_OPERATIONS,
    unheld:
      'The target does not let another API user refund the payment: a server may bind refunds to the API user that was paid, and the spec does not say who may refund.',
    refusal: turnedAway,
  },
  'refund-by-payer-api-user': {
    statement: 'the API user that was paid may refund its own request to pay, through the disbursement product',
    source: reading('§2.4 and §4.3 #9 say nothing of who may refund, nor that an API user works across products'),
    operations: REFUND_OPERATIONS,
    unheld: 'The target does not let the API user that was paid refund its own payment under disbursement either.',
    refusal: turnedAway,
  },
  'consent-valid-in-taken': {
    statement: 'the target takes consent_valid_in as a whole number of seconds (600) on bc-authorize',
    source: reading(
      '§4.2 #7: the parameter consent_valid_in is also accepted, its type and form not shown; a whole number of seconds is our reading (§2.7 counts refresh_token_expired_in, which it sets, in seconds)',
    ),
    operations: ['bcAuthorize'],
    unheld: 'The target refuses consent_valid_in=600: it takes another form of the parameter, which the spec does not show, or departs.',
    refusal: ({ status }) => status === 400,
  },
  'consent-redeemed-by-asker': {
    statement:
      'the API user that asked for the consent under collection redeems it at the listed path, /disbursement/oauth2/token/, and its consent token reads the user information under collection',
    source: reading(
      "§4.3 #11 lists the consent token only under disbursement and §5.4 tells the flow as one partner's; the spec does not say which API user redeems it, nor that an API user works across products",
    ),
    operations: ['createOAuthToken', 'userInfo'],
    unheld:
      "The target refuses the asking API user's credential at the disbursement token operation: it binds API users to the product that created them, which the spec allows.",
    refusal: turnedAway,
  },
  'consent-redeemed-by-product-user': {
    statement:
      'a disbursement API user redeems, at /disbursement/oauth2/token/, a consent that a collection API user asked for, and its consent token reads the user information under collection',
    source: reading('§4.3 #11 lists the consent token under disbursement; the spec does not say which API user redeems a consent'),
    operations: ['createOAuthToken', 'userInfo'],
    unheld: 'The target lets only the API user that asked redeem a consent (as CIBA Core §10.1 has it), so no disbursement API user can.',
    refusal: turnedAway,
  },
  'consent-within-own-product': {
    statement:
      "the API user completes the consent flow within its own product: bc-authorize, the token and userinfo on its product's paths",
    source: reading(
      "the live service binds an API user to its product (real-api-notes, observed), so a flow that crosses products cannot be walked there; that each product serves the three operations is the provider's definitions (docs/beyond-spec.md §9)",
    ),
    operations: CONSENT_OPERATIONS,
    unheld: "The target does not serve the consent operations under the API user's own product.",
  },
  'customers-told-apart': {
    statement: "two customers' user information tells them apart: each has a sub, and they differ",
    source: reading(
      '§2.11 gives sub as the identifier of the end user, in a record whose fields it does not require; that two test numbers are two end users with a sub each is our reading',
    ),
    operations: ['userInfo'],
    unheld:
      "The target's user information gives no sub, or the same for two customers, so which customer a consent token reads cannot be told.",
  },
  'consent-refreshed': {
    statement: 'the target refreshes a consent token with grant_type=refresh_token (RFC 6749 §6)',
    source: reading(
      '§2.7 gives a refresh token and how long the consent can be refreshed, not how: RFC 6749 §6 (grant_type=refresh_token) is our reading',
    ),
    operations: ['createOAuthToken', 'userInfo'],
    unheld: 'The target did not refresh the consent token that way, so what a refreshed token reads was not seen.',
  },
  'payment-settled-as-asked': {
    statement: "the payment the scenario set up ended as its test number's customer answers (SUCCESSFUL for one who approves)",
    source: observed('real-api-notes, sandbox test numbers and status records: which number approves, and the names SUCCESSFUL and FAILED'),
    operations: TRANSACTION_OPERATIONS,
    unheld:
      "The payment the scenario rests on did not end as the live sandbox's test number would: this target's test numbers or its names of final states differ, which the spec does not fix.",
    refusal: refusedForItsState,
  },
  'callback-told-outcome': {
    statement:
      "the callback the partner learnt the outcome from told the transaction's final state, as a status read gives it, once the transaction was final",
    source: observed(
      'real-api-notes, callbacks: sent when the transaction reaches a final state, carrying the status record; §6 shows neither the payload nor when it is sent',
    ),
    operations: [...TRANSACTION_OPERATIONS, 'getBalance', 'getBalanceInCurrency'],
    unheld:
      'What the partner did on the callback alone was refused or did not show: the callback may have come before the transaction was final, or told its outcome otherwise than a status read, which the spec does not fix.',
  },
  'notification-refused-while-pending': {
    statement:
      'the first delivery notification of the scenario was refused as not completed, because the payment of the customer who approves after a while was still PENDING',
    source: observed('real-api-notes, sandbox test numbers: 46733123454 stays PENDING for about 25–30 s before SUCCESSFUL'),
    operations: ['deliveryNotification'],
    unheld:
      'The payment had already succeeded when the first notification was sent (this target approves sooner), so that notification counted: a second one may rightly get 429.',
    refusal: ({ status }) => status === 429,
  },
  'two-scopes-offered': {
    statement: 'the target takes a consent request for two scopes at once, profile and openid',
    source: reading(
      '§5 rule 7 leaves the allowed scopes "not shown", and set A has UNSUPPORTED_SCOPE_COMBINATION; the live sandbox is seen to offer profile, all_info and openid (real-api-notes), each alone',
    ),
    operations: ['bcAuthorize'],
    unheld: 'The target refuses profile and openid in one consent request: it may not offer them together, which the spec allows.',
    refusal: ({ status }) => status >= 400,
  },
  'foreign-currency-refused': {
    statement: 'the target refuses MOMO_REFUSED_CURRENCY, by default a currency other than MOMO_CURRENCY',
    source: observed('real-api-notes, errors and inputs: the sandbox accepts only EUR; another currency gives INVALID_CURRENCY'),
    operations: CREATION_OPERATIONS,
    unheld:
      'The target takes the currency the run used as one it refuses: a service may take several currencies, which the spec allows. Set MOMO_REFUSED_CURRENCY to a currency the target refuses.',
  },
  'foreign-currency-refused-as-set': {
    statement: 'the target refuses MOMO_REFUSED_CURRENCY, as the run was told',
    source: spec('§7 sets A and B: INVALID_CURRENCY, for the currency the run was told the target refuses (MOMO_REFUSED_CURRENCY)'),
    operations: CREATION_OPERATIONS,
    unheld: 'The target takes the currency MOMO_REFUSED_CURRENCY names.',
  },
} as const satisfies Record<string, Premise>;

export type PremiseName = keyof typeof PREMISES;
export const PREMISE_NAMES = Object.keys(PREMISES) as PremiseName[];

/** Whether a premise concerns an operation's answers. */
export function concerns(premise: Premise, operation: OperationId): boolean {
  return premise.operations === 'all' || premise.operations.includes(operation);
}
