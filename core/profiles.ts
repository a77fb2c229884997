/**
 * The two behaviour profiles of the reference sandbox. `spec` answers as momo-api-spec.md is written;
 * `mtn-sandbox` answers as the public MTN sandbox was observed to (shared/spec/real-api-notes.md).
 * Every point where they differ is one entry of DIFFERENCES, so a reader sees them all at once.
 */
export const PROFILES = ['spec', 'mtn-sandbox'] as const;
export type ProfileName = (typeof PROFILES)[number];

interface Difference<T> {
  explanation: string;
  spec: T;
  'mtn-sandbox': T;
}

const difference = <T,>(d: Difference<T>) => d;

export const DIFFERENCES = {
  tokenFailureStatus: difference<401 | 500>({
    explanation: 'A failed token request (unknown API user, wrong key, no Basic credential): 401 {"error":"login_failed"} per §7 rule 4; the live sandbox answers 500 with the same body.',
    spec: 401,
    'mtn-sandbox': 500,
  }),
  tokenType: difference<string>({
    explanation: 'token_type of an access token: "Bearer", the standard value for the Bearer credential of §5.3; the live sandbox answers the literal "access_token".',
    spec: 'Bearer',
    'mtn-sandbox': 'access_token',
  }),
  failureReason: difference<'object' | 'string'>({
    explanation: 'reason of a FAILED status record: {code, message} as Swagger-derived implementations send it; the live sandbox sends the bare code string, e.g. "APPROVAL_REJECTED".',
    spec: 'object',
    'mtn-sandbox': 'string',
  }),
  basicUserInfo: difference<'spec' | 'observed'>({
    explanation: 'Basic user information: the six fields of §2.10 with gender in lower case; the live sandbox adds sub, name and a numeric updated_at, drops status and writes gender in upper case.',
    spec: 'spec',
    'mtn-sandbox': 'observed',
  }),
  genderCase: difference<'lower' | 'upper'>({
    explanation: 'gender in the consent user information (§2.11): "male" as §2.10 spells the values; the live sandbox writes "MALE".',
    spec: 'lower',
    'mtn-sandbox': 'upper',
  }),
  accountHolderErrors: difference<'spec' | 'documented'>({
    explanation: 'Account-holder test numbers: per §4.2 #8 an unknown holder is 200 {"result":false}; the SDKs document 46733123450 as 404 RESOURCE_NOT_FOUND and 46733123455 as 503 SERVICE_UNAVAILABLE, statuses the spec does not list.',
    spec: 'spec',
    'mtn-sandbox': 'documented',
  }),
  strictTextCharacters: difference<boolean>({
    explanation: 'Apostrophes and "&" in payerMessage, payeeNote and externalId: accepted, as the spec sets no character rule; the live sandbox rejects them with 400.',
    spec: false,
    'mtn-sandbox': true,
  }),
} as const;

export type ProfileBehaviour = { [K in keyof typeof DIFFERENCES]: (typeof DIFFERENCES)[K]['spec'] };

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
  'The API user of a token must belong to the product of the path: an access token of another product, an expired or a forged one gives 401 {"error":"invalid_token"}. Asking for a token of another product gives 500 NOT_ALLOWED_TARGET_ENVIRONMENT, as observed live.',
  'A refund is accepted (202) when its form is valid, then FAILS as a status when it names no request to pay (RESOURCE_NOT_FOUND), a request to pay that is not SUCCESSFUL (NOT_ALLOWED), another currency (INVALID_CURRENCY), more than is left to refund (NOT_ALLOWED) or more than the disbursement balance (NOT_ENOUGH_FUNDS). Refund documents only 202/400/409/500 at creation (§4.3 #9), and the live service decides payments asynchronously.',
  'Any API user of the disbursement product may refund any request to pay in its target environment: a request to pay is made by a collection API user, and API users are bound to one product, so ownership cannot be asked of a refund.',
  'A deposit or refund that would overdraw the disbursement balance FAILS with reason NOT_ENOUGH_FUNDS; a successful request to pay credits the collection balance.',
  'Reference ids are unique per kind of transaction (request to pay, deposit, refund); reusing one within its kind gives 409 RESOURCE_ALREADY_EXIST.',
  'A missing Content-Type on a body is read as the operation\'s media type (the spec marks Content-Type optional); another media type is 415.',
  'The 400 body is {statusCode, error, message} and names what to fix; the spec does not show it (§7 rule 6).',
  'Delivery notification: 404 RESOURCE_NOT_FOUND, 409 TRANSACTION_NOT_COMPLETED, 410 EXPIRED, 429 NOT_ALLOWED, in that order of checking. The spec names the statuses, not the codes.',
  'bc-authorize, the OAuth 2.0 token and userinfo are served under every product, so one API user completes the consent flow within its own product; the spec\'s paths (collection for bc-authorize and userinfo, disbursement for the token) are among them.',
  'expires_in of a consent token is the life of that access token (3600 s by default, §2.7 and §8). §2.7 words it as the life of the auth_req_id, which bc-authorize already states; a token\'s own expiry is what a client needs.',
  'When the holder consents (after `interval`), bc-authorize\'s X-Callback-Url, if given, receives a POST of {"auth_req_id"}: the CIBA ping. The spec names the callback (§6), not its payload.',
  'When the store of a kind of transaction is full and nothing in it is old enough to forget, creations get 503 SERVICE_UNAVAILABLE rather than losing a record inside the retention window.',
];
