import type { ProfileBehaviour } from '../core/profiles.ts';
import type { Product } from '../core/products.ts';

export type OperationId =
  | 'createApiUser' | 'createApiKey' | 'getApiUser'
  | 'createAccessToken' | 'createOAuthToken'
  | 'requestToPay' | 'getRequestToPayStatus' | 'deliveryNotification'
  | 'deposit' | 'getDepositStatus' | 'refund' | 'getRefundStatus'
  | 'getBalance' | 'getBalanceInCurrency' | 'accountHolderActive' | 'basicUserInfo'
  | 'bcAuthorize' | 'userInfo';

type ErrorSchema = 'error-set-a' | 'error-set-b' | 'error-set-c';

/** What the spec promises for one operation: where it says so, and the schema of each answer. */
export interface OperationContract {
  label: string;
  section: (product: Product) => string;
  /** Success statuses and the schema of their body (null: no body is described). */
  success: Record<number, string | null | ((profile: ProfileBehaviour) => string)>;
  /** Schema of the {code, message} errors of this operation's code set (§7). */
  errors: ErrorSchema | ((product: Product) => ErrorSchema);
  /** Statuses whose body is the OAuth {error} shape (§2.14). */
  oauthStatuses?: number[];
}

const setAOnCollection = (product: Product): ErrorSchema => (product === 'collection' ? 'error-set-a' : 'error-set-b');
const fixed = (section: string) => () => section;

export const CONTRACT: Record<OperationId, OperationContract> = {
  createApiUser: { label: 'create API user', section: fixed('§4.5 #14'), success: { 201: null }, errors: 'error-set-c' },
  createApiKey: { label: 'create API key', section: fixed('§4.5 #15'), success: { 201: 'api-key' }, errors: 'error-set-c' },
  getApiUser: { label: 'get API user', section: fixed('§4.5 #16'), success: { 200: 'api-user' }, errors: 'error-set-c' },
  createAccessToken: {
    label: 'create access token',
    section: (p) => (p === 'collection' ? '§4.2 #1' : '§4.2 #1, §5.2'),
    success: { 200: 'access-token' },
    errors: setAOnCollection,
    oauthStatuses: [401],
  },
  createOAuthToken: { label: 'create OAuth 2.0 token', section: fixed('§4.3 #11, §5.4'), success: { 200: 'consent-token' }, errors: setAOnCollection, oauthStatuses: [400, 401] },
  requestToPay: { label: 'request to pay', section: fixed('§4.2 #2'), success: { 202: null }, errors: 'error-set-a' },
  getRequestToPayStatus: { label: 'get request-to-pay status', section: fixed('§4.2 #2, §4.6'), success: { 200: 'request-to-pay-status' }, errors: 'error-set-a' },
  deliveryNotification: { label: 'request-to-pay delivery notification', section: fixed('§4.2 #3'), success: { 200: null }, errors: 'error-set-a' },
  deposit: { label: 'deposit', section: fixed('§4.3 #10'), success: { 202: null }, errors: 'error-set-b' },
  getDepositStatus: { label: 'get deposit status', section: fixed('§4.3 #10, §4.6'), success: { 200: 'deposit-status' }, errors: 'error-set-b' },
  refund: { label: 'refund', section: fixed('§4.3 #9'), success: { 202: null }, errors: 'error-set-b' },
  getRefundStatus: { label: 'get refund status', section: fixed('§4.3 #9, §4.6'), success: { 200: 'refund-status' }, errors: 'error-set-b' },
  getBalance: { label: 'get account balance', section: (p) => (p === 'remittance' ? '§4.4 #13' : '§2.9'), success: { 200: 'balance' }, errors: setAOnCollection },
  getBalanceInCurrency: { label: 'get account balance in a currency', section: fixed('§4.2 #4'), success: { 200: 'balance' }, errors: 'error-set-a' },
  accountHolderActive: { label: 'validate account holder status', section: (p) => (p === 'collection' ? '§4.2 #8' : '§4.3 #12'), success: { 200: 'account-holder-status' }, errors: setAOnCollection },
  basicUserInfo: {
    label: 'get basic user information',
    section: fixed('§4.2 #5'),
    success: { 200: (profile) => (profile.basicUserInfo === 'spec' ? 'basic-user-info' : 'basic-user-info-observed') },
    errors: 'error-set-a',
    oauthStatuses: [401],
  },
  bcAuthorize: { label: 'bc-authorize', section: fixed('§4.2 #7, §5.4'), success: { 200: 'consent-request' }, errors: 'error-set-a' },
  userInfo: { label: 'get user information with consent', section: fixed('§4.2 #6, §5.4'), success: { 200: 'user-info' }, errors: 'error-set-a', oauthStatuses: [401] },
};

/**
 * The schema a response's body must match, given its status: the success schema, the OAuth or gateway
 * shape on 401, the operation's error set otherwise. 400 bodies are not shown in the spec (§7 rule 6) and
 * are often empty on the live sandbox, so they are not checked.
 */
export function schemasFor(id: OperationId, product: Product, status: number, profile: ProfileBehaviour): string[] | 'no body' | 'unchecked' {
  const contract = CONTRACT[id];
  if (status in contract.success) {
    const schema = contract.success[status];
    if (schema === null || schema === undefined) return 'no body';
    return [typeof schema === 'function' ? schema(profile) : schema];
  }
  if (status === 400) return 'unchecked';
  const errorSet = typeof contract.errors === 'function' ? contract.errors(product) : contract.errors;
  if (status === 401) return ['gateway-error', 'oauth-error'];
  // A failed token request answers 500 {error} on the live sandbox (a named deviation of the mtn-sandbox profile).
  if (contract.oauthStatuses?.includes(status) || (id === 'createAccessToken' && status === 500)) return ['oauth-error', errorSet];
  return [errorSet];
}
