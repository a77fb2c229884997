import type { Product } from '../products.ts';
import type { ProfileBehaviour } from '../profiles.ts';
import { schemaId, type SchemaName } from '../schema-ids.ts';
import type { HeaderName } from './headers.ts';

/**
 * The operation catalogue: every operation of the MoMo API, each defined once, as plain data with no
 * transport. The sandbox's routes and its OpenAPI document, the harness's client and contract, the k6 API
 * module, the certification's map of the spec's operations, the requirement catalogue's schema, the fuzzer,
 * the benchmark and the tests all derive from it (core/catalogue/routes.ts has the helpers they use).
 *
 * A path literal of the API is written here and nowhere else.
 */

/** How a caller proves who it is, besides the subscription key every operation needs (§5). */
export type Credential = 'basic' | 'bearer' | 'consent' | 'none';

/** Which host serves an operation: {base_url}, the gateway, or {sandbox_url}, the provisioning host (§4). */
export type Host = 'gateway' | 'provisioning';

/** The {code, message} errors of an operation: code set A, B or C of §7. */
export type ErrorSet = 'error-set-a' | 'error-set-b' | 'error-set-c';

/** A body whose schema follows a difference of the profiles (core/profiles.ts): one schema per value of it. */
export interface ProfileDependentBody<D extends keyof ProfileBehaviour = keyof ProfileBehaviour> {
  difference: D;
  schemas: Readonly<Record<string, SchemaName>>;
}

/**
 * The schema of a response body: a schema of schemas/, `errors` for the error set of the operation under its
 * product, several of them (any one may match), or one per value of a difference of the profiles.
 */
export type BodySchema = SchemaName | 'errors' | readonly (SchemaName | 'errors')[] | ProfileDependentBody;

/**
 * spec: the spec documents this status for the operation; live: the live service is observed or documented
 * to answer it (real-api-notes.md); sandbox: the reference sandbox's own answer where the spec is silent
 * (a full store, a refusal of form).
 */
export type ResponseSource = 'spec' | 'live' | 'sandbox';

export interface ResponseSpec {
  description: string;
  /** The body's schema; absent: the status has no body. */
  body?: BodySchema;
  /** The error codes this status carries (in `code` of {code, message}, or `error` of {error}). */
  codes?: readonly string[];
  source: ResponseSource;
  /** Where the codes come from, when not from where the status does (the spec names a status and no code). */
  codeSource?: ResponseSource;
}

/** An operation as served under one product. */
export interface ProductBinding {
  /** Where the spec (or, beyond it, the live service's documentation) defines it, e.g. "§4.2 #2". */
  section: string;
  host: Host;
  errors: ErrorSet;
  /** Why this product serves it although the spec lists it under another, or under none. */
  note?: string;
  /**
   * The public material that shows the live service has it, when the spec does not list it under this product:
   * such a binding is beyond the spec, served in both profiles and counted apart from the spec's operations.
   */
  beyondSpec?: string;
}

/**
 * The record a creation makes, which its status query reads: the versions of an operation share one (a deposit made
 * through v1 or v2 is the same kind of transaction).
 */
export type TransactionStore = 'requesttopay' | 'requesttowithdraw' | 'deposit' | 'refund' | 'transfer';

/** How a creation's callback is sent, and what says so. */
export interface CallbackSpec {
  method: 'PUT' | 'POST';
  source: string;
}

/** The spec counts 19 operations (§4.2 #1–#8, §4.3 #9–#12, §4.4 #13, §4.5 #14–#16, §4.6's three status queries). */
export interface SpecOperation {
  /** "4.2 #2", "4.6 refund": stable, and an anchor in the certification report. */
  key: string;
  title: string;
  /** The products whose binding counts as this operation of the spec. */
  products: readonly Product[];
}

export interface OperationDefinition {
  /** How messages and reports name it, in the domain's words. */
  label: string;
  method: 'GET' | 'POST';
  /** The path, with {product} for the product it is served under and {name} for each path parameter. */
  path: string;
  /** product: its product's subscription key opens it; any: the key of any product does (provisioning, §4.5). */
  key: 'product' | 'any';
  credential: Credential;
  headers: { required: readonly HeaderName[]; optional: readonly HeaderName[] };
  /** Path parameters and their JSON Schemas. */
  params?: Readonly<Record<string, object>>;
  /** The request body: its schema and media type; `none`: a body is refused. */
  request: { schema: SchemaName; mediaType: 'application/json' | 'application/x-www-form-urlencoded' } | 'none';
  responses: Readonly<Record<number, ResponseSpec>>;
  products: Readonly<Partial<Record<Product, ProductBinding>>>;
  /** The operations of the spec's count it is, when it is one (the account-holder check is two: §4.2 #8 and §4.3 #12). */
  spec?: readonly SpecOperation[];
  /** For a creation of a transaction: the operation that reads its status (§4.6), by id. */
  statusQuery?: string;
  /** For a creation of a transaction: the record it makes. */
  store?: TransactionStore;
  /** For a status query: the records it reads. */
  reads?: TransactionStore;
  /** For a creation that takes X-Callback-Url: the method of its callback. */
  callback?: CallbackSpec;
  /**
   * Why a caller's Basic credential may be of an API user of another product than the operation's (which is
   * otherwise refused, as observed live): the spec's own flow crosses products.
   */
  callerOfAnyProduct?: string;
  /** Path parameters whose form depends on another's value, by name. */
  dependentParams?: Readonly<Record<string, DependentParam>>;
}

/**
 * A path parameter whose form depends on the value of another, which neither the router's schemas nor OpenAPI can
 * tie together: the operation's handler checks it, and the OpenAPI document states every form in the parameter's
 * own schema and, beside it, which value asks for which.
 */
export interface DependentParam {
  /** The path parameter whose value picks the form. */
  on: string;
  /** The form of each value: a JSON Schema of a string, and how a message names it. */
  forms: Readonly<Record<string, { schema: Readonly<Record<string, unknown>>; what: string }>>;
}

export type Operation<Id extends string = string> = OperationDefinition & { id: Id };

const NO_HEADERS = { required: [], optional: [] } as const;

/** §4.2 #8: the account holder's id "is validated by type: MSISDN per ITU-T E.164, e-mail format, or UUID for party_code". */
const ACCOUNT_HOLDER_ID_FORMS = {
  msisdn: { schema: { $ref: schemaId('msisdn') }, what: 'an E.164 MSISDN such as 46733123450' },
  email: { schema: { type: 'string', maxLength: 254, pattern: '^[^\\s@]{1,64}@[^\\s@]+\\.[^\\s@]{2,}$' }, what: 'an e-mail address' },
  party_code: {
    schema: { type: 'string', pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$' },
    what: 'a UUID',
  },
} as const;
const referenceIdParam = { referenceId: { $ref: schemaId('uuid-v4') } };
const ALL_PRODUCTS = ['collection', 'disbursement', 'remittance'] as const;

/** The same binding under every product (provisioning takes any product's key). */
const everyProduct = (binding: ProductBinding): Record<Product, ProductBinding> =>
  Object.fromEntries(ALL_PRODUCTS.map((p) => [p, binding])) as Record<Product, ProductBinding>;

// Answers that recur across operations, each typed with its body and codes: the business errors a handler may send
// are read from them (BusinessStatusOf, BusinessCodeOf).

/** A {code, message} answer of the operation's error set that carries these codes. */
type ErrorsResponse<Code extends string> = ResponseSpec & { body: 'errors'; codes: readonly Code[] };

const invalid = (description = 'Invalid data.'): ResponseSpec & { body: 'bad-request' } => ({
  description,
  body: 'bad-request',
  source: 'spec',
});
// §7: 401 with {error}; the code invalid_token is RFC 6750's (§3.1), which the spec does not name.
const unauthorized = (description = 'Missing, expired or foreign access token.'): ResponseSpec & { body: 'oauth-error' } => ({
  description,
  body: 'oauth-error',
  codes: ['invalid_token'],
  source: 'spec',
  codeSource: 'sandbox',
});
/**
 * A forbidden target environment: 500 NOT_ALLOWED_TARGET_ENVIRONMENT, which §7 rule 3 makes definite for the balance
 * and status operations; elsewhere the spec gives the 500 and not the code (codeSource: the sandbox's reading). Where
 * the operation's listing has no 500 at all (§4.2 #6 and #7 show only 200), the status too is the sandbox's
 * (`listed: false`): no check holds a target to it, and no spec-legal chaos answers it.
 */
function forbiddenEnvironment<const More extends string = never>(
  more: readonly More[] = [],
  description?: string,
  codeSource: ResponseSource = 'spec',
  listed = true,
): ErrorsResponse<More | 'NOT_ALLOWED_TARGET_ENVIRONMENT'> {
  return {
    description: description ?? `${[...more, 'NOT_ALLOWED_TARGET_ENVIRONMENT'].join(', ')}.`,
    body: 'errors',
    codes: [...more, 'NOT_ALLOWED_TARGET_ENVIRONMENT'],
    source: listed ? 'spec' : 'sandbox',
    ...(listed && codeSource !== 'spec' ? { codeSource } : {}),
  };
}
const duplicate: ErrorsResponse<'RESOURCE_ALREADY_EXIST'> = {
  description: 'Duplicated reference id: RESOURCE_ALREADY_EXIST.',
  body: 'errors',
  codes: ['RESOURCE_ALREADY_EXIST'],
  source: 'spec',
};
const notFound = (description: string): ErrorsResponse<'RESOURCE_NOT_FOUND'> => ({
  description,
  body: 'errors',
  codes: ['RESOURCE_NOT_FOUND'],
  source: 'spec',
});
const storeFull = (store: string): ErrorsResponse<'SERVICE_UNAVAILABLE'> => ({
  description: `The ${store} store is full: SERVICE_UNAVAILABLE.`,
  body: 'errors',
  codes: ['SERVICE_UNAVAILABLE'],
  source: 'sandbox',
});
const setAOnCollection = (product: Product): ErrorSet => (product === 'collection' ? 'error-set-a' : 'error-set-b');

/**
 * Public material behind what the spec does not show, each cited by repository and file; docs/beyond-spec.md
 * describes each operation beyond the spec with its sources. The provider's own API definitions are the
 * momodeveloper portal's exports, vendored byte-identical by two unrelated repositories.
 */
const SOURCE = {
  collection: "MTN's collection API definition (momodeveloper portal export: maxkabechani/mtn-momo-sdk docs/collection.json)",
  disbursement:
    "MTN's disbursement API definition (momodeveloper portal export: maxkabechani/mtn-momo-sdk docs/disbursement.json, identical in TJMusiitwa/mtn_momo_collections schemes/disbursement.json)",
  remittance:
    "MTN's remittance API definition (momodeveloper portal export: maxkabechani/mtn-momo-sdk docs/remittance.json, identical in TJMusiitwa/mtn_momo_collections schemes/remittance.json)",
  sdks: "MTN's own SDKs (MTN-Group/MoMoAPIs_Php_sdk src/Common/Constants/API.php, MoMoAPIs_Javascript_sdk src/modules)",
  notebook: "MTN's sandbox notebook with captured answers (MoMoOpenAPI/MoMoOpenAPI_SandBox, SandBox NoteBook.ipynb)",
  callbacks: "the portal's callback page (momodeveloper.mtn.com/api-documentation/callback)",
} as const;

interface CreationOptions<S extends SchemaName, Q extends string> {
  label: string;
  path: string;
  products: Partial<Record<Product, ProductBinding>>;
  schema: S;
  store: TransactionStore;
  statusQuery: Q;
  callback: CallbackSpec;
  spec?: SpecOperation;
}

/**
 * A definition as written, its literals kept (the const type parameter) where OperationDefinition would widen them:
 * the types the sandbox's handlers take (headers, credential, business errors) are read from them.
 */
function defined<const D extends OperationDefinition>(definition: D): D {
  return definition;
}

/** The creation of a transaction under a reference id: request to pay (§4.2 #2), refund (§4.3 #9), deposit (§4.3 #10), and beyond the spec. */
function creation<const S extends SchemaName, const Q extends string>(o: CreationOptions<S, Q>) {
  return defined({
    statusQuery: o.statusQuery,
    store: o.store,
    callback: o.callback,
    label: o.label,
    method: 'POST',
    path: o.path,
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-reference-id', 'x-target-environment'], optional: ['x-callback-url'] },
    request: { schema: o.schema, mediaType: 'application/json' },
    responses: {
      202: { description: 'Accepted; no body. The transaction is PENDING until it settles.', source: 'spec' },
      400: invalid(),
      401: unauthorized(),
      409: duplicate,
      500: {
        description: 'INVALID_CURRENCY, INVALID_CALLBACK_URL_HOST or NOT_ALLOWED_TARGET_ENVIRONMENT.',
        body: 'errors',
        codes: ['INVALID_CURRENCY', 'INVALID_CALLBACK_URL_HOST', 'NOT_ALLOWED_TARGET_ENVIRONMENT'],
        source: 'spec',
      },
      503: storeFull('transaction'),
    },
    products: o.products,
    ...(o.spec ? { spec: [o.spec] } : {}),
  });
}

/** The status query of a transaction (§4.6): GET <path>/{referenceId}. */
function statusQuery<const S extends SchemaName>(
  label: string,
  path: string,
  products: Partial<Record<Product, ProductBinding>>,
  schema: S,
  reads: TransactionStore,
  spec?: SpecOperation,
) {
  return defined({
    reads,
    label,
    method: 'GET',
    path: `${path}/{referenceId}`,
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: [] },
    params: referenceIdParam,
    request: 'none',
    responses: {
      // §4.2 #2, §4.6: the status is read by this GET; the record itself is not shown (its schema's x-source says so).
      200: { description: 'The status record.', body: schema, source: 'spec' },
      400: invalid('Invalid data, e.g. a reference id that is not a UUID v4.'),
      401: unauthorized(),
      // Not shown in the spec (§4.6); the live sandbox answers an unknown id so (real-api-notes, observed).
      404: { ...notFound('Unknown reference id, or a transaction of another API user: RESOURCE_NOT_FOUND.'), source: 'live' },
      500: forbiddenEnvironment(),
    },
    products,
    ...(spec ? { spec: [spec] } : {}),
  });
}

/** One product's binding of an operation the spec does not list there. */
const beyond = (section: string, errors: ErrorSet, source: string, host: Host = 'gateway'): ProductBinding => ({
  section,
  host,
  errors,
  beyondSpec: source,
});
const inSpec = (section: string, product: Product): ProductBinding => ({ section, host: 'gateway', errors: setAOnCollection(product) });

/** A provisioning operation (§4.5): on {sandbox_url}, opened by any product's key, with no credential. */
function provisioning<const D extends Pick<OperationDefinition, 'method' | 'path' | 'headers' | 'params' | 'request' | 'responses'>>(
  label: string,
  number: number,
  definition: D,
) {
  return defined({
    label,
    key: 'any',
    credential: 'none',
    ...definition,
    products: everyProduct({ section: `§4.5 #${number}`, host: 'provisioning', errors: 'error-set-c' }),
    spec: [{ key: `4.5 #${number}`, title: `provisioning: ${label}`, products: ALL_PRODUCTS }],
  });
}

/** The provider's definitions of a consent operation under each product (docs/beyond-spec.md §10). */
const CONSENT_SOURCES: Record<Product, string> = {
  collection: `${SOURCE.collection}: the consent operations`,
  disbursement: `${SOURCE.disbursement}: the consent operations; ${SOURCE.notebook}, the flow run under disbursement`,
  remittance: `${SOURCE.remittance}: the consent operations`,
};

/**
 * A consent operation: the spec lists it under one product; the live service serves it under every product, so
 * one API user can complete the flow within its own product (beyond the spec, docs/beyond-spec.md §10).
 */
function consentProducts(section: string, specProduct: Product, errors: (product: Product) => ErrorSet): Record<Product, ProductBinding> {
  return Object.fromEntries(
    ALL_PRODUCTS.map((product) => [
      product,
      product === specProduct
        ? { section, host: 'gateway', errors: errors(product) }
        : beyond('docs/beyond-spec.md §10', errors(product), CONSENT_SOURCES[product]),
    ]),
  ) as Record<Product, ProductBinding>;
}

/** The catalogue as written, its literals kept: the types of request bodies and path parameters are read from them. */
function defineOperations<const T extends Record<string, OperationDefinition>>(definitions: T): T {
  return definitions;
}

const REQUEST_TO_PAY = '/collection/v1_0/requesttopay';
const DEPOSIT = '/disbursement/v1_0/deposit';
const REFUND = '/disbursement/v1_0/refund';
const TRANSFER = '/{product}/v1_0/transfer';
const REQUEST_TO_WITHDRAW = '/collection/v1_0/requesttowithdraw';

const definitions = defineOperations({
  // Sandbox user provisioning (§4.5), on {sandbox_url}, with any product's key.
  createApiUser: provisioning('create API user', 14, {
    method: 'POST',
    path: '/v1_0/apiuser',
    headers: { required: ['x-reference-id'], optional: [] },
    request: { schema: 'api-user-create', mediaType: 'application/json' },
    responses: {
      201: { description: 'Created; no body.', source: 'spec' },
      400: invalid(),
      409: duplicate,
      503: {
        description:
          'The sandbox holds its maximum of API users (--max-api-users): SERVICE_UNAVAILABLE, a code of set A (set C has none for it).',
        body: 'error-set-a',
        codes: ['SERVICE_UNAVAILABLE'],
        source: 'sandbox',
      },
    },
  }),
  createApiKey: provisioning('create API key', 15, {
    method: 'POST',
    path: '/v1_0/apiuser/{referenceId}/apikey',
    headers: NO_HEADERS,
    params: referenceIdParam,
    request: 'none',
    responses: {
      201: { description: 'The new key; it replaces any earlier key of the user.', body: 'api-key', source: 'spec' },
      400: invalid(),
      404: notFound('Unknown API user: RESOURCE_NOT_FOUND.'),
    },
  }),
  getApiUser: provisioning('get API user', 16, {
    method: 'GET',
    path: '/v1_0/apiuser/{referenceId}',
    headers: NO_HEADERS,
    params: referenceIdParam,
    request: 'none',
    responses: {
      200: { description: 'The API user.', body: 'api-user', source: 'live' },
      400: invalid(),
      404: notFound('Unknown API user: RESOURCE_NOT_FOUND.'),
    },
  }),

  // Tokens (§4.2 #1, §4.3 #11, §5.2–5.4).
  createAccessToken: {
    label: 'create access token',
    method: 'POST',
    path: '/{product}/token/',
    key: 'product',
    credential: 'basic',
    headers: NO_HEADERS,
    request: 'none',
    responses: {
      200: { description: 'An access token.', body: 'access-token', source: 'spec' },
      401: {
        description: 'Unknown API user or wrong key (spec profile).',
        body: 'oauth-error',
        codes: ['login_failed'],
        source: 'spec',
        codeSource: 'live',
      },
      500: {
        description:
          'login_failed for an unknown API user or a wrong key (mtn-sandbox profile), or NOT_ALLOWED_TARGET_ENVIRONMENT for an API user of another product.',
        body: ['oauth-error', 'errors'],
        codes: ['login_failed', 'NOT_ALLOWED_TARGET_ENVIRONMENT'],
        source: 'live',
      },
    },
    products: {
      collection: { section: '§4.2 #1', host: 'provisioning', errors: 'error-set-a' },
      disbursement: {
        section: '§4.2 #1, §5.2',
        host: 'gateway',
        errors: 'error-set-b',
        note: 'The live service has one token operation per product.',
      },
      remittance: {
        section: '§4.2 #1, §5.2',
        host: 'gateway',
        errors: 'error-set-b',
        note: 'The live service has one token operation per product.',
      },
    },
    spec: [{ key: '4.2 #1', title: 'collection: create access token', products: ALL_PRODUCTS }],
  },
  createOAuthToken: {
    label: 'create OAuth 2.0 token',
    method: 'POST',
    path: '/{product}/oauth2/token/',
    key: 'product',
    credential: 'basic',
    headers: { required: ['x-target-environment'], optional: [] },
    request: { schema: 'oauth-token-request', mediaType: 'application/x-www-form-urlencoded' },
    responses: {
      200: { description: 'A consent token.', body: 'consent-token', source: 'spec' },
      400: {
        description: 'authorization_pending, expired_token or invalid_grant (RFC 6749 / CIBA), or invalid data.',
        body: ['oauth-error', 'bad-request'],
        codes: ['authorization_pending', 'expired_token', 'invalid_grant'],
        source: 'sandbox',
      },
      401: {
        description: 'Unknown API user or wrong key (spec profile).',
        body: 'oauth-error',
        codes: ['login_failed'],
        source: 'spec',
        codeSource: 'live',
      },
      500: {
        description:
          'login_failed for an unknown API user or a wrong key (mtn-sandbox profile); NOT_ALLOWED_TARGET_ENVIRONMENT for an API user of another product or a target environment this sandbox does not serve.',
        body: ['oauth-error', 'errors'],
        codes: ['login_failed', 'NOT_ALLOWED_TARGET_ENVIRONMENT'],
        source: 'live',
      },
      503: storeFull('consent grant'),
    },
    products: consentProducts('§4.3 #11, §5.4', 'disbursement', setAOnCollection),
    callerOfAnyProduct:
      'The spec asks for the consent under collection (§4.2 #7) and lists this operation under disbursement (§4.3 #11): the API user that asked redeems its consent here, whatever its product.',
    spec: [{ key: '4.3 #11', title: 'disbursement: create OAuth 2.0 token', products: ['disbursement'] }],
  },

  // Payments (§4.2 #2–3, §4.3 #9–10) and their status queries (§4.6).
  requestToPay: creation({
    store: 'requesttopay',
    label: 'request to pay',
    path: REQUEST_TO_PAY,
    products: { collection: inSpec('§4.2 #2', 'collection') },
    schema: 'request-to-pay',
    statusQuery: 'getRequestToPayStatus',
    callback: { method: 'PUT', source: 'real-api-notes.md: PUT for requesttopay [documented]' },
    spec: { key: '4.2 #2', title: 'collection: request to pay', products: ['collection'] },
  }),
  getRequestToPayStatus: statusQuery(
    'get request-to-pay status',
    REQUEST_TO_PAY,
    { collection: inSpec('§4.2 #2, §4.6', 'collection') },
    'request-to-pay-status',
    'requesttopay',
    { key: '4.6 request to pay', title: 'status query: request to pay', products: ['collection'] },
  ),
  deliveryNotification: {
    label: 'request-to-pay delivery notification',
    method: 'POST',
    path: '/{product}/v1_0/requesttopay/{referenceId}/deliverynotification',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: ['language'] },
    params: referenceIdParam,
    request: { schema: 'delivery-notification', mediaType: 'application/json' },
    responses: {
      200: { description: 'Notification enqueued; no body.', source: 'spec' },
      // What MTN's JavaScript SDK docs captured under disbursement and remittance (9 Mar 2023); the sandbox answers 200 everywhere.
      202: {
        description:
          "Notification accepted; no body. Captured under disbursement and remittance in MTN's JavaScript SDK docs; the spec gives 200 for collection.",
        source: 'live',
      },
      400: invalid(),
      401: unauthorized(),
      // §4.2 #3 names the statuses and not the codes: each code is the sandbox's reading (READINGS in core/profiles.ts).
      404: { ...notFound('Unknown reference id, or a transaction of another API user: RESOURCE_NOT_FOUND.'), codeSource: 'sandbox' },
      409: {
        description: 'The transaction is not SUCCESSFUL: TRANSACTION_NOT_COMPLETED.',
        body: 'errors',
        codes: ['TRANSACTION_NOT_COMPLETED'],
        source: 'spec',
        codeSource: 'sandbox',
      },
      410: {
        description: 'The notification window has passed: EXPIRED.',
        body: 'errors',
        codes: ['EXPIRED'],
        source: 'spec',
        codeSource: 'sandbox',
      },
      429: {
        description: 'Notified for this id within the cool-down: NOT_ALLOWED.',
        body: 'errors',
        codes: ['NOT_ALLOWED'],
        source: 'spec',
        codeSource: 'sandbox',
      },
      500: forbiddenEnvironment([], undefined, 'sandbox'),
    },
    products: {
      collection: { section: '§4.2 #3', host: 'gateway', errors: 'error-set-a' },
      // In no provider definition, but MTN's own SDKs call it under these products, for their own transactions.
      // Its codes (TRANSACTION_NOT_COMPLETED above all) are set A's, whichever product serves it.
      disbursement: beyond('docs/beyond-spec.md §8', 'error-set-a', `${SOURCE.sdks} (RequestToPayDeliveryNotification under disbursement)`),
      remittance: beyond('docs/beyond-spec.md §8', 'error-set-a', `${SOURCE.sdks} (RequestToPayDeliveryNotification under remittance)`),
    },
    spec: [{ key: '4.2 #3', title: 'collection: request-to-pay delivery notification', products: ['collection'] }],
  },
  refund: creation({
    store: 'refund',
    label: 'refund',
    path: REFUND,
    products: { disbursement: inSpec('§4.3 #9', 'disbursement') },
    schema: 'refund',
    statusQuery: 'getRefundStatus',
    callback: { method: 'POST', source: `${SOURCE.disbursement}: X-Callback-Url "(POST Method)" of Refund-V1` },
    spec: { key: '4.3 #9', title: 'disbursement: refund', products: ['disbursement'] },
  }),
  getRefundStatus: statusQuery(
    'get refund status',
    REFUND,
    { disbursement: inSpec('§4.3 #9, §4.6', 'disbursement') },
    'refund-status',
    'refund',
    { key: '4.6 refund', title: 'status query: refund', products: ['disbursement'] },
  ),
  deposit: creation({
    store: 'deposit',
    label: 'deposit',
    path: DEPOSIT,
    products: { disbursement: inSpec('§4.3 #10', 'disbursement') },
    schema: 'deposit',
    statusQuery: 'getDepositStatus',
    callback: { method: 'POST', source: `${SOURCE.disbursement}: X-Callback-Url "(POST Method)" of Deposit-V1; ${SOURCE.callbacks}` },
    spec: { key: '4.3 #10', title: 'disbursement: deposit', products: ['disbursement'] },
  }),
  getDepositStatus: statusQuery(
    'get deposit status',
    DEPOSIT,
    { disbursement: inSpec('§4.3 #10, §4.6', 'disbursement') },
    'deposit-status',
    'deposit',
    { key: '4.6 deposit', title: 'status query: deposit', products: ['disbursement'] },
  ),

  // Beyond the spec: the live service's other transactions, each read by a status query of its own or of v1.
  depositV2: creation({
    store: 'deposit',
    label: 'deposit (v2)',
    path: '/disbursement/v2_0/deposit',
    products: { disbursement: beyond('docs/beyond-spec.md §3', 'error-set-b', `${SOURCE.disbursement}: Deposit-V2; ${SOURCE.sdks}`) },
    // Read where v1 deposits are: the definitions have no v2 status path, and MTN's SDKs read both versions there.
    schema: 'deposit',
    statusQuery: 'getDepositStatus',
    callback: { method: 'PUT', source: `${SOURCE.disbursement}: X-Callback-Url "(PUT Method)" of Deposit-V2` },
  }),
  refundV2: creation({
    store: 'refund',
    label: 'refund (v2)',
    path: '/disbursement/v2_0/refund',
    products: { disbursement: beyond('docs/beyond-spec.md §3', 'error-set-b', `${SOURCE.disbursement}: Refund-V2; ${SOURCE.sdks}`) },
    schema: 'refund',
    statusQuery: 'getRefundStatus',
    callback: { method: 'PUT', source: `${SOURCE.disbursement}: X-Callback-Url "(PUT Method)" of Refund-V2` },
  }),
  transfer: creation({
    store: 'transfer',
    label: 'transfer',
    path: TRANSFER,
    products: {
      disbursement: beyond('docs/beyond-spec.md §1', 'error-set-b', `${SOURCE.disbursement}: Transfer; ${SOURCE.notebook}`),
      // The remittance definition's errors are the 26 codes of the spec's set A.
      remittance: beyond(
        'docs/beyond-spec.md §2',
        'error-set-a',
        `${SOURCE.remittance}: Transfer (to be replaced by CashTransfer, the provider has announced)`,
      ),
    },
    // The definitions do not say the callback's method; PUT, as for request to pay.
    schema: 'transfer',
    statusQuery: 'getTransferStatus',
    callback: { method: 'PUT', source: 'not stated by the provider; PUT as for request to pay' },
  }),
  getTransferStatus: statusQuery(
    'get transfer status',
    TRANSFER,
    {
      disbursement: beyond('docs/beyond-spec.md §1', 'error-set-b', `${SOURCE.disbursement}: GetTransferStatus; ${SOURCE.notebook}`),
      remittance: beyond('docs/beyond-spec.md §2', 'error-set-a', `${SOURCE.remittance}: GetTransferStatus`),
    },
    'transfer-status',
    'transfer',
  ),
  requestToWithdraw: creation({
    store: 'requesttowithdraw',
    label: 'request to withdraw',
    path: REQUEST_TO_WITHDRAW,
    products: {
      collection: beyond('docs/beyond-spec.md §4', 'error-set-a', `${SOURCE.collection}: RequestToWithdraw-V1; ${SOURCE.notebook}`),
    },
    schema: 'request-to-pay',
    statusQuery: 'getRequestToWithdrawStatus',
    callback: { method: 'POST', source: `${SOURCE.collection}: X-Callback-Url "POST Callback URL" of RequestToWithdraw-V1` },
  }),
  requestToWithdrawV2: creation({
    store: 'requesttowithdraw',
    label: 'request to withdraw (v2)',
    path: '/collection/v2_0/requesttowithdraw',
    products: { collection: beyond('docs/beyond-spec.md §4', 'error-set-a', `${SOURCE.collection}: RequestToWithdraw-V2`) },
    schema: 'request-to-pay',
    statusQuery: 'getRequestToWithdrawStatus',
    callback: { method: 'PUT', source: `${SOURCE.collection}: X-Callback-Url "PUT Callback URL" of RequestToWithdraw-V2` },
  }),
  // Both versions are read here ("of both versions V1 and V2", MTN's JS SDK docs); the record is a request to pay's.
  getRequestToWithdrawStatus: statusQuery(
    'get request-to-withdraw status',
    REQUEST_TO_WITHDRAW,
    {
      collection: beyond(
        'docs/beyond-spec.md §4',
        'error-set-a',
        `${SOURCE.collection}: RequestToWithdrawTransactionStatus; ${SOURCE.notebook}`,
      ),
    },
    'request-to-pay-status',
    'requesttowithdraw',
  ),

  // Accounts (§4.2 #4–5, #8, §4.3 #12, §4.4 #13).
  getBalance: {
    label: 'get account balance',
    method: 'GET',
    path: '/{product}/v1_0/account/balance',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: [] },
    request: 'none',
    responses: {
      200: { description: 'The balance in the first configured currency.', body: 'balance', source: 'spec' },
      401: unauthorized(),
      500: forbiddenEnvironment(),
    },
    products: {
      // The spec lists it under remittance (§4.4 #13) only; the live service has it on every product.
      collection: beyond('docs/beyond-spec.md §7', 'error-set-a', `${SOURCE.collection}: GetAccountBalance; ${SOURCE.sdks}`),
      disbursement: beyond('docs/beyond-spec.md §7', 'error-set-b', `${SOURCE.disbursement}: GetAccountBalance; ${SOURCE.sdks}`),
      remittance: { section: '§4.4 #13', host: 'provisioning', errors: 'error-set-b' },
    },
    spec: [{ key: '4.4 #13', title: 'remittance: get account balance', products: ['remittance'] }],
  },
  getBalanceInCurrency: {
    label: 'get account balance in a currency',
    method: 'GET',
    path: '/{product}/v1_0/account/balance/{currency}',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: [] },
    params: { currency: { $ref: schemaId('currency') } },
    request: 'none',
    responses: {
      200: { description: 'The balance.', body: 'balance', source: 'spec' },
      400: invalid('Invalid data, e.g. a currency that is not an ISO 4217 code.'),
      401: unauthorized(),
      500: forbiddenEnvironment(['INVALID_CURRENCY']),
    },
    products: {
      collection: { section: '§4.2 #4', host: 'gateway', errors: 'error-set-a' },
      disbursement: beyond('docs/beyond-spec.md §7', 'error-set-b', `${SOURCE.disbursement}: GetAccountBalanceInSpecificCurrency`),
      remittance: beyond('docs/beyond-spec.md §7', 'error-set-a', `${SOURCE.remittance}: GetAccountBalanceInSpecificCurrency`),
    },
    spec: [{ key: '4.2 #4', title: 'collection: get account balance in a currency', products: ['collection'] }],
  },
  accountHolderActive: {
    label: 'validate account holder status',
    method: 'GET',
    path: '/{product}/v1_0/accountholder/{accountHolderIdType}/{accountHolderId}/active',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: [] },
    params: {
      accountHolderIdType: { type: 'string', enum: Object.keys(ACCOUNT_HOLDER_ID_FORMS), description: 'Lower case, as §4.2 #8 requires.' },
      accountHolderId: { type: 'string', minLength: 1, maxLength: 254 },
    },
    dependentParams: { accountHolderId: { on: 'accountHolderIdType', forms: ACCOUNT_HOLDER_ID_FORMS } },
    request: 'none',
    responses: {
      200: {
        description: 'Whether the holder is registered and active: true or false (§4.2 #8), as {"result": …} on the live sandbox.',
        body: { difference: 'accountHolderShape', schemas: { either: 'account-holder-status', result: 'account-holder-status-observed' } },
        source: 'spec',
      },
      400: invalid('Invalid data: an upper-case type, or an id that does not fit its type.'),
      401: unauthorized(),
      404: {
        description: 'mtn-sandbox profile only: test number 46733123450 (documented by the SDKs).',
        body: 'errors',
        codes: ['RESOURCE_NOT_FOUND'],
        source: 'live',
      },
      500: forbiddenEnvironment(
        ['NOT_ALLOWED', 'INTERNAL_PROCESSING_ERROR'],
        'NOT_ALLOWED, NOT_ALLOWED_TARGET_ENVIRONMENT or INTERNAL_PROCESSING_ERROR (test numbers).',
      ),
      503: {
        description: 'mtn-sandbox profile only: test number 46733123455 (documented by the SDKs).',
        body: 'errors',
        codes: ['SERVICE_UNAVAILABLE'],
        source: 'live',
      },
    },
    products: {
      collection: { section: '§4.2 #8', host: 'gateway', errors: 'error-set-a' },
      disbursement: { section: '§4.3 #12', host: 'provisioning', errors: 'error-set-b' },
      remittance: beyond(
        'docs/beyond-spec.md §5',
        'error-set-a',
        `${SOURCE.remittance}: ValidateAccountHolderStatus, captured {"result": true} in MTN's JS SDK docs`,
      ),
    },
    spec: [
      { key: '4.2 #8', title: 'collection: validate account holder status', products: ['collection'] },
      { key: '4.3 #12', title: 'disbursement: validate account holder status', products: ['disbursement'] },
    ],
  },
  basicUserInfo: {
    label: 'get basic user information',
    method: 'GET',
    path: '/{product}/v1_0/accountholder/msisdn/{accountHolderMSISDN}/basicuserinfo',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: [] },
    params: { accountHolderMSISDN: { $ref: schemaId('msisdn') } },
    request: 'none',
    responses: {
      200: {
        description: 'Basic information of the holder.',
        body: { difference: 'basicUserInfo', schemas: { spec: 'basic-user-info', observed: 'basic-user-info-observed' } },
        source: 'spec',
      },
      400: invalid(),
      401: unauthorized(),
      500: forbiddenEnvironment([], undefined, 'sandbox'),
    },
    products: {
      collection: { section: '§4.2 #5', host: 'gateway', errors: 'error-set-a' },
      disbursement: beyond(
        'docs/beyond-spec.md §6',
        'error-set-b',
        `${SOURCE.disbursement}: GetBasicUserinfo; the "Sand Box" record captured in MTN's JS SDK docs`,
      ),
      remittance: beyond(
        'docs/beyond-spec.md §6',
        'error-set-a',
        `${SOURCE.remittance}: GetBasicUserinfo; the "Sand Box" record captured in MTN's JS SDK docs`,
      ),
    },
    spec: [{ key: '4.2 #5', title: 'collection: get basic user information', products: ['collection'] }],
  },

  // Consent (§4.2 #6–7, §5.4), served under every product.
  bcAuthorize: {
    label: 'bc-authorize',
    method: 'POST',
    path: '/{product}/v1_0/bc-authorize',
    key: 'product',
    credential: 'bearer',
    headers: { required: ['x-target-environment'], optional: ['x-callback-url'] },
    request: { schema: 'bc-authorize-request', mediaType: 'application/x-www-form-urlencoded' },
    responses: {
      200: { description: 'The consent request.', body: 'consent-request', source: 'spec' },
      400: {
        description: 'Invalid data, or a scope this sandbox does not offer: UNSUPPORTED_SCOPE or MISSING_SCOPE_INSTRUCTION.',
        body: ['errors', 'bad-request'],
        codes: ['UNSUPPORTED_SCOPE', 'MISSING_SCOPE_INSTRUCTION'],
        source: 'sandbox',
      },
      401: unauthorized(),
      500: forbiddenEnvironment(['INVALID_CALLBACK_URL_HOST'], undefined, 'sandbox', false),
      503: storeFull('consent request'),
    },
    products: consentProducts('§4.2 #7, §5.4', 'collection', () => 'error-set-a'),
    spec: [{ key: '4.2 #7', title: 'collection: bc-authorize', products: ['collection'] }],
  },
  userInfo: {
    label: 'get user information with consent',
    method: 'GET',
    path: '/{product}/oauth2/v1_0/userinfo',
    key: 'product',
    credential: 'consent',
    headers: { required: ['x-target-environment'], optional: [] },
    request: 'none',
    responses: {
      200: { description: 'What the holder consented to share.', body: 'user-info', source: 'spec' },
      401: unauthorized('No consent token: an access token, an expired one or one of another product.'),
      500: forbiddenEnvironment([], undefined, 'sandbox', false),
    },
    products: consentProducts('§4.2 #6, §5.4', 'collection', () => 'error-set-a'),
    spec: [{ key: '4.2 #6', title: 'collection: get user information with consent', products: ['collection'] }],
  },
});

export type OperationId = keyof typeof definitions;

type Definitions = typeof definitions;

/** The schema of an operation's request body, by name; never when it takes none. */
export type RequestSchemaOf<Id extends OperationId> = Definitions[Id]['request'] extends { schema: infer S extends SchemaName } ? S : never;

/** An operation's path parameters, by name, as the router gives them. */
export type PathParamsOf<Id extends OperationId> = Definitions[Id] extends { params: infer P }
  ? { [K in keyof P as string extends K ? never : K]: string }
  : Record<string, never>;

/** The operations that create a transaction. */
export type CreationId = { [Id in OperationId]: Definitions[Id] extends { store: TransactionStore } ? Id : never }[OperationId];

/** The operations that read a transaction's status (§4.6). */
export type StatusQueryId = { [Id in OperationId]: Definitions[Id] extends { reads: TransactionStore } ? Id : never }[OperationId];

/** The headers an operation requires, by name; the route's schema refuses a request without one. */
export type RequiredHeaderOf<Id extends OperationId> = Definitions[Id]['headers']['required'][number];

/** The headers an operation takes and does not require, by name. */
export type OptionalHeaderOf<Id extends OperationId> = Definitions[Id]['headers']['optional'][number];

/** How a caller of an operation proves who it is. */
export type CredentialOf<Id extends OperationId> = Definitions[Id]['credential'];

/** The operations whose every request names its target environment (X-Target-Environment). */
export type TargetEnvironmentId = { [Id in OperationId]: 'x-target-environment' extends RequiredHeaderOf<Id> ? Id : never }[OperationId];

/** The operations that take X-Callback-Url. */
export type CallbackUrlId = { [Id in OperationId]: 'x-callback-url' extends OptionalHeaderOf<Id> ? Id : never }[OperationId];

/** The operations whose caller signs in with a Basic credential (an API user and its key). */
export type BasicCredentialId = { [Id in OperationId]: CredentialOf<Id> extends 'basic' ? Id : never }[OperationId];

/**
 * The business errors any operation may answer, whatever its listing: the service failing for a moment (real-api-notes:
 * frequent transient 500s and 503s [observed]; both codes are in §7's sets A and B, and §7 rule 5 leaves open which
 * code a status carries). Declared here, once, for the answers given before the operation is known or that rest on no
 * operation's listing: the sandbox's answer to a crash or a full store (sandbox/http/guards.ts), and its chaos's 500
 * and 503 (sandbox/chaos/, which draws them only where the operation's contract takes them).
 */
export const ANY_OPERATION_ERRORS = {
  500: ['INTERNAL_PROCESSING_ERROR'],
  503: ['SERVICE_UNAVAILABLE'],
} as const satisfies Readonly<Record<number, readonly string[]>>;

/** The schemas of a {code, message} body (§7): the operation's error set (`errors`), or one set named outright. */
type CodeMessageBody = 'errors' | ErrorSet;

type BodyNames<B> = B extends readonly (infer Name)[] ? Name : B;

/**
 * The codes of a documented response that a {code, message} body carries. §7's codes are upper case; a status that
 * may carry {error} as well lists RFC 6749's lower-case codes beside them (login_failed), which are no business error.
 */
type BusinessCodesOf<R> = R extends { body: infer B; codes: readonly (infer Code extends string)[] }
  ? [Extract<BodyNames<B>, CodeMessageBody>] extends [never]
    ? never
    : Code extends Uppercase<Code>
      ? Code
      : never
  : never;

/** An operation's documented business errors, each as "status code" (e.g. "409 RESOURCE_ALREADY_EXIST"). */
type DocumentedErrorsOf<Id extends OperationId> = {
  [Status in keyof Definitions[Id]['responses'] & number]: `${Status} ${BusinessCodesOf<Definitions[Id]['responses'][Status]>}`;
}[keyof Definitions[Id]['responses'] & number];

/**
 * The business errors every operation of Ids documents: an answer given for any one of them (a helper that several
 * operations share, a guard that runs on several) must be documented by each.
 */
type DocumentedByEach<Ids extends OperationId> = (Ids extends OperationId ? (errors: DocumentedErrorsOf<Ids>) => void : never) extends (
  errors: infer Each,
) => void
  ? Each
  : never;

type AnyOperationError = {
  [Status in keyof typeof ANY_OPERATION_ERRORS]: `${Status} ${(typeof ANY_OPERATION_ERRORS)[Status][number]}`;
}[keyof typeof ANY_OPERATION_ERRORS];

/** The business errors an answer for any operation of Ids may send, as "status code". */
export type BusinessErrorOf<Ids extends OperationId> = DocumentedByEach<Ids> | AnyOperationError;

type StatusIn<Error> = Error extends `${infer Status extends number} ${string}` ? Status : never;
type CodeIn<Error, Status extends number> = Error extends `${infer S extends number} ${infer Code}`
  ? S extends Status
    ? Code
    : never
  : never;

/** The statuses of the business errors an answer for any operation of Ids may send. */
export type BusinessStatusOf<Ids extends OperationId> = StatusIn<BusinessErrorOf<Ids>>;

/** The codes an answer for any operation of Ids may send with a business error of one of these statuses. */
export type BusinessCodeOf<Ids extends OperationId, Status extends number> = CodeIn<BusinessErrorOf<Ids>, Status>;

type ErrorValue<Error> = Error extends `${infer Status extends number} ${infer Code}` ? { httpStatus: Status; code: Code } : never;

/** A business error an answer for any operation of Ids may send, as a value: each status with only its own codes. */
export type BusinessErrorValueOf<Ids extends OperationId> = ErrorValue<BusinessErrorOf<Ids>>;

/** Each definition as OperationDefinition types it: its literal types are for the types above, not for reading it. */
const DEFINITIONS: Readonly<Record<OperationId, OperationDefinition>> = definitions;

/** Every operation by its one id. */
export const OPERATIONS: Readonly<Record<OperationId, Operation<OperationId>>> = Object.fromEntries(
  Object.entries(DEFINITIONS).map(([id, definition]) => [id, { id, ...definition }]),
) as Record<OperationId, Operation<OperationId>>;

export const OPERATION_IDS = Object.keys(definitions) as OperationId[];

const KNOWN_IDS: ReadonlySet<string> = new Set(OPERATION_IDS);

export function isOperationId(value: string): value is OperationId {
  return KNOWN_IDS.has(value);
}
