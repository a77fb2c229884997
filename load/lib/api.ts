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

// What counts as a failed call in http_req_failed: the documented success statuses. Set once, natively
// judged by k6, so the error rate costs the script nothing per call.
http.setResponseCallback(http.expectedStatuses(200, 201, 202));

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

// One headers object per VU and operation, refreshed in place: a creation differs from the last only in its
// reference id (and token, callback), and building a fresh object per call showed up in the generator's profile.
const creationParams: Partial<Record<Creation, { headers: Record<string, string> }>> = {};
const creationUrls: Record<Creation, string> = {
  'request-to-pay': `${config.baseUrl}${CREATION_PATHS['request-to-pay'].path}`,
  deposit: `${config.baseUrl}${CREATION_PATHS.deposit.path}`,
  refund: `${config.baseUrl}${CREATION_PATHS.refund.path}`,
};

/** Creates a transaction under a fresh reference id; returns the answer and the id. */
export function create(kind: Creation, bearer: string, body: object | string, callbackUrl?: (referenceId: string) => string) {
  const referenceId = uuidv4();
  const params = (creationParams[kind] ??= { headers: business(CREATION_PATHS[kind].product, bearer, { 'Content-Type': 'application/json' }) });
  const { headers } = params;
  headers.Authorization = bearer;
  headers['X-Reference-Id'] = referenceId;
  if (callbackUrl) headers['X-Callback-Url'] = callbackUrl(referenceId);
  else delete headers['X-Callback-Url'];
  // No per-call tags: a creation's URL is fixed, and scenarios that judge creations by operation tag them
  // at the scenario (tags are cloned per call, a cost the open-model generator should not pay).
  const response = http.post(creationUrls[kind], typeof body === 'string' ? body : JSON.stringify(body), params);
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
