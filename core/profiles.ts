/**
 * The two behaviour profiles of the reference sandbox. `spec` answers as momo-api-spec.md is written;
 * `mtn-sandbox` answers as the public MTN sandbox was observed to (shared/spec/real-api-notes.md).
 * Every point where they differ is one entry of DIFFERENCES, so a reader sees them all at once.
 */
import { observed, reading, spec, type Source } from './sources.ts';

export const PROFILES = ['spec', 'mtn-sandbox'] as const;
export type ProfileName = (typeof PROFILES)[number];

interface Difference<T> {
  explanation: string;
  spec: T;
  'mtn-sandbox': T;
  /** Where each side comes from: what a check of this point cites, and so how much it weighs (core/sources.ts). */
  sources: Record<ProfileName, Source>;
}

const difference = <T>(d: Difference<T>) => d;

export const DIFFERENCES = {
  tokenFailureStatus: difference<401 | 500>({
    explanation:
      'A failed token request (unknown API user, wrong key, no Basic credential): 401 {"error":"login_failed"} per §7 rule 4; the live sandbox answers 500 with the same body.',
    spec: 401,
    'mtn-sandbox': 500,
    sources: {
      spec: spec('§7 rule 4, §2.14: a failed token request gives 401 with {error}'),
      'mtn-sandbox': observed(
        'real-api-notes, provisioning and tokens: wrong API user or key on /token/ answers 500 {"error":"login_failed"}',
      ),
    },
  }),
  oauthRefusal400Body: difference<'error' | 'any'>({
    explanation:
      'The body of a token operation refused with 400 (a grant type it does not take): {error}, as RFC 6749 §5.2 gives an error response; §7 rule 4 gives {error} for its 401 only, and the live sandbox answers many 400s with an empty body.',
    spec: 'error',
    'mtn-sandbox': 'any',
    sources: {
      spec: reading(
        'RFC 6749 §5.2: an error response of the token endpoint (400) carries error; the spec gives {error} for its 401 (§7 rule 4) and names no RFC',
      ),
      'mtn-sandbox': observed('real-api-notes, errors and inputs: 400 bodies are often empty'),
    },
  }),
  tokenType: difference<string>({
    explanation:
      'token_type of an access token: "Bearer", the standard value for the Bearer credential of §5.3; the live sandbox answers the literal "access_token".',
    spec: 'Bearer',
    'mtn-sandbox': 'access_token',
    sources: {
      spec: reading(
        '§2.6 gives token_type no value; §5.3 makes the access token a Bearer credential (RFC 6750), and RFC 6749 §5.1 makes the value case-insensitive',
      ),
      'mtn-sandbox': observed('real-api-notes, provisioning and tokens: token_type is literally "access_token"'),
    },
  }),
  failureReason: difference<'either' | 'string'>({
    explanation:
      'reason of a FAILED status record, which the spec does not show: the spec profile takes {code, message}, as the provider\'s definitions and Swagger-derived implementations give it, or the bare code string; the mtn-sandbox profile takes only the bare code the live sandbox sends, e.g. "APPROVAL_REJECTED". The reference sandbox sends the bare code in both profiles, as typed clients (Go, Rust) decode it.',
    spec: 'either',
    'mtn-sandbox': 'string',
    sources: {
      spec: observed('real-api-notes, status records: the record, reason included, is not shown in the spec (§2.5)'),
      'mtn-sandbox': observed('real-api-notes, status records: FAILED records carry "reason" as a plain string code'),
    },
  }),
  basicUserInfo: difference<'spec' | 'observed'>({
    explanation:
      'Basic user information: the six fields of §2.10 with gender in lower case; the live sandbox adds sub, name and a numeric updated_at, drops status and writes gender in upper case.',
    spec: 'spec',
    'mtn-sandbox': 'observed',
    sources: {
      spec: spec('§2.10: the basic user information record'),
      'mtn-sandbox': observed('real-api-notes, other operations: the basic user information the live sandbox answers'),
    },
  }),
  genderCase: difference<'lower' | 'upper'>({
    explanation:
      'gender in the consent user information (§2.11): "male" as §2.10 spells the values; the live sandbox writes "MALE" in basic user information, and its userinfo is "the same Sand Box style record".',
    spec: 'lower',
    'mtn-sandbox': 'upper',
    sources: {
      spec: reading('§2.11 gives gender as a string; §2.10 spells its values "female" and "male"'),
      // The notes capture "MALE" in basic user information only; that userinfo, "the same Sand Box style record",
      // writes it so too is an inference, which a server imitating the live service need not share.
      'mtn-sandbox': reading(
        'real-api-notes capture gender "MALE" in basic user information and call userinfo "the same Sand Box style record": that userinfo writes it in upper case too is our reading',
      ),
    },
  }),
  userInfoPerCustomer: difference<boolean>({
    explanation:
      'Whether the consent user information (§2.11) tells customers apart: its sub identifies the end user; the live sandbox answers every customer with the same "Sand Box" record (sub "0"), so scenarios that need two customers told apart (@two-customers) are left out there.',
    spec: true,
    'mtn-sandbox': false,
    sources: {
      spec: spec('§2.11: sub is the identifier of the end user at the issuer'),
      'mtn-sandbox': observed(
        'real-api-notes, other operations: userinfo answers "the same Sand Box style record" as basic user information, whose sub is "0"',
      ),
    },
  }),
  accountHolderErrors: difference<'spec' | 'documented'>({
    explanation:
      'Account-holder test numbers: per §4.2 #8 an unknown holder is 200 {"result":false}; the SDKs document 46733123450 as 404 RESOURCE_NOT_FOUND and 46733123455 as 503 SERVICE_UNAVAILABLE, statuses the spec does not list.',
    spec: 'spec',
    'mtn-sandbox': 'documented',
    sources: {
      spec: spec('§4.2 #8: false if it is not active or not found'),
      'mtn-sandbox': observed('real-api-notes, sandbox test numbers: the SDKs document 46733123450 as 404 RESOURCE_NOT_FOUND [documented]'),
    },
  }),
  accountHolderShape: difference<'either' | 'result'>({
    explanation:
      'The body of the account-holder check (§4.2 #8): "true" or "false", the format not shown, so the spec profile takes a bare boolean or {"result": …}; the live sandbox answers {"result": true}. The reference sandbox sends {"result": …} in both profiles.',
    spec: 'either',
    'mtn-sandbox': 'result',
    sources: {
      spec: reading(
        '§4.2 #8 gives true or false, and not the format of the body: a bare boolean is the literal reading, {"result": …} the live one',
      ),
      'mtn-sandbox': observed('real-api-notes, other operations: account holder active answers {"result": true}'),
    },
  }),
  amountForm: difference<'number' | 'normalised'>({
    explanation:
      'amount of a status record, which the spec does not show: the spec profile takes the amount asked for as the same number in any decimal form ("12.50" or "12.5"); the live sandbox writes it without trailing zeros ("12.5"). The reference sandbox normalises in both profiles.',
    spec: 'number',
    'mtn-sandbox': 'normalised',
    sources: {
      spec: spec('§2.2: amount is the amount of the transaction the partner created'),
      'mtn-sandbox': observed('real-api-notes, status records: amount comes back normalised without trailing zeros ("12.50" → "12.5")'),
    },
  }),
  partyIdForm: difference<'value' | 'verbatim'>({
    explanation:
      'partyId of a record (the payer or payee of a status record): the spec profile takes the same party id as a value of its type (an E.164 number with or without its "+", an e-mail address in any case); the live sandbox gives it back exactly as sent.',
    spec: 'value',
    'mtn-sandbox': 'verbatim',
    sources: {
      spec: spec('§2.1: an MSISDN partyId is a mobile number per ITU-T E.164, an EMAIL one an e-mail address'),
      'mtn-sandbox': observed('real-api-notes, status records: partyId comes back exactly as sent'),
    },
  }),
  strictTextCharacters: difference<boolean>({
    explanation:
      'Apostrophes and "&" in payerMessage, payeeNote and externalId: accepted, as the spec sets no character rule; the live sandbox rejects them with 400.',
    spec: false,
    'mtn-sandbox': true,
    sources: {
      spec: reading('the spec sets no character rule on text fields (§2.2, §8)'),
      'mtn-sandbox': observed('real-api-notes, errors and inputs: apostrophes or "&" in text fields give 400'),
    },
  }),
} as const;

export type ProfileBehaviour = { [K in keyof typeof DIFFERENCES]: (typeof DIFFERENCES)[K]['spec'] };

export type DifferenceName = keyof typeof DIFFERENCES;

/** The source of a profile's side of a difference: what a check that follows the difference cites. */
export function sourceOfDifference(name: DifferenceName, profile: ProfileName): Source {
  return DIFFERENCES[name].sources[profile];
}

export function behaviourOf(profile: ProfileName): ProfileBehaviour {
  const entries = Object.entries(DIFFERENCES).map(([key, d]) => [key, d[profile]]);
  return Object.fromEntries(entries) as ProfileBehaviour;
}

/**
 * Readings of the spec that both profiles share: places where the spec is ambiguous or silent and the
 * sandbox had to choose. They are not differences between profiles, but a reader of the profiles needs them.
 */
export const READINGS: readonly string[] = [
  'Authorization is required on every business operation. Some listings mark it optional (§4.2 #2, #4, #8, §4.4), but §5.3 says the business operations use the Bearer access token, and a payment without a caller cannot be owned.',
  'Business operations take a Bearer access token only. §5.3: "OAuth uses Bearer, and the credential is the access token received"; Basic is for the token operations.',
  'An expired or a forged token gives 401 {"error":"invalid_token"}. Asking for a token of another product than the API user\'s gives 500 NOT_ALLOWED_TARGET_ENVIRONMENT, as observed live.',
  'A refund is accepted (202) when its form is valid, then FAILS as a status when it names no request to pay (RESOURCE_NOT_FOUND), a request to pay that is not SUCCESSFUL (NOT_ALLOWED), another currency (INVALID_CURRENCY), more than is left to refund (NOT_ALLOWED) or more than the disbursement balance (NOT_ENOUGH_FUNDS). Refund documents only 202/400/409/500 at creation (§4.3 #9), and the live service decides payments asynchronously.',
  'Any API user of the disbursement product may refund any request to pay in its target environment: a request to pay is made by a collection API user, and API users are bound to one product, so ownership cannot be asked of a refund.',
  'A deposit or refund that would overdraw the disbursement balance FAILS with reason NOT_ENOUGH_FUNDS; a successful request to pay credits the collection balance.',
  'Reference ids are unique per kind of transaction (request to pay, deposit, refund); reusing one within its kind gives 409 RESOURCE_ALREADY_EXIST.',
  "A missing Content-Type on a body is read as the operation's media type (the spec marks Content-Type optional); another media type is 415.",
  'The 400 body is {statusCode, error, message} and names what to fix; the spec does not show it (§7 rule 6).',
  'Delivery notification: 404 RESOURCE_NOT_FOUND, 409 TRANSACTION_NOT_COMPLETED, 410 EXPIRED, 429 NOT_ALLOWED, in that order of checking. The spec names the statuses, not the codes.',
  "bc-authorize, the OAuth 2.0 token and userinfo are served under every product, so one API user completes the consent flow within its own product; the spec's paths (collection for bc-authorize and userinfo, disbursement for the token) are among them.",
  "expires_in of a consent token is the life of that access token (3600 s by default, §2.7 and §8). §2.7 words it as the life of the auth_req_id, which bc-authorize already states; a token's own expiry is what a client needs.",
  'When the holder consents (after `interval`), bc-authorize\'s X-Callback-Url, if given, receives a POST of {"auth_req_id"}: the CIBA ping. The spec names the callback (§6), not its payload.',
  'When the store of a kind of transaction is full and nothing in it is old enough to forget, creations get 503 SERVICE_UNAVAILABLE rather than losing a record inside the retention window.',
];

/**
 * Strict readings: strictness beyond what the spec requires refused and what the live service is observed or
 * documented to refuse. The reference sandbox accepts these by default, because real clients send them and the
 * live service takes them (or nobody knows that it does not); `--strict` (MOMO_SANDBOX_STRICT) refuses them, for
 * client developers who want the tightest check. The harness holds a server to a strict reading only with
 * `--strict` too (its @strict scenarios).
 */
export const STRICT_READINGS = {
  unknownFields: {
    refuses: 'A request body with fields the spec does not list: 400 "unknown property".',
    reason:
      'The spec says nothing of extra fields, and clients send them (momo-api adds payee and callbackUrl to a request to pay). By default they are ignored: never stored, never echoed.',
  },
  bodyWhereNone: {
    refuses: 'A body on an operation that defines none (the API-key call, the token call, a GET): 400.',
    reason:
      'MTN\'s own SDKs send one (the JS SDK grant_type=client_credentials to /token/, sparkplug\'s Python client {} or {"providerCallbackHost"} to the API-key call) and their integration tests pass live. real-api-notes saw a 400 for a body sent to /token/, which the SDKs contradict, so it is uncertain. By default such a body is read and ignored.',
  },
  emptyOptionalHeaders: {
    refuses: 'An optional header sent empty (Language:, X-Callback-Url:): 400 for a value that does not fit it.',
    reason:
      'An empty optional header carries nothing; clients that fill headers from optional settings send them. By default an empty optional header counts as absent.',
  },
  callbackHostName: {
    refuses: 'A providerCallbackHost that is not a host name (with an optional port), such as a URL: 400.',
    reason:
      'The provider asks for "the domain", but the live sandbox stores what it is given, and several clients send a URL (mtn-momo-sdk, sparkplug\'s Python client). By default it is stored as given, and a callback URL is compared with its host name.',
  },
  amountValue: {
    refuses:
      'A transaction whose amount is not a positive decimal string of at most 12 integer and 4 decimal digits (zero, negative, "abc", "1e3"): 400.',
    reason:
      'The spec declares amount a string and sets no bounds (§2.2, §8), and nobody has recorded what the live service does with such an amount. By default the creation is accepted (202) and the transaction FAILS at once with NOT_ALLOWED: nothing is moved, and the client meets the asynchronous failure it must handle anyway.',
  },
  requiredFields: {
    refuses:
      'A request to pay, deposit, transfer or withdrawal without amount, currency or its payer (payee), or a refund without amount, currency or referenceIdToRefund: 400 naming the field.',
    reason:
      "The spec lists the fields without saying which are required, and the provider's definitions have no required list. By default such a creation is accepted; a missing currency is 500 INVALID_CURRENCY as any currency the service does not take, and the transaction then FAILS at once: NOT_ALLOWED without an amount, PAYER_NOT_FOUND (PAYEE_NOT_FOUND) without a party, RESOURCE_NOT_FOUND for a refund of nothing.",
  },
  freeText: {
    refuses:
      'Control characters (U+0000 to U+001F, U+007F) in free text (externalId, payerMessage, payeeNote, notificationMessage), and an externalId longer than 128 characters: 400.',
    reason:
      'The spec sets no character rule and no bound on externalId (§8); the live service refuses apostrophes and "&" (the mtn-sandbox profile\'s strictTextCharacters) and texts over 160 characters, but nothing is known of control characters or long references. By default they are stored and echoed (JSON-escaped) as any other text, up to 1024 characters for externalId.',
  },
  transactionOwnership: {
    refuses: 'A status query by an API user other than the one that made the transaction: 404 RESOURCE_NOT_FOUND, as for an unknown id.',
    reason:
      "The spec makes ownership a condition of the delivery notification (§4.2 #3), which the sandbox always checks, but says nothing of it for the status queries, and nothing is known of the live service; a published client (mtn-momo-sdk) reads a payment with a fresh API user of the same product. By default any API user of the transaction's product reads it.",
  },
  tokenProduct: {
    refuses: "An access or consent token issued under another product than the operation's: 401 invalid_token.",
    reason:
      "The live service binds an API user to its product when it asks for a token (500 NOT_ALLOWED_TARGET_ENVIRONMENT, observed, which the sandbox always answers), but MTN's sandbox notebook then used a collection token with the disbursement key for transfers, deposits, refunds, basic user information and the consent flow, and every call succeeded. By default a token of any product opens the operation, acting as its API user.",
  },
  formMediaType: {
    refuses: 'bc-authorize and the OAuth 2.0 token with a JSON body instead of application/x-www-form-urlencoded: 415.',
    reason:
      'The spec gives the form media type "in use" and marks Content-Type optional; what the live service does with JSON there is not known. By default JSON with the same fields is accepted.',
  },
} as const satisfies Record<string, { refuses: string; reason: string }>;

export type StrictReading = keyof typeof STRICT_READINGS;

export const STRICT_READING_NAMES = Object.keys(STRICT_READINGS) as StrictReading[];
