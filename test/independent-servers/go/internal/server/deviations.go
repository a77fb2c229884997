package server

import (
	"fmt"
	"io"
	"strings"
)

// Deviation names. A deviation makes the server depart from the API on purpose, the way a
// real provider's implementation goes wrong; it exists so that a conformance harness can be
// shown to fail such a server. None is on by default.
const (
	DevRefundRefReused         = "refund-reference-reused"
	DevDepositNoRefID          = "deposit-without-reference-id"
	DevHolderAnyEnv            = "holder-active-any-environment"
	DevDupPaymentOverwrites    = "duplicate-payment-overwrites"
	DevCallbackHostRefCreates  = "callback-host-refusal-still-creates"
	DevFailedPaymentCredits    = "failed-payment-credits-balance"
	DevCreditedWhilePending    = "payment-credited-while-pending"
	DevRefundNotDebited        = "refund-not-debited"
	DevDepositDebitRoundedUp   = "deposit-debit-rounded-up"
	DevRejectReasonsSwapped    = "rejection-reasons-swapped"
	DevDelayedApprovalAtOnce   = "delayed-approval-immediate"
	DevNotifCooldownPerUser    = "notification-cooldown-per-user"
	DevNotifLanguageRequired   = "notification-language-required"
	DevTokenRenewedWithBearer  = "token-renewed-with-bearer"
	DevRenewedTokenDiesFirst   = "renewed-token-dies-with-first"
	DevRefreshAnyUser          = "refresh-token-any-user"
	DevRefreshAfterConsentEnds = "refresh-after-consent-ends"
	DevRefreshIssuesAccess     = "refresh-issues-access-token"
	DevRefreshOpensUserinfo    = "refresh-token-opens-userinfo"
	DevConsentScopeNarrowed    = "consent-scope-narrowed"
	DevLoginHintNotChecked     = "login-hint-not-checked"
	DevBasicInfo401Code        = "basic-info-401-code-message"
	DevDepositPartyTypeAny     = "deposit-party-type-not-checked"
	DevEmailNotValidated       = "email-party-not-validated"
	DevMalformedCallbackURL    = "malformed-callback-url-accepted"
	DevDepositTextLength       = "deposit-text-length-not-checked"
	DevTokenBodyAccepted       = "token-body-accepted"
	DevDisbHolderErrorsIgnored = "disbursement-holder-test-errors-ignored"
	DevRemittanceCurrencyLower = "remittance-balance-currency-lower-case"
	DevRefundCallbackMissing   = "refund-callback-missing"
	DevCallbackToLatestURL     = "callback-to-latest-url"
	DevRefusedUserCreated      = "refused-api-user-still-created"
	DevDupUserOverwritesHost   = "duplicate-api-user-overwrites-host"
	DevFundsRefusalSticks      = "funds-refusal-sticks"
)

// Deviation is one way of departing from the API. Profiles lists the profiles in which
// the behaviour is a deviation (it takes effect in any profile when asked for).
type Deviation struct {
	Name     string
	Profiles []string
	Clause   string
	Effect   string
}

var mtnOnly = []string{ProfileMTN}

// Deviations lists every deviation.
var Deviations = []Deviation{
	{DevRefundRefReused, both,
		"spec §2.5 \"A request that reuses an existing reference ID is rejected with 409 and code RESOURCE_ALREADY_EXIST\"; §7 rule 1; §4.3 #9 \"409: duplicated reference ID\"",
		"a refund whose X-Reference-Id was already used by a refund is accepted (202) and replaces the earlier refund; deposits and requests to pay still get 409"},
	{DevDepositNoRefID, both,
		"spec §4.3 #10 \"Headers: as for refund\" and #9 \"X-Reference-Id (required)\"; §2.5 the caller generates the ID",
		"a deposit without X-Reference-Id is accepted (202) under an id the server makes up (the client can never read it); requests to pay and refunds still answer 400"},
	{DevHolderAnyEnv, both,
		"spec §7 rule 3 \"Access to a forbidden target environment gives 500 with NOT_ALLOWED_TARGET_ENVIRONMENT on the balance and status operations\"; §4.2 #8 and §4.3 #12 (shown 500 code NOT_ALLOWED_TARGET_ENVIRONMENT)",
		"the account-holder active check (collection and disbursement) answers 200 for a missing or foreign X-Target-Environment; balances still answer 500"},
	{DevDupPaymentOverwrites, both,
		"spec §2.5 \"A request that reuses an existing reference ID is rejected with 409\"; §4.2 #2 409",
		"a request to pay reusing a reference id is answered 409 RESOURCE_ALREADY_EXIST, yet its amount, payer and texts replace those of the stored payment (a later status read shows the refused request's data)"},
	{DevCallbackHostRefCreates, mtnOnly,
		"notes, Callbacks: \"otherwise the creation POST fails with 500 {code:INVALID_CALLBACK_URL_HOST} and no transaction is created [observed]\"",
		"a creation refused with 500 INVALID_CALLBACK_URL_HOST still creates the transaction (it then reads 200 by its id, and the id gets 409 when reused)"},
	{DevFailedPaymentCredits, both,
		"spec §2.2 \"amount: Amount debited from the payer account\" and §3 (the payer declines or the system times it out); §2.9 \"Available balance of the account\"",
		"a request to pay that ends FAILED still credits the amount to the merchant's collection balance"},
	{DevCreditedWhilePending, both,
		"spec §3 \"The request-to-pay transaction has the status PENDING from creation until the payer authorizes or declines it\"; §2.2 amount debited from the payer; §2.9",
		"the collection balance is credited when a request to pay is accepted, while it is still PENDING (it is taken back if the payment fails)"},
	{DevRefundNotDebited, both,
		"spec §4.3 #9 \"Refunds an amount from the owner's account to a payee account\"; §2.9",
		"a successful refund does not debit the disbursement balance (deposits still do)"},
	{DevDepositDebitRoundedUp, both,
		"spec §4.3 #10 \"Deposits an amount from the owner's account to a payee account\"; §2.3 amount; §2.9",
		"a deposit debits its amount rounded up to the next whole unit (a deposit of 12.50 takes 13 from the disbursement balance)"},
	{DevRejectReasonsSwapped, mtnOnly,
		"notes, Sandbox test numbers: 46733123451 FAILED reason APPROVAL_REJECTED, 46733123452 FAILED reason EXPIRED [observed FAILED; reason documented]",
		"the reasons of the two test numbers are swapped: …451 ends FAILED with EXPIRED and …452 with APPROVAL_REJECTED"},
	{DevDelayedApprovalAtOnce, mtnOnly,
		"notes, Sandbox test numbers: 46733123454 \"PENDING, then SUCCESSFUL after a delay (~25–30 s) [observed]\"",
		"the delayed-approval number …454 is SUCCESSFUL at once, never PENDING"},
	{DevNotifCooldownPerUser, both,
		"spec §4.2 #3 429 \"Too many attempts for the same ID recently. Occurs only after an earlier successful attempt\"; §8",
		"after one successful delivery notification, every notification of the same API user gets 429 during the cooldown, also for other payments never notified before"},
	{DevNotifLanguageRequired, both,
		"spec §4.1 \"Language | header, optional | … A default is used when omitted\"; §4.2 #3 Headers: Language (optional)",
		"a delivery notification without a Language header is refused with 400 instead of being enqueued with the default template"},
	{DevTokenRenewedWithBearer, both,
		"spec §5.2 \"Token creation … uses HTTP Basic authentication in Authorization. The credential is the API user ID and API key\"; §4.2 #1 Headers: Authorization (Basic …)",
		"POST /{product}/token/ with a live Bearer access token instead of Basic credentials issues a new access token (200), so a token can be renewed forever without the API key"},
	{DevRenewedTokenDiesFirst, both,
		"spec §2.6 \"expires_in: Validity of the token in seconds\"; §5.3 \"its validity in seconds (expires_in) are returned with it\"",
		"a token issued while an earlier token of the same API user is still live says the full expires_in, but stops working (401) when that earlier token expires"},
	{DevRefreshAnyUser, both,
		"spec §2.7 refresh_token / §5.4 \"plus a refresh token\"; RFC 6749 §6 (the server MUST validate that the refresh token was issued to the authenticated client)",
		"any API user can redeem another API user's refresh token (200 with a consent token) instead of invalid_grant"},
	{DevRefreshAfterConsentEnds, both,
		"spec §2.7 \"refresh_token_expired_in: Seconds until the consent can no longer be refreshed\"; §8 \"Consent refresh validity is refresh_token_expired_in seconds\"",
		"a refresh token still gives a consent token after refresh_token_expired_in has run out (refresh_token_expired_in then reads 0)"},
	{DevRefreshIssuesAccess, both,
		"spec §2.7 (consent token record) and §5.4 (the token is used on user information with consent)",
		"the refresh grant answers 200 with a token that is not a consent token: user information with consent refuses it with 401"},
	{DevRefreshOpensUserinfo, both,
		"spec §5.3/§5.4 \"Call the user information with consent operation with that Bearer token\" (the access_token); RFC 6749 §1.5 (refresh tokens are only sent to the authorization server)",
		"user information with consent accepts the refresh_token as the Bearer credential (200)"},
	{DevConsentScopeNarrowed, both,
		"spec §2.7 \"scope: Scopes that belong to the authentication request ID\"",
		"the consent token's scope keeps only the first of the scopes asked for in bc-authorize (\"profile openid\" -> \"profile\")"},
	{DevLoginHintNotChecked, both,
		"spec §4.2 #7 \"login_hint | ID:<msisdn>/MSISDN\" (the account holder who must consent); §7 400 invalid data",
		"bc-authorize without login_hint, or with one that is not ID:<msisdn>/MSISDN, answers 200 with an auth_req_id, and the consent is later granted"},
	{DevBasicInfo401Code, both,
		"spec §2.14 \"The token and basic-info operations use { error: string } on 401\"; §7 rule 4 \"A failed token request or basic-info request gives 401 with { error }\"",
		"basic user information refuses a missing, invalid or expired Bearer token with 401 {code, message} instead of {error}"},
	{DevDepositPartyTypeAny, both,
		"spec §2.1 \"partyIdType | string (enum) | yes | MSISDN, EMAIL, PARTY_CODE\"; §2.3; §4.3 #10 400",
		"a deposit whose payee has a partyIdType outside the enum (e.g. ALIAS) is accepted (202) and succeeds; requests to pay still answer 400"},
	{DevEmailNotValidated, both,
		"spec §2.1 \"EMAIL: valid e-mail format. The format is validated according to partyIdType.\"",
		"a payer or payee of type EMAIL whose partyId is not an e-mail address (e.g. \"not-an-email\") is accepted (202)"},
	{DevMalformedCallbackURL, mtnOnly,
		"notes, Errors and inputs: 400 causes seen include \"malformed URLs\" [observed]",
		"an X-Callback-Url that is not an absolute http(s) URL (e.g. \"not a url\") is accepted (202) and no callback is sent"},
	{DevDepositTextLength, mtnOnly,
		"notes, Errors and inputs: 400 causes seen include \"payerMessage/payeeNote over 160 characters\" [observed]",
		"deposits accept payerMessage and payeeNote of any length (202); requests to pay and refunds still refuse more than 160 characters"},
	{DevTokenBodyAccepted, mtnOnly,
		"notes, Errors and inputs: 400 causes seen include \"a body sent to /token/\" [observed] (spec §4.2 #1 \"No request body\")",
		"POST /{product}/token/ with a request body issues the token (200) instead of 400"},
	{DevDisbHolderErrorsIgnored, mtnOnly,
		"notes, Sandbox test numbers: the SDKs document …452 -> 500 NOT_ALLOWED, …453 -> 500 NOT_ALLOWED_TARGET_ENVIRONMENT, …454 -> 500 INTERNAL_PROCESSING_ERROR, …455 -> 503 SERVICE_UNAVAILABLE [documented]; spec §4.3 #12 \"Same parameters, headers and semantics as collection endpoint 8\"",
		"the disbursement (and remittance) account-holder check answers 200 true for …452–…455; the collection one keeps the documented errors"},
	{DevRemittanceCurrencyLower, both,
		"spec §2.9 \"currency | string | ISO 4217\" (ISO 4217 alphabetic codes are three upper-case letters)",
		"the remittance balance record gives its currency in lower case (\"eur\"); collection and disbursement keep \"EUR\""},
	{DevRefundCallbackMissing, both,
		"spec §6 \"A caller may give an address in X-Callback-Url on request to pay, refund, deposit and bc-authorize. The service is to send a callback to the server there.\"",
		"no callback is sent for refunds; requests to pay, deposits and consent requests still get theirs"},
	{DevCallbackToLatestURL, both,
		"spec §6 \"… X-Callback-Url … The service is to send a callback to the server there\"; §4.1 X-Callback-Url \"Address to which a callback is sent\"",
		"a transaction's callback goes to the X-Callback-Url of the API user's most recent creation (if it gave one), not to the URL given with that transaction"},
	{DevRefusedUserCreated, both,
		"spec §4.5 #14 \"400 invalid data\"; §4.5 #16 \"404 as above\" (reference ID not found); §7 rule 2",
		"a create-API-user request refused with 400 (missing or invalid body) still creates the user: GET /v1_0/apiuser/{id} then answers 200 and a retry gets 409"},
	{DevDupUserOverwritesHost, both,
		"spec §4.5 #14 \"409 duplicated reference ID, code RESOURCE_ALREADY_EXIST\"; §7 rule 1",
		"a create-API-user request with a used id is answered 409, yet its providerCallbackHost replaces the stored one (GET and the callback-host check then use the new host)"},
	{DevFundsRefusalSticks, mtnOnly,
		"notes, Sandbox test numbers: payee \"any other valid MSISDN: SUCCESSFUL at once [observed]\"; spec §4.3 #10 deposits from the owner's account",
		"after one deposit or refund ends FAILED NOT_ENOUGH_FUNDS, every later deposit and refund of that API user ends FAILED NOT_ENOUGH_FUNDS, even when the balance covers it"},
}

// LookupDeviation finds a deviation by name.
func LookupDeviation(name string) (Deviation, bool) {
	for _, d := range Deviations {
		if d.Name == name {
			return d, true
		}
	}
	return Deviation{}, false
}

// PrintDeviations writes one line per deviation: name, profiles, clause, effect.
func PrintDeviations(w io.Writer) {
	for _, d := range Deviations {
		fmt.Fprintf(w, "%s\tprofiles=%s\tclause: %s\teffect: %s\n", d.Name, strings.Join(d.Profiles, ","), d.Clause, d.Effect)
	}
}

func (s *Server) dev(name string) bool { return s.cfg.Deviations[name] }
