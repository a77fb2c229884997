import encoding from 'k6/encoding';
import http from 'k6/http';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { TRANSACTIONS, operation, pathOf, productsOf, statusQueryOf, urlOf } from '../../core/catalogue/routes.ts';
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

const bases = { gateway: config.baseUrl, provisioning: config.sandboxUrl };

// Calls are tagged by operation (op: its catalogue id) and named by route (name), so that metrics group by
// operation rather than by every reference id.
const tagged = (id: OperationId, product?: Product) => ({ op: id, name: `${operation(id).method} ${pathOf(id, product)}` });

function headers(product: Product, extra: Record<string, string> = {}): Record<string, string> {
  return { 'Ocp-Apim-Subscription-Key': config.keys[product], ...extra };
}

function business(product: Product, bearer: string, extra: Record<string, string> = {}): Record<string, string> {
  return headers(product, { Authorization: bearer, 'X-Target-Environment': config.targetEnvironment, ...extra });
}

export function createApiUser(product: Product, userId: string) {
  return http.post(urlOf('createApiUser', product, bases), JSON.stringify({ providerCallbackHost: config.callbackHost }), {
    headers: headers(product, { 'X-Reference-Id': userId, 'Content-Type': 'application/json' }),
    tags: tagged('createApiUser'),
  });
}

export function createApiKey(product: Product, userId: string) {
  return http.post(urlOf('createApiKey', product, bases, { referenceId: userId }), null, {
    headers: headers(product),
    tags: tagged('createApiKey'),
  });
}

export function createAccessToken(account: Account) {
  return http.post(urlOf('createAccessToken', account.product, bases), null, {
    headers: headers(account.product, { Authorization: `Basic ${encoding.b64encode(`${account.userId}:${account.apiKey}`)}` }),
    tags: tagged('createAccessToken', account.product),
  });
}

/** An operation that creates a transaction under a reference id (TRANSACTIONS of the catalogue). */
export type Creation = OperationId;

const productOf = (id: Creation): Product => productsOf(id)[0]!;
const creationUrls = Object.fromEntries(TRANSACTIONS.map(({ create }) => [create, urlOf(create, productOf(create), bases)])) as Partial<
  Record<Creation, string>
>;

// One headers object per VU and operation, refreshed in place: a creation differs from the last only in its
// reference id (and token, callback), and building a fresh object per call showed up in the generator's profile.
const creationParams: Partial<Record<Creation, { headers: Record<string, string> }>> = {};

/** Creates a transaction under a fresh reference id; returns the answer and the id. */
export function create(kind: Creation, bearer: string, body: object | string, callbackUrl?: (referenceId: string) => string) {
  const referenceId = uuidv4();
  const params = (creationParams[kind] ??= { headers: business(productOf(kind), bearer, { 'Content-Type': 'application/json' }) });
  const { headers } = params;
  headers.Authorization = bearer;
  headers['X-Reference-Id'] = referenceId;
  if (callbackUrl) headers['X-Callback-Url'] = callbackUrl(referenceId);
  else if (headers['X-Callback-Url'] !== undefined) delete headers['X-Callback-Url'];
  // No per-call tags: a creation's URL is fixed, and scenarios that judge creations by operation tag them
  // at the scenario (tags are cloned per call, a cost the open-model generator should not pay).
  const url = creationUrls[kind];
  if (!url) throw new Error(`${kind} creates no transaction`);
  const response = http.post(url, typeof body === 'string' ? body : JSON.stringify(body), params);
  return { response, referenceId };
}

export function readStatus(kind: Creation, bearer: string, referenceId: string) {
  const status = statusQueryOf(kind);
  const product = productOf(kind);
  return http.get(urlOf(status, product, bases, { referenceId }), { headers: business(product, bearer), tags: tagged(status, product) });
}

export function readBalance(product: Product, bearer: string) {
  return http.get(urlOf('getBalance', product, bases), { headers: business(product, bearer), tags: tagged('getBalance', product) });
}

export function accountHolderActive(product: 'collection' | 'disbursement', bearer: string, msisdn: string) {
  return http.get(urlOf('accountHolderActive', product, bases, { accountHolderIdType: 'msisdn', accountHolderId: msisdn }), {
    headers: business(product, bearer),
    tags: tagged('accountHolderActive', product),
  });
}

export function basicUserInfo(bearer: string, msisdn: string) {
  return http.get(urlOf('basicUserInfo', 'collection', bases, { accountHolderMSISDN: msisdn }), {
    headers: business('collection', bearer),
    tags: tagged('basicUserInfo'),
  });
}
