import { TEST_NUMBERS } from '../../../core/test-numbers.ts';
import { redirectHost } from '../support/redirect.ts';
import { check, type InteropClient, type InteropEnv } from '../support/types.ts';

type Module = typeof import('mtn-momo-client');
type ProductName = 'collection' | 'disbursement' | 'remittance';

const load = (): Promise<Module> => import('mtn-momo-client');
const customer = TEST_NUMBERS.ordinary.msisdn;

/**
 * The API user of each product, made once through the client's own provisioning: the client caches one token
 * client and one token per product for the life of the process.
 */
const users = new Map<ProductName, Promise<{ userId: string; apiKey: string }>>();
function userOf(env: InteropEnv, product: ProductName) {
  let user = users.get(product);
  if (!user) {
    user = load().then((m) => m.createAPIUserAndKey({ subscriptionKey: env.keys[product], providerCallbackHost: env.callbackHost }));
    users.set(product, user);
  }
  return user;
}

async function productApi(env: InteropEnv, product: ProductName) {
  const m = await load();
  const { userId, apiKey } = await userOf(env, product);
  const options = { subscriptionKey: env.keys[product], targetEnvironment: m.TargetEnvironment.Sandbox, userId, apiKey };
  return product === 'collection'
    ? m.createCollectionAPI(options)
    : product === 'disbursement'
      ? m.createDisbursementAPI(options)
      : m.createRemittanceAPI(options);
}

const party = { partyIdType: 'MSISDN', partyId: customer } as never;
const transaction = { amount: '5', currency: 'EUR', externalId: 'order-7', payerMessage: 'For goods', payeeNote: 'Thanks' };

/** The flows every product offers in this client: the balance, basic user information, the account holder check. */
function commonFlows(product: ProductName) {
  return {
    [`${product}: reads the balance`]: async (env: InteropEnv) => {
      const balance = await (await productApi(env, product)).getAccountBalance();
      check(balance.currency === 'EUR' && typeof balance.availableBalance === 'string', `balance ${JSON.stringify(balance)}`);
    },
    [`${product}: reads basic user information`]: async (env: InteropEnv) => {
      const info = await (await productApi(env, product)).getBasicUserInfo({ accountHolderMSISDN: customer });
      check(info.givenName === 'Sand' && info.familyName === 'Box', `basic user info ${JSON.stringify(info)}`);
    },
    [`${product}: checks that an account holder is active`]: async (env: InteropEnv) => {
      const m = await load();
      const active = await (await productApi(env, product)).validateAccountHolderStatus({
        accountHolderIdType: m.AccountHolderIdVariant.msisdn,
        accountHolderId: customer,
      });
      check(active === true, `active is ${String(active)}`);
    },
  };
}

export const client: InteropClient = {
  name: 'mtn-momo-client',
  // Its product clients always call https://sandbox.momodeveloper.mtn.com/, whatever base URL is given.
  prepare: (env) => void redirectHost('sandbox.momodeveloper.mtn.com', env.baseUrl),
  flows: {
    'provisions an API user and key, and reads the user back': async (env) => {
      const m = await load();
      const user = await m.createAPIUserAndKey({ subscriptionKey: env.keys.collection, providerCallbackHost: env.callbackHost });
      check(
        user.targetEnvironment === 'sandbox' && /^[0-9a-f]{32}$/.test(user.apiKey),
        `the user ${JSON.stringify({ ...user, apiKey: '…' })}`,
      );
    },
    'collection: a request to pay, its status and a delivery notification': async (env) => {
      const api = (await productApi(env, 'collection')) as ReturnType<Module['createCollectionAPI']>;
      const { referenceId } = await api.requestToPay({ ...transaction, payer: party });
      const payment = await api.requestToPayTransactionStatus({ referenceId });
      check(payment.status === 'SUCCESSFUL', `the payment reads ${JSON.stringify(payment)}`);
      await api.requestToPayDeliveryNotification({ referenceId, notificationMessage: 'Delivered.', language: 'en' });
    },
    ...commonFlows('collection'),
    'disbursement: a transfer and its status': async (env) => {
      const api = (await productApi(env, 'disbursement')) as ReturnType<Module['createDisbursementAPI']>;
      const { referenceId } = await api.transfer({ ...transaction, payee: party });
      const transfer = await api.getTransferStatus({ referenceId });
      check(transfer.status === 'SUCCESSFUL', `the transfer reads ${JSON.stringify(transfer)}`);
    },
    ...commonFlows('disbursement'),
    'remittance: a transfer and its status': async (env) => {
      const api = (await productApi(env, 'remittance')) as ReturnType<Module['createRemittanceAPI']>;
      const { referenceId } = await api.transfer({ ...transaction, payee: party });
      const transfer = await api.getTransferStatus({ referenceId });
      check(transfer.status === 'SUCCESSFUL', `the transfer reads ${JSON.stringify(transfer)}`);
    },
    ...commonFlows('remittance'),
  },
};
