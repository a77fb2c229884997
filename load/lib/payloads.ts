import { TEST_NUMBERS } from '../../core/test-numbers.ts';
import { config } from './config.ts';

/** A customer whose payments succeed at once on the sandbox (any number outside the test numbers). */
export const APPROVING_CUSTOMER = TEST_NUMBERS.ordinary.msisdn;
/** A customer whose payments stay PENDING for a while, then succeed (the sandbox's delayed test number). */
export const SLOW_CUSTOMER = TEST_NUMBERS.approvesAfterAWhile.msisdn;

export function requestToPayBody(amount = '10', msisdn = APPROVING_CUSTOMER) {
  return {
    amount,
    currency: config.currency,
    externalId: `load-${Date.now()}`,
    payer: { partyIdType: 'MSISDN', partyId: msisdn },
    payerMessage: 'Load test payment',
    payeeNote: 'Load test',
  };
}

export function depositBody(amount = '1', msisdn = APPROVING_CUSTOMER) {
  return {
    amount,
    currency: config.currency,
    externalId: `load-${Date.now()}`,
    payee: { partyIdType: 'MSISDN', partyId: msisdn },
    payerMessage: 'Load test deposit',
    payeeNote: 'Load test',
  };
}

export function refundBody(referenceIdToRefund: string, amount = '1') {
  return {
    amount,
    currency: config.currency,
    externalId: `load-${Date.now()}`,
    payerMessage: 'Load test refund',
    payeeNote: 'Load test',
    referenceIdToRefund,
  };
}
