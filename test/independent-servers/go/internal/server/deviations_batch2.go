package server

// The second batch of deviations (classes: A = a rule right on one operation and wrong on a
// sibling, B = state wrong only when read back later, C = inputs, D = callbacks, E = money).
// Each is off by default and only read through s.dev(name).
const (
	// A
	DevDepositMSISDNAny   = "deposit-payee-msisdn-not-validated"
	DevBasicInfoExpiredOK = "basic-info-accepts-expired-token"
	DevOAuthFailure500    = "oauth-token-failure-500"
	DevDisbStatusBadID404 = "disbursement-status-bad-id-404"
	// B
	DevConsentTokenSingleUse   = "consent-token-single-use"
	DevTxBoundToToken          = "transactions-bound-to-token"
	DevStatusGoneAfterCallback = "status-gone-after-callback"
	DevPayerSharedObject       = "payer-overwritten-by-next-payment"
	// C
	DevMSISDN15Refused        = "msisdn-15-digits-refused"
	DevUpperRefUnreadable     = "upper-case-reference-unreadable"
	DevCallbackPortRefused    = "callback-url-port-refused"
	DevFormNotDecoded         = "form-values-not-decoded"
	DevAmountTrailingZeros    = "amount-trailing-zeros-refused"
	DevTextLengthBytes        = "text-length-counted-in-bytes"
	DevMediaTypeCaseSensitive = "media-type-case-sensitive"
	// D
	DevCallbackDedupByURL      = "callback-dedup-by-url"
	DevConsentDenialNoCallback = "consent-denial-no-callback"
	DevRefundCallbackPayment   = "refund-callback-carries-payment"
	DevDuplicateAddsCallback   = "duplicate-adds-callback-url"
	DevCallbackAheadOfStatus   = "callback-ahead-of-status"
	// E
	DevFailedDepositTwice     = "failed-deposit-returned-twice"
	DevCreditOnEveryRead      = "credit-on-every-status-read"
	DevPaymentCreditTruncated = "payment-credit-truncated"
	DevCollectionBalanceMinor = "collection-balance-minor-units"
)

// DeviationClass gives the class letter (A–E) of the deviations of this batch.
var DeviationClass = map[string]string{
	DevDepositMSISDNAny: "A", DevBasicInfoExpiredOK: "A", DevOAuthFailure500: "A", DevDisbStatusBadID404: "A",
	DevConsentTokenSingleUse: "B", DevTxBoundToToken: "B", DevStatusGoneAfterCallback: "B", DevPayerSharedObject: "B",
	DevMSISDN15Refused: "C", DevUpperRefUnreadable: "C", DevCallbackPortRefused: "C", DevFormNotDecoded: "C",
	DevAmountTrailingZeros: "C", DevTextLengthBytes: "C", DevMediaTypeCaseSensitive: "C",
	DevCallbackDedupByURL: "D", DevConsentDenialNoCallback: "D", DevRefundCallbackPayment: "D",
	DevDuplicateAddsCallback: "D", DevCallbackAheadOfStatus: "D",
	DevFailedDepositTwice: "E", DevCreditOnEveryRead: "E", DevPaymentCreditTruncated: "E", DevCollectionBalanceMinor: "E",
}

var batch2 = []Deviation{
	// ---- A: right on one operation, wrong on a sibling ----
	{DevDepositMSISDNAny, both,
		"spec §2.1 \"MSISDN: mobile number per ITU-T E.164 ... The format is validated according to partyIdType\"; §2.3 (deposit payee is a Party); §4.3 #10 \"400\"",
		"a deposit whose payee is of type MSISDN with a partyId that is no E.164 number (e.g. \"call-me\") is accepted (202) and succeeds; a request to pay with such a payer still answers 400"},
	{DevBasicInfoExpiredOK, both,
		"spec §2.6 \"expires_in | Validity of the token in seconds\"; §4.2 #5 \"401: { error }\"; §7 rule 4 \"A failed ... basic-info request gives 401 with { error }\"; notes \"Expired or invalid bearer token -> 401 [documented]\"",
		"basic user information answers 200 for an access token whose expires_in has passed; every other operation refuses the same token with 401"},
	{DevOAuthFailure500, specOnly,
		"spec §5.2 \"Token creation (collection token, and the OAuth 2.0 token operation) uses HTTP Basic authentication\"; §7 rule 4 \"A failed token request ... gives 401 with { error }\"; §2.14 \"The token ... operations use { error: string } on 401\"",
		"a wrong API key or unknown API user on POST /disbursement/oauth2/token/ answers 500 {\"error\":\"login_failed\"} instead of 401 {error}; POST /collection/token/ still answers 401"},
	{DevDisbStatusBadID404, mtnOnly,
		"notes, Status records: \"A status GET for a non-UUID reference -> 400; for an unknown UUID -> 404 [observed]\"",
		"the refund and deposit status queries answer a reference id that is not a UUID (e.g. /deposit/not-a-uuid) with 404 RESOURCE_NOT_FOUND instead of 400; the request-to-pay status still answers 400"},

	// ---- B: wrong only when read back later ----
	{DevConsentTokenSingleUse, both,
		"spec §2.7 \"access_token | JWT; valid 3600 seconds by default\"; §5.4 \"It returns a Bearer access token, valid 3600 seconds by default\"; §8 \"The consent access token is valid 3600 seconds by default\"",
		"a consent access token works for one call of user information with consent; the next call with the same token, seconds later, answers 401"},
	{DevTxBoundToToken, both,
		"spec §2.5 the reference ID \"is later used in status queries\"; §4.2 #2 \"A status query for this transaction is by GET /requesttopay/<resourceId>\"; §4.2 #3 404 only when the reference ID does not exist or the caller does not own it; notes \"clients refresh the token and retry\"",
		"transactions are bound to the access token that created them: a status query or delivery notification made by the same API user with a newer access token answers 404 RESOURCE_NOT_FOUND"},
	{DevStatusGoneAfterCallback, both,
		"spec §2.5 the reference ID \"is later used in status queries\"; §4.2 #2 / §4.3 #9 / §4.3 #10 status query by GET .../{referenceId}; notes \"for an unknown UUID -> 404\" (only unknown ids)",
		"once a transaction's callback has been acknowledged (2xx), the transaction is purged: its status query (and a delivery notification) answers 404 RESOURCE_NOT_FOUND"},
	{DevPayerSharedObject, mtnOnly,
		"notes, Status records: the requesttopay record carries \"payer\" and \"partyId comes back exactly as sent [observed]\"; notes Callbacks \"Body: the same record as the status GET\"",
		"all requests to pay of an API user share one payer object: after a second request to pay, the status record (and callback) of the first names the second one's payer"},

	// ---- C: inputs ----
	{DevMSISDN15Refused, both,
		"spec §2.1 \"MSISDN: mobile number per ITU-T E.164\" (E.164 numbers have up to 15 digits); §4.2 #8 accountHolderId \"MSISDN per ITU-T E.164\"",
		"an MSISDN of 15 digits (the E.164 maximum) is refused with 400 as payer, payee, account holder and login_hint (the check is len < 15); 14 digits are accepted"},
	{DevUpperRefUnreadable, both,
		"spec §2.5 \"a UUID version 4 that the caller generates and sends in the X-Reference-Id header. It is later used in status queries\"; RFC 9562 §4 (UUID hex digits are case-insensitive on input)",
		"a transaction created with an upper-case X-Reference-Id (accepted, 202) cannot be read back: the status query with that same id answers 404 (only its lower-case form is found)"},
	{DevCallbackPortRefused, mtnOnly,
		"notes, Callbacks: \"The callback URL's host must equal the API user's providerCallbackHost; otherwise ... 500 INVALID_CALLBACK_URL_HOST [observed]\" (the host, not host:port)",
		"an X-Callback-Url with an explicit port (http://127.0.0.1:8080/cb for providerCallbackHost 127.0.0.1) is refused with 500 INVALID_CALLBACK_URL_HOST, because host:port is compared with the host"},
	{DevFormNotDecoded, both,
		"spec §4.2 #7 \"Body (form-encoded) parameters\" and §4.3 #11 \"Body (form-encoded) parameters\" (application/x-www-form-urlencoded: names and values are percent-decoded, '+' is a space)",
		"form parameters of bc-authorize and the OAuth 2.0 token operation are taken raw, without percent-decoding: login_hint=ID%3A46733123999%2FMSISDN is refused with 400 and grant_type=urn%3Aopenid%3A... with unsupported_grant_type; unencoded values still work"},
	{DevAmountTrailingZeros, mtnOnly,
		"notes, Status records: \"amount comes back normalised as a decimal string without trailing zeros ('12.50' -> '12.5', '5.0' -> '5') [observed]\" (such amounts are accepted)",
		"an amount written with trailing zeros after the decimal point (\"12.50\", \"5.0\") is refused with 400 on request to pay, deposit and refund; \"12.5\" and \"5\" are accepted"},
	{DevTextLengthBytes, mtnOnly,
		"notes, Errors and inputs: \"payerMessage/payeeNote over 160 characters\" -> 400 [observed]; notes Delivery notification \"notificationMessage over 160 characters -> 400 [observed]\" (characters, not bytes)",
		"the 160 limit is applied to UTF-8 bytes: a payerMessage of 100 characters \"é\" (200 bytes) is refused with 400"},
	{DevMediaTypeCaseSensitive, both,
		"spec §4.1 \"Content-Type | header, optional | media type | Media type of the body\"; RFC 9110 §8.3.1 (type and subtype are case-insensitive)",
		"a Content-Type whose media type is not written in lower case (\"Application/JSON\", \"application/X-WWW-form-urlencoded\") is refused with 400 on every operation with a body"},

	// ---- D: callbacks ----
	{DevCallbackDedupByURL, both,
		"spec §6 \"A caller may give an address in X-Callback-Url on request to pay, refund, deposit and bc-authorize. The service is to send a callback to the server there\" (for each transaction)",
		"a transaction callback is sent only once per X-Callback-Url: a later transaction giving the same URL (one webhook endpoint) never gets its callback"},
	{DevConsentDenialNoCallback, both,
		"spec §6 \"A caller may give an address in X-Callback-Url on ... bc-authorize. The service is to send a callback to the server there\"; OpenID CIBA Core §10.2 (ping after a successful or failed authentication)",
		"a bc-authorize that the account holder denies (e.g. login_hint ID:46733123450/MSISDN) never gets its callback; approved consents still do"},
	{DevRefundCallbackPayment, mtnOnly,
		"notes, Callbacks: \"Body: the same record as the status GET [documented]\"; notes: refund records use payee and carry the refund's own amount",
		"the callback of a refund carries the refunded request to pay's record (its amount, externalId, texts and payer) instead of the refund's record that GET /refund/{id} gives"},
	{DevDuplicateAddsCallback, both,
		"spec §2.5 \"A request that reuses an existing reference ID is rejected with 409\"; §7 rule 1; §6 the callback goes to the address given with the transaction",
		"a creation rejected with 409 (reused X-Reference-Id) still subscribes its X-Callback-Url: when the stored transaction becomes final, that URL receives its callback too"},
	{DevCallbackAheadOfStatus, mtnOnly,
		"notes, Callbacks: \"Sent to X-Callback-Url when the transaction reaches a final state [documented]. Body: the same record as the status GET\"",
		"for transactions that become final after a delay (…451, …452, …454), the status GET still reads PENDING for 2 s after the callback with the final record has been sent"},

	// ---- E: money ----
	{DevFailedDepositTwice, both,
		"spec §4.3 #10 \"Deposits an amount from the owner's account to a payee account\"; §2.9 \"availableBalance: Available balance of the account\" (a FAILED deposit moves no money)",
		"when a deposit ends FAILED (e.g. payee 46733123450) its held amount is given back twice: the disbursement balance ends higher than before the deposit"},
	{DevCreditOnEveryRead, both,
		"spec §2.2 \"amount: Amount debited from the payer account\" (once); §2.9 \"availableBalance: Available balance of the account\"",
		"each status query of a SUCCESSFUL request to pay credits its amount to the collection balance once more (a payment of 10 read twice leaves a balance of 30)"},
	{DevPaymentCreditTruncated, both,
		"spec §2.2 \"amount: Amount debited from the payer account\"; §2.9 \"availableBalance: Available balance of the account\"",
		"a successful request to pay credits only the whole units of its amount to the collection balance (12.75 adds 12) while its status record keeps 12.75"},
	{DevCollectionBalanceMinor, both,
		"spec §2.9 \"availableBalance | string | Available balance of the account\" with \"currency | ISO 4217\" (in units of that currency, as the amounts of §2.2)",
		"the collection balance gives availableBalance in minor units (a balance of 10 EUR reads \"1000\"); disbursement and remittance balances are right"},
}

func init() { Deviations = append(Deviations, batch2...) }
