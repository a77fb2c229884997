import { randomUUID } from 'node:crypto';
import momo from 'momo-api';
import { TEST_NUMBERS } from '../../../core/test-numbers.ts';
import { redirectHost } from '../support/redirect.ts';
import { check, type InteropClient } from '../support/types.ts';

/** momo-api takes a host, not a URL, and always speaks https to it. */
const HOST = 'sandbox.momodeveloper.mtn.com';
const payee = { partyIdType: 'MSISDN', partyId: TEST_NUMBERS.ordinary.msisdn };

export const client: InteropClient = {
  name: 'momo-api',
  prepare: (env) => void redirectHost(HOST, env.baseUrl),
  flows: {
    'provisions an API user and its key': async (env) => {
      const userId = randomUUID();
      const created = await momo.createApiUser(`https://${HOST}/v1_0/apiuser`, userId, env.keys.collection, 'sandbox', env.callbackHost);
      check(created.status === 201, `createApiUser answered ${created.status}`);
      // It sends {providerCallbackHost, targetEnvironment} as the body of the API-key call, which defines none.
      const { apiKey } = await momo.createApiKey(`https://${HOST}/v1_0/apiuser`, env.keys.collection, 'sandbox', userId, env.callbackHost);
      check(/^[0-9a-f]{32}$/.test(apiKey), `createApiKey gave ${apiKey}`);
    },
    'collection: a token, then a request to pay': async (env) => {
      const { userId, apiKey } = await env.apiUser('collection');
      const { access_token: token } = await momo.colAccessToken(apiKey, HOST, env.keys.collection, userId);
      // It uses externalId as X-Reference-Id, so it must be a UUID; and it adds payee and callbackUrl to the body.
      await momo.requestToPay(
        HOST,
        env.keys.collection,
        undefined,
        'sandbox',
        payee,
        payee,
        '10',
        'EUR',
        randomUUID(),
        'note',
        'message',
        token,
      );
    },
    'disbursement: a token, then a transfer': async (env) => {
      const { userId, apiKey } = await env.apiUser('disbursement');
      const { access_token: token } = await momo.disAccessToken(apiKey, HOST, env.keys.disbursement, userId);
      await momo.disburseTransfer(HOST, env.keys.disbursement, 'sandbox', payee, '5', 'EUR', randomUUID(), token);
    },
    'remittance: a token, then a transfer': async (env) => {
      const { userId, apiKey } = await env.apiUser('remittance');
      const { access_token: token } = await momo.remittAccessToken(apiKey, HOST, env.keys.remittance, userId);
      await momo.remittTransfer(HOST, env.keys.remittance, 'sandbox', payee, '5', 'EUR', randomUUID(), token);
    },
  },
};
