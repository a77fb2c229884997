import { STRICT_READINGS } from '../../core/profiles.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';

/**
 * The cases in which a call is to be refused, each with the source of that expectation: the value a status-code or
 * error-code check compares with, and so what a departure from it weighs (a definite clause, a live observation, a
 * strict reading). The steps name a case; they write no source of their own.
 */
export const REFUSALS = {
  'amount-is-string': spec('§2.2: amount is a string; §4.2 #2: 400 invalid data'),
  'reference-id-uuid': spec('§2.5, §4.1: X-Reference-Id is a UUID v4; §4.2 #2: 400 invalid data'),
  'msisdn-format': spec('§2.1: an MSISDN partyId is an E.164 number, validated by partyIdType'),
  'payee-msisdn-format': spec('§2.1, §2.3: an MSISDN partyId is an E.164 number, validated by partyIdType'),
  'email-format': spec('§2.1: an EMAIL partyId is a valid e-mail address, validated by partyIdType'),
  'party-id-type': spec('§2.1: partyIdType is MSISDN, EMAIL or PARTY_CODE'),
  'refund-reference-uuid': spec('§2.4: referenceIdToRefund is a UUID'),
  'text-bound': observed(
    'real-api-notes, errors and inputs: payerMessage, payeeNote and notificationMessage over 160 characters give 400; §8 sets no string-length bounds',
  ),
  'amount-value': reading('the strict reading amountValue (core/profiles.ts): §2.2 declares amount a string, and §8 sets no bounds'),
  'required-fields': reading('the strict reading requiredFields (core/profiles.ts): §2.2 does not say which fields are required'),
  'transaction-ownership': reading(
    `the strict reading transactionOwnership (core/profiles.ts): ${STRICT_READINGS.transactionOwnership.reason}`,
  ),
  'token-product': reading(`the strict reading tokenProduct (core/profiles.ts): ${STRICT_READINGS.tokenProduct.reason}`),
  'callback-host-required': observed('real-api-notes, provisioning: a missing providerCallbackHost gives 400'),
  'callback-host-string': spec('§2.12: providerCallbackHost is a string; §4.5 #14: 400 invalid data'),
  'malformed-reference-read': observed('real-api-notes, status records: a status GET for a non-UUID reference gives 400'),
  'unknown-reference-read': observed('real-api-notes, status records: a status GET for an unknown UUID gives 404 RESOURCE_NOT_FOUND'),
  // The third attempt is a repeated attempt after the same successful one (§8), sent right after a second that was
  // inside the cool-down (it got 429). But the spec gives no length for "recently" (§4.2 #3), and the second shows
  // only that the window outlasted it: one that ends in the milliseconds between the second and the third is allowed.
  'notification-refusal-keeps-cooldown': reading(
    '§8: repeated attempts for the same id give 429, only after a successful attempt; §4.2 #3: 429 is too many attempts for the same ID recently, for how long not shown. That a 429 neither resets nor ends the cool-down, so an attempt right after one refused with 429 is refused too, is our reading',
  ),
  // Two sent together: whichever the target handles second comes after the first, but "after a successful attempt"
  // (§8) could be read as after one that has finished; a target that handles each alone may take both.
  'notification-at-once-once': reading(
    '§8: repeated attempts for the same id give 429, only after a successful attempt. That of two notifications for one id sent at the same moment, the one the target handles second is refused with 429, is our reading',
  ),
  // §4.2 #3 gives 404 to a caller that does not own the payment and 429 to repeated attempts, without an order; that
  // whose the payment is comes first, so that another caller learns nothing of its notifications, is our reading.
  'notification-owner-before-cooldown': reading(
    "§4.2 #3: 404 when the caller does not own the financial transaction; 429 for too many attempts for the same ID recently, only after a successful attempt. That another API user's notification is refused as not found while the owner's cool-down lasts, rather than as too many attempts, is our reading: the spec gives no order of checks",
  ),
  'notification-message-required': reading(
    '§2.13 gives the body as { notificationMessage } without saying the field is required: that a notification without it is refused (400, invalid data) is our reading',
  ),
  'unauthorized-before-lookup': reading(
    '§5.3 and §7: a business call without a valid access token is 401; that this comes before its id is looked up (so that a caller without a token learns nothing of which ids exist) is our reading: the spec gives no order of checks',
  ),
  'read-of-its-own-kind': reading(
    "§4.3 #9 and #10 read a refund by GET /refund/{referenceId} and a deposit by GET /deposit/{referenceId}: that a refund's id is not found as a deposit, nor a deposit's as a refund, rather than read as one, is our reading (§2.5 does not say whether reference ids are kept per kind)",
  ),
  'balance-currency-refused': reading(
    '§4.2 #4 reads the balance in a currency of the path and shows no code for one the service does not take; a refusal (400, or 500 with INVALID_CURRENCY, as set A has it for a request to pay) is our reading',
  ),
  'access-type-named': reading(
    '§4.2 #7 gives access_type as online or offline; its listing shows only 200, so that another is refused (400 as invalid data, or 500 with a code) is our reading',
  ),
  'unoffered-scope': reading(
    "§5 rule 7 gives no allowed scopes; real-api-notes saw an unknown scope refused, its status and code not recorded; UNSUPPORTED_SCOPE is set A's code for it",
  ),
  'unknown-refund-code': reading(
    "the spec names no code for a refund of a request to pay that does not exist; RESOURCE_NOT_FOUND is the reference sandbox's (READINGS in core/profiles.ts)",
  ),
  'unknown-refund-refused': spec('§2.4: referenceIdToRefund identifies the request to pay that is refunded'),
  /** That a caller's own host is taken whoever registered since: the live service's (§6 leaves the hosts to the service). */
  'callback-host-own-taken': observed(
    "real-api-notes, callbacks: the host a callback URL is held to is the calling API user's own providerCallbackHost [observed]; §6 leaves which hosts a service rejects to it",
  ),
  'callback-host-code': spec('§6: a callback host that the service rejects gives code INVALID_CALLBACK_URL_HOST'),
  /** Which hosts the service rejects, and when: the live service's rule, which the spec leaves to the service (§6). */
  'callback-host-refused': observed(
    "real-api-notes, callbacks: a callback URL whose host is not the API user's providerCallbackHost fails the creation with 500 INVALID_CALLBACK_URL_HOST [observed]; §6 says only that a host the service rejects gives that code",
  ),
  'currency-refused-at-creation': observed(
    'real-api-notes, errors and inputs: the sandbox refuses another currency at once with 500 INVALID_CURRENCY [observed]; §1 makes transactions asynchronous and §7 rule 5 leaves open which code goes with which status',
  ),
  'currency-refused': spec('§2.2: currency is an ISO 4217 code the service takes; §7 sets A and B: INVALID_CURRENCY'),
  'wrong-key-no-consent-token': spec('§4.3 #11: Authorization (Basic, API user ID and API key); §5 rule 2; §7: 401'),
  'currency-refused-by-product': reading(
    "§7 set B: INVALID_CURRENCY; that a refund is refused a currency the same product's deposits are refused is our reading: the spec does not say which currencies a service takes where",
  ),
  'other-grant-type': spec(
    '§4.3 #11: grant_type is the constant urn:openid:params:grant-type:ciba; §7 rule 4: a failed token request gives 401 {error}',
  ),
  'consent-token-on-business': spec(
    '§2.6, §5 rule 3: the Bearer credential of the business operations is the access token of the token operation; §5 rule 4: the consent token is for user information with consent',
  ),
  'oauth-refusal': spec('§7: 401 Unauthorized, body {error}; §2.14: error is an error code'),
  'gateway-refusal': spec('§5 rule 1: every operation requires the subscription key; §7: 401 Unauthorized'),
} as const satisfies Record<string, Source>;

export type RefusalCase = keyof typeof REFUSALS;
