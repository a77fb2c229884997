import { observed, reading, spec, type Source } from '../../core/sources.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';

/**
 * What a scenario takes for granted to set up its case: which API user calls, which product redeems a consent, which
 * test number approves, what a final state is called. Each premise has a source of its own, as a check does, and a
 * finding is no stronger than the weakest premise under it (harness/checks/check.ts).
 *
 * A scenario *assumes* a premise while it has not seen it hold, and a finding about an operation the premise concerns,
 * made meanwhile, rests on it: when the premise is weaker in the run than the finding (a reading, or an observation in
 * the spec profile), the departure may be the premise not holding for this target rather than the target departing,
 * and the scenario ends NOT TESTED, naming the premise (judge.ts PremiseNotHeld). A premise the scenario has seen hold
 * (the refund it rests on was accepted) weakens nothing after. Checks name the premises their expected values rest on
 * (a state's name, a test number's outcome) in their definitions.
 */
export interface Premise {
  /** What is taken for granted, in the domain's words. */
  statement: string;
  source: Source;
  /** The operations whose answers depend on it: only findings about them rest on it. */
  operations: readonly OperationId[] | 'all';
  /** What it means for the target, and for the run, when it does not hold: the report says it. */
  unheld: string;
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
  'refund-by-another-api-user': {
    statement: 'a disbursement API user may refund a request to pay that a collection API user made',
    source: reading(
      '§2.4 and §4.3 #9 say nothing of who may refund; a request to pay is made under collection and a refund under disbursement, so with API users bound to their product (real-api-notes) only another API user can refund',
    ),
    operations: REFUND_OPERATIONS,
    unheld:
      'The target does not let another API user refund the payment: a server may bind refunds to the API user that was paid, and the spec does not say who may refund.',
  },
  'refund-by-payer-api-user': {
    statement: 'the API user that was paid may refund its own request to pay, through the disbursement product',
    source: reading('§2.4 and §4.3 #9 say nothing of who may refund, nor that an API user works across products'),
    operations: REFUND_OPERATIONS,
    unheld: 'The target does not let the API user that was paid refund its own payment under disbursement either.',
  },
  'consent-redeemed-by-asker': {
    statement: 'the API user that asked for the consent under collection redeems it at the listed path, /disbursement/oauth2/token/',
    source: reading(
      "§4.3 #11 lists the consent token only under disbursement and §5.4 tells the flow as one partner's; the spec does not say which API user redeems it, nor that an API user works across products",
    ),
    operations: ['createOAuthToken', 'userInfo'],
    unheld:
      "The target refuses the asking API user's credential at the disbursement token operation: it binds API users to the product that created them, which the spec allows.",
  },
  'consent-redeemed-by-product-user': {
    statement: 'a disbursement API user redeems, at /disbursement/oauth2/token/, a consent that a collection API user asked for',
    source: reading('§4.3 #11 lists the consent token under disbursement; the spec does not say which API user redeems a consent'),
    operations: ['createOAuthToken', 'userInfo'],
    unheld: 'The target lets only the API user that asked redeem a consent (as CIBA Core §10.1 has it), so no disbursement API user can.',
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
  'payment-settled-as-asked': {
    statement: "the payment the scenario set up ended as its test number's customer answers (SUCCESSFUL for one who approves)",
    source: observed('real-api-notes, sandbox test numbers and status records: which number approves, and the names SUCCESSFUL and FAILED'),
    operations: TRANSACTION_OPERATIONS,
    unheld:
      "The payment the scenario rests on did not end as the live sandbox's test number would: this target's test numbers or its names of final states differ, which the spec does not fix.",
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
  'api-user-registered': {
    statement: 'the API user the scenario registered exists',
    source: spec('§4.5 #14: 201 created'),
    operations: ['createApiKey', 'getApiUser'],
    unheld: 'The API user the scenario rests on was not registered.',
  },
} as const satisfies Record<string, Premise>;

export type PremiseName = keyof typeof PREMISES;
export const PREMISE_NAMES = Object.keys(PREMISES) as PremiseName[];

/** Whether a premise concerns an operation's answers. */
export function concerns(premise: Premise, operation: OperationId): boolean {
  return premise.operations === 'all' || premise.operations.includes(operation);
}
