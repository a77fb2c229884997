import { makeRequest } from 'mtn-momo-api';
import { TEST_NUMBERS } from '../../../core/test-numbers.ts';
import { redirectHost } from '../support/redirect.ts';
import { check, type InteropClient } from '../support/types.ts';

export const client: InteropClient = {
  name: 'mtn-momo-api',
  // It calls https://sandbox.momodeveloper.mtn.com and nothing else.
  prepare: (env) => void redirectHost('sandbox.momodeveloper.mtn.com', env.baseUrl),
  flows: {
    'collection: a token, a request to pay and its status': async (env) => {
      const { userId, apiKey } = await env.apiUser('collection');
      const { response, status } = await makeRequest({
        callbackHost: env.callbackHost,
        userApiKey: apiKey,
        userId,
        primaryKey: env.keys.collection,
        amount: '10',
        currency: 'EUR',
        externalId: 'order-1',
        partyIdType: 'MSISDN',
        partyId: TEST_NUMBERS.ordinary.msisdn,
        payerMessage: 'Pay for goods',
        payeeNote: 'Thanks',
      });
      check(response.responseCode === 202, `request to pay answered ${response.responseCode}`);
      check(status.status === 'SUCCESSFUL', `the payment reads ${JSON.stringify(status)}`);
    },
  },
};
