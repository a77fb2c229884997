import encoding from 'k6/encoding';
import http from 'k6/http';
import { config, type Product } from './config.ts';
import { uuidv4 } from './ids.ts';

/** An API user of one product, provisioned in setup() and shared by every VU. */
export interface Account {
  product: Product;
  userId: string;
  apiKey: string;
}

// Calls are tagged by operation (op) and named by route (name), so that metrics group by operation
// rather than by every reference id.
const tagged = (op: string, name: string) => ({ op, name });

function headers(product: Product, extra: Record<string, string> = {}): Record<string, string> {
  return { 'Ocp-Apim-Subscription-Key': config.keys[product], ...extra };
}

function business(product: Product, bearer: string, extra: Record<string, string> = {}): Record<string, string> {
  return headers(product, { Authorization: bearer, 'X-Target-Environment': config.targetEnvironment, ...extra });
}

export function createApiUser(product: Product, userId: string) {
  return http.post(`${config.sandboxUrl}/v1_0/apiuser`, JSON.stringify({ providerCallbackHost: config.callbackHost }), {
    headers: headers(product, { 'X-Reference-Id': userId, 'Content-Type': 'application/json' }),
    tags: tagged('provisioning', 'POST /v1_0/apiuser'),
  });
}

export function createApiKey(product: Product, userId: string) {
  return http.post(`${config.sandboxUrl}/v1_0/apiuser/${userId}/apikey`, null, { headers: headers(product), tags: tagged('provisioning', 'POST /v1_0/apiuser/{id}/apikey') });
}

export function createAccessToken(account: Account) {
  const host = account.product === 'collection' ? config.sandboxUrl : config.baseUrl;
  return http.post(`${host}/${account.product}/token/`, null, {
    headers: headers(account.product, { Authorization: `Basic ${encoding.b64encode(`${account.userId}:${account.apiKey}`)}` }),
    tags: tagged('token', `POST /${account.product}/token/`),
  });
}

export type Creation = 'request-to-pay' | 'deposit' | 'refund';

const CREATION_PATHS: Record<Creation, { product: Product; path: string }> = {
  'request-to-pay': { product: 'collection', path: '/collection/v1_0/requesttopay' },
  deposit: { product: 'disbursement', path: '/disbursement/v1_0/deposit' },
  refund: { product: 'disbursement', path: '/disbursement/v1_0/refund' },
};

/** Creates a transaction under a fresh reference id; returns the answer and the id. */
export function create(kind: Creation, bearer: string, body: object, callbackUrl?: (referenceId: string) => string) {
  const { product, path } = CREATION_PATHS[kind];
  const referenceId = uuidv4();
  const extra: Record<string, string> = { 'X-Reference-Id': referenceId, 'Content-Type': 'application/json' };
  if (callbackUrl) extra['X-Callback-Url'] = callbackUrl(referenceId);
  const response = http.post(`${config.baseUrl}${path}`, JSON.stringify(body), { headers: business(product, bearer, extra), tags: tagged(kind, `POST ${path}`) });
  return { response, referenceId };
}

export function readStatus(kind: Creation, bearer: string, referenceId: string) {
  const { product, path } = CREATION_PATHS[kind];
  return http.get(`${config.baseUrl}${path}/${referenceId}`, { headers: business(product, bearer), tags: tagged(`${kind}-status`, `GET ${path}/{id}`) });
}

export function readBalance(product: Product, bearer: string) {
  const host = product === 'remittance' ? config.sandboxUrl : config.baseUrl;
  return http.get(`${host}/${product}/v1_0/account/balance`, { headers: business(product, bearer), tags: tagged('balance', `GET /${product}/v1_0/account/balance`) });
}

export function accountHolderActive(product: 'collection' | 'disbursement', bearer: string, msisdn: string) {
  const host = product === 'disbursement' ? config.sandboxUrl : config.baseUrl;
  return http.get(`${host}/${product}/v1_0/accountholder/msisdn/${msisdn}/active`, { headers: business(product, bearer), tags: tagged('account-holder', `GET /${product}/v1_0/accountholder/{type}/{id}/active`) });
}

export function basicUserInfo(bearer: string, msisdn: string) {
  return http.get(`${config.baseUrl}/collection/v1_0/accountholder/msisdn/${msisdn}/basicuserinfo`, { headers: business('collection', bearer), tags: tagged('basic-user-info', 'GET /collection/v1_0/accountholder/msisdn/{msisdn}/basicuserinfo') });
}
