package momo;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** Command-line contract of the server. */
public final class Config {
    public enum Profile { SPEC, MTN }

    public int port = 0;
    public Profile profile = Profile.SPEC;
    public final Map<String, String> keys = new LinkedHashMap<>();
    public String targetEnvironment = "sandbox";
    public String currency = "EUR";
    public long tokenLifetime = 3600;
    public double delayedApprovalSeconds = 25;
    public double pendingTimeoutSeconds = 120;
    public final Set<String> controls = new LinkedHashSet<>();
    public boolean listControls = false;
    public final Set<String> deviations = new LinkedHashSet<>();
    public boolean listDeviations = false;

    public static final String[] PRODUCTS = {"collection", "disbursement", "remittance"};

    /** A spec-legal alternative behaviour. */
    public static final class Control {
        public final String name, profiles, clause, effect;
        public final boolean mtnLegal;
        Control(String name, boolean mtnLegal, String clause, String effect) {
            this.name = name; this.mtnLegal = mtnLegal; this.profiles = mtnLegal ? "spec,mtn-sandbox" : "spec";
            this.clause = clause; this.effect = effect;
        }
    }

    public static final Map<String, Control> CONTROLS = new LinkedHashMap<>();
    static {
        add(new Control("single-live-token", true,
            "spec 2.6/5.3 give a lifetime (expires_in) but no rule against revoking a token sooner; RFC 6749 1.4",
            "issuing an access token revokes the API user's earlier access tokens of that product (they get 401)"));
        add(new Control("notification-window-short", true,
            "spec 8 'Duration of the delivery-notification window: not shown'; 4.2 #3 410",
            "the delivery-notification opportunity ends 5 s after the payment completes (then 410 EXPIRED)"));
        add(new Control("refund-capped", true,
            "spec 4.3 #9 and 2.4 set no rule on refund amounts; 7 set B has NOT_ALLOWED",
            "refunds whose running total would exceed the refunded payment end FAILED, reason NOT_ALLOWED"));
        add(new Control("shared-reference-ids", true,
            "spec 2.5 / 7 rule 1 'reuses an existing reference ID' without naming the namespace",
            "one reference-id namespace over requests to pay, refunds and deposits (cross-kind reuse gives 409)"));
        add(new Control("consent-push", true,
            "spec 6 callback 'payload ... not shown'; OpenID CIBA Core 10.3 (push mode)",
            "the bc-authorize callback carries the consent token record (push) instead of only auth_req_id (ping)"));
        add(new Control("callback-signature", true,
            "spec 6 'signing ... not shown'; notes: retry/signing not recorded",
            "each callback carries X-Callback-Signature: sha256=<HMAC-SHA256 of the body keyed with the API user's newest API key>"));
        add(new Control("slow-disbursements", false,
            "spec 3 'Transitions: not shown'; 8 timings not shown (mtn notes: ordinary payees succeed at once, so spec only)",
            "deposits and refunds stay PENDING 6 s before their outcome"));
        add(new Control("connection-close", true,
            "RFC 9112 9.6 / RFC 9110 7.6.1: a server may close the connection after any response; the spec says nothing of persistence",
            "every response carries Connection: close and the connection is closed after it"));
        add(new Control("api-key-rotates", true,
            "spec 4.5 #15 'Create an API key' says nothing of earlier keys (in mtn-sandbox this is already the default)",
            "a new API key invalidates the API user's earlier keys (token requests with them are refused)"));
        add(new Control("status-needs-target-env", true,
            "spec 4.6 status-query 'headers ... not shown'",
            "status queries without X-Target-Environment are refused with 400"));
        add(new Control("consent-bound-to-client", true,
            "spec 4.3 #11 silent on who may redeem an auth_req_id; OpenID CIBA Core 10.1 (the requesting client)",
            "only the API user that called bc-authorize may redeem its auth_req_id; any other gets 400 invalid_grant"));
        // second batch
        add(new Control("refresh-token-rotates", true,
            "spec 2.7 'refresh_token: UUID of the refresh token' says nothing of reuse; RFC 6749 6 (the server MAY issue a new refresh token, and the client MUST then discard the old one)",
            "the refresh_token grant revokes the refresh token it used: a second use of that refresh token answers 400 invalid_grant, the new refresh token works"));
        add(new Control("consent-approved-slowly", true,
            "spec 2.8 / 5.4 the client retries every interval until the holder answers; the time the holder takes is not given (only expires_in bounds it); notes silent",
            "the account holder approves a consent 10 s after bc-authorize (instead of 4 s, mtn-sandbox 3 s): polls before then get authorization_pending, the callback comes at 10 s"));
        add(new Control("api-key-upper-case-hex", true,
            "spec 2.12 'apiKey (string)'; notes '{\"apiKey\":\"<32 hex chars>\"}' (upper-case A-F are hex digits as well)",
            "the created apiKey is written in upper-case hex (40 characters in spec, 32 in mtn-sandbox); it works as the key, exactly as written"));
        add(new Control("refund-record-without-payee", false,
            "spec 2.5 / 4.6 'Fields of the transaction status record ...: not shown'; 2.4 the refund body has no payee (notes observe payee on refunds, so spec only)",
            "the refund status record and the refund callback carry no payee; deposits and requests to pay keep payee/payer"));
        // third batch
        add(new Control("callback-single-attempt", true,
            "spec 6 'Callback payload, timing, retries, signing ...: not shown'; notes, Callbacks: 'Retry policy: older docs say sent once; newer docs describe retries ... [uncertain: make it a setting]'",
            "each callback is attempted once: a callback answered with a non-2xx status (or not answered within 2 s) is not sent again (default: spec 5 attempts, mtn-sandbox 3)"));
        add(new Control("notification-cooldown-long", true,
            "spec 4.2 #3 '429 Too many attempts for the same ID recently' and 8 'Rate limit thresholds: not shown' (how long 'recently' lasts is not given; notes silent)",
            "after an accepted delivery notification, further notifications for the same payment get 429 for 120 s (default: spec 10 s, mtn-sandbox 60 s)"));
        add(new Control("consent-request-short-lived", true,
            "spec 2.8 'expires_in: Seconds until the authentication request ID expires' and 8 (the value is not given; notes give none)",
            "bc-authorize answers expires_in 60 (default: spec 180, mtn-sandbox 240); the auth_req_id is refused with 400 expired_token from then on; the holder still answers after 4 s (mtn-sandbox 3 s)"));
        add(new Control("consent-validity-30-days", true,
            "spec 2.7 'refresh_token_expired_in ... It is based on the default consent validity' (the default is not given); consent_valid_in still overrides it",
            "without consent_valid_in a consent lasts 2592000 s (30 days) for both access types: refresh_token_expired_in reads about 2592000 (default: online 3600 s, offline 86400 s; mtn-sandbox 86400 s); the consent access token still lives 3600 s"));
        add(new Control("userinfo-all-claims", true,
            "spec 2.11 lists the user-information record without tying its fields to scopes; 5.7 'Allowed scope values: not shown'; notes 'userinfo -> the same Sand Box style record' (in mtn-sandbox this is already the default, no effect)",
            "user information with consent returns all 24 claims of 2.11 whatever the consent's scope (default in spec: filtered by scope, e.g. openid alone gives only sub)"));
        add(new Control("retry-after-on-429", true,
            "RFC 9110 10.2.3 (a server MAY send Retry-After) and RFC 6585 4 (429 MAY include Retry-After); spec 4.2 #3 names no headers of the 429",
            "a delivery notification refused with 429 carries Retry-After: <whole seconds until the next notification is accepted>"));
        add(new Control("api-key-base64url", false,
            "spec 2.12 'API key record: apiKey (string)' gives no format (notes observe 32 hex characters, so spec only)",
            "the created apiKey is 32 characters of base64url (A-Z a-z 0-9 - _), e.g. 'q3Zk-9vB_...'; it works as the key, exactly as written"));
        // fourth batch
        add(new Control("consent-scope-reordered", true,
            "spec 2.7 'scope: Scopes that belong to the authentication request ID' (a set of scopes); RFC 6749 3.3 (scope is a list of space-delimited strings; 'If the value contains multiple space-delimited strings, their order does not matter'); notes silent",
            "the consent token record (CIBA and refresh_token grants) lists its scopes in alphabetical order, not in the order bc-authorize named them: scope=profile openid gives scope \"openid profile\""));
        add(new Control("login-hint-msisdn-only", true,
            "spec 4.2 #7 'login_hint | ID:<msisdn>/MSISDN' (the only form the spec gives); notes 'login_hint=ID:46733123450/MSISDN' [observed] (in mtn-sandbox this is already the default, no effect)",
            "bc-authorize refuses a login_hint of the form ID:<e-mail>/EMAIL with 400 (default in spec: accepted); ID:<msisdn>/MSISDN works as before"));
        add(new Control("deposit-funds-refused-at-creation", true,
            "spec 4.3 #10 'Responses: 202, 400, 409 and 500'; 7 set B has NOT_ENOUGH_FUNDS; 7 rule 5 'Which code accompanies which status on each operation, beyond the cases above: not shown'; notes silent on a deposit over the balance",
            "a deposit whose amount exceeds the caller's disbursement availableBalance when it arrives is refused with 500 NOT_ENOUGH_FUNDS and nothing is created (the X-Reference-Id stays free); default: 202, then FAILED NOT_ENOUGH_FUNDS"));
        add(new Control("deposit-funds-held-while-pending", true,
            "spec 2.9 'availableBalance: Available balance of the account' (money committed to a pending transfer is not available); 4.3 #10 'Deposits an amount from the owner's account'; 3 'Transitions: not shown'",
            "a deposit takes its amount from availableBalance as soon as it is accepted, while it is still PENDING, and a deposit that ends FAILED gives it back (default: taken when it succeeds); in mtn-sandbox only late payees such as 46733123454 show the difference"));
        add(new Control("access-token-10-minutes", false,
            "spec 2.6 'expires_in | integer | Validity of the token in seconds'; 8 'Access token validity: given in expires_in seconds' (no value is given; notes observe expires_in 3600, so spec only)",
            "POST /{product}/token/ issues access tokens that live 600 s and say expires_in 600 (default 3600, or --token-lifetime when that is shorter)"));
        add(new Control("refresh-token-kept", true,
            "RFC 6749 6 (the server MAY issue a new refresh token) and 5.1; spec 2.7 'refresh_token: UUID of the refresh token' (nothing about a new one per refresh); notes silent",
            "the refresh_token grant answers with the same refresh_token it was given, no new one; that refresh token keeps working until the consent ends (default: a new refresh token each time, the old one still valid)"));
        add(new Control("basic-auth-on-status-queries", false,
            "spec 5.3 'The Authorization header of the business operations follows the Basic and Bearer standards'; 4.6 status queries 'headers ... not shown' (mtn-sandbox takes Bearer only, so spec only)",
            "the three status queries also accept Basic API-user credentials (id and API key of the owner) and answer as with its Bearer token (default in spec: Basic only on request to pay)"));
    }
    private static void add(Control c) { CONTROLS.put(c.name, c); }

    /** A deliberate departure from the spec (or, where marked, the live notes): a plausible provider bug. */
    public static final class Deviation {
        public final String name, profiles, clause, effect;
        Deviation(String name, String profiles, String clause, String effect) {
            this.name = name; this.profiles = profiles; this.clause = clause; this.effect = effect;
        }
    }

    static final String BOTH = "spec,mtn-sandbox", SPEC_ONLY = "spec", MTN_ONLY = "mtn-sandbox";
    public static final Map<String, Deviation> DEVIATIONS = new LinkedHashMap<>();
    static {
        dev("apiuser-stored-before-validation", BOTH,
            "spec 4.5 #14 '400 invalid data' and '409 duplicated reference ID'; 7 rule 1 (a refused creation creates nothing)",
            "an API-user creation refused with 400 (missing or bad providerCallbackHost) still stores the user: GET /v1_0/apiuser/{id} answers 200 and the corrected retry gets 409");
        dev("apikey-not-found-code", BOTH,
            "spec 4.5 #15 '404 ... code RESOURCE_NOT_FOUND'; 7 rule 2 and set C (RESOURCE_NOT_FOUND, RESOURCE_ALREADY_EXIST)",
            "creating an API key for an unknown API user answers 404 with code NOT_FOUND (not in set C); GET /v1_0/apiuser/{id} keeps RESOURCE_NOT_FOUND");
        dev("token-expires-in-milliseconds", BOTH,
            "spec 2.6 'expires_in | integer | Validity of the token in seconds'; 5.3",
            "the access-token record gives expires_in in milliseconds (3600000 for a token that lives 3600 s)");
        dev("token-empty-key-before-apikey", BOTH,
            "spec 5.2 'The credential is the API user ID and API key'; 5.6 (the key is made by POST .../apikey); 4.2 #1 401",
            "an API user whose API key was never created gets an access token with an empty key (Basic 'id:')");
        dev("expired-token-accepted-on-status", BOTH,
            "spec 2.6/5.3 expires_in is the token's validity; 7 401 Unauthorized; notes 'Expired or invalid bearer token -> 401'",
            "the three status queries accept an expired access token (200); every other operation still answers 401");
        dev("bc-authorize-accepts-basic", BOTH,
            "spec 4.2 #7 'Authorization (Bearer, token from the token endpoint)'; 5.4 'Call bc-authorize with a Bearer token'",
            "bc-authorize accepts Basic API-user credentials instead of a Bearer access token (200 with an auth_req_id)");
        dev("consent-callback-host-not-checked", MTN_ONLY,
            "notes, Callbacks: 'The callback URL's host must equal the API user's providerCallbackHost; otherwise ... 500 INVALID_CALLBACK_URL_HOST' [observed]; spec 6",
            "bc-authorize accepts an X-Callback-Url on any host (and calls it); requests to pay, deposits and refunds still refuse it with 500");
        dev("invalid-payment-reserves-id", BOTH,
            "spec 2.5 / 7 rule 1 (409 only for a reference ID already used by a created transaction); 4.2 #2 '400: invalid data'",
            "a request to pay refused with 400 keeps its X-Reference-Id reserved: the corrected retry gets 409 RESOURCE_ALREADY_EXIST, and the id reads 404");
        dev("payment-texts-swapped", BOTH,
            "spec 2.2 'payerMessage: Text written in the payer's transaction history'; 'payeeNote: ... the payee's transaction history note'; notes status record",
            "the request-to-pay status record and callback give payerMessage and payeeNote swapped");
        dev("deposit-status-reads-refunds", BOTH,
            "spec 4.3 #10 'A status query is by GET /deposit/{referenceId}'; 4.3 #9 refund status by GET /refund/{referenceId}; notes (unknown -> 404)",
            "GET /disbursement/v1_0/deposit/{id} with a refund's id answers 200 with the refund's record instead of 404");
        dev("status-any-environment", BOTH,
            "spec 7 rule 3 'Access to a forbidden target environment gives 500 with NOT_ALLOWED_TARGET_ENVIRONMENT on the balance and status operations'",
            "the three transaction status queries answer 200 for a foreign X-Target-Environment; balances and creations still answer 500");
        dev("status-lookup-before-auth", BOTH,
            "spec 5.3 (Bearer on business operations) and 7 '401 Unauthorized'; 4.2 #3 (404 also when the caller does not own it)",
            "status queries look the id up before checking the token: without a valid token an unknown id answers 404 RESOURCE_NOT_FOUND, a known one 401 (an existence oracle)");
        dev("notification-message-optional", BOTH,
            "spec 2.13 'Delivery notification body: notificationMessage (string)'; 4.2 #3 '400 Invalid data in the request'",
            "a delivery notification whose body lacks notificationMessage (e.g. {}) is enqueued (200), and starts the 429 period");
        dev("notification-pending-not-found", BOTH,
            "spec 4.2 #3 '409 The transaction is not successfully completed'; 404 only for an unknown or foreign reference ID",
            "a delivery notification for a payment still PENDING answers 404 (not found) instead of 409 TRANSACTION_NOT_COMPLETED");
        dev("refund-debits-original-amount", BOTH,
            "spec 4.3 #9 'Refunds an amount from the owner's account'; 2.4 amount; 2.9 'Available balance of the account'",
            "a successful refund debits the disbursement balance by the refunded payment's amount, not by its own (a refund of 2 of a 10 payment takes 10)");
        dev("refund-currency-not-checked", BOTH,
            "spec 4.3 #9 '500: internal error (the shown case is code INVALID_CURRENCY)'; 2.4 currency; notes 'The sandbox accepts only EUR'",
            "a refund in a currency the service does not take (e.g. USD) is accepted (202) and succeeds; requests to pay and deposits still answer 500 INVALID_CURRENCY");
        dev("deposit-credits-owner", BOTH,
            "spec 4.3 #10 'Deposits an amount from the owner's account to a payee account'; 2.9",
            "a successful deposit adds its amount to the disbursement balance instead of taking it (sign error)");
        dev("deposit-without-target-environment", BOTH,
            "spec 4.3 #10 'Headers: as for refund' and #9 'X-Target-Environment (required)'",
            "a deposit without X-Target-Environment is accepted (202) and carried out; requests to pay and refunds still answer 400");
        dev("balance-cached", BOTH,
            "spec 2.9 'availableBalance: Available balance of the account'; 4.2 #4, 4.4 #13",
            "a balance read is cached for 30 s per API user and product: a payment, deposit or refund completed meanwhile does not show in later reads");
        dev("balance-in-floating-point", BOTH,
            "spec 2.9 availableBalance (a decimal amount as a string); 2.2 amount",
            "the ledger adds and subtracts in binary floating point: payments of 0.1 and 0.2 make availableBalance \"0.30000000000000004\"");
        dev("amount-truncated-to-cents", BOTH,
            "spec 2.2 'amount: Amount debited from the payer account'; 2.3, 2.4",
            "amounts are cut to two decimals when stored: a request to pay of 1.005 is recorded, credited and called back as 1.00 (mtn-sandbox: 1)");
        dev("disbursement-balance-environment-400", BOTH,
            "spec 7 rule 3 (500 NOT_ALLOWED_TARGET_ENVIRONMENT on the balance operations); 4.2 #4 shown 500 code",
            "the disbursement balance answers a foreign X-Target-Environment with 400 instead of 500 NOT_ALLOWED_TARGET_ENVIRONMENT; collection and remittance keep 500");
        dev("holder-not-found-404", SPEC_ONLY,
            "spec 4.2 #8 '200: ... false if it is not active or not found' (notes document 404, so spec profile only)",
            "the account holder 46733123450 (not found) answers 404 RESOURCE_NOT_FOUND instead of 200 with active false");
        dev("basic-info-status-boolean", SPEC_ONLY,
            "spec 2.10 'All fields are strings' (status: Account holder status); the mtn-sandbox record has no status field",
            "the basic user information record gives status as the JSON boolean true instead of a string");
        dev("userinfo-booleans-as-strings", BOTH,
            "spec 2.11 'email_verified | boolean', 'phone_number_verified | boolean', 'active | boolean'",
            "user information with consent gives email_verified, phone_number_verified and active as the strings \"true\"/\"false\"");
        dev("userinfo-without-subscription-key", BOTH,
            "spec 4 'The subscription key header Ocp-Apim-Subscription-Key is sent on every operation'; 5.1 'Every operation requires the subscription key'",
            "user information with consent answers 200 without a subscription key or with another product's key; every other operation still answers 401");
        dev("callback-reason-as-object", MTN_ONLY,
            "notes, Callbacks: 'Body: the same record as the status GET' [documented]; status records: reason is a plain string code [observed]",
            "the callback of a FAILED transaction gives reason as {code, message} while the status GET gives the plain string");
        dev("disbursement-errors-without-message", BOTH,
            "spec 2.14 'Error record: code (string enum) and message (string)'; 7 'Error body: { code, message }'",
            "refund and deposit operations (creation and status) answer their 404/409/500 errors with {code} only, without message");
        dev("disbursement-not-found-code", BOTH,
            "spec 7 set B (refund, deposit ...) has no TRANSACTION_NOT_FOUND; notes 'for an unknown UUID -> 404 {code: RESOURCE_NOT_FOUND}' [observed]",
            "the refund and deposit status queries answer an unknown id with 404 code TRANSACTION_NOT_FOUND; the request-to-pay status keeps RESOURCE_NOT_FOUND");
        // ---- second batch (class A: a rule kept on one operation, broken on a sibling)
        dev("refund-status-reads-deposits", BOTH,
            "spec 4.3 #9 'A status query is by GET /refund/{referenceId}'; 4.3 #10 deposit status by GET /deposit/{referenceId}; notes 'for an unknown UUID -> 404 RESOURCE_NOT_FOUND' [observed]",
            "GET /disbursement/v1_0/refund/{id} with the id of one of the caller's deposits answers 200 with the deposit's record (payee, amount, status) instead of 404 (the mirror of deposit-status-reads-refunds, which touches the deposit status only)");
        dev("apiuser-get-requires-authorization", BOTH,
            "spec 4.5 'Sandbox user provisioning (host {sandbox_url}, headers: Ocp-Apim-Subscription-Key)'; 4.5 #16 responses 200/400/404/500 (no 401); notes 'GET /v1_0/apiuser/{id} -> 200 ... it needs only the subscription key' [observed]",
            "GET /v1_0/apiuser/{id} without an Authorization header answers 401 {\"error\":\"access_token_missing\"} (any Authorization value is let through); creating the API user and its key still need only the subscription key");
        dev("collection-holder-email-refused", BOTH,
            "spec 4.2 #8 'accountHolderIdType is one of msisdn, email, party_code ... validated by type: ... e-mail format'; 4.3 #12 same parameters",
            "GET /collection/v1_0/accountholder/email/{valid address}/active answers 400; the disbursement and remittance checks still accept email (a narrow cousin of disbursement-holder-party-code-refused and email-party-refused, which touch other operations)");
        dev("deposit-duplicate-500", BOTH,
            "spec 4.3 #10 'Responses: 202, 400, 409 and 500 as for refund'; 4.3 #9 '409: duplicated reference ID'; 2.5 and 7 rule 1 '409 with RESOURCE_ALREADY_EXIST'",
            "a deposit reusing an existing X-Reference-Id answers 500 INTERNAL_PROCESSING_ERROR (nothing created) instead of 409 RESOURCE_ALREADY_EXIST; requests to pay and refunds still get 409");
        // ---- class B: state that goes wrong later
        dev("apiuser-unreadable-after-key", BOTH,
            "spec 4.5 #16 '404 as above' (only when the reference ID is not found or is closed); 7 rule 2; notes 'GET /v1_0/apiuser/{id} -> 200 {providerCallbackHost, targetEnvironment}' [observed]",
            "once an API key has been created for an API user, GET /v1_0/apiuser/{id} answers 404 RESOURCE_NOT_FOUND (before the key it answers 200); the user's key and tokens keep working");
        dev("auth-req-id-expires-early", BOTH,
            "spec 2.8 'expires_in: Seconds until the authentication request ID expires'; 8 'The consent request ID expires after expires_in seconds'",
            "an auth_req_id is refused with 400 expired_token from 10 s after bc-authorize, although expires_in said 180 (mtn-sandbox 240); a redemption within those 10 s still gets the consent token");
        dev("notification-purges-payment", BOTH,
            "spec 4.2 #3 '429 Too many attempts for the same ID recently. Occurs only after an earlier successful attempt'; 404 only when the 'Reference ID does not exist'; 8; notes 'a second notification for the same reference -> 429' [observed]",
            "after a successful delivery notification (200) the request to pay is deleted: its status query answers 404 RESOURCE_NOT_FOUND and a repeated notification 404 instead of 429 (status-gone-after-callback is the same loss after a callback, not a notification)");
        dev("failed-reason-read-once", MTN_ONLY,
            "notes, Status records: 'FAILED records carry \"reason\" as a plain string code' [observed]",
            "a FAILED transaction's status record carries reason on its first read only; every later status query of it answers the record without reason (the callback keeps it)");
        // ---- class C: inputs
        dev("reference-id-upper-case-refused", BOTH,
            "spec 2.5 / 4.1 X-Reference-Id 'UUID v4'; RFC 9562 4 (hex digits of a UUID are case-insensitive on input)",
            "a request to pay, deposit or refund whose X-Reference-Id is a UUID v4 written with upper-case hex digits is refused with 400; API-user creation still accepts it");
        dev("currency-case-folded", BOTH,
            "spec 2.2-2.4 'currency: ISO 4217 currency code' (three upper-case letters); notes 'The sandbox accepts only EUR; another currency -> 500 INVALID_CURRENCY'",
            "a request to pay, deposit or refund with currency \"eur\" is accepted (202), carried out and recorded as \"EUR\", instead of 400 (spec) or 500 INVALID_CURRENCY (mtn-sandbox); balance paths unchanged");
        dev("external-id-number-accepted", BOTH,
            "spec 2.2 'externalId | string'; 2.3, 2.4; 4.2 #2 and 4.3 #9-10 '400: invalid data'",
            "a request to pay, deposit or refund whose externalId is a JSON number (e.g. 12345) is accepted (202) and recorded as the string \"12345\", instead of 400");
        dev("consent-valid-in-refused", BOTH,
            "spec 4.2 #7 'The parameter consent_valid_in is also accepted'; 2.7 refresh_token_expired_in 'or on the consent_valid_in parameter of the bc-authorize request'",
            "bc-authorize with consent_valid_in (any value, e.g. 600) answers 400; without it bc-authorize still answers 200");
        dev("callback-url-query-refused", BOTH,
            "spec 4.1 'X-Callback-Url | header, optional | URL'; 6 'A caller may give an address in X-Callback-Url on request to pay, refund, deposit and bc-authorize'; RFC 3986 3.4 (a query is part of a URL)",
            "an X-Callback-Url with a query string (http://host:port/cb?order=7) is refused with 400 on request to pay, deposit, refund and bc-authorize; without a query it is accepted");
        // ---- class D: callbacks
        dev("callback-status-lower-case", MTN_ONLY,
            "notes, Callbacks: 'Body: the same record as the status GET' [documented]; status values 'PENDING, SUCCESSFUL, FAILED' [observed]",
            "transaction callbacks give status in lower case (\"successful\", \"failed\") while the status GET of the same transaction gives SUCCESSFUL / FAILED");
        dev("callback-host-case-sensitive", MTN_ONLY,
            "notes, Callbacks: 'The callback URL's host must equal the API user's providerCallbackHost' (host names compare case-insensitively, RFC 3986 3.2.2); 'Without X-Callback-Url the creation always succeeds'",
            "an X-Callback-Url whose host differs from providerCallbackHost only in letter case (http://LOCALHOST:port/cb for localhost) is refused with 500 INVALID_CALLBACK_URL_HOST on request to pay, deposit, refund and bc-authorize");
        dev("basic-auth-payment-no-callback", SPEC_ONLY,
            "spec 6 'A caller may give an address in X-Callback-Url on request to pay ... The service is to send a callback to the server there'; 4.2 #2 'Authorization ... Basic or Bearer' (mtn-sandbox refuses Basic, so spec only)",
            "a request to pay authorised with Basic API-user credentials (accepted, 202) never calls its X-Callback-Url; with a Bearer token the callback still comes");
        dev("callback-port-dropped", BOTH,
            "spec 6 'The service is to send a callback to the server there' (the X-Callback-Url); notes 'Sent to X-Callback-Url when the transaction reaches a final state'",
            "every callback is sent to the X-Callback-Url without its port (http://127.0.0.1:8080/cb is called at http://127.0.0.1/cb, port 80), so a listener on another port never gets it; the creation is still accepted");
        dev("deposit-callback-without-body", MTN_ONLY,
            "notes, Callbacks: 'Body: the same record as the status GET [documented] ... (deposit v1 uses POST)'",
            "the callback of a deposit is a POST with an empty body (Content-Type still JSON); requests to pay and refunds still carry their record");
        // ---- class E: money
        dev("delayed-payment-not-credited", BOTH,
            "spec 2.2 'amount: Amount debited from the payer account'; 1 collection requests a payment from a consumer; 2.9 'availableBalance: Available balance of the account'",
            "a request to pay that becomes SUCCESSFUL more than 5 s after it was accepted (the delayed-approval number 46733123454) is never credited to the collection balance; payments that succeed sooner still are");
        dev("failed-refund-still-debited", BOTH,
            "spec 4.3 #9 'Refunds an amount from the owner's account to a payee account' (a refund that fails moves nothing); 2.9",
            "a refund that ends FAILED (e.g. of a request to pay that does not exist, reason RESOURCE_NOT_FOUND) still debits its amount from the disbursement balance (a narrow cousin of failed-deposit-keeps-money, which touches deposits)");
        dev("ledger-int-overflow", BOTH,
            "spec 2.2 'amount: Amount debited from the payer account'; 2.9 'availableBalance: Available balance of the account'",
            "a successful request to pay credits the collection balance with its whole units wrapped to a 32-bit signed integer: a payment of 3000000000 (its status record still says 3000000000) makes availableBalance \"-1294967296\"");
        dev("refund-negative-amount-accepted", BOTH,
            "spec 4.3 #9 'Refunds an amount from the owner's account to a payee account'; '400: invalid data'; 2.4 amount",
            "a refund with a negative amount (\"-5\") of a successful request to pay is accepted (202), ends SUCCESSFUL and adds 5 to the disbursement balance; requests to pay and deposits still refuse a negative amount with 400");
        // ---- third batch
        dev("apiuser-get-shows-latest-host", BOTH,
            "spec 4.5 #16 'Get API user information' (of the API user named in the path); notes 'GET /v1_0/apiuser/{id} -> 200 {\"providerCallbackHost\":\"...\",\"targetEnvironment\":\"sandbox\"}' [observed]",
            "GET /v1_0/apiuser/{id} gives the providerCallbackHost of the most recently created API user (of any product), not of the API user asked for; the callback-host check still uses the user's own host");
        dev("apiuser-duplicate-400", BOTH,
            "spec 4.5 #14 '409 duplicated reference ID, code RESOURCE_ALREADY_EXIST'; 7 rule 1 and set C",
            "creating an API user with an X-Reference-Id already in use answers 400 (spec: a text/plain line, mtn-sandbox: empty) instead of 409 RESOURCE_ALREADY_EXIST; nothing is changed; transactions still get 409 for a reused id");
        dev("token-accepts-other-users-key", BOTH,
            "spec 5.2 'The credential is the API user ID and API key, base64-encoded' (the key of that API user); 4.2 #1 '401: { error }' (notes: 500 login_failed)",
            "POST /{product}/token/ issues a token for API user A when the Basic credential carries A's id with the API key of another API user of the same product (keys are looked up per product, not per user); a key nobody holds is still refused (a narrow cousin of token-wrong-api-key-accepted and token-key-not-checked, which take any key)");
        dev("token-type-bearer-off-collection", MTN_ONLY,
            "notes, Provisioning and tokens: 'POST /{product}/token/ -> 200 {... \"token_type\":\"access_token\" ...} [observed] (token_type is literally \"access_token\")'",
            "the access-token records of /disbursement/token/ and /remittance/token/ say token_type \"Bearer\"; /collection/token/ keeps \"access_token\"");
        dev("slow-down-at-interval", BOTH,
            "spec 2.8 'interval: How long the client waits between retries to the consent token endpoint'; 5.4 'the client waits interval between retries'; OpenID CIBA Core 11 (slow_down only when the client polls faster than interval) and 7.3",
            "the CIBA token operation answers 400 slow_down to a poll that comes less than interval + 2 s after the previous poll of the same auth_req_id, so a client that waits exactly interval gets slow_down (also once the holder has approved); waiting 5 s more gets through; interval is not raised");
        dev("userinfo-sub-changes-after-refresh", BOTH,
            "spec 2.11 'sub: Identifier of the end user at the issuer'; OIDC Core 5.1 / 8 (sub is stable: locally unique and never reassigned); notes userinfo sub \"0\" [observed]",
            "user information opened with a consent token obtained by the refresh_token grant gives another sub (the refresh token's UUID) than the same holder's consent token from the CIBA grant");
        dev("consent-token-cached-per-client", BOTH,
            "spec 2.7 consent token record / 4.3 #11 (the token is for the auth_req_id redeemed: 'Scopes that belong to the authentication request ID'); 5.4",
            "the CIBA grant returns, while the API user's previous consent access token still lives, that previous token record again (same access_token, scope and refresh_token): redeeming a second auth_req_id for another holder opens the first holder's user information");
        dev("refresh-grant-requires-auth-req-id", BOTH,
            "RFC 6749 6 (a refresh request carries grant_type=refresh_token and refresh_token, scope optional); spec 2.7 'refresh_token: UUID of the refresh token', 5.4 'plus a refresh token'",
            "the refresh_token grant without an auth_req_id parameter answers 400 invalid_request; with any auth_req_id value added (even an unknown one) the refresh works");
        dev("payment-duplicate-race", BOTH,
            "spec 2.5 'A request that reuses an existing reference ID is rejected with 409 and code RESOURCE_ALREADY_EXIST'; 7 rule 1; 4.2 #2 '409'",
            "the request-to-pay duplicate check and the insert are 300 ms apart with the store unlocked: two requests with the same X-Reference-Id sent together both get 202 and both are carried out (both credited; the status shows the later); a reuse after the first answer still gets 409");
        dev("payment-id-scoped-per-user", BOTH,
            "spec 2.5 'A request that reuses an existing reference ID is rejected with 409'; 7 rule 1; 4.2 #2 '409: duplicated reference ID'",
            "a request to pay whose X-Reference-Id is already used by another API user's request to pay is accepted (202) and kept apart (each API user reads its own); reuse by the same API user still gets 409 (a narrow cousin of payment-reference-reused, which takes any reuse)");
        dev("notification-third-attempt-accepted", BOTH,
            "spec 4.2 #3 '429 Too many attempts for the same ID recently'; 8 'repeated attempts for the same ID give 429, but only after a successful attempt'; notes 'a second notification for the same reference -> 429' [observed]",
            "the 429 branch clears the cooldown: after an accepted delivery notification the second attempt gets 429, but a third one right after is enqueued (200) and starts the cooldown again");
        dev("notification-sent-to-callback-url", BOTH,
            "spec 6 'The delivery notification operation enqueues a notification to the end user' (callbacks report the transaction); notes, Callbacks: 'Body: the same record as the status GET' [documented], 'Sent ... when the transaction reaches a final state'",
            "an accepted delivery notification is also POSTed to the payment's X-Callback-Url with the body {\"notificationMessage\": ...}, a callback whose body is not the transaction record, after the payment's real callback");
        dev("disbursement-holder-wants-collection-token", BOTH,
            "spec 4.3 #12 'Same parameters, headers and semantics as collection endpoint 8'; 5.3 (Bearer access token of the caller's product); notes 'An API user works only with the product (subscription key) it was provisioned under' [observed]",
            "GET /disbursement/v1_0/accountholder/{type}/{id}/active refuses a disbursement access token with 401 {\"error\":\"access_token_of_another_product\"} and accepts a collection access token instead; the collection check is right");
        dev("disbursement-holder-result-renamed", MTN_ONLY,
            "notes, Other operations: 'Account holder active -> 200 {\"result\":true}' [observed]; spec 4.3 #12 same semantics as #8",
            "the disbursement account-holder check answers {\"active\":true} instead of {\"result\":true}; the collection check keeps {\"result\":true}");
        dev("currency-balance-never-updated", BOTH,
            "spec 4.2 #4 'Get account balance in a specific currency'; 2.9 'availableBalance: Available balance of the account'",
            "GET /{product}/v1_0/account/balance/{currency} always gives the opening balance (collection \"0\", disbursement \"1000000\"), whatever payments, deposits and refunds completed; GET .../account/balance is right");
        dev("refund-debits-running-total", BOTH,
            "spec 4.3 #9 'Refunds an amount from the owner's account to a payee account'; 2.4 amount (the refund's own amount); 2.9 'availableBalance: Available balance of the account'",
            "a successful refund debits the disbursement balance by the total of all successful refunds of the same request to pay so far, its own included: refunds of 4 and then 2 of one payment take 4 and then 6 (10 in all); a first refund is right");
        dev("refund-target-id-not-validated", BOTH,
            "spec 2.4 'referenceIdToRefund | string (UUID)'; 4.3 #9 '400: invalid data'",
            "a refund whose referenceIdToRefund is not a UUID (e.g. \"order-17\") is accepted (202) and ends FAILED RESOURCE_NOT_FOUND instead of 400");
        dev("refund-relabels-payment", BOTH,
            "spec 3 (a request to pay is PENDING until the payer answers, then final; delivery notification 'allowed only for a successfully completed transaction'); notes 'Status values: PENDING, SUCCESSFUL, FAILED [observed]'",
            "once a refund of a request to pay succeeds, that request to pay's status record reads status \"REFUNDED\" instead of SUCCESSFUL, a delivery notification for it answers 409, and a further refund of it fails PAYMENT_NOT_APPROVED");
        dev("refund-callback-host-plain-400", BOTH,
            "spec 6 'A callback host that the service rejects gives code INVALID_CALLBACK_URL_HOST'; notes '... the creation POST fails with 500 {\"code\":\"INVALID_CALLBACK_URL_HOST\",...}' [observed]",
            "a refund whose X-Callback-Url is on a host other than providerCallbackHost is refused with 400 without the code (spec: a text/plain line, mtn-sandbox: empty body); requests to pay and deposits still answer 500 INVALID_CALLBACK_URL_HOST");
        dev("deposit-funds-checked-at-acceptance", BOTH,
            "spec 4.3 #10 'Deposits an amount from the owner's account'; 7 set B NOT_ENOUGH_FUNDS; 2.9 'availableBalance: Available balance of the account'",
            "a deposit's NOT_ENOUGH_FUNDS check uses the balance read when it was accepted, ignoring deposits completed in between: two deposits of 600000 accepted together from 1000000 both succeed and availableBalance reads \"-200000\" (in mtn-sandbox deposits overlap only when the payee answers late, e.g. 46733123454)");
        dev("remittance-env-error-gateway-shape", BOTH,
            "spec 4.4 #13 '500: error { code, message }'; 7 rule 3 '500 with NOT_ALLOWED_TARGET_ENVIRONMENT on the balance ... operations'",
            "the remittance balance answers a foreign X-Target-Environment with 500 {\"statusCode\":500,\"message\":...} (the gateway shape) without code NOT_ALLOWED_TARGET_ENVIRONMENT; collection and disbursement keep {code, message}");
        dev("empty-party-500", BOTH,
            "spec 2.1 (partyIdType and partyId are required); 4.2 #2 and 4.3 #10 '400: invalid data'; notes 'Empty payer:{} -> 500 in the live service [observed] (a server bug the harness should flag)'",
            "a request to pay with \"payer\": {} or a deposit with \"payee\": {} answers 500 INTERNAL_PROCESSING_ERROR instead of 400; a party with one field missing still gets 400");
        dev("callback-retry-without-body", MTN_ONLY,
            "notes, Callbacks: 'Body: the same record as the status GET' [documented]; retries [uncertain]",
            "a callback retried after a non-2xx answer (or a timeout) is sent with an empty body (the body was consumed by the first attempt); the first attempt carries the record");
        dev("rtp-status-bad-id-500", MTN_ONLY,
            "notes, Status records: 'A status GET for a non-UUID reference -> 400; for an unknown UUID -> 404' [observed]",
            "GET /collection/v1_0/requesttopay/{id} with an id that is not a UUID (e.g. not-a-uuid) answers 500 INTERNAL_PROCESSING_ERROR instead of 400; the refund and deposit status queries still answer 400 (a narrow cousin of disbursement-status-bad-id-404, which touches those two with 404)");
        dev("refreshed-refresh-token-unknown", BOTH,
            "spec 2.7 'refresh_token: UUID of the refresh token', 'refresh_token_expired_in: Seconds until the consent can no longer be refreshed'; 8; RFC 6749 6 (a new refresh token issued replaces the old one)",
            "the refresh token returned by a refresh_token grant is never stored: using it answers 400 invalid_grant although the consent lasts; the refresh token from the CIBA grant keeps working");
        // fourth batch
        dev("ongoing-number-times-out-early", MTN_ONLY,
            "notes, Sandbox test numbers: '46733123453 | stays PENDING (ongoing) for a long time [observed > 40 s]'",
            "a request to pay, deposit or refund whose party is 46733123453 ends FAILED with reason EXPIRED 10 s after creation instead of staying PENDING for a long time; 46733123454 still succeeds after its delay");
        dev("test-outcome-consumed-once", MTN_ONLY,
            "notes, Sandbox test numbers: 46733123450 FAILED INTERNAL_PROCESSING_ERROR at once [observed], 46733123451 FAILED APPROVAL_REJECTED, 46733123452 FAILED EXPIRED [observed FAILED] (the outcome of the number, each time it is used)",
            "the failing test numbers 46733123450, ...451 and ...452 fail only the first request to pay of each API user that names them: a second request to pay from the same number ends SUCCESSFUL at once");
        dev("email-party-id-lower-cased", MTN_ONLY,
            "notes, Status records: 'partyId comes back exactly as sent' [observed]; notes, Callbacks: 'Body: the same record as the status GET' [documented]",
            "a payer or payee of type EMAIL comes back lower-cased in status records and callbacks (Ann.Lee@Example.com -> ann.lee@example.com); MSISDN party ids still come back as sent");
        dev("notification-cooldown-before-owner-check", BOTH,
            "spec 4.2 #3 '404 | Reference ID does not exist, or the caller does not own the financial transaction'; '429 | Too many attempts for the same ID recently. Occurs only after an earlier successful attempt'; 8",
            "while a payment is in its 429 period after its owner's accepted delivery notification, a delivery notification for it from another API user answers 429 instead of 404 (the other API user learns it exists); outside the 429 period the other API user still gets 404");
        dev("notification-needs-status-read", BOTH,
            "spec 4.2 #3 '200 | Notification successfully enqueued', '409 | The transaction is not successfully completed'; 3 'Delivery notification is allowed only for a successfully completed transaction'",
            "a delivery notification for a SUCCESSFUL request to pay answers 409 TRANSACTION_NOT_COMPLETED until that payment's status has been read once with GET /requesttopay/{id} (a client that learnt the outcome from the callback is refused); after one status read it is enqueued (200)");
        dev("callback-host-checked-against-latest-user", MTN_ONLY,
            "notes, Callbacks: 'The callback URL's host must equal the API user's providerCallbackHost; otherwise the creation POST fails with 500 {\"code\":\"INVALID_CALLBACK_URL_HOST\",...}' [observed]",
            "the X-Callback-Url host (requests to pay, deposits, refunds, bc-authorize) is compared with the providerCallbackHost of the most recently created API user of any product, not the caller's: once another API user with another host exists, the caller's own host is refused with 500 INVALID_CALLBACK_URL_HOST and the other user's host is accepted");
        dev("identical-retry-accepted", BOTH,
            "spec 2.5 'A request that reuses an existing reference ID is rejected with 409 and code RESOURCE_ALREADY_EXIST'; 7 rule 1; 4.2 #2 and 4.3 #9-10 '409'",
            "a request to pay, deposit or refund that repeats an earlier one of the same API user exactly (same X-Reference-Id, byte-identical body) answers 202 and creates nothing (the first transaction stays as it was); a reuse with another body still gets 409 (a narrow cousin of payment-reference-reused and deposit-id-reused, which accept and carry out any reuse)");
        dev("apikey-second-409", BOTH,
            "spec 4.5 #15 'Create an API key for the API user ... Responses: 201 with { apiKey }; 400; 404 ...; 500' (no 409); 7 rule 1 (409 is for a reused X-Reference-Id on a creation); notes 'POST /v1_0/apiuser/{id}/apikey -> 201 {\"apiKey\":...}' [observed]",
            "a second POST /v1_0/apiuser/{id}/apikey for an API user that already has a key answers 409 RESOURCE_ALREADY_EXIST instead of 201 with a new key; the first key keeps working");
        dev("refresh-grant-cacheable", BOTH,
            "RFC 6749 5.1 (a response with tokens MUST carry Cache-Control: no-store); spec 4.3 #11 'Create OAuth 2.0 token' and 2.7 (the answer carries access_token and refresh_token); notes (token answers carry cache-control: no-store)",
            "the OAuth 2.0 token operation answers the refresh_token grant without Cache-Control: no-store; the CIBA grant and POST /{product}/token/ keep it (a narrow cousin of token-cacheable, which is on /token/)");
        dev("userinfo-updated-at-iso-string", BOTH,
            "spec 2.11 'updated_at | number | Time the information was last updated'; notes basic user info '\"updated_at\":1678355127' [observed], 'userinfo -> the same Sand Box style record' [observed]",
            "user information with consent gives updated_at as the string \"2023-03-09T09:45:27Z\" instead of the number 1678355127 (basic user information keeps the number in mtn-sandbox)");
        dev("userinfo-sub-per-client", SPEC_ONLY,
            "spec 2.11 'sub | string | Identifier of the end user at the issuer'; OIDC Core 2 and 5.1 (sub identifies the end user) (the notes observe sub \"0\" for everyone, so spec only)",
            "user information with consent derives sub from the API user alone: the consents of two different account holders given to one API user show the same sub (their phone numbers still differ)");
        dev("refresh-grant-unauthenticated", BOTH,
            "spec 4.3 #11 'Headers: Authorization (Basic, API user ID and API key, base64-encoded)'; 5.2 'Token creation (collection token, and the OAuth 2.0 token operation) uses HTTP Basic authentication'; RFC 6749 6 (a client with credentials MUST authenticate when it refreshes)",
            "the refresh_token grant without any Authorization header issues a consent token (200) to whoever holds the refresh token; a wrong Basic credential is still refused 401 invalid_client, and the CIBA grant still needs Basic (a cousin of refresh-token-any-user, where another authenticated API user redeems it)");
        dev("callback-body-from-latest-completion", MTN_ONLY,
            "notes, Callbacks: 'Sent to X-Callback-Url when the transaction reaches a final state [documented]. Body: the same record as the status GET [documented]'",
            "a callback is built 1 s after its transaction becomes final, from the record of the API user's most recently finished transaction: when two transactions of one API user finish within 1 s (e.g. two requests to pay sent back to back) the first one's callback carries the second one's record (amount, externalId, payer, texts); status GETs are right");
        dev("consent-ping-before-decision", BOTH,
            "spec 6 (a callback for bc-authorize) and 5.4 (the consent token follows the holder's consent); OpenID CIBA Core 10.2 (in ping mode the OP calls the client notification endpoint after the end-user authentication is done, and the client then redeems the auth_req_id)",
            "the bc-authorize callback {auth_req_id} is sent at once when the consent request is accepted, before the account holder has answered: a client that redeems on the ping gets authorization_pending, and no callback follows the holder's answer");
        dev("refund-of-deposit-accepted", BOTH,
            "spec 2.4 'referenceIdToRefund | string (UUID) | Identifies the earlier request-to-pay transaction that is refunded'; 4.3 #9",
            "a refund whose referenceIdToRefund is the X-Reference-Id of one of the caller's SUCCESSFUL deposits (not a request to pay) ends SUCCESSFUL, debits the disbursement balance and names the deposit's payee; an id of no transaction still ends FAILED RESOURCE_NOT_FOUND");
        dev("apiuser-environment-from-request", MTN_ONLY,
            "notes, Provisioning and tokens: 'GET /v1_0/apiuser/{id} -> 200 {\"providerCallbackHost\":\"...\",\"targetEnvironment\":\"sandbox\"} [observed]; it needs only the subscription key'",
            "GET /v1_0/apiuser/{id} copies targetEnvironment from the request's X-Target-Environment header: a request with only the subscription key (as observed) gets a record without targetEnvironment, one with X-Target-Environment: other gets \"other\"");
        dev("refund-reversal-credits-payment-account", BOTH,
            "spec 4.3 #9 'Refunds an amount from the owner's account to a payee account'; 2.2 (the request to pay credited the payee once); 2.9 'availableBalance: Available balance of the account'",
            "a successful refund, besides debiting the refunder's disbursement balance, credits its amount to the collection balance of the API user whose request to pay it refunds (a reversal entry with the wrong sign): a payment of 10 refunded by 4 leaves that collection balance at 14");
        dev("refund-target-keyed-409", BOTH,
            "spec 2.5 and 7 rule 1 (409 RESOURCE_ALREADY_EXIST is for a reused reference ID); 4.3 #9 '409: duplicated reference ID'; 2.4 'The new refund's own ID travels in the X-Reference-Id header'",
            "a refund with a fresh X-Reference-Id whose referenceIdToRefund is already named by an earlier refund answers 409 RESOURCE_ALREADY_EXIST (the duplicate check keys on referenceIdToRefund): a second partial refund of a payment is refused and not created");
        dev("invalid-token-403", BOTH,
            "spec 7 '401 | Unauthorized; body { error }'; 5.3 (Bearer access token on business operations); notes 'Expired or invalid bearer token -> 401 [documented]; clients refresh the token and retry'",
            "a Bearer credential that is not a valid access token (bad signature, unknown, garbage) on a business operation answers 403 {\"error\":\"access_token_not_valid\"} instead of 401; a missing Authorization header and an expired token still get 401");
        dev("deposit-record-external-id-missing", MTN_ONLY,
            "notes, Status records: 'refund and deposit use payee instead of payer' [observed] (the rest as the requesttopay record, which carries externalId); Callbacks: 'Body: the same record as the status GET'",
            "the deposit status record and the deposit callback leave out the externalId the deposit was sent with; request-to-pay and refund records keep it");
        dev("holder-answer-cached-per-user", BOTH,
            "spec 4.2 #8 and 4.3 #12 '200: true if the account holder is registered and active; false if it is not active or not found' (of the holder in the path); notes 'Account-holder active ... returns true for ordinary numbers' [observed], '...450 -> 404 RESOURCE_NOT_FOUND' [documented]",
            "the account-holder check caches its answer for 10 s per API user and product, not per holder: after a check of 46733123450 (spec: {\"active\":false}; mtn-sandbox: 404), a check of an ordinary active number within 10 s gets that same answer");
        dev("deposit-currency-code-not-allowed", BOTH,
            "spec 4.3 #10 'Responses: 202, 400, 409 and 500 as for refund', #9 '500: internal error (the shown case is code INVALID_CURRENCY)'; notes 'The sandbox accepts only EUR; another currency -> 500 INVALID_CURRENCY (\"Currency not supported.\")' [observed]",
            "a deposit in a currency the service does not take answers 500 with code NOT_ALLOWED instead of INVALID_CURRENCY; requests to pay and refunds keep INVALID_CURRENCY");
        dev("auth-req-id-from-clock", BOTH,
            "spec 2.8 'auth_req_id | string (UUID) | Authentication request ID'; OpenID CIBA Core 7.3 (auth_req_id is a unique identifier of the authentication request)",
            "the auth_req_id is made from the API user and the current second: two bc-authorize requests of one API user within the same second get the same auth_req_id, and the later one (its holder and scope) replaces the earlier");
        dev("scope-requires-openid", MTN_ONLY,
            "notes, Other operations: 'bc-authorize: form body login_hint=ID:46733123450/MSISDN&scope=profile&access_type=offline; scopes seen: profile, all_info, openid' [observed]",
            "bc-authorize refuses a scope without openid (scope=profile, as observed, or all_info) with 400 MISSING_SCOPE_INSTRUCTION; a scope containing openid is accepted");
    }
    private static void dev(String name, String profiles, String clause, String effect) {
        DEVIATIONS.put(name, new Deviation(name, profiles, clause, effect));
    }

    public static final class BadOption extends Exception {
        public BadOption(String m) { super(m); }
    }

    public boolean on(String control) { return controls.contains(control); }
    /** Whether a deliberate deviation is switched on. */
    public boolean dev(String deviation) { return deviations.contains(deviation); }
    public boolean spec() { return profile == Profile.SPEC; }
    public boolean mtn() { return profile == Profile.MTN; }
    public String profileName() { return spec() ? "spec" : "mtn-sandbox"; }

    public static Config parse(String[] args) throws BadOption {
        Config c = new Config();
        c.keys.put("collection", "collection-key");
        c.keys.put("disbursement", "disbursement-key");
        c.keys.put("remittance", "remittance-key");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String val = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) { val = a.substring(eq + 1); a = a.substring(0, eq); }
            if (a.equals("--list-controls")) {
                if (val != null) throw new BadOption("--list-controls takes no value");
                c.listControls = true;
                continue;
            }
            if (a.equals("--list-deviations")) {
                if (val != null) throw new BadOption("--list-deviations takes no value");
                c.listDeviations = true;
                continue;
            }
            if (!a.equals("--port") && !a.equals("--profile") && !a.equals("--keys") && !a.equals("--target-environment")
                && !a.equals("--currency") && !a.equals("--token-lifetime") && !a.equals("--delayed-approval-seconds")
                && !a.equals("--pending-timeout-seconds") && !a.equals("--control") && !a.equals("--deviation"))
                throw new BadOption("unknown option '" + a + "' (options: --port, --profile, --keys, --target-environment, --currency, --token-lifetime, --delayed-approval-seconds, --pending-timeout-seconds, --control, --list-controls, --deviation, --list-deviations)");
            if (val == null) {
                if (i + 1 >= args.length) throw new BadOption(a + " needs a value");
                val = args[++i];
            }
            switch (a) {
                case "--port": {
                    int p;
                    try { p = Integer.parseInt(val); } catch (NumberFormatException e) { throw new BadOption("--port must be an integer 0-65535, got '" + val + "'"); }
                    if (p < 0 || p > 65535) throw new BadOption("--port must be an integer 0-65535, got '" + val + "'");
                    c.port = p; break;
                }
                case "--profile":
                    if (val.equals("spec")) c.profile = Profile.SPEC;
                    else if (val.equals("mtn-sandbox")) c.profile = Profile.MTN;
                    else throw new BadOption("--profile must be 'spec' or 'mtn-sandbox', got '" + val + "'");
                    break;
                case "--keys":
                    if (val.isEmpty()) throw new BadOption("--keys must look like collection=K1,disbursement=K2,remittance=K3");
                    for (String part : val.split(",", -1)) {
                        int e = part.indexOf('=');
                        if (e <= 0) throw new BadOption("--keys entry '" + part + "' must be product=key (collection=K1,disbursement=K2,remittance=K3)");
                        String prod = part.substring(0, e).trim(), key = part.substring(e + 1);
                        if (!c.keys.containsKey(prod)) throw new BadOption("--keys: unknown product '" + prod + "' (use collection, disbursement, remittance)");
                        if (key.isEmpty() || !key.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) throw new BadOption("--keys: key for " + prod + " must be non-empty visible ASCII");
                        c.keys.put(prod, key);
                    }
                    break;
                case "--target-environment":
                    if (!val.matches("[A-Za-z0-9._-]{1,64}")) throw new BadOption("--target-environment must be 1-64 letters, digits, '.', '_' or '-', got '" + val + "'");
                    c.targetEnvironment = val; break;
                case "--currency":
                    if (!val.matches("[A-Z]{3}")) throw new BadOption("--currency must be an ISO 4217 code of three upper-case letters, got '" + val + "'");
                    c.currency = val; break;
                case "--token-lifetime": {
                    long t;
                    try { t = Long.parseLong(val); } catch (NumberFormatException e) { throw new BadOption("--token-lifetime must be a whole number of seconds >= 1, got '" + val + "'"); }
                    if (t < 1 || t > 315360000L) throw new BadOption("--token-lifetime must be a whole number of seconds >= 1, got '" + val + "'");
                    c.tokenLifetime = t; break;
                }
                case "--delayed-approval-seconds":
                    c.delayedApprovalSeconds = seconds(a, val, true); break;
                case "--pending-timeout-seconds":
                    c.pendingTimeoutSeconds = seconds(a, val, false); break;
                case "--control":
                    for (String n : val.split(",", -1)) {
                        n = n.trim();
                        if (!CONTROLS.containsKey(n)) throw new BadOption("--control: unknown control '" + n + "' (see --list-controls)");
                        c.controls.add(n);
                    }
                    break;
                case "--deviation":
                    for (String n : val.split(",", -1)) {
                        n = n.trim();
                        if (!DEVIATIONS.containsKey(n)) throw new BadOption("--deviation: unknown deviation '" + n + "' (see --list-deviations)");
                        c.deviations.add(n);
                    }
                    break;
                default: throw new BadOption("unknown option '" + a + "'");
            }
        }
        if (new LinkedHashSet<>(c.keys.values()).size() != c.keys.size())
            throw new BadOption("--keys: each product needs its own key (two products share one)");
        if (!c.listControls && c.mtn())
            for (String n : c.controls)
                if (!CONTROLS.get(n).mtnLegal) throw new BadOption("--control " + n + " is legal only with --profile spec");
        return c;
    }

    private static double seconds(String opt, String val, boolean zeroOk) throws BadOption {
        double d;
        try { d = Double.parseDouble(val); } catch (NumberFormatException e) { d = Double.NaN; }
        if (Double.isNaN(d) || Double.isInfinite(d) || d < 0 || (!zeroOk && d == 0) || d > 86400 * 30 || !val.matches("[0-9]+(\\.[0-9]+)?"))
            throw new BadOption(opt + " must be a number of seconds " + (zeroOk ? ">= 0" : "> 0") + ", got '" + val + "'");
        return d;
    }

    public String productOfKey(String key) {
        if (key == null) return null;
        for (Map.Entry<String, String> e : keys.entrySet()) if (e.getValue().equals(key)) return e.getKey();
        return null;
    }
}
