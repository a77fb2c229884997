import { randomUUID } from 'node:crypto';
import type momoModule from 'mtn-momo';
import type { PayerType } from 'mtn-momo';
import { TEST_NUMBERS } from '../../../core/test-numbers.ts';
import { check, type InteropClient, type InteropEnv } from '../support/types.ts';

type Momo = typeof momoModule;

/**
 * sparkplug's client (mtn-momo on npm) and its fork code-coast-momo-api have one API: create({callbackHost,
 * baseUrl}) gives Collections, Disbursements and Users. The base URL is the one thing the suite sets.
 */
export function sparkplugClient(name: string, momo: Momo): InteropClient {
  const payer = (msisdn: string) => ({ partyIdType: 'MSISDN' as PayerType, partyId: msisdn });
  const order = () => ({
    amount: '50',
    currency: 'EUR',
    externalId: `order-${randomUUID().slice(0, 8)}`,
    payerMessage: 'Pay for goods',
    payeeNote: 'Thanks',
  });

  async function products(env: InteropEnv) {
    const client = momo.create({ callbackHost: env.callbackHost, baseUrl: env.baseUrl });
    const collection = await env.apiUser('collection');
    const disbursement = await env.apiUser('disbursement');
    return {
      collections: client.Collections({ primaryKey: env.keys.collection, userId: collection.userId, userSecret: collection.apiKey }),
      disbursements: client.Disbursements({
        primaryKey: env.keys.disbursement,
        userId: disbursement.userId,
        userSecret: disbursement.apiKey,
      }),
    };
  }

  return {
    name,
    flows: {
      'provisions an API user and its key (Users)': async (env) => {
        const { Users } = momo.create({ callbackHost: env.callbackHost, baseUrl: env.baseUrl });
        const users = Users({ primaryKey: env.keys.collection });
        const userId = await users.create(env.callbackHost);
        const { apiKey } = await users.login(userId);
        check(/^[0-9a-f]{32}$/.test(apiKey), `login gave the key ${apiKey}`);
      },
      'collection: a request to pay and its status': async (env) => {
        const { collections } = await products(env);
        const referenceId = await collections.requestToPay({ ...order(), payer: payer(TEST_NUMBERS.ordinary.msisdn) });
        const payment = await collections.getTransaction(referenceId);
        check(payment.status === 'SUCCESSFUL', `the payment reads ${JSON.stringify(payment)}`);
      },
      'collection: a rejected request to pay is an ApprovalRejectedError': async (env) => {
        const { collections } = await products(env);
        const referenceId = await collections.requestToPay({ ...order(), payer: payer(TEST_NUMBERS.rejects.msisdn) });
        const error = await collections.getTransaction(referenceId).then(
          () => undefined,
          (e: unknown) => e,
        );
        check(error instanceof momo.ApprovalRejectedError, `getTransaction gave ${String(error)}`);
      },
      'collection: the balance': async (env) => {
        const balance = await (await products(env)).collections.getBalance();
        check(balance.currency === 'EUR' && typeof balance.availableBalance === 'string', `balance ${JSON.stringify(balance)}`);
      },
      'collection: whether a payer is active (isPayerActive)': async (env) => {
        const active = (await (await products(env)).collections.isPayerActive(TEST_NUMBERS.ordinary.msisdn)) as unknown;
        check(
          active === true || (typeof active === 'object' && (active as { result?: unknown }).result === true),
          `isPayerActive gave ${JSON.stringify(active)}`,
        );
      },
      'disbursement: a transfer and its status': async (env) => {
        const { disbursements } = await products(env);
        const referenceId = await disbursements.transfer({ ...order(), payee: payer(TEST_NUMBERS.ordinary.msisdn) });
        const transfer = await disbursements.getTransaction(referenceId);
        check(transfer.status === 'SUCCESSFUL', `the transfer reads ${JSON.stringify(transfer)}`);
      },
      'disbursement: the balance': async (env) => {
        const balance = await (await products(env)).disbursements.getBalance();
        check(balance.currency === 'EUR', `balance ${JSON.stringify(balance)}`);
      },
      'disbursement: whether a payee is active (isPayerActive)': async (env) => {
        const active = (await (await products(env)).disbursements.isPayerActive(TEST_NUMBERS.ordinary.msisdn)) as unknown;
        check(
          active === true || (typeof active === 'object' && (active as { result?: unknown }).result === true),
          `isPayerActive gave ${JSON.stringify(active)}`,
        );
      },
    },
  };
}
