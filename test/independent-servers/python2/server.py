#!/usr/bin/env python3
"""Independent MoMo Open API server (Python 3 standard library only).

Written from momo-api-spec.md and real-api-notes.md alone.  See README.md for
every open-point choice, the controls and the deviations.
"""
import argparse
import base64
import hashlib
import hmac
import heapq
import itertools
import json
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PRODUCTS = ("collection", "disbursement", "remittance")
TARGET_ENV = "sandbox"
CIBA_GRANT = "urn:openid:params:grant-type:ciba"

# --------------------------------------------------------------------------
# Switches
# --------------------------------------------------------------------------
BOTH = ("spec", "mtn-sandbox")
SPEC = ("spec",)
MTN = ("mtn-sandbox",)

CONTROLS = [
    ("callback-retry-until-2xx", BOTH,
     "spec 6 'Callback ... timing, retries: not shown'; notes Callbacks 'Retry policy ... [uncertain: make it a setting]'",
     "a callback that does not get a 2xx (or times out after 2 s) is retried at 0.5,1,2,4,8... s until a 2xx, at most 10 attempts (default: spec 3 attempts, mtn-sandbox 1 attempt)"),
    ("callback-put", SPEC,
     "spec 6 'Callback payload, timing, retries ... not shown' (method open)",
     "callbacks of request to pay, refund and deposit are sent with PUT instead of the spec-profile default POST"),
    ("amount-max-2-decimals", BOTH,
     "spec 8 'Amount and string-length bounds: not shown'",
     "an amount with more than 2 decimal places is refused with 400 (default: any number of decimals accepted)"),
    ("no-partial-refunds", BOTH,
     "spec 2.4 refund amount / 8 bounds not shown (partial refunds open)",
     "a refund must be for the whole original amount; any other amount ends FAILED with reason NOT_ALLOWED (default: partial refunds allowed up to the unrefunded remainder)"),
    ("shared-balance", SPEC,
     "spec 2.9 balance record 'Available balance of the account' (whose account is open)",
     "one balance per product subscription shared by all its API users (default: one account per API user and product)"),
    ("consent-interval-long", BOTH,
     "spec 2.8 'interval ... How long the client waits between retries' (value open)",
     "bc-authorize answers interval 10 instead of the default (spec 2, mtn-sandbox 5)"),
    ("token-grace", BOTH,
     "spec 2.6 expires_in 'Validity of the token in seconds' (tolerance after expiry open; RFC 7519 4.1.4 allows a small leeway)",
     "access and consent tokens are still accepted up to 1 second after expiry (default: refused as soon as expires_in has elapsed)"),
    ("delivery-window-short", BOTH,
     "spec 8 'Duration of the delivery-notification window ... not shown'",
     "the delivery-notification opportunity ends 10 s after the transaction became SUCCESSFUL, then 410 (default 86400 s)"),
    ("status-extra-fields", SPEC,
     "spec 2.5 'Fields of the transaction status record ...: not shown'",
     "status records and callbacks also carry referenceId, createdAt, updatedAt (and referenceIdToRefund for refunds)"),
    ("errors-french", SPEC,
     "spec 2.14 error record 'message (string)' (text open)",
     "error messages are written in French; codes are unchanged"),
    ("accepted-body", SPEC,
     "spec 4.2.2 / 4.3.9 '202: accepted, no body described'",
     "202 answers carry a JSON body {referenceId,status:PENDING} (default: empty body)"),
    ("content-type-charset", BOTH,
     "spec 4.1 Content-Type 'media type of the body' (parameters open)",
     "JSON answers are labelled 'application/json; charset=utf-8' instead of 'application/json'"),
    # ---- controls added in the seventh round ------------------------------------------
    ("notification-cooldown-3s", SPEC,
     "spec 4.2 #3 '429 | Too many attempts for the same ID recently'; 8 'Rate limit thresholds: not shown' (how long 'recently' lasts is open; the notes observe 429 for a second notification, so spec only)",
     "after an accepted delivery notification, repeats for the same payment get 429 for 3 s only; a repeat sent later is enqueued again (200) and starts a new 3 s period (default in spec: 300 s)"),
    ("userinfo-claims-by-scope", SPEC,
     "spec 2.11 lists the claims without tying them to scopes, 5.7 'Allowed scope values: not shown'; OIDC Core 5.4 (a scope requests a set of claims, and claims not granted are left out; sub is always returned) (the notes observe one fixed Sand Box record, so spec only)",
     "user information with consent returns only the claims the consent's scope grants: sub always; the profile claims (name, given_name, family_name, middle_name, gender, locale, birthdate, updated_at) for profile; every claim of 2.11 for all_info; scope openid alone gives {sub} only (default: every claim of 2.11 whatever the scope)"),
    ("basic-auth-on-request-to-pay", SPEC,
     "spec 4.2 #2 'Authorization (optional in the listing; Basic or Bearer)'; 5.3 'The Authorization header of the business operations follows the Basic and Bearer standards' (the live service documents Bearer only, so spec only)",
     "POST /collection/v1_0/requesttopay also accepts Basic credentials of a collection API user (its id and API key) and creates the payment for that user, as with its Bearer token; a wrong key gets 401 {error:login_failed} (default in spec: 401 for Basic)"),
    ("refund-target-checked-at-creation", BOTH,
     "spec 4.3 #9 '202: accepted. 400: invalid data'; 2.4 referenceIdToRefund 'Identifies the earlier request-to-pay transaction that is refunded'; 7 rule 5 'Which code accompanies which status on each operation ... not shown', set B has RESOURCE_NOT_FOUND; notes silent on refunds of unknown payments",
     "a refund whose referenceIdToRefund names no request to pay is refused at once with 400 (spec: {code:RESOURCE_NOT_FOUND,message}, mtn-sandbox: empty body) and nothing is created, so its X-Reference-Id stays free (default: 202, then FAILED RESOURCE_NOT_FOUND)"),
    ("second-currency-usd", SPEC,
     "spec 2.2-2.4 'currency: ISO 4217 currency code' and 4.2 #4 (which currencies the service takes is not given; the notes observe EUR only in the live sandbox, so spec only)",
     "the service takes USD as well as EUR: requests to pay, deposits and refunds in USD are accepted and carried out, and each API user has a separate USD account per product (GET .../account/balance/USD; collection opens at 0, disbursement at 1000000); other currencies still get 500 INVALID_CURRENCY (default: EUR only)"),
    ("refund-window-10s", BOTH,
     "spec 2.4 and 4.3 #9 set no period within which a request to pay may be refunded; 7 set B has NOT_ALLOWED; notes silent",
     "a refund of a request to pay that became SUCCESSFUL more than 10 s before the refund arrives is accepted (202) and ends FAILED with reason NOT_ALLOWED; refunds within 10 s work as before (default: no time limit)"),
]

DEVIATIONS = [
    ("apiuser-duplicate-201", BOTH,
     "spec 4.5.14 / 7 rule 1: duplicated API user reference ID -> 409 RESOURCE_ALREADY_EXIST",
     "POST /v1_0/apiuser with an existing X-Reference-Id answers 201 and overwrites providerCallbackHost"),
    ("apiuser-non-uuid-accepted", BOTH,
     "spec 4.5.14 'X-Reference-Id (UUID v4 required)'; 4.5.15/16 400 for a non-UUID path id",
     "any non-empty string is accepted as API user id on create, apikey and read"),
    ("token-expiry-ignored", BOTH,
     "spec 2.6 expires_in / 5.3 'its validity in seconds (expires_in)'",
     "access tokens are never checked for expiry; expired tokens keep working"),
    ("token-failure-500-in-spec", SPEC,
     "spec 4.2.1 '401: { error }' and 7 rule 4 'A failed token request ... gives 401'",
     "wrong API user/key on /{product}/token/ answers 500 {error:login_failed} (the live-sandbox behaviour leaking into the spec profile)"),
    ("token-key-not-checked", BOTH,
     "spec 5.2 'The credential is the API user ID and API key'",
     "/{product}/token/ issues a token for any known API user whatever API key is sent"),
    ("rtp-duplicate-overwrites", BOTH,
     "spec 2.5 / 4.2.2 / 7 rule 1: reused X-Reference-Id -> 409 RESOURCE_ALREADY_EXIST",
     "a request to pay reusing an existing reference id answers 202 and replaces the earlier transaction"),
    ("refused-id-reserved", BOTH,
     "spec 2.5 (409 only for an EXISTING reference id) and notes 'no transaction is created [observed]' on a refused creation",
     "the X-Reference-Id of a creation refused with 400/500 is remembered, so the corrected retry gets 409"),
    ("duplicate-code-typo", BOTH,
     "spec 2.5 / 7 rule 1 code RESOURCE_ALREADY_EXIST",
     "duplicate reference ids on transactions and API users answer 409 with code RESOURCE_ALREADY_EXISTS (trailing S)"),
    ("callback-missing-on-failed", BOTH,
     "spec 6 'The service is to send a callback'; notes 'Sent to X-Callback-Url when the transaction reaches a final state [documented]'",
     "no callback is sent when a transaction ends FAILED (SUCCESSFUL ones still get theirs)"),
    ("callback-pending-first", MTN,
     "notes Callbacks: sent 'when the transaction reaches a final state', body 'the same record as the status GET' [documented]",
     "an extra callback with the PENDING record is sent right after creation, before the final one"),
    ("callback-drops-path", BOTH,
     "spec 6 'send a callback to the server there' (the address in X-Callback-Url)",
     "callbacks go to scheme://host:port/ of X-Callback-Url; its path and query are dropped"),
    ("delayed-outcome-no-callback", BOTH,
     "spec 6 callback for every transaction given an X-Callback-Url; notes 'when the transaction reaches a final state'",
     "transactions that reach their final state later (delayed approval, pending timeout) never get a callback"),
    ("failed-reason-missing", MTN,
     "notes Status records 'FAILED records carry \"reason\" as a plain string code [observed]'",
     "FAILED status records and callbacks have no reason field"),
    ("refund-unknown-reference-successful", BOTH,
     "spec 2.4 referenceIdToRefund 'Identifies the earlier request-to-pay transaction that is refunded'",
     "a refund whose referenceIdToRefund matches no request to pay is processed and ends SUCCESSFUL"),
    ("deposit-ignores-test-numbers", MTN,
     "notes 'Sandbox test numbers (payer on requesttopay, payee on deposit/refund/transfer)' [observed]",
     "deposits ignore the payee test numbers: every deposit ends SUCCESSFUL at once"),
    ("balance-float-arithmetic", SPEC,
     "spec 2.9 availableBalance 'Available balance of the account' (decimal money amounts)",
     "balances are kept in binary floats, so e.g. 0.1 + 0.2 shows as \"0.30000000000000004\""),
    ("party-id-type-case-insensitive", BOTH,
     "spec 2.1 partyIdType enum MSISDN, EMAIL, PARTY_CODE",
     "partyIdType is matched case-insensitively ('msisdn' accepted and echoed)"),
    ("missing-target-env-accepted", BOTH,
     "spec 4.2.2 / 4.3.9 'X-Target-Environment (required)'",
     "a business request without X-Target-Environment is processed as if it said sandbox"),
    ("dn-not-owner-accepted", BOTH,
     "spec 4.2.3 '404 ... the caller does not own the financial transaction'",
     "a delivery notification for another API user's transaction is accepted with 200"),
    ("consent-valid-in-ignored", BOTH,
     "spec 2.7 refresh_token_expired_in 'based on ... the consent_valid_in parameter of the bc-authorize request'",
     "refresh_token_expired_in always reports the default consent validity, ignoring consent_valid_in"),
    # ---- deviations added in the second round ------------------------------------------
    ("apiuser-malformed-json-500", BOTH,
     "spec 4.5.14 'Responses: 201 created; 400 invalid data' (a body that is not JSON is invalid data); notes '400 bodies ... Causes seen: ... an empty or missing body'",
     "POST /v1_0/apiuser whose body is not valid JSON (e.g. '{\"providerCallbackHost\":') answers 500 INTERNAL_PROCESSING_ERROR instead of 400; an empty body or a missing providerCallbackHost still gets 400"),
    ("apikey-created-200", BOTH,
     "spec 4.5.15 'Responses: 201 with { apiKey }'; spec 7 '201 Created (sandbox provisioning)'",
     "POST /v1_0/apiuser/{id}/apikey answers 200 (with the apiKey) instead of 201; creating the API user still answers 201"),
    ("access-token-not-jwt", BOTH,
     "spec 2.6 access_token 'JWT sent as the Bearer credential'; spec 5.3 'The access token is a JWT'",
     "the access token of POST /{product}/token/ is an opaque 64-hex-digit string, not a JWT (it still works as Bearer); consent tokens stay JWTs"),
    ("token-failure-without-error", BOTH,
     "spec 2.14 'The token and basic-info operations use { error: string } on 401'; spec 7 rule 4 'A failed token request ... gives 401 with { error }'; notes /token/ failure body {\"error\":\"login_failed\"} [observed]",
     "a failed POST /{product}/token/ (unknown API user, wrong key, no credential) answers with {code:NOT_ALLOWED,message} and no error field (status unchanged: spec 401, mtn-sandbox 500); basic-info and the OAuth 2.0 token keep {error}"),
    ("consent-token-key-not-checked", BOTH,
     "spec 4.3.11 'Authorization (Basic, API user ID and API key)'; spec 5.2 'The credential is the API user ID and API key'",
     "POST /{product}/oauth2/token/ accepts a known API user id with any API key and issues the consent token; /{product}/token/ still refuses a wrong key"),
    ("consent-scope-first-only", BOTH,
     "spec 2.7 scope 'Scopes that belong to the authentication request ID'; spec 4.2.7 scope parameter",
     "a bc-authorize asking several scopes ('profile openid') keeps only the first: the consent token's scope is 'profile'"),
    ("consent-token-without-refresh-expiry", BOTH,
     "spec 2.7 refresh_token_expired_in 'It is based on the default consent validity, or on the consent_valid_in parameter'; spec 4.2.7 consent_valid_in is optional",
     "when bc-authorize had no consent_valid_in, the consent token record has no refresh_token_expired_in (it appears only when consent_valid_in was given)"),
    ("consent-request-numbers-as-strings", BOTH,
     "spec 2.8 interval 'number', expires_in 'number'; notes bc-authorize 'Returns {auth_req_id, interval, expires_in} (numbers) [documented]'",
     "the bc-authorize answer gives interval and expires_in as JSON strings (\"2\", \"3600\")"),
    ("consent-callback-previous-id", BOTH,
     "spec 6 'A caller may give an address in X-Callback-Url on ... bc-authorize. The service is to send a callback to the server there'; OpenID CIBA Core 10.2 (the ping callback carries the auth_req_id of that request)",
     "the bc-authorize callback carries the auth_req_id of the API user's previous bc-authorize (the first request's callback carries its own)"),
    ("refund-callback-to-payment-url", BOTH,
     "spec 6 'A caller may give an address in X-Callback-Url on request to pay, refund, deposit ... The service is to send a callback to the server there'",
     "a refund's callback goes to the X-Callback-Url of the refunded request to pay instead of the refund's own X-Callback-Url (none is sent if the payment had none)"),
    ("callback-amount-not-normalised", MTN,
     "notes Callbacks 'Body: the same record as the status GET [documented]'; notes Status records 'amount comes back normalised ... (\"12.50\" -> \"12.5\")' [observed]",
     "callbacks give amount exactly as sent (\"12.50\") while the status GET of the same transaction gives it normalised (\"12.5\")"),
    ("callback-url-https-refused", BOTH,
     "spec 4.1 X-Callback-Url 'URL' (http and https alike); spec 6 'A caller may give an address in X-Callback-Url ... The service is to send a callback to the server there'",
     "an X-Callback-Url with the https scheme is refused with 400 on request to pay, deposit, refund and bc-authorize (http URLs are accepted)"),
    ("rtp-content-type-required", BOTH,
     "spec 4.2.2 'Content-Type (optional; application/json in use)'; spec 4.1 Content-Type 'header, optional'",
     "a request to pay sent without a Content-Type header is refused with 400; deposits and refunds without it are still accepted"),
    ("transaction-id-unstable", MTN,
     "notes Status records: financialTransactionId of a SUCCESSFUL record [observed]; notes Callbacks 'Body: the same record as the status GET [documented]'",
     "the financialTransactionId of a SUCCESSFUL transaction is made up anew on every status read and callback, so two reads (and the callback) disagree"),
    ("dn-repeat-409", BOTH,
     "spec 4.2.3 '429 Too many attempts for the same ID recently. Occurs only after an earlier successful attempt'; spec 8 'repeated attempts for the same ID give 429'",
     "a repeated delivery notification after a successful one answers 409 TRANSACTION_NOT_COMPLETED instead of 429"),
    ("dn-unknown-id-409", BOTH,
     "spec 4.2.3 '404 Reference ID does not exist'; '409 The transaction is not successfully completed'",
     "a delivery notification for a reference id that does not exist answers 409 TRANSACTION_NOT_COMPLETED instead of 404 (another API user's payment still gets 404)"),
    ("failed-deposit-status-404", BOTH,
     "spec 4.3.10 'A status query is by GET /deposit/{referenceId}'; spec 7 '404 Resource not found'; spec 2.5 the reference id 'is later used in status queries'",
     "a deposit that ended FAILED answers its status GET with 404 RESOURCE_NOT_FOUND (its id still gets 409 when reused); successful deposits read normally"),
    ("deposit-funds-check-off-by-one", SPEC,
     "spec 2.9 availableBalance 'Available balance of the account'; spec 4.3.10 'Deposits an amount from the owner's account'; code NOT_ENOUGH_FUNDS (spec 7)",
     "a deposit of exactly the available disbursement balance ends FAILED NOT_ENOUGH_FUNDS (the check is balance <= amount); refunds are checked correctly"),
    ("overdraft-zeroes-balance", SPEC,
     "spec 2.9 availableBalance 'Available balance of the account'; a FAILED (NOT_ENOUGH_FUNDS) deposit or refund moves no money",
     "a deposit or refund that ends FAILED NOT_ENOUGH_FUNDS sets the disbursement balance to 0 instead of leaving it unchanged"),
    ("balance-per-token", SPEC,
     "spec 2.9 availableBalance 'Available balance of the account'; spec 4.2.4 'Get account balance' (the account, not the session)",
     "balances are kept per access token: a payment is credited to the account of the token that created it, and a balance read with a newer token of the same API user shows the starting balance"),
    ("deposit-amount-minor-units", MTN,
     "notes Status records 'amount comes back normalised as a decimal string without trailing zeros (\"12.50\" -> \"12.5\")' [observed]; notes Callbacks 'same record as the status GET'",
     "the deposit status record and its callback give amount in minor units (\"12.50\" -> \"1250\"); requests to pay and refunds keep the decimal amount"),
    ("partial-refund-reduces-payment-amount", MTN,
     "notes Status records: the requesttopay record carries the payment's amount (amount \"50000\"), 'normalised as a decimal string' [observed]; spec 2.4 a refund is a transaction of its own with its own amount",
     "a successful refund lowers the amount shown by the refunded request to pay's status record (a 10 payment refunded 4 then reads amount \"6\")"),
    ("disbursement-holder-party-code-refused", BOTH,
     "spec 4.3.12 'Same parameters, headers and semantics as collection endpoint 8'; spec 4.2.8 accountHolderIdType 'one of msisdn, email, party_code'",
     "GET /disbursement/v1_0/accountholder/party_code/{uuid}/active answers 400; the collection check accepts party_code"),
    ("basic-info-locale-lowercase", BOTH,
     "spec 2.10 locale 'BCP 47 language tag: lowercase ISO 639-1 code, dash, uppercase ISO 3166-1 alpha-2 code'; notes basic user info locale \"sv_SE\" [observed]",
     "basic user information writes locale all in lower case (\"sv-se\"; mtn-sandbox \"sv_se\")"),
    ("text-limit-off-by-one", MTN,
     "notes Errors and inputs 'payerMessage/payeeNote over 160 characters' -> 400 [observed]; notes Delivery notification 'notificationMessage over 160 characters -> 400 [observed]'",
     "a payerMessage, payeeNote or notificationMessage of exactly 160 characters is refused with 400 (the limit is checked with >= 160)"),
    ("rtp-status-404-without-body", BOTH,
     "spec 7 'Error body: { code, message }' (404 Resource not found); notes 'for an unknown UUID -> 404 {\"code\":\"RESOURCE_NOT_FOUND\",...}' [observed]",
     "the request-to-pay status GET answers an unknown (or another API user's) reference id with 404 and an empty body; refund and deposit status keep {code,message}"),
    ("deposit-text-length-not-checked", MTN,
     "notes Errors and inputs '400 ... Causes seen: ... payerMessage/payeeNote over 160 characters' [observed]",
     "a deposit whose payerMessage or payeeNote is longer than 160 characters is accepted (202); requests to pay and refunds still refuse it with 400"),
    # ---- deviations added in the seventh round -----------------------------------------
    ("concurrent-duplicate-500", BOTH,
     "spec 2.5 'A request that reuses an existing reference ID is rejected with 409 and code RESOURCE_ALREADY_EXIST'; 7 rule 1; 4.2 #2 and 4.3 #9-10 '409: duplicated reference ID'",
     "the reference-id check and the insert of a request to pay, deposit or refund are 300 ms apart: of two creations with the same X-Reference-Id sent together, one gets 202 and the other 500 INTERNAL_PROCESSING_ERROR (the store's unique-key error) instead of 409 RESOURCE_ALREADY_EXIST; a reuse sent after the first answer still gets 409"),
    ("delayed-payment-notification-expired", BOTH,
     "spec 4.2 #3 '200 | Notification successfully enqueued', '410 | The delivery notification opportunity has expired'; 3 'Delivery notification is allowed only for a successfully completed transaction'; 8",
     "a delivery notification for a request to pay that became SUCCESSFUL after a delay (the delayed-approval number 46733123454) answers 410 EXPIRED at once, because the window start is only recorded for immediate outcomes; payments that succeed at once are notified normally"),
    ("callback-needs-live-token", BOTH,
     "spec 6 'A caller may give an address in X-Callback-Url on request to pay, refund, deposit and bc-authorize. The service is to send a callback to the server there'; notes, Callbacks: 'Sent to X-Callback-Url when the transaction reaches a final state [documented]'",
     "a transaction that reaches its final state after the access token that created it has expired never gets its callback (the sender re-checks the creator's token); transactions final while that token still lives get theirs"),
    ("consent-token-short-lived", BOTH,
     "spec 2.7 'access_token | JWT; valid 3600 seconds by default'; 5.4 'It returns a Bearer access token, valid 3600 seconds by default'; 8 'The consent access token is valid 3600 seconds by default'",
     "the consent access token is given the lifetime of ordinary access tokens (--token-lifetime, e.g. 6 s): user information with consent refuses it with 401 once that has passed, although its record says expires_in 3600"),
    ("refund-cap-compared-as-text", BOTH,
     "spec 2.4 'referenceIdToRefund ... Identifies the earlier request-to-pay transaction that is refunded'; 4.3 #9 'Refunds an amount from the owner's account to a payee account' (a part of a payment can be refunded)",
     "the check that refunds do not exceed the payment compares the amounts as text: a refund of 4 of a payment of 10 ends FAILED NOT_ALLOWED because \"4\" sorts after \"10\", while refunds of 1 or 10 of it succeed"),
    ("notification-cooldown-per-token", BOTH,
     "spec 4.2 #3 '429 | Too many attempts for the same ID recently. Occurs only after an earlier successful attempt'; 8 'Delivery notification: repeated attempts for the same ID give 429'; notes 'a second notification for the same reference -> 429' [observed]",
     "the delivery-notification cooldown is keyed by access token and reference id: after an accepted notification, a repeat with the same access token gets 429, but a repeat by the same API user with a newly issued access token is enqueued again (200)"),
    ("msisdn-national-format-accepted", BOTH,
     "spec 2.1 'MSISDN: mobile number per ITU-T E.164 ... The format is validated according to partyIdType' (an E.164 number starts with its country code, never with 0); 4.2 #8 accountHolderId 'MSISDN per ITU-T E.164'; 4.2 #2, 4.3 #10 '400'",
     "an MSISDN in national format with a leading 0 (e.g. 0733123456) is accepted as payer, payee, account holder, basic-user-info MSISDN and login_hint (202/200) instead of 400; numbers starting 1-9 are handled as before"),
    ("callback-header-name-case-sensitive", BOTH,
     "spec 4.1 'X-Callback-Url | header, optional | URL | Address to which a callback is sent'; 6 'The service is to send a callback to the server there'; RFC 9110 5.1 (field names are case-insensitive)",
     "X-Callback-Url is recognised only when its name is written exactly so: a request to pay, deposit, refund or bc-authorize that sends it as x-callback-url (or X-callback-url, as many HTTP clients do) is accepted without host check and never gets a callback"),
    ("foreign-product-key-403", BOTH,
     "spec 5.1 'Every operation requires the subscription key'; 7 (401 Unauthorized; 403 is not among the statuses used); notes 'Missing or invalid subscription key -> 401 from the API gateway' [observed]",
     "a business operation called with the subscription key of another product (e.g. the disbursement key on /collection/...) answers 403 (spec: {error:subscription_not_entitled,message}, mtn-sandbox: {statusCode:403,message}) instead of 401; a missing or unknown key still gets 401"),
    ("deposit-payer-field-accepted", BOTH,
     "spec 2.3 'The fields are the same as the request-to-pay body, except that payer is replaced by payee (Party)'; 2.1 (partyIdType and partyId required); 4.3 #10 '400'",
     "a deposit whose body names the party as payer (copied from a request to pay) and has no payee is accepted (202) and carried out with that party as payee, instead of 400"),
    ("bc-authorize-answers-202", BOTH,
     "spec 4.2 #7 '200: consent request record (2.8)'; OpenID CIBA Core 7.3 (a successful authentication request answers HTTP 200 OK)",
     "bc-authorize answers 202 Accepted (with the usual {auth_req_id, interval, expires_in} body) instead of 200"),
    ("token-expires-in-fractional", BOTH,
     "spec 2.6 'expires_in | integer | Validity of the token in seconds'; notes '{...\"expires_in\":3600}' [observed]; RFC 6749 5.1",
     "POST /{product}/token/ gives expires_in as the fractional seconds left on the new token (e.g. 5.999987 or 3599.99998) instead of an integer"),
    ("userinfo-credit-score-number", SPEC,
     "spec 2.11 'credit_score | string | Credit score' (the mtn-sandbox record has no credit_score, so spec only)",
     "user information with consent gives credit_score as the JSON number 700 instead of the string \"700\""),
    ("callback-host-read-from-userinfo", MTN,
     "notes, Callbacks: 'The callback URL's host must equal the API user's providerCallbackHost; otherwise the creation POST fails with 500 {\"code\":\"INVALID_CALLBACK_URL_HOST\",...} and no transaction is created' [observed]; RFC 3986 3.2 (what precedes '@' in the authority is userinfo, not the host)",
     "the callback host is read with a naive pattern that stops at '@': an X-Callback-Url such as http://127.0.0.1@other-host:8080/cb for providerCallbackHost 127.0.0.1 is accepted (202) and the callback goes to other-host, instead of 500 INVALID_CALLBACK_URL_HOST"),
    ("test-numbers-matched-by-suffix", MTN,
     "notes, Sandbox test numbers: '46733123450 ... 46733123454' each with its outcome, 'any other valid MSISDN | SUCCESSFUL at once [observed]'",
     "the test numbers are matched by their last six digits: any payer or payee number ending in 123450-123454 (e.g. 256772123450) takes that test number's outcome (FAILED INTERNAL_PROCESSING_ERROR etc.) instead of SUCCESSFUL"),
    ("timeout-status-instead-of-failed", MTN,
     "notes, Status records: 'Status values: PENDING, SUCCESSFUL, FAILED [observed] ... REJECTED/TIMEOUT/ONGOING appear as reasons, not statuses'",
     "a transaction that times out while PENDING (46733123453 after --pending-timeout-seconds) reads status \"TIMEOUT\" without reason, in its status record and its callback, instead of FAILED; other failures still read FAILED"),
    ("pending-record-has-transaction-id", MTN,
     "notes, Status records: 'PENDING and FAILED records have no financialTransactionId [observed]. So it is optional, present once SUCCESSFUL'",
     "the financialTransactionId is allocated at creation and shown on PENDING records as well (e.g. 46733123454 during its delay), then kept when SUCCESSFUL; FAILED records still have none"),
    ("msisdn-plus-stripped", MTN,
     "notes, Status records: 'partyId comes back exactly as sent' [observed]; notes, Callbacks: 'Body: the same record as the status GET' [documented]",
     "an MSISDN party id sent with a leading '+' (+46733123999, accepted) comes back without it (46733123999) in status records and callbacks"),
    ("apikey-rebinds-product", MTN,
     "notes, Provisioning and tokens: 'An API user works only with the product (subscription key) it was provisioned under' [observed]; spec 4.5 #15 'Create an API key for the API user' (a key, nothing else)",
     "creating an API key with another product's subscription key moves the API user to that product: a user created with the collection key whose key was made with the disbursement key gets 500 NOT_ALLOWED_TARGET_ENVIRONMENT on /collection/token/ and a token on /disbursement/token/"),
    ("final-records-archived-without-texts", MTN,
     "notes, Status records: the requesttopay record carries externalId, payerMessage and payeeNote [observed] ('refund and deposit use payee instead of payer'); spec 2.5 the reference ID 'is later used in status queries'",
     "3 s after a transaction is final its record is moved to an archive that keeps no texts: later status queries of it answer without externalId, payerMessage and payeeNote (reads and callbacks before then have them)"),
]

CONTROL_NAMES = {c[0]: c for c in CONTROLS}
DEVIATION_NAMES = {d[0]: d for d in DEVIATIONS}

# --------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------
MESSAGES_EN = {
    "RESOURCE_ALREADY_EXIST": "Duplicated reference id. Creation of resource failed.",
    "RESOURCE_ALREADY_EXISTS": "Duplicated reference id. Creation of resource failed.",
    "RESOURCE_NOT_FOUND": "Requested resource was not found.",
    "INVALID_CALLBACK_URL_HOST": "Callback URL does not match the configured value.",
    "INVALID_CURRENCY": "Currency not supported.",
    "NOT_ALLOWED_TARGET_ENVIRONMENT": "Access to target environment is forbidden.",
    "NOT_ALLOWED": "Authorization failed. Insufficient permissions.",
    "INTERNAL_PROCESSING_ERROR": "An internal error occurred while processing.",
    "APPROVAL_REJECTED": "The payer rejected the approval.",
    "EXPIRED": "The request expired before the payer approved it.",
    "NOT_ENOUGH_FUNDS": "The account does not hold enough funds.",
    "PAYER_NOT_FOUND": "Payer does not exist.",
    "PAYEE_NOT_FOUND": "Payee does not exist.",
    "TRANSACTION_NOT_COMPLETED": "The transaction is not successfully completed.",
    "UNSUPPORTED_SCOPE": "The requested scope is not supported.",
    "MISSING_SCOPE_INSTRUCTION": "No scope was requested.",
    "NOT_FOUND": "Not found.",
    "INVALID_DATA": "Invalid data in the request.",
    "PAYEE_NOT_ALLOWED_TO_RECEIVE": "The payee is not allowed to receive.",
    "SERVICE_UNAVAILABLE": "Service unavailable.",
    "COULD_NOT_PERFORM_TRANSACTION": "Could not perform the transaction.",
}
MESSAGES_FR = {
    "RESOURCE_ALREADY_EXIST": "Identifiant de référence dupliqué. La création de la ressource a échoué.",
    "RESOURCE_ALREADY_EXISTS": "Identifiant de référence dupliqué. La création de la ressource a échoué.",
    "RESOURCE_NOT_FOUND": "La ressource demandée est introuvable.",
    "INVALID_CALLBACK_URL_HOST": "L'URL de rappel ne correspond pas à la valeur configurée.",
    "INVALID_CURRENCY": "Devise non prise en charge.",
    "NOT_ALLOWED_TARGET_ENVIRONMENT": "L'accès à l'environnement cible est interdit.",
    "NOT_ALLOWED": "Autorisation refusée.",
    "INTERNAL_PROCESSING_ERROR": "Une erreur interne s'est produite.",
    "APPROVAL_REJECTED": "Le payeur a refusé l'approbation.",
    "EXPIRED": "La demande a expiré avant l'approbation du payeur.",
    "NOT_ENOUGH_FUNDS": "Le compte ne dispose pas de fonds suffisants.",
    "PAYER_NOT_FOUND": "Le payeur n'existe pas.",
    "PAYEE_NOT_FOUND": "Le bénéficiaire n'existe pas.",
    "TRANSACTION_NOT_COMPLETED": "La transaction n'est pas terminée avec succès.",
    "UNSUPPORTED_SCOPE": "La portée demandée n'est pas prise en charge.",
    "MISSING_SCOPE_INSTRUCTION": "Aucune portée demandée.",
    "NOT_FOUND": "Introuvable.",
    "INVALID_DATA": "Données invalides dans la requête.",
    "PAYEE_NOT_ALLOWED_TO_RECEIVE": "Le bénéficiaire ne peut pas recevoir.",
    "SERVICE_UNAVAILABLE": "Service indisponible.",
    "COULD_NOT_PERFORM_TRANSACTION": "La transaction n'a pas pu être effectuée.",
}

# --------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
UUID4_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$")
MSISDN_RE = re.compile(r"^\+?[1-9][0-9]{4,14}$")
MSISDN_LOOSE_RE = re.compile(r"^\+?[0-9]{5,15}$")   # deviation msisdn-national-format-accepted
EMAIL_RE = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$")
AMOUNT_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
LANG_RE = re.compile(r"^[A-Za-z]{2,3}$")
SUPPORTED_CURRENCIES = ("EUR",)
SECOND_CURRENCY = "USD"          # control second-currency-usd
SCOPES = ("profile", "openid", "all_info")
TEXT_MAX = 160


def is_uuid(s):
    return isinstance(s, str) and bool(UUID_RE.match(s))


def is_uuid4(s):
    return isinstance(s, str) and bool(UUID4_RE.match(s))


def norm_amount(d):
    if isinstance(d, float):
        return repr(d) if d != int(d) else str(int(d))
    s = format(d.normalize(), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s or "0"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def callback_host_of(value):
    v = (value or "").strip()
    if "://" in v:
        return (urllib.parse.urlsplit(v).hostname or "").lower()
    v = v.split("/")[0]
    if v.startswith("["):
        return v[1:].split("]")[0].lower()
    return v.split(":")[0].lower()


NAIVE_HOST_RE = re.compile(r"^https?://([\w.-]+)")   # deviation callback-host-read-from-userinfo


def strip_userinfo(url):
    p = urllib.parse.urlsplit(url)
    if "@" not in p.netloc:
        return url
    return urllib.parse.urlunsplit((p.scheme, p.netloc.rsplit("@", 1)[1], p.path, p.query, p.fragment))


def valid_callback_url(url):
    if not url or any(c.isspace() for c in url):
        return False
    try:
        p = urllib.parse.urlsplit(url)
        _ = p.port
    except ValueError:
        return False
    return p.scheme in ("http", "https") and bool(p.hostname)


# --------------------------------------------------------------------------
# Scheduler and callback dispatcher
# --------------------------------------------------------------------------
class Scheduler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.heap = []
        self.cond = threading.Condition()
        self.seq = itertools.count()

    def add(self, at, fn):
        with self.cond:
            heapq.heappush(self.heap, (at, next(self.seq), fn))
            self.cond.notify()

    def run(self):
        while True:
            with self.cond:
                while not self.heap:
                    self.cond.wait()
                at, _, fn = self.heap[0]
                now = time.monotonic()
                if at > now:
                    self.cond.wait(at - now)
                    continue
                heapq.heappop(self.heap)
            try:
                fn()
            except Exception as exc:  # pragma: no cover
                sys.stderr.write("scheduler task failed: %r\n" % (exc,))


class CallbackDispatcher:
    def __init__(self, scheduler, workers=4):
        self.q = queue.Queue()
        self.scheduler = scheduler
        for _ in range(workers):
            threading.Thread(target=self._work, daemon=True).start()

    def send(self, url, method, body, max_attempts, delays):
        self.q.put({"url": url, "method": method, "body": body, "attempt": 1,
                    "max": max_attempts, "delays": delays})

    def _work(self):
        while True:
            job = self.q.get()
            ok = False
            try:
                data = json.dumps(job["body"]).encode("utf-8")
                req = urllib.request.Request(job["url"], data=data, method=job["method"],
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=2) as resp:
                    ok = 200 <= resp.status < 300
                    resp.read()
            except urllib.error.HTTPError as e:
                ok = 200 <= e.code < 300
            except Exception:
                ok = False
            if not ok and job["attempt"] < job["max"]:
                delays = job["delays"]
                d = delays[min(job["attempt"] - 1, len(delays) - 1)]
                job = dict(job, attempt=job["attempt"] + 1)
                self.scheduler.add(time.monotonic() + d, lambda j=job: self.q.put(j))


# --------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------
class Refusal(Exception):
    """Raised to answer an error immediately."""

    def __init__(self, status, body=None, empty=False, headers=None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.empty = empty
        self.headers = headers or {}


class State:
    def __init__(self, cfg):
        self.cfg = cfg
        self.lock = threading.RLock()
        self.users = {}          # id -> {host, product, keys:set, created}
        self.tokens = {}         # jti -> {user, product, exp, kind, ...}
        self.tx = {}             # ref id -> transaction dict
        self.reserved = set()    # refused ids (deviation)
        self.consents = {}       # auth_req_id -> {...}
        self.opaque = {}         # opaque access token -> JWT (deviation access-token-not-jwt)
        self.last_auth_req = {}  # API user -> previous auth_req_id (deviation consent-callback-previous-id)
        self.balances = {}       # (product, owner) -> Decimal/float
        self.secret = secrets.token_bytes(32)
        self.scheduler = Scheduler()
        self.scheduler.start()
        self.dispatcher = CallbackDispatcher(self.scheduler)

    # switches -----------------------------------------------------------
    def ctl(self, name):
        return name in self.cfg.controls

    def dev(self, name):
        return name in self.cfg.deviations

    @property
    def mtn(self):
        return self.cfg.profile == "mtn-sandbox"

    def msisdn_ok(self, s):
        rx = MSISDN_LOOSE_RE if self.dev("msisdn-national-format-accepted") else MSISDN_RE
        return isinstance(s, str) and bool(rx.match(s))

    def currency_ok(self, cur):
        if cur in SUPPORTED_CURRENCIES:
            return True
        return cur == SECOND_CURRENCY and self.ctl("second-currency-usd")

    def msg(self, code):
        table = MESSAGES_FR if self.ctl("errors-french") else MESSAGES_EN
        return table.get(code, code.replace("_", " ").capitalize() + ".")

    def err(self, code):
        return {"code": code, "message": self.msg(code)}

    # tokens -------------------------------------------------------------
    def make_jwt(self, claims):
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
        sig = hmac.new(self.secret, (header + "." + payload).encode(), hashlib.sha256).digest()
        return header + "." + payload + "." + b64url(sig)

    def read_jwt(self, token):
        with self.lock:
            token = self.opaque.get(token, token)
        parts = token.split(".")
        if len(parts) != 3:
            return None
        sig = hmac.new(self.secret, (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(b64url(sig), parts[2]):
            return None
        try:
            pad = "=" * (-len(parts[1]) % 4)
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + pad))
        except Exception:
            return None
        with self.lock:
            rec = self.tokens.get(claims.get("jti"))
        return rec

    def token_alive(self, rec):
        if self.dev("token-expiry-ignored"):
            return True
        leeway = 1.0 if self.ctl("token-grace") else 0.0
        return time.monotonic() < rec["exp"] + leeway

    def issue_token(self, kind, user_id, product, lifetime, extra=None):
        jti = str(uuid.uuid4())
        now_wall = int(time.time())
        claims = {"jti": jti, "sub": user_id, "aud": product, "typ": kind,
                  "iat": now_wall, "exp": now_wall + int(lifetime)}
        rec = {"user": user_id, "product": product, "kind": kind,
               "exp": time.monotonic() + lifetime, "jti": jti}
        if extra:
            rec.update(extra)
        with self.lock:
            self.tokens[jti] = rec
        return self.make_jwt(claims)

    # balances -----------------------------------------------------------
    def account_key(self, product, user_id, currency="EUR"):
        k = (product, "*shared*" if self.ctl("shared-balance") else user_id)
        if currency != "EUR":
            k = k + (currency,)
        return k

    def initial_balance(self, product):
        start = {"collection": "0", "disbursement": "1000000", "remittance": "1000000"}[product]
        return float(start) if self.dev("balance-float-arithmetic") else Decimal(start)

    def balance(self, product, user_id, currency="EUR"):
        k = self.account_key(product, user_id, currency)
        with self.lock:
            if k not in self.balances:
                self.balances[k] = self.initial_balance(product)
            return self.balances[k]

    def adjust(self, product, user_id, amount, sign, currency="EUR"):
        k = self.account_key(product, user_id, currency)
        with self.lock:
            cur = self.balance(product, user_id, currency)
            amt = float(amount) if self.dev("balance-float-arithmetic") else amount
            self.balances[k] = cur + amt if sign > 0 else cur - amt

    # transactions -------------------------------------------------------
    def outcome_for(self, party, kind):
        """Return (delay_seconds or 0, final_status, reason) for a party."""
        if kind == "deposit" and self.dev("deposit-ignores-test-numbers"):
            return (0, "SUCCESSFUL", None)
        if not party or party.get("partyIdType", "").upper() != "MSISDN":
            return (0, "SUCCESSFUL", None)
        num = party.get("partyId", "").lstrip("+")
        cfg = self.cfg
        table = {
            "46733123450": (0, "FAILED", "INTERNAL_PROCESSING_ERROR"),
            "46733123451": (0, "FAILED", "APPROVAL_REJECTED"),
            "46733123452": (0, "FAILED", "EXPIRED"),
            "46733123453": (cfg.pending_timeout, "FAILED", "EXPIRED"),
            "46733123454": (cfg.delayed_approval, "SUCCESSFUL", None),
        }
        if self.mtn and self.dev("test-numbers-matched-by-suffix"):
            for k, v in table.items():
                if num.endswith(k[-6:]):
                    return v
        return table.get(num, (0, "SUCCESSFUL", None))

    def settle(self, tx, timer=False):
        """Apply a due transition. Caller holds the lock."""
        if tx["status"] != "PENDING" or tx.get("due") is None:
            return
        if time.monotonic() < tx["due"]:
            return
        fs, reason = tx["final"]
        tx["due"] = None
        if fs == "FAILED" and reason == "EXPIRED" and self.mtn and self.dev("timeout-status-instead-of-failed"):
            fs, reason = "TIMEOUT", None
        self.finalize(tx, fs, reason, delayed=True)

    def finalize(self, tx, status, reason, delayed=False):
        now = time.monotonic()
        if status == "SUCCESSFUL" and not self.mtn:
            # money movement (spec profile only; the live sandbox balance stays 0)
            acct = tx.get("acct") or tx["owner"]
            cur = tx["currency"]
            if tx["kind"] == "requesttopay":
                self.adjust("collection", acct, tx["amount_dec"], +1, cur)
            else:
                bal = self.balance("disbursement", acct, cur)
                amt = float(tx["amount_dec"]) if self.dev("balance-float-arithmetic") else tx["amount_dec"]
                short = bal < amt
                if tx["kind"] == "deposit" and self.dev("deposit-funds-check-off-by-one"):
                    short = bal <= amt
                if short:
                    status, reason = "FAILED", "NOT_ENOUGH_FUNDS"
                    if self.dev("overdraft-zeroes-balance"):
                        with self.lock:
                            self.balances[self.account_key("disbursement", acct, cur)] = bal - bal
                else:
                    self.adjust("disbursement", acct, tx["amount_dec"], -1, cur)
        if status == "SUCCESSFUL" and tx["kind"] == "refund" and self.dev("partial-refund-reduces-payment-amount"):
            orig = self.tx.get(tx.get("refid"))
            if orig is not None:
                orig["amount_dec"] = orig["amount_dec"] - tx["amount_dec"]
                orig["amount_raw"] = norm_amount(orig["amount_dec"])
        tx["status"] = status
        tx["reason"] = reason
        tx["updated"] = time.time()
        tx["finalized_at"] = now
        tx["delayed_final"] = delayed
        if status == "SUCCESSFUL" and not tx.get("financialTransactionId"):
            tx["financialTransactionId"] = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9)
        self.fire_callback(tx, delayed=delayed)

    def fire_callback(self, tx, delayed=False, pending=False):
        url = tx.get("callback")
        if not url:
            return
        if not pending:
            if delayed and self.dev("delayed-outcome-no-callback"):
                return
            if tx["status"] == "FAILED" and self.dev("callback-missing-on-failed"):
                return
            if self.dev("callback-needs-live-token") and tx.get("token_exp") is not None \
                    and time.monotonic() >= tx["token_exp"]:
                return
        if self.mtn and self.dev("callback-host-read-from-userinfo"):
            url = strip_userinfo(url)
        if self.dev("callback-drops-path"):
            p = urllib.parse.urlsplit(url)
            url = "%s://%s/" % (p.scheme, p.netloc)
        if self.mtn:
            method = "POST" if tx["kind"] == "deposit" else "PUT"
            attempts, delays = 1, [1]
        else:
            method = "PUT" if self.ctl("callback-put") else "POST"
            attempts, delays = 3, [1, 2]
        if self.ctl("callback-retry-until-2xx"):
            attempts, delays = 10, [0.5, 1, 2, 4, 8, 8, 8, 8, 8]
        rec = self.render(tx)
        if self.mtn and self.dev("callback-amount-not-normalised") and "amount" in rec:
            rec["amount"] = tx["amount_raw"]
        self.dispatcher.send(url, method, rec, attempts, delays)

    def schedule_settle(self, tx):
        def task(t=tx):
            with self.lock:
                self.settle(t, timer=True)
        self.scheduler.add(tx["due"], task)

    def render(self, tx):
        rec = {}
        if tx["status"] == "SUCCESSFUL" and tx.get("financialTransactionId"):
            rec["financialTransactionId"] = tx["financialTransactionId"]
            if self.mtn and self.dev("transaction-id-unstable"):
                rec["financialTransactionId"] = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9)
        elif tx["status"] == "PENDING" and tx.get("financialTransactionId") and self.mtn \
                and self.dev("pending-record-has-transaction-id"):
            rec["financialTransactionId"] = tx["financialTransactionId"]
        archived = (self.mtn and self.dev("final-records-archived-without-texts")
                    and tx.get("finalized_at") is not None and time.monotonic() - tx["finalized_at"] > 3)
        if tx.get("externalId") is not None and not archived:
            rec["externalId"] = tx["externalId"]
        rec["amount"] = norm_amount(tx["amount_dec"]) if self.mtn else tx["amount_raw"]
        if self.mtn and tx["kind"] == "deposit" and self.dev("deposit-amount-minor-units"):
            rec["amount"] = str(int(tx["amount_dec"] * 100))
        rec["currency"] = tx["currency"]
        pk = "payer" if tx["kind"] == "requesttopay" else "payee"
        if tx.get("party") is not None:
            rec[pk] = dict(tx["party"])
            if self.mtn and self.dev("msisdn-plus-stripped") and rec[pk].get("partyIdType") == "MSISDN":
                rec[pk]["partyId"] = rec[pk]["partyId"].lstrip("+")
        for f in ("payerMessage", "payeeNote"):
            if tx.get(f) is not None and not archived:
                rec[f] = tx[f]
        rec["status"] = tx["status"]
        if tx["status"] == "FAILED" and tx.get("reason") and not (self.mtn and self.dev("failed-reason-missing")):
            rec["reason"] = tx["reason"] if self.mtn else self.err(tx["reason"])
        if not self.mtn and self.ctl("status-extra-fields"):
            rec["referenceId"] = tx["id"]
            if tx["kind"] == "refund":
                rec["referenceIdToRefund"] = tx.get("refid")
            rec["createdAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(tx["created"]))
            rec["updatedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(tx["updated"]))
        return rec


# --------------------------------------------------------------------------
# HTTP handler
# --------------------------------------------------------------------------
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "MoMoIndependent/2"
    sys_version = ""

    def log_message(self, fmt, *args):
        if os.environ.get("MOMO_LOG"):
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

    @property
    def st(self):
        return self.server.state

    # responses ----------------------------------------------------------
    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode("utf-8")
        ctype = "application/json; charset=utf-8" if self.st.ctl("content-type-charset") else "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_empty(self, status, headers=None):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def bad_request(self, code="INVALID_DATA", detail=None, kind="business"):
        """400. mtn-sandbox: empty body (observed). spec: a body (shape is open)."""
        st = self.st
        if st.mtn:
            return Refusal(400, empty=True)
        msg = detail or st.msg("INVALID_DATA")
        if kind == "business":
            if code == "INVALID_DATA":
                code = "NOT_ALLOWED"
            return Refusal(400, {"code": code, "message": msg})
        if kind == "token":
            return Refusal(400, {"error": "invalid_request", "message": msg})
        return Refusal(400, {"message": msg})

    # plumbing -----------------------------------------------------------
    def read_body(self):
        n = self.headers.get("Content-Length")
        if n is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    line = self.rfile.readline().strip()
                    size = int(line.split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks)
            return b""
        try:
            n = int(n)
        except ValueError:
            return b""
        return self.rfile.read(n) if n > 0 else b""

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def dispatch(self, method):
        try:
            self.body = self.read_body()
        except Exception:
            self.body = b""
        path = urllib.parse.urlsplit(self.path).path
        segs = [urllib.parse.unquote(s) for s in path.split("/") if s != ""]
        try:
            self.route(method, segs)
        except Refusal as r:
            if r.empty or r.body is None:
                self.send_empty(r.status, r.headers)
            else:
                self.send_json(r.status, r.body, r.headers)
        except Exception as exc:  # pragma: no cover
            sys.stderr.write("internal error: %r\n" % (exc,))
            try:
                self.send_json(500, self.st.err("INTERNAL_PROCESSING_ERROR"))
            except Exception:
                pass

    def not_found_route(self):
        return Refusal(404, {"code": "NOT_FOUND", "message": self.st.msg("NOT_FOUND")})

    def route(self, method, s):
        n = len(s)
        # provisioning
        if n >= 2 and s[0] == "v1_0" and s[1] == "apiuser":
            if n == 2 and method == "POST":
                return self.create_api_user()
            if n == 4 and s[3] == "apikey" and method == "POST":
                return self.create_api_key(s[2])
            if n == 3 and method == "GET":
                return self.get_api_user(s[2])
            raise self.not_found_route()
        if n < 2 or s[0] not in PRODUCTS:
            raise self.not_found_route()
        p = s[0]
        if n == 2 and s[1] == "token" and method == "POST":
            return self.create_token(p)
        if n == 3 and s[1] == "oauth2" and s[2] == "token" and method == "POST":
            return self.oauth2_token(p)
        if n == 4 and s[1:] == ["oauth2", "v1_0", "userinfo"] and method == "GET":
            return self.userinfo(p)
        if s[1] != "v1_0":
            raise self.not_found_route()
        rest = s[2:]
        if rest == ["bc-authorize"] and method == "POST":
            return self.bc_authorize(p)
        if rest[:2] == ["account", "balance"] and len(rest) in (2, 3) and method == "GET":
            return self.get_balance(p, rest[2] if len(rest) == 3 else None)
        if len(rest) == 4 and rest[0] == "accountholder" and method == "GET":
            if rest[3] == "active":
                return self.account_active(p, rest[1], rest[2])
            if rest[3] == "basicuserinfo":
                return self.basic_user_info(p, rest[1], rest[2])
        kinds = {"collection": ("requesttopay",), "disbursement": ("deposit", "refund")}.get(p, ())
        if rest and rest[0] in kinds:
            kind = rest[0]
            if len(rest) == 1 and method == "POST":
                return self.create_tx(p, kind)
            if len(rest) == 2 and method == "GET":
                return self.get_tx(p, kind, rest[1])
            if kind == "requesttopay" and len(rest) == 3 and rest[2] == "deliverynotification" and method == "POST":
                return self.delivery_notification(p, rest[1])
        raise self.not_found_route()

    # authentication -------------------------------------------------------
    def sub_key_product(self):
        key = self.headers.get("Ocp-Apim-Subscription-Key")
        if key is None:
            return None
        return self.server.key_products.get(key)

    def gateway_401(self):
        st = self.st
        if st.mtn:
            return Refusal(401, {"statusCode": 401, "message": "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."})
        return Refusal(401, {"error": "invalid_subscription_key",
                             "message": "Access denied due to missing or invalid subscription key."})

    def check_sub_key(self, product):
        key = self.headers.get("Ocp-Apim-Subscription-Key")
        if key is None or self.server.keys.get(product) != key:
            if key is not None and key in self.server.key_products and self.st.dev("foreign-product-key-403"):
                if self.st.mtn:
                    raise Refusal(403, {"statusCode": 403,
                                        "message": "The subscription key is not entitled to this API."})
                raise Refusal(403, {"error": "subscription_not_entitled",
                                    "message": "The subscription key is not entitled to this API."})
            raise self.gateway_401()

    def basic_credentials(self):
        auth = self.headers.get("Authorization") or ""
        if not auth[:6].lower() == "basic ":
            return None
        try:
            raw = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8")
        except Exception:
            return None
        if ":" not in raw:
            return None
        uid, key = raw.split(":", 1)
        return uid, key

    def bearer(self, product, kind="access"):
        auth = self.headers.get("Authorization") or ""
        denied = Refusal(401, {"error": "invalid_token",
                               "message": "Access denied due to missing, invalid or expired access token."})
        if auth[:7].lower() != "bearer ":
            raise denied
        rec = self.st.read_jwt(auth[7:].strip())
        if rec is None or rec["kind"] != kind or not self.st.token_alive(rec):
            raise denied
        if kind == "access" and rec["product"] != product:
            raise denied
        with self.st.lock:
            if rec["user"] not in self.st.users:
                raise denied
        return rec

    def target_env(self):
        env = self.headers.get("X-Target-Environment")
        if env is None or env == "":
            if self.st.dev("missing-target-env-accepted"):
                return
            raise self.bad_request(detail="X-Target-Environment is required.")
        if env != TARGET_ENV:
            raise Refusal(500, self.st.err("NOT_ALLOWED_TARGET_ENVIRONMENT"))

    def business_auth(self, product):
        self.check_sub_key(product)
        rec = self.bearer(product)
        self.target_env()
        self.auth_rec = rec
        return rec["user"]

    # provisioning -------------------------------------------------------------
    def json_body(self, kind="business"):
        if not self.body:
            raise self.bad_request(detail="A JSON body is required.", kind=kind)
        try:
            obj = json.loads(self.body.decode("utf-8"))
        except Exception:
            raise self.bad_request(detail="The body is not valid JSON.", kind=kind)
        if not isinstance(obj, dict):
            raise self.bad_request(detail="The body must be a JSON object.", kind=kind)
        return obj

    def dup_code(self):
        return "RESOURCE_ALREADY_EXISTS" if self.st.dev("duplicate-code-typo") else "RESOURCE_ALREADY_EXIST"

    def valid_user_id(self, uid):
        if self.st.dev("apiuser-non-uuid-accepted"):
            return bool(uid)
        return is_uuid4(uid)

    def create_api_user(self):
        st = self.st
        product = self.sub_key_product()
        if product is None:
            raise self.gateway_401()
        uid = self.headers.get("X-Reference-Id")
        if uid is None or not self.valid_user_id(uid):
            raise self.bad_request(detail="X-Reference-Id must be a UUID version 4.", kind="prov")
        uid = uid.lower()
        if st.dev("apiuser-malformed-json-500") and self.body:
            try:
                json.loads(self.body.decode("utf-8"))
            except Exception:
                raise Refusal(500, st.err("INTERNAL_PROCESSING_ERROR"))
        body = self.json_body(kind="prov")
        host = body.get("providerCallbackHost")
        if not isinstance(host, str) or not host.strip():
            raise self.bad_request(detail="providerCallbackHost is required.", kind="prov")
        with st.lock:
            if uid in st.users and not st.dev("apiuser-duplicate-201"):
                raise Refusal(409, st.err(self.dup_code()))
            old = st.users.get(uid)
            st.users[uid] = {"host": host, "product": product,
                             "keys": old["keys"] if old else [], "created": time.time()}
        self.send_empty(201)

    def lookup_user(self, uid):
        st = self.st
        if self.sub_key_product() is None:
            raise self.gateway_401()
        if not (self.valid_user_id(uid) or is_uuid(uid)):
            raise self.bad_request(detail="The API user id must be a UUID version 4.", kind="prov")
        with st.lock:
            u = st.users.get(uid.lower())
        if u is None:
            raise Refusal(404, st.err("RESOURCE_NOT_FOUND"))
        return u

    def create_api_key(self, uid):
        st = self.st
        u = self.lookup_user(uid)
        key = secrets.token_hex(16)
        with st.lock:
            if st.mtn and st.dev("apikey-rebinds-product"):
                u["product"] = self.sub_key_product() or u["product"]
            if st.mtn:
                u["keys"] = [key]          # a new key replaces the old one
            else:
                u["keys"].append(key)      # spec profile: earlier keys stay valid
        self.send_json(200 if st.dev("apikey-created-200") else 201, {"apiKey": key})

    def get_api_user(self, uid):
        u = self.lookup_user(uid)
        self.send_json(200, {"providerCallbackHost": u["host"], "targetEnvironment": TARGET_ENV})

    # tokens -------------------------------------------------------------------
    def login_failed(self, token_endpoint=True):
        st = self.st
        body = {"error": "login_failed"}
        if token_endpoint and st.dev("token-failure-without-error"):
            body = st.err("NOT_ALLOWED")
        if token_endpoint and (st.mtn or st.dev("token-failure-500-in-spec")):
            return Refusal(500, body)
        return Refusal(401, body)

    def authenticate_basic(self, token_endpoint=True, product=None):
        st = self.st
        cred = self.basic_credentials()
        if cred is None:
            raise self.login_failed(token_endpoint)
        uid, key = cred
        with st.lock:
            u = st.users.get(uid.lower())
            if u is None or not u["keys"]:
                raise self.login_failed(token_endpoint)
            if key not in u["keys"] and not (token_endpoint and st.dev("token-key-not-checked")) \
                    and not (not token_endpoint and st.dev("consent-token-key-not-checked")):
                raise self.login_failed(token_endpoint)
            if product is not None and u["product"] != product:
                if st.mtn:
                    raise Refusal(500, st.err("NOT_ALLOWED_TARGET_ENVIRONMENT"))
                raise self.login_failed(token_endpoint)
        return uid.lower()

    def create_token(self, product):
        st = self.st
        self.check_sub_key(product)
        if st.mtn and self.body:
            raise Refusal(400, empty=True)
        uid = self.authenticate_basic(token_endpoint=True, product=product)
        life = st.cfg.token_lifetime
        t0 = time.monotonic()
        tok = st.issue_token("access", uid, product, life)
        expires_in = int(life)
        if st.dev("token-expires-in-fractional"):
            # seconds left on the stored expiry, computed after the token was written
            expires_in = round(t0 + life - time.monotonic(), 6)
            if expires_in == int(expires_in):
                expires_in = round(expires_in - 0.000001, 6)
        if st.dev("access-token-not-jwt"):
            opaque = secrets.token_hex(32)
            with st.lock:
                st.opaque[opaque] = tok
            tok = opaque
        self.send_json(200, {"access_token": tok,
                             "token_type": "access_token" if st.mtn else "Bearer",
                             "expires_in": expires_in},
                       headers={"Cache-Control": "no-store"})

    def form_body(self):
        try:
            text = self.body.decode("utf-8")
            return dict(urllib.parse.parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text)))
        except Exception:
            raise self.bad_request(detail="The body must be form-encoded.")

    def bc_authorize(self, product):
        st = self.st
        uid = self.business_auth(product)
        cb = self.callback_header(uid)
        form = self.form_body()
        hint = form.get("login_hint", "")
        m = re.match(r"^ID:(.+)/MSISDN$", hint)
        if not m or not st.msisdn_ok(m.group(1)):
            raise self.bad_request(detail="login_hint must be ID:<msisdn>/MSISDN.")
        scope = form.get("scope")
        if scope is None or not scope.strip():
            raise Refusal(400, st.err("MISSING_SCOPE_INSTRUCTION"))
        scopes = scope.split()
        if any(sc not in SCOPES for sc in scopes):
            raise Refusal(400, st.err("UNSUPPORTED_SCOPE"))
        access = form.get("access_type")
        if access is not None and access not in ("online", "offline"):
            raise self.bad_request(detail="access_type must be online or offline.")
        valid_in = None
        if "consent_valid_in" in form:
            v = form["consent_valid_in"]
            if not re.match(r"^[0-9]{1,10}$", v) or int(v) <= 0:
                raise self.bad_request(detail="consent_valid_in must be a positive number of seconds.")
            valid_in = int(v)
        rid = str(uuid.uuid4())
        expires = 3600
        with st.lock:
            kept = scopes[:1] if st.dev("consent-scope-first-only") else scopes
            st.consents[rid] = {"msisdn": m.group(1), "scope": " ".join(kept), "access": access or "offline",
                                "valid_in": valid_in, "owner": uid, "product": product,
                                "exp": time.monotonic() + expires}
        interval = 10 if st.ctl("consent-interval-long") else (5 if st.mtn else 2)
        if cb:
            target = cb
            if st.dev("callback-drops-path"):
                p = urllib.parse.urlsplit(cb)
                target = "%s://%s/" % (p.scheme, p.netloc)
            attempts, delays = (1, [1]) if st.mtn else (3, [1, 2])
            if st.ctl("callback-retry-until-2xx"):
                attempts, delays = 10, [0.5, 1, 2, 4, 8, 8, 8, 8, 8]
            cb_rid = rid
            if st.dev("consent-callback-previous-id"):
                with st.lock:
                    cb_rid = st.last_auth_req.get(uid, rid)
            st.dispatcher.send(target, "POST", {"auth_req_id": cb_rid}, attempts, delays)
        with st.lock:
            st.last_auth_req[uid] = rid
        ok = 202 if st.dev("bc-authorize-answers-202") else 200
        if st.dev("consent-request-numbers-as-strings"):
            return self.send_json(ok, {"auth_req_id": rid, "interval": str(interval), "expires_in": str(expires)})
        self.send_json(ok, {"auth_req_id": rid, "interval": interval, "expires_in": expires})

    def oauth2_token(self, product):
        st = self.st
        self.check_sub_key(product)
        uid = self.authenticate_basic(token_endpoint=False, product=None)
        self.target_env()
        form = self.form_body()
        if form.get("grant_type") != CIBA_GRANT:
            raise Refusal(400, {"error": "unsupported_grant_type"}) if not st.mtn else Refusal(400, empty=True)
        rid = form.get("auth_req_id", "")
        with st.lock:
            c = st.consents.get(rid.lower()) if is_uuid(rid) else None
        if c is None:
            raise Refusal(400, {"error": "invalid_grant"}) if not st.mtn else Refusal(400, empty=True)
        if time.monotonic() >= c["exp"]:
            raise Refusal(400, {"error": "expired_token"}) if not st.mtn else Refusal(400, empty=True)
        default_validity = 86400 if st.mtn else 2592000
        validity = default_validity
        if c["valid_in"] is not None and not st.dev("consent-valid-in-ignored"):
            validity = c["valid_in"]
        life = min(3600, st.cfg.token_lifetime) if st.dev("consent-token-short-lived") else 3600
        tok = st.issue_token("consent", uid, product, life,
                             extra={"msisdn": c["msisdn"], "scope": c["scope"]})
        rec = {"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
               "scope": c["scope"], "refresh_token": str(uuid.uuid4()),
               "refresh_token_expired_in": validity}
        if c["valid_in"] is None and st.dev("consent-token-without-refresh-expiry"):
            del rec["refresh_token_expired_in"]
        self.send_json(200, rec, headers={"Cache-Control": "no-store"})

    def userinfo(self, product):
        st = self.st
        self.check_sub_key(product)
        rec = self.bearer(product, kind="consent")
        self.target_env()
        msisdn = rec.get("msisdn", "")
        if st.mtn:
            body = {"sub": "0", "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
                    "birthdate": "1976-08-13", "locale": "sv_SE", "gender": "MALE",
                    "updated_at": 1678355127}
        else:
            body = {"sub": msisdn, "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
                    "middle_name": "", "email": "sand.box@example.com", "email_verified": True,
                    "gender": "male", "locale": "sv-SE", "phone_number": msisdn,
                    "phone_number_verified": True, "address": "1 Sandbox Road, Stockholm",
                    "updated_at": 1678355127, "status": "ACTIVE", "birthdate": "1976-08-13",
                    "credit_score": "700", "active": True, "country_of_birth": "SE",
                    "region_of_birth": "Stockholm", "city_of_birth": "Stockholm",
                    "occupation": "Tester", "employer_name": "Sandbox AB",
                    "identification_type": "PASSPORT", "identification_value": "SB0000001"}
            if st.dev("userinfo-credit-score-number"):
                body["credit_score"] = 700
            if st.ctl("userinfo-claims-by-scope"):
                granted = set((rec.get("scope") or "").split())
                if "all_info" not in granted:
                    keep = {"sub"}
                    if "profile" in granted:
                        keep |= {"name", "given_name", "family_name", "middle_name", "gender", "locale",
                                 "birthdate", "updated_at"}
                    body = {k: v for k, v in body.items() if k in keep}
        self.send_json(200, body)

    # accounts -----------------------------------------------------------------
    def get_balance(self, product, currency):
        st = self.st
        uid = self.business_auth(product)
        if currency is not None:
            if not CURRENCY_RE.match(currency):
                raise self.bad_request(code="INVALID_CURRENCY", detail="currency must be an ISO 4217 code.")
            if not st.currency_ok(currency):
                raise Refusal(500, st.err("INVALID_CURRENCY"))
        cur = currency or "EUR"
        if st.mtn:
            amount = "0"
        else:
            who = self.auth_rec.get("jti") if st.dev("balance-per-token") else uid
            amount = norm_amount(st.balance(product, who, cur))
        self.send_json(200, {"availableBalance": amount, "currency": cur})

    def validate_holder(self, id_type, holder):
        if id_type == "msisdn":
            ok = self.st.msisdn_ok(holder)
        elif id_type == "email":
            ok = bool(EMAIL_RE.match(holder))
        elif id_type == "party_code":
            ok = is_uuid(holder)
        else:
            ok = False
        if not ok:
            raise self.bad_request(detail="Invalid account holder id or type.")

    def account_active(self, product, id_type, holder):
        st = self.st
        self.business_auth(product)
        if product == "disbursement" and id_type == "party_code" and st.dev("disbursement-holder-party-code-refused"):
            raise self.bad_request(detail="Invalid account holder id or type.")
        self.validate_holder(id_type, holder)
        num = holder.lstrip("+") if id_type == "msisdn" else None
        if st.mtn:
            special = {"46733123450": (404, "RESOURCE_NOT_FOUND"),
                       "46733123452": (500, "NOT_ALLOWED"),
                       "46733123453": (500, "NOT_ALLOWED_TARGET_ENVIRONMENT"),
                       "46733123454": (500, "INTERNAL_PROCESSING_ERROR"),
                       "46733123455": (503, "SERVICE_UNAVAILABLE")}
            if num in special:
                code, c = special[num]
                raise Refusal(code, st.err(c))
            return self.send_json(200, {"result": True})
        active = num not in ("46733123450", "46733123451")
        self.send_json(200, active)

    def basic_user_info(self, product, id_type, holder):
        st = self.st
        self.check_sub_key(product)
        self.bearer(product)
        self.target_env()
        if id_type != "msisdn":
            raise self.bad_request(detail="Only msisdn is supported.")
        self.validate_holder("msisdn", holder)
        if st.mtn:
            body = {"sub": "0", "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
                    "birthdate": "1976-08-13", "locale": "sv_SE", "gender": "MALE",
                    "updated_at": 1678355127}
        else:
            body = {"given_name": "Sand", "family_name": "Box", "birthdate": "1976-08-13",
                    "locale": "sv-SE", "gender": "male", "status": "ACTIVE"}
        if st.dev("basic-info-locale-lowercase"):
            body["locale"] = body["locale"].lower()
        self.send_json(200, body)

    # transactions ---------------------------------------------------------------
    def callback_header(self, uid):
        st = self.st
        cb = self.headers.get("X-Callback-Url")
        if st.dev("callback-header-name-case-sensitive"):
            cb = next((v for k, v in self.headers.items() if k == "X-Callback-Url"), None)
        if cb is None:
            return None
        if not valid_callback_url(cb):
            raise self.bad_request(code="INVALID_CALLBACK_URL_HOST", detail="X-Callback-Url is not a valid URL.")
        if st.dev("callback-url-https-refused") and not cb.lower().startswith("http://"):
            raise self.bad_request(code="INVALID_CALLBACK_URL_HOST", detail="X-Callback-Url must be an http URL.")
        if st.mtn:
            with st.lock:
                host = st.users[uid]["host"]
            seen = callback_host_of(cb)
            if st.dev("callback-host-read-from-userinfo"):
                m = NAIVE_HOST_RE.match(cb)
                seen = m.group(1).lower() if m else seen
            if seen != callback_host_of(host):
                raise Refusal(500, st.err("INVALID_CALLBACK_URL_HOST"))
        return cb

    def validate_party(self, party, role):
        st = self.st
        notfound = "PAYER_NOT_FOUND" if role == "payer" else "PAYEE_NOT_FOUND"
        if not isinstance(party, dict):
            raise self.bad_request(code=notfound, detail="%s is required." % role)
        t, pid = party.get("partyIdType"), party.get("partyId")
        if not isinstance(t, str) or not isinstance(pid, str):
            raise self.bad_request(code=notfound, detail="%s.partyIdType and partyId are required." % role)
        tt = t.upper() if st.dev("party-id-type-case-insensitive") else t
        if tt == "MSISDN":
            ok = st.msisdn_ok(pid)
        elif tt == "EMAIL":
            ok = bool(EMAIL_RE.match(pid))
        elif tt == "PARTY_CODE":
            ok = is_uuid(pid)
        else:
            raise self.bad_request(code=notfound, detail="%s.partyIdType is not allowed." % role)
        if not ok:
            raise self.bad_request(code=notfound, detail="%s.partyId does not match partyIdType." % role)
        return {"partyIdType": t, "partyId": pid}

    def validate_common(self, body, kind=None):
        st = self.st
        amount = body.get("amount")
        if not isinstance(amount, str) or not AMOUNT_RE.match(amount):
            raise self.bad_request(detail="amount must be a decimal string.")
        dec = Decimal(amount)
        if dec <= 0:
            raise self.bad_request(detail="amount must be positive.")
        if st.ctl("amount-max-2-decimals") and "." in amount and len(amount.split(".")[1]) > 2:
            raise self.bad_request(detail="amount has more than 2 decimals.")
        currency = body.get("currency")
        if not isinstance(currency, str) or not CURRENCY_RE.match(currency):
            raise self.bad_request(code="INVALID_CURRENCY", detail="currency must be an ISO 4217 code.")
        for f in ("externalId", "payerMessage", "payeeNote"):
            v = body.get(f)
            if v is None:
                continue
            if not isinstance(v, str):
                raise self.bad_request(detail="%s must be a string." % f)
            limit = TEXT_MAX - 1 if (st.mtn and st.dev("text-limit-off-by-one")) else TEXT_MAX
            if f != "externalId" and len(v) > limit and not (
                    st.mtn and kind == "deposit" and st.dev("deposit-text-length-not-checked")):
                raise self.bad_request(detail="%s is longer than %d characters." % (f, TEXT_MAX))
            if st.mtn and ("'" in v or "&" in v):
                raise self.bad_request(detail="%s contains a forbidden character." % f)
        return dec, currency

    def create_tx(self, product, kind):
        st = self.st
        if kind == "requesttopay" and not st.mtn and st.ctl("basic-auth-on-request-to-pay") \
                and (self.headers.get("Authorization") or "")[:6].lower() == "basic ":
            self.check_sub_key(product)
            uid = self.authenticate_basic(token_endpoint=False, product=product)
            self.target_env()
            self.auth_rec = {"user": uid, "jti": None, "exp": None, "kind": "basic"}
        else:
            uid = self.business_auth(product)
        ref = self.headers.get("X-Reference-Id")
        if ref is None or not is_uuid4(ref):
            raise self.bad_request(detail="X-Reference-Id must be a UUID version 4.")
        ref = ref.lower()
        try:
            return self._create_tx(product, kind, uid, ref)
        except Refusal as r:
            if r.status in (400, 500) and st.dev("refused-id-reserved"):
                with st.lock:
                    st.reserved.add(ref)
            raise

    def _create_tx(self, product, kind, uid, ref):
        st = self.st
        with st.lock:
            taken = ref in st.tx or ref in st.reserved
            if taken and not (kind == "requesttopay" and st.dev("rtp-duplicate-overwrites") and ref in st.tx):
                raise Refusal(409, st.err(self.dup_code()))
        if st.dev("concurrent-duplicate-500"):
            time.sleep(0.3)   # validation and risk checks run between the id check and the insert
        if kind == "requesttopay" and st.dev("rtp-content-type-required") and not self.headers.get("Content-Type"):
            raise self.bad_request(detail="Content-Type is required.")
        body = self.json_body()
        dec, currency = self.validate_common(body, kind)
        party = None
        refid = None
        if kind == "requesttopay":
            party = self.validate_party(body.get("payer"), "payer")
        elif kind == "deposit":
            if st.dev("deposit-payer-field-accepted") and "payee" not in body:
                party = self.validate_party(body.get("payer"), "payee")
            else:
                party = self.validate_party(body.get("payee"), "payee")
        else:
            refid = body.get("referenceIdToRefund")
            if not is_uuid(refid):
                raise self.bad_request(code="RESOURCE_NOT_FOUND", detail="referenceIdToRefund must be a UUID.")
            refid = refid.lower()
        cb = self.callback_header(uid)
        if not st.currency_ok(currency):
            raise Refusal(500, st.err("INVALID_CURRENCY"))
        if kind == "refund" and st.ctl("refund-target-checked-at-creation"):
            with st.lock:
                orig = st.tx.get(refid)
            if orig is None or orig["kind"] != "requesttopay":
                raise self.bad_request(code="RESOURCE_NOT_FOUND",
                                       detail="referenceIdToRefund does not name a request to pay.")
        now_wall = time.time()
        tx = {"id": ref, "kind": kind, "owner": uid, "product": product, "created": now_wall,
              "updated": now_wall, "status": "PENDING", "due": None, "final": None, "reason": None,
              "amount_raw": body["amount"], "amount_dec": dec, "currency": currency, "party": party,
              "externalId": body.get("externalId"), "payerMessage": body.get("payerMessage"),
              "payeeNote": body.get("payeeNote"), "callback": cb, "refid": refid,
              "dn_last": None, "finalized_at": None,
              "acct": self.auth_rec.get("jti") if st.dev("balance-per-token") else None}
        if st.dev("callback-needs-live-token"):
            tx["token_exp"] = self.auth_rec.get("exp")
        if st.mtn and st.dev("pending-record-has-transaction-id"):
            tx["financialTransactionId"] = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9)
        with st.lock:
            if (ref in st.tx or ref in st.reserved) and not (kind == "requesttopay" and st.dev("rtp-duplicate-overwrites") and ref in st.tx):
                if st.dev("concurrent-duplicate-500"):
                    raise Refusal(500, st.err("INTERNAL_PROCESSING_ERROR"))
                raise Refusal(409, st.err(self.dup_code()))
            outcome = None
            if kind == "refund":
                outcome = self.refund_precheck(tx)
            if outcome is None:
                outcome = st.outcome_for(party, kind)
            st.tx[ref] = tx
            delay, fs, reason = outcome
            if st.dev("callback-pending-first"):
                st.fire_callback(tx, pending=True)
            if delay and delay > 0:
                tx["due"] = time.monotonic() + delay
                tx["final"] = (fs, reason)
                st.schedule_settle(tx)
            else:
                st.finalize(tx, fs, reason)
        if st.ctl("accepted-body") and not st.mtn:
            return self.send_json(202, {"referenceId": ref, "status": "PENDING"})
        self.send_empty(202)

    def refund_precheck(self, tx):
        """Caller holds the lock. Returns an outcome tuple or None for the payee rule."""
        st = self.st
        orig = st.tx.get(tx["refid"])
        if orig is None or orig["kind"] != "requesttopay":
            if st.dev("refund-unknown-reference-successful"):
                return (0, "SUCCESSFUL", None)
            return (0, "FAILED", "RESOURCE_NOT_FOUND")
        st.settle(orig)
        if st.dev("refund-callback-to-payment-url"):
            tx["callback"] = orig.get("callback")
        tx["party"] = dict(orig["party"]) if orig.get("party") else None
        if orig["status"] != "SUCCESSFUL":
            return (0, "FAILED", "NOT_ALLOWED")
        if st.ctl("refund-window-10s") and time.monotonic() - orig["finalized_at"] > 10:
            return (0, "FAILED", "NOT_ALLOWED")
        if tx["currency"] != orig["currency"]:
            return (0, "FAILED", "INVALID_CURRENCY")
        if st.ctl("no-partial-refunds"):
            if tx["amount_dec"] != orig["amount_dec"] or any(
                    t["kind"] == "refund" and t["refid"] == orig["id"] and t["status"] in ("PENDING", "SUCCESSFUL")
                    for t in st.tx.values()):
                return (0, "FAILED", "NOT_ALLOWED")
        else:
            used = sum((t["amount_dec"] for t in st.tx.values()
                        if t["kind"] == "refund" and t["refid"] == orig["id"]
                        and t["status"] in ("PENDING", "SUCCESSFUL")), Decimal(0))
            if st.dev("refund-cap-compared-as-text"):
                if norm_amount(used + tx["amount_dec"]) > orig["amount_raw"]:
                    return (0, "FAILED", "NOT_ALLOWED")
            elif used + tx["amount_dec"] > orig["amount_dec"]:
                return (0, "FAILED", "NOT_ALLOWED")
        return st.outcome_for(tx["party"], "refund")

    def find_tx(self, kind, ref, uid):
        st = self.st
        if not is_uuid(ref):
            raise self.bad_request(detail="The reference id must be a UUID.")
        with st.lock:
            tx = st.tx.get(ref.lower())
            if tx is None or tx["kind"] != kind:
                raise Refusal(404, st.err("RESOURCE_NOT_FOUND"))
            st.settle(tx)
            return tx

    def get_tx(self, product, kind, ref):
        st = self.st
        uid = self.business_auth(product)
        try:
            tx = self.find_tx(kind, ref, uid)
            with st.lock:
                if tx["owner"] != uid:
                    raise Refusal(404, st.err("RESOURCE_NOT_FOUND"))
                if kind == "deposit" and tx["status"] == "FAILED" and st.dev("failed-deposit-status-404"):
                    raise Refusal(404, st.err("RESOURCE_NOT_FOUND"))
                rec = st.render(tx)
        except Refusal as r:
            if r.status == 404 and kind == "requesttopay" and st.dev("rtp-status-404-without-body"):
                raise Refusal(404, empty=True)
            raise
        self.send_json(200, rec)

    def delivery_notification(self, product, ref):
        st = self.st
        uid = self.business_auth(product)
        lang = self.headers.get("Language")
        if lang is not None and not LANG_RE.match(lang):
            raise self.bad_request(detail="Language must be an ISO 639-1 or 639-3 code.")
        if not is_uuid(ref):
            raise self.bad_request(detail="The reference id must be a UUID.")
        body = self.json_body()
        msg = body.get("notificationMessage")
        if not isinstance(msg, str) or not msg.strip():
            raise self.bad_request(detail="notificationMessage is required.")
        if len(msg) > (TEXT_MAX - 1 if (st.mtn and st.dev("text-limit-off-by-one")) else TEXT_MAX):
            raise self.bad_request(detail="notificationMessage is longer than %d characters." % TEXT_MAX)
        try:
            tx = self.find_tx("requesttopay", ref, uid)
        except Refusal as r:
            if r.status == 404 and st.dev("dn-unknown-id-409"):
                raise Refusal(409, st.err("TRANSACTION_NOT_COMPLETED"))
            raise
        window = 10 if st.ctl("delivery-window-short") else 86400
        with st.lock:
            if tx["owner"] != uid and not st.dev("dn-not-owner-accepted"):
                raise Refusal(404, st.err("RESOURCE_NOT_FOUND"))
            if tx["status"] != "SUCCESSFUL":
                raise Refusal(409, st.err("TRANSACTION_NOT_COMPLETED"))
            now = time.monotonic()
            start = tx["finalized_at"]
            if tx.get("delayed_final") and st.dev("delayed-payment-notification-expired"):
                start = float("-inf")      # the window start is only written on the immediate path
            if now - start > window:
                raise Refusal(410, st.err("EXPIRED"))
            cooldown = 3 if (not st.mtn and st.ctl("notification-cooldown-3s")) else 300
            last = tx["dn_last"]
            if st.dev("notification-cooldown-per-token"):
                last = tx.setdefault("dn_last_by_token", {}).get(self.auth_rec.get("jti"))
            if last is not None:
                if st.mtn or now - last < cooldown:
                    if st.dev("dn-repeat-409"):
                        raise Refusal(409, st.err("TRANSACTION_NOT_COMPLETED"))
                    raise Refusal(429, {"code": "NOT_ALLOWED",
                                        "message": "Too many delivery notification attempts for this id."})
            tx["dn_last"] = now
            if st.dev("notification-cooldown-per-token"):
                tx["dn_last_by_token"][self.auth_rec.get("jti")] = now
        self.send_empty(200)


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------
def print_list(items):
    for name, profiles, clause, effect in items:
        sys.stdout.write("%s\tprofiles=%s\tclause: %s\teffect: %s\n" % (name, ",".join(profiles), clause, effect))
    sys.stdout.flush()


def parse_keys(text):
    keys = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise SystemExit("--keys expects product=KEY pairs")
        p, k = part.split("=", 1)
        p = p.strip()
        if p not in PRODUCTS:
            raise SystemExit("unknown product in --keys: %s" % p)
        keys[p] = k
    return keys


def main(argv=None):
    ap = argparse.ArgumentParser(description="Independent MoMo Open API server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--profile", choices=("spec", "mtn-sandbox"), default="spec")
    ap.add_argument("--keys", default="collection=collection-key,disbursement=disbursement-key,remittance=remittance-key")
    ap.add_argument("--token-lifetime", type=float, default=3600)
    ap.add_argument("--delayed-approval-seconds", type=float, default=25)
    ap.add_argument("--pending-timeout-seconds", type=float, default=60)
    ap.add_argument("--control", action="append", default=[])
    ap.add_argument("--deviation", action="append", default=[])
    ap.add_argument("--list-controls", action="store_true")
    ap.add_argument("--list-deviations", action="store_true")
    a = ap.parse_args(argv)
    if a.list_controls:
        print_list(CONTROLS)
        return 0
    if a.list_deviations:
        print_list(DEVIATIONS)
        return 0
    for name in a.control:
        if name not in CONTROL_NAMES:
            ap.error("unknown control: %s" % name)
        if a.profile not in CONTROL_NAMES[name][1]:
            sys.stderr.write("warning: control %s does not apply to profile %s; ignored\n" % (name, a.profile))
    for name in a.deviation:
        if name not in DEVIATION_NAMES:
            ap.error("unknown deviation: %s" % name)
        if a.profile not in DEVIATION_NAMES[name][1]:
            sys.stderr.write("warning: deviation %s does not apply to profile %s; ignored\n" % (name, a.profile))

    class Cfg:
        pass
    cfg = Cfg()
    cfg.profile = a.profile
    cfg.controls = {c for c in a.control if a.profile in CONTROL_NAMES[c][1]}
    cfg.deviations = {d for d in a.deviation if a.profile in DEVIATION_NAMES[d][1]}
    cfg.token_lifetime = a.token_lifetime
    cfg.delayed_approval = a.delayed_approval_seconds
    cfg.pending_timeout = a.pending_timeout_seconds

    keys = parse_keys(a.keys)
    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    httpd.daemon_threads = True
    httpd.state = State(cfg)
    httpd.keys = keys
    httpd.key_products = {}
    for p in PRODUCTS:
        if p in keys and keys[p] not in httpd.key_products:
            httpd.key_products[keys[p]] = p

    def on_term(signum, frame):
        try:
            sys.stdout.flush()
        finally:
            os._exit(0)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    sys.stdout.write("listening on http://127.0.0.1:%d\n" % httpd.server_address[1])
    sys.stdout.flush()
    httpd.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
