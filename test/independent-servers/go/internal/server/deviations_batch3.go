package server

import (
	"math/big"
	"net/url"
	"time"
)

// The third batch of deviations. Each is a bug of a kind a provider's engineer could ship:
// a race, an off-by-one, a cache keyed wrongly, a rule forgotten on a sibling operation,
// state lost after an event, a failure late in a resource's life, an error path that leaves
// something behind, a wrong field in one kind of record, a retry that misbehaves, money,
// provisioning and authentication slips, callback and consent slips. Each is off by default
// and only read through s.dev(name).
const (
	// provisioning and authentication
	DevAPIUserStoredLate      = "apiuser-stored-late"
	DevAPIKeyTrailingNewline  = "api-key-trailing-newline"
	DevAPIKeyPrefixCompared   = "api-key-compared-by-prefix"
	DevNewKeyResetsBalance    = "new-key-resets-balance"
	DevRemittanceUserAsColl   = "remittance-user-bound-to-collection"
	DevTokenUseLimit          = "access-token-use-limit"
	DevTokenCacheKeyTruncated = "token-cache-key-truncated"
	// collection
	DevPolledNoCallback    = "polled-transaction-no-callback"
	DevCreditPostedOnRead  = "credit-posted-on-status-read"
	DevCreditNewestUser    = "payment-credited-to-newest-user"
	DevNotificationRace    = "notification-race"
	DevNotifCooldownByText = "notification-cooldown-keyed-by-text"
	DevCallbackBodyString  = "callback-body-json-string"
	DevCallback204Retried  = "callback-204-retried"
	// disbursement
	DevFullRefundRefused      = "full-refund-refused"
	DevDepositPayeeTypeMSISDN = "deposit-payee-type-forced-msisdn"
	DevDisbRecordsExpire      = "disbursement-records-expire"
	DevDisbHolderInverted     = "disbursement-holder-active-inverted"
	// consent (CIBA)
	DevDeniedConsentRepoll  = "denied-consent-granted-on-repoll"
	DevRefusedConsentKept   = "refused-consent-request-kept"
	DevRefreshScopeFromReq  = "refresh-scope-from-request"
	DevAuthReqExpiryIgnored = "auth-req-id-expiry-not-checked"
)

// Fixed numbers of the batch-3 bugs.
const (
	tokenUseLimit       = 50                     // access-token-use-limit: uses before the token "wears out"
	authCachePrefix     = 64                     // token-cache-key-truncated: characters of the token used as key
	authCacheTTL        = 30 * time.Second       // token-cache-key-truncated: life of a cache entry
	apiUserStoreDelay   = 500 * time.Millisecond // apiuser-stored-late: the write lands after the 201
	notificationRaceGap = 300 * time.Millisecond // notification-race: check and record this far apart, unlocked
)

var batch3 = []Deviation{
	// ---- provisioning and authentication ----
	{DevAPIUserStoredLate, both,
		"spec §4.5 #14 \"201 created\"; §4.5 #15 \"404 when the reference ID is not found or is closed in the sandbox, code RESOURCE_NOT_FOUND\" and #16 \"404 as above\"; §7 rule 2 \"An API user or key request for an unknown or closed sandbox reference ID gives 404\"",
		"the API user is written to the store 500 ms after the 201 is answered: a POST /v1_0/apiuser/{id}/apikey or GET /v1_0/apiuser/{id} sent right after the 201 answers 404 RESOURCE_NOT_FOUND; the same requests a second later work"},
	{DevAPIKeyTrailingNewline, both,
		"spec §4.5 #15 \"201 with { apiKey }\"; §2.12 \"apiKey (string), the created API user key\"; §5.2 \"The credential is the API user ID and API key\"; notes \"POST /v1_0/apiuser/{id}/apikey -> 201 {\"apiKey\":\"<32 hex chars>\"} [observed]\"",
		"the apiKey of the 201 answer ends with a newline (\"…\\n\") that the stored key does not have: a Basic credential built from the key exactly as returned is refused (spec 401 CREDENTIALS_INVALID, mtn-sandbox 500 login_failed); only the key with the newline cut off works"},
	{DevAPIKeyPrefixCompared, both,
		"spec §5.2 \"The credential is the API user ID and API key, base64-encoded\"; §4.2 #1 \"401: { error }\"; §7 rule 4 \"A failed token request ... gives 401 with { error }\"",
		"the token operations (POST /{product}/token/ and the OAuth 2.0 token operation) compare only the first 16 characters of the API key: a key with its later characters changed, or cut to its first 16, gets a token; a key that differs within its first 16 characters is still refused"},
	{DevNewKeyResetsBalance, both,
		"spec §2.9 \"availableBalance: Available balance of the account\"; §4.5 #15 \"Create an API key for the API user\" (it creates a key, nothing else)",
		"creating a further API key for an API user that already has one re-opens its account: the balance goes back to the opening balance (collection 0, disbursement 1000000), losing every payment, deposit and refund; its transactions stay readable"},
	{DevRemittanceUserAsColl, mtnOnly,
		"notes, Provisioning and tokens: \"An API user works only with the product (subscription key) it was provisioned under; using it on another product -> 500 NOT_ALLOWED_TARGET_ENVIRONMENT [observed]\"",
		"an API user created with the remittance subscription key is registered as a collection user: POST /remittance/token/ refuses it with 500 NOT_ALLOWED_TARGET_ENVIRONMENT, while POST /collection/token/ (with the collection key) gives it a token; collection and disbursement users are unaffected"},
	{DevTokenUseLimit, both,
		"spec §2.6 \"expires_in | integer | Validity of the token in seconds\"; §5.3 \"The token type and its validity in seconds (expires_in) are returned with it\"; notes \"Expired or invalid bearer token -> 401\" (only those)",
		"an access token wears out after 50 accepted requests: from its 51st use on every operation refuses it with 401 TOKEN_INVALID although expires_in has not passed; a new token works again (for 50 requests)"},
	{DevTokenCacheKeyTruncated, both,
		"spec §5.3 \"OAuth uses Bearer, and the credential is the access token received\"; §4.2 #3 404 when \"the caller does not own the financial transaction\"; §2.9 (the balance of the caller's account); §2.6 expires_in",
		"accepted access tokens are cached for 30 s under their first 64 characters, which are the same for every access token of this server: for 30 s after one API user's call, any access token presented on the same product (another API user's, or an expired one) is taken as the first user's, so the second user reads the first user's payments and balance and creates transactions owned by the first user"},

	// ---- collection ----
	{DevPolledNoCallback, both,
		"spec §6 \"A caller may give an address in X-Callback-Url on request to pay, refund, deposit ... The service is to send a callback to the server there\"; notes, Callbacks: \"Sent to X-Callback-Url when the transaction reaches a final state [documented]\"",
		"a transaction whose status was queried while it was still PENDING never gets its callback when it becomes final (the poller is assumed to have seen it); transactions not polled before their outcome still get theirs"},
	{DevCreditPostedOnRead, both,
		"spec §2.9 \"availableBalance: Available balance of the account\"; §2.2 \"amount: Amount debited from the payer account\" (credited to the payee when the payment succeeds, not when it is read)",
		"a successful request to pay is credited to the collection balance only when its status is next queried: after its SUCCESSFUL callback, the balance still leaves it out until GET /requesttopay/{id} is called"},
	{DevCreditNewestUser, both,
		"spec §2.9 \"availableBalance: Available balance of the account\" (the caller's account); §1 \"Collection requests a payment from a consumer\" (for the partner that asks)",
		"a successful request to pay is credited to the collection account of the most recently provisioned collection API user instead of the account of the API user that requested it (right while an API user is the newest)"},
	{DevNotificationRace, both,
		"spec §4.2 #3 \"429 Too many attempts for the same ID recently. Occurs only after an earlier successful attempt\"; §8 \"repeated attempts for the same ID give 429\"; notes \"a second notification for the same reference -> 429 [observed]\"",
		"the delivery-notification 429 check and the recording of the accepted attempt are 300 ms apart with the store unlocked: two notifications for the same payment sent together both get 200; one sent after the first answer still gets 429"},
	{DevNotifCooldownByText, both,
		"spec §4.2 #3 \"429 Too many attempts for the same ID recently\"; §8 \"Delivery notification: repeated attempts for the same ID give 429, but only after a successful attempt\"",
		"the delivery-notification cooldown is keyed by the notification text: after a successful notification, a repeat for the same payment gets 429 only when its notificationMessage is the same; with any other text it is enqueued again (200)"},
	{DevCallbackBodyString, mtnOnly,
		"notes, Callbacks: \"Body: the same record as the status GET [documented]\"",
		"transaction callbacks carry the status record encoded twice: the body is a JSON string whose content is the record's JSON (\"{\\\"financialTransactionId\\\":…}\"), not the record object; the status GET gives the object"},
	{DevCallback204Retried, both,
		"spec §6 \"The service is to send a callback to the server there\" (one callback per transaction that reaches a final state); notes, Callbacks: \"older docs say sent once; newer docs describe retries (timeout 2 s, then retries at short then long intervals)\" (retries follow a failed attempt); RFC 9110 §15.3 (every 2xx status means the request was successfully received, understood and accepted)",
		"a callback answered with a 2xx status other than 200 (204 No Content, 202 Accepted) is taken as failed and sent again on the retry schedule: the receiver gets the same callback 4 times; a 200 answer still ends it"},

	// ---- disbursement ----
	{DevFullRefundRefused, both,
		"spec §2.4 \"referenceIdToRefund ... Identifies the earlier request-to-pay transaction that is refunded\"; §4.3 #9 \"Refunds an amount from the owner's account to a payee account\"",
		"a refund that takes exactly what is left of the request to pay (a full refund, or the last part after partial ones) ends FAILED NOT_ALLOWED: the check is refunded + amount >= paid instead of >; smaller refunds still succeed"},
	{DevDepositPayeeTypeMSISDN, both,
		"spec §2.1 Party \"partyIdType | MSISDN, EMAIL, PARTY_CODE ... The format is validated according to partyIdType\"; §2.3 (the deposit payee is a Party); notes \"refund and deposit use payee\", \"partyId comes back exactly as sent [observed]\"",
		"the deposit status record and the deposit callback give payee.partyIdType \"MSISDN\" whatever type was sent: a deposit to {EMAIL, ann@example.com} reads back as {MSISDN, ann@example.com}; requests to pay and refunds keep the right type"},
	{DevDisbRecordsExpire, both,
		"spec §2.5 the reference ID \"is later used in status queries\" and \"A request that reuses an existing reference ID is rejected with 409\"; §4.3 #9/#10 status query by GET /refund|deposit/{referenceId}; notes \"for an unknown UUID -> 404\" (only unknown ids)",
		"deposits and refunds are purged 30 s after they become final (a clean-up job given seconds for days): their status query then answers 404 RESOURCE_NOT_FOUND and their X-Reference-Id is accepted again (202) for a new transaction; requests to pay are kept"},
	{DevDisbHolderInverted, both,
		"spec §4.3 #12 \"Same parameters, headers and semantics as collection endpoint 8\"; §4.2 #8 \"200: true if the account holder is registered and active; false if it is not active or not found\"; notes \"returns true for ordinary numbers [observed]\"",
		"the disbursement account-holder check answers the negation: false for an active holder (e.g. 46733123999) and true for one that is inactive or not found; the collection check answers right"},

	// ---- consent (CIBA) ----
	{DevDeniedConsentRepoll, both,
		"spec §4.2 #7 \"Claims a consent by the account holder for the requested scopes\"; §5.4 the consent token follows the holder's consent; OpenID CIBA Core §11 (access_denied: the end-user denied the authorization request; no token follows)",
		"after the account holder denied a consent (e.g. login_hint ID:46733123450/MSISDN), the first poll of the OAuth 2.0 token operation answers access_denied, and the next poll issues a consent token (200) as if the holder had approved"},
	{DevRefusedConsentKept, both,
		"spec §4.2 #7 bc-authorize; §7 \"400 Bad request; invalid data\" and set A UNSUPPORTED_SCOPE (a refused request claims no consent); §6 callback for bc-authorize",
		"a bc-authorize refused with 400 UNSUPPORTED_SCOPE (a scope not offered, e.g. \"profile bogus\") still stores the consent request: its X-Callback-Url gets the ping with an auth_req_id, which the OAuth 2.0 token operation redeems for a consent token whose scope holds the refused scope"},
	{DevRefreshScopeFromReq, both,
		"spec §2.7 \"scope: Scopes that belong to the authentication request ID\"; RFC 6749 §6 (a refresh request's scope is optional; when omitted it is treated as equal to the scope originally granted, and it may not include any scope not originally granted)",
		"the refresh_token grant takes the new consent token's scope from the refresh request's scope parameter: without one (the usual case) scope reads \"\", and with one it grants scopes never consented to (scope=all_info on a profile consent gives \"all_info\")"},
	{DevAuthReqExpiryIgnored, both,
		"spec §2.8 \"expires_in: Seconds until the authentication request ID expires\"; §8 \"The consent request ID expires after expires_in seconds\"",
		"an auth_req_id is never checked for expiry: after its expires_in has passed it is still redeemed (200 with a consent token) when the holder approved, and a holder that never answers (…452, …453) keeps getting authorization_pending instead of expired_token"},
}

func init() { Deviations = append(Deviations, batch3...) }

// ---------- helpers of the batch-3 deviations ----------

// authCacheEntry (deviation token-cache-key-truncated) remembers an accepted access token.
type authCacheEntry struct {
	rec   *tokenRec
	user  *apiUser
	until time.Time
}

func authCacheKey(product, cred string) string {
	if len(cred) > authCachePrefix {
		cred = cred[:authCachePrefix]
	}
	return product + "|" + cred
}

// cachedBearer (deviation token-cache-key-truncated) answers from the token cache.
func (s *Server) cachedBearer(c *call, cred, kind string) bool {
	if kind != "access" || !s.dev(DevTokenCacheKeyTruncated) {
		return false
	}
	s.lock()
	e, ok := s.authCache[authCacheKey(c.product, cred)]
	s.unlock()
	if !ok || !c.now.Before(e.until) || e.rec.kind != kind {
		return false
	}
	c.tok, c.user = e.rec, e.user
	return true
}

// rememberBearer (deviation token-cache-key-truncated) caches an accepted access token.
func (s *Server) rememberBearer(c *call, cred string) {
	if c.tok == nil || c.tok.kind != "access" || !s.dev(DevTokenCacheKeyTruncated) {
		return
	}
	s.lock()
	s.authCache[authCacheKey(c.product, cred)] = authCacheEntry{rec: c.tok, user: c.user, until: c.now.Add(authCacheTTL)}
	s.unlock()
}

// wornOut (deviation access-token-use-limit) counts a use of an access token and tells
// whether it is past its limit.
func (s *Server) wornOut(rec *tokenRec) bool {
	if rec.kind != "access" || !s.dev(DevTokenUseLimit) {
		return false
	}
	s.lock()
	defer s.unlock()
	rec.uses++
	return rec.uses > tokenUseLimit
}

// openingBalance is the balance a new account of the product starts with.
func (s *Server) openingBalance(product string) *big.Int {
	if product == "disbursement" {
		return units(1_000_000)
	}
	if product == "collection" && s.on(CtlCollectionOpening) {
		return units(1000)
	}
	return big.NewInt(0)
}

// creditAccountLocked is the API user whose collection account a successful request to pay
// credits (deviation payment-credited-to-newest-user: the newest collection user).
func (s *Server) creditAccountLocked(owner *apiUser) *apiUser {
	if owner == nil || !s.dev(DevCreditNewestUser) {
		return owner
	}
	newest := owner
	for _, u := range s.users {
		if u.product == "collection" && u.created.After(newest.created) {
			newest = u
		}
	}
	return newest
}

// purgedLocked (deviation disbursement-records-expire) drops a deposit or refund that became
// final longer ago than the retention; it reports whether the record is gone.
func (s *Server) purgedLocked(t *tx, now time.Time) bool {
	if t.kind == kRTP || t.status == stPending || !s.dev(DevDisbRecordsExpire) {
		return false
	}
	if now.Before(t.completedAt.Add(s.tm.disbRetention)) {
		return false
	}
	if s.txs[t.kind][t.id] == t {
		delete(s.txs[t.kind], t.id)
	}
	return true
}

// quietCallbackURL (deviation refused-consent-request-kept) reads X-Callback-Url without
// answering: "" when it is absent or would be refused.
func (s *Server) quietCallbackURL(c *call) string {
	raw := c.r.Header.Get("X-Callback-Url")
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return ""
	}
	if !sameHost(u.Hostname(), c.user.host) {
		return ""
	}
	return raw
}
