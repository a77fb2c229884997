#!/usr/bin/env python3
"""Independent Mobile-Money (MoMo) Open API server.

Written from requirements/momo-api-spec.md and shared/spec/real-api-notes.md only,
as an outside target for a conformance harness.  Standard library only.

    python3 momo_server.py --port 0 --profile spec|mtn-sandbox \
        --keys collection=K1,disbursement=K2,remittance=K3 \
        --target-environment sandbox --currency EUR --token-lifetime 3600 \
        --delayed-approval-seconds 25 --pending-timeout-seconds 120 \
        --consent-approval-seconds N --choices own|plain [--deviation NAME[,NAME...]]... \
        [--control NAME[,NAME...]]...
    python3 momo_server.py --list-deviations
    python3 momo_server.py --list-controls

See README.md in this folder for every behaviour choice.
"""

import argparse
import base64
import hashlib
import heapq
import hmac
import json
import math
import re
import secrets
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

MAX_BODY = 1024 * 1024
PRODUCTS = ("collection", "disbursement", "remittance")
FINAL = ("SUCCESSFUL", "FAILED")

UUID_V4 = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$")
UUID_ANY = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$")
CURRENCY = re.compile(r"^[A-Z]{3}$")
AMOUNT = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")
LANGUAGE = re.compile(r"^[A-Za-z]{2,3}$")
B64URL = re.compile(r"^[A-Za-z0-9_-]+$")
HOSTNAME = re.compile(r"^[A-Za-z0-9._\-\[\]:]+$")

CIBA_GRANT = "urn:openid:params:grant-type:ciba"
SCOPES = ("profile", "all_info", "openid")

# Test numbers (payer of a request to pay, payee of a deposit or refund), real-api-notes.
# value: (final status, reason, timing kind)
TEST_NUMBERS = {
    "46733123450": ("FAILED", "INTERNAL_PROCESSING_ERROR", "now"),
    "46733123451": ("FAILED", "APPROVAL_REJECTED", "reject"),
    "46733123452": ("FAILED", "EXPIRED", "timeout"),
    "46733123453": ("FAILED", "EXPIRED", "pending"),
    "46733123454": ("SUCCESSFUL", None, "delayed"),
    "46733123455": ("FAILED", "PAYER_NOT_FOUND", "now"),
    "46733123456": ("FAILED", "PAYEE_NOT_ALLOWED_TO_RECEIVE", "now"),
    "46733123457": ("FAILED", "NOT_ALLOWED", "now"),
    "46733123458": ("FAILED", "NOT_ALLOWED_TARGET_ENVIRONMENT", "now"),
    "46733123459": ("FAILED", "INVALID_CALLBACK_URL_HOST", "now"),
    "46733123460": ("FAILED", "INVALID_CURRENCY", "now"),
    "46733123461": ("FAILED", "INTERNAL_PROCESSING_ERROR", "now"),
    "46733123462": ("FAILED", "SERVICE_UNAVAILABLE", "now"),
    "46733123463": ("FAILED", "COULD_NOT_PERFORM_TRANSACTION", "now"),
}

# Account-holder "active" numbers (SDK-documented): status, code; spec profile maps to 200/false and 500.
HOLDER_NUMBERS_MTN = {
    "46733123450": (404, "RESOURCE_NOT_FOUND"),
    "46733123452": (500, "NOT_ALLOWED"),
    "46733123453": (500, "NOT_ALLOWED_TARGET_ENVIRONMENT"),
    "46733123454": (500, "INTERNAL_PROCESSING_ERROR"),
    "46733123455": (503, "SERVICE_UNAVAILABLE"),
}
HOLDER_NUMBERS_SPEC = {
    "46733123450": (200, False),
    "46733123452": (500, "NOT_ALLOWED"),
    "46733123453": (500, "NOT_ALLOWED_TARGET_ENVIRONMENT"),
    "46733123454": (500, "INTERNAL_PROCESSING_ERROR"),
    "46733123455": (500, "SERVICE_UNAVAILABLE"),
}

# (plain / live-like message, own message)
MESSAGES = {
    "RESOURCE_ALREADY_EXIST": ("Duplicated reference id. Creation of resource failed.",
                               "This reference id is already in use; choose a fresh UUID v4."),
    "RESOURCE_NOT_FOUND": ("Requested resource was not found.",
                           "Nothing is known under this reference id."),
    "TRANSACTION_NOT_FOUND": ("Transaction was not found.",
                              "No financial transaction of yours has this reference id."),
    "NOT_ALLOWED_TARGET_ENVIRONMENT": ("Access to target environment is forbidden.",
                                       "This caller may not use the requested target environment."),
    "INVALID_CALLBACK_URL_HOST": ("Callback URL does not match the configured value.",
                                  "The callback URL host differs from the API user's provider callback host."),
    "INVALID_CURRENCY": ("Currency not supported.", "This currency is not handled by the wallet platform."),
    "INTERNAL_PROCESSING_ERROR": ("An internal error occurred while processing.",
                                  "Processing failed inside the wallet platform."),
    "NOT_ENOUGH_FUNDS": ("The account does not have enough funds.",
                         "Available balance does not cover the amount."),
    "NOT_ALLOWED": ("Authorization failed. User does not have permission.",
                    "The operation is not permitted for this transaction."),
    "TRANSACTION_NOT_COMPLETED": ("The transaction is not completed.",
                                  "Delivery notifications need a SUCCESSFUL transaction."),
    "EXPIRED": ("The delivery notification opportunity has expired.",
                "Too late: the notification window of this transaction has closed."),
    "SERVICE_UNAVAILABLE": ("Service unavailable.", "The wallet platform cannot answer just now."),
    "PAYER_NOT_FOUND": ("Payer not found.", "No account holder matches the payer."),
    "PAYEE_NOT_FOUND": ("Payee not found.", "No account holder matches the payee."),
    "PAYEE_NOT_ALLOWED_TO_RECEIVE": ("Payee is not allowed to receive.", "The payee may not receive funds."),
    "APPROVAL_REJECTED": ("The payer rejected the request.", "The account holder declined the approval."),
    "COULD_NOT_PERFORM_TRANSACTION": ("Could not perform transaction.", "The transaction could not be performed."),
    "UNSUPPORTED_SCOPE": ("Unsupported scope.", "At least one requested scope is not offered."),
    "MISSING_SCOPE_INSTRUCTION": ("Scope is missing.", "The scope parameter names no scope."),
    "TOO_MANY": ("Too many attempts for the same ID recently.",
                 "A notification for this transaction was just sent; try later."),
}


# ----------------------------------------------------------------------------------------------
# Deliberate deviations (--deviation NAME): each makes the server depart from the API in one way.
# (name, profiles in which it is a deviation, clause broken, what it does)

BOTH = "spec,mtn-sandbox"
MTN = "mtn-sandbox"
DEVIATIONS = [
    # --- collection: request to pay ---
    ("rtp-reference-reusable-after-failure", BOTH,
     "spec §2.5 and §7 rule 1: reusing an X-Reference-Id gives 409 RESOURCE_ALREADY_EXIST",
     "A request-to-pay reference id whose payment ended FAILED is accepted again (202) and makes a new payment."),
    ("reference-id-case-sensitive", BOTH,
     "spec §2.5 and §7 rule 1 (409 on reuse) with RFC 9562 §4: UUID hex digits are case-insensitive on input",
     "A transaction reference id already used is accepted again (202) when sent in upper case."),
    ("email-party-refused", BOTH,
     "spec §2.1: partyIdType EMAIL with a valid e-mail address is an allowed party",
     "A payer or payee identified by EMAIL is refused with 400 although the address is valid."),
    ("party-code-not-validated", BOTH,
     "spec §2.1: PARTY_CODE partyId is a UUID, validated according to partyIdType (else 400)",
     "A payer or payee of type PARTY_CODE whose partyId is not a UUID is accepted (202)."),
    ("external-id-must-be-unique", BOTH,
     "spec §2.2: externalId need not be unique",
     "A request to pay reusing the externalId of an earlier one of the same API user is refused with 409 "
     "RESOURCE_ALREADY_EXIST."),
    ("json-charset-parameter-refused", BOTH,
     "spec §4.1 Content-Type is the body's media type; RFC 8259 §11: a charset parameter has no effect on "
     "compliant recipients",
     "A JSON body sent as 'application/json; charset=utf-8' is refused with 400."),
    ("payment-credited-twice-with-callback", BOTH,
     "spec §1/§4.2 #2 and §2.9: a request to pay moves its amount once, the balance is the account's balance",
     "A successful request to pay that carries an X-Callback-Url credits the collection balance twice."),
    ("amount-in-exponent-form", MTN,
     "notes [observed]: amount comes back as a decimal string without trailing zeros (\"50000\")",
     "Whole amounts ending in zeros come back in exponent form (\"100\" -> \"1E+2\") in records and callbacks."),
    ("failed-record-has-transaction-id", MTN,
     "notes [observed]: PENDING and FAILED records have no financialTransactionId",
     "A FAILED transaction's status record and callback carry a financialTransactionId."),
    ("delayed-approval-expires", MTN,
     "notes [observed]: 46733123454 is PENDING, then SUCCESSFUL after a delay",
     "The delayed-approval test number ends FAILED with reason EXPIRED instead of SUCCESSFUL."),
    # --- collection: delivery notification ---
    ("notification-refusal-counts-as-attempt", BOTH,
     "spec §4.2 #3 and §8: 429 occurs only after an earlier successful attempt",
     "A delivery notification refused with 409 (payment not yet complete) still starts the 429 period, so the "
     "first notification after success gets 429."),
    ("notification-ignores-owner", BOTH,
     "spec §4.2 #3: 404 when the caller does not own the financial transaction",
     "Any API user can send a delivery notification for another API user's payment (200)."),
    ("notification-length-not-checked", MTN,
     "notes [observed]: notificationMessage over 160 characters gives 400",
     "A notificationMessage longer than 160 characters is enqueued (200); the limit is kept on payerMessage "
     "and payeeNote."),
    ("notification-failed-payment-gone", BOTH,
     "spec §4.2 #3: 409 when the transaction is not successfully completed (410 is for an expired opportunity)",
     "A delivery notification for a FAILED payment answers 410 EXPIRED instead of 409 TRANSACTION_NOT_COMPLETED."),
    ("language-639-3-refused", BOTH,
     "spec §4.1: Language is an ISO 639-1 or ISO 639-3 code",
     "A delivery notification with a three-letter ISO 639-3 Language (e.g. 'swe') is refused with 400."),
    # --- balances ---
    ("balance-currency-any-case", BOTH,
     "spec §4.2 #4: currency is an ISO 4217 code (three upper-case letters), else 400 invalid data",
     "GET /collection/v1_0/account/balance/eur answers 200 with the EUR balance instead of 400."),
    ("remittance-balance-as-number", BOTH,
     "spec §2.9 and §4.4 #13: availableBalance is a string",
     "The remittance balance gives availableBalance as a JSON number (collection and disbursement keep strings)."),
    # --- disbursement ---
    ("failed-deposit-keeps-money", BOTH,
     "spec §4.3 #10: a deposit moves money from the owner's account only when it is made",
     "A deposit that ends FAILED (test payee) still debits the disbursement balance, and the money is not "
     "given back."),
    ("refund-debited-twice", BOTH,
     "spec §4.3 #9: a refund moves its amount once from the owner's account",
     "A successful refund debits the disbursement balance twice: at creation and again when it succeeds."),
    ("refused-deposit-still-debits", BOTH,
     "spec §7 rule 1 and §4.3 #10: a creation refused with 409 creates nothing and moves no money",
     "A deposit refused with 409 for its reused reference id still debits the disbursement balance by its amount."),
    ("disbursement-reference-any-uuid", BOTH,
     "spec §2.5 and §4.3 #9-#10: X-Reference-Id is a UUID version 4, else 400",
     "Deposits and refunds accept an X-Reference-Id of any UUID version (e.g. a version-1 UUID) with 202."),
    ("disbursement-amount-as-number", BOTH,
     "spec §2.3/§2.4: amount is declared as a string",
     "Deposits and refunds accept amount as a JSON number (202) instead of refusing it with 400."),
    ("deposit-test-numbers-ignored", MTN,
     "notes [observed] test-number table: it applies to the payee of a deposit",
     "A deposit to a failing test number (e.g. 46733123450) ends SUCCESSFUL."),
    ("deposit-record-says-payer", MTN,
     "notes [observed]: refund and deposit records use payee instead of payer",
     "The deposit status record and its callback name the party 'payer' instead of 'payee'."),
    ("disbursement-holder-id-not-validated", BOTH,
     "spec §4.3 #12 (same as §4.2 #8): accountHolderId is validated by type, else 400",
     "The disbursement account-holder check answers 200 active for an id that is not valid for its type "
     "(e.g. msisdn 'abc'); the collection one still refuses it."),
    ("holder-not-found-active", MTN,
     "notes [documented]: active for 46733123450 gives 404 RESOURCE_NOT_FOUND (spec §4.2 #8: false if not found)",
     "The account holder 46733123450, which does not exist, is reported active (200 true)."),
    # --- consent ---
    ("consent-valid-in-ignored", BOTH,
     "spec §2.7: refresh_token_expired_in is based on the consent_valid_in parameter of bc-authorize",
     "consent_valid_in is ignored: refresh_token_expired_in is always the default consent validity."),
    ("consent-scope-from-latest-request", BOTH,
     "spec §2.7: scope is the scopes that belong to the authentication request ID",
     "The consent token carries the scope of the API user's latest bc-authorize, not of the auth_req_id "
     "redeemed."),
    ("consent-redeemed-by-other-user", BOTH,
     "spec §4.3 #11 CIBA grant; OpenID CIBA Core 1.0 §11: invalid_grant if the auth_req_id was issued to "
     "another client",
     "Any API user can redeem another API user's auth_req_id for a consent token."),
    ("refresh-token-not-uuid", BOTH,
     "spec §2.7: refresh_token is the UUID of the refresh token",
     "refresh_token is a 40-character hex string, not a UUID."),
    ("refresh-extends-consent", BOTH,
     "spec §2.7: refresh_token_expired_in is the seconds until the consent can no longer be refreshed",
     "Each refresh restarts the consent's validity, so refresh_token_expired_in never counts down."),
    ("ciba-grant-type-not-checked", BOTH,
     "spec §4.3 #11: grant_type is the constant urn:openid:params:grant-type:ciba",
     "Any grant_type other than refresh_token (e.g. client_credentials) is treated as the CIBA grant."),
    ("consent-callback-missing", BOTH,
     "spec §6: the service sends a callback to the X-Callback-Url given on bc-authorize",
     "No callback is sent for bc-authorize (transaction callbacks are still sent)."),
    ("basic-user-info-needs-consent", BOTH,
     "spec §4.2 #5 and §5.5: basic user information requires no consent of the account holder",
     "Basic user information refuses an ordinary access token with 401 and wants a consent token."),
    ("consent-token-opens-payments", BOTH,
     "spec §5.2-§5.4: the Bearer credential of business operations is the access token of the token operation; "
     "the consent token is for user information with consent",
     "A customer's consent token is accepted as the Bearer credential of requests to pay and other business "
     "operations."),
    # --- provisioning and tokens ---
    ("apiuser-host-not-required", MTN,
     "notes [observed]: POST /v1_0/apiuser without providerCallbackHost gives 400",
     "An API user is created (201) from a body without providerCallbackHost."),
    ("api-key-case-insensitive", BOTH,
     "spec §5.2 and §7 rule 4: the Basic credential is the API user ID and its API key; a failed token request "
     "gives 401",
     "The token operations accept the API key with its letters in another case."),
    ("apiuser-bad-id-404", MTN,
     "notes [observed]: a non-UUID id in the path gives 400",
     "POST /v1_0/apiuser/{id}/apikey and GET /v1_0/apiuser/{id} answer 404 RESOURCE_NOT_FOUND for an id that "
     "is not a UUID."),
    ("auth-scheme-case-sensitive", BOTH,
     "spec §5.3 (Basic and Bearer standards); RFC 9110 §11.1: the auth-scheme is case-insensitive",
     "An Authorization header whose scheme is not written exactly 'Basic' or 'Bearer' (e.g. 'bearer') is "
     "refused with 401."),
    ("token-dies-early", BOTH,
     "spec §2.6: expires_in is the validity of the token in seconds",
     "An access token stops being accepted after a sixtieth of its expires_in (seconds taken as minutes)."),
    ("expired-token-500", BOTH,
     "spec §7 (401 Unauthorized, body {error}); notes [documented]: an expired bearer token gives 401",
     "An expired access token on a business operation answers 500 INTERNAL_PROCESSING_ERROR instead of 401."),
    # --- callbacks ---
    ("callback-while-pending", MTN,
     "notes [documented]: the callback is sent when the transaction reaches a final state",
     "The callback is sent at creation with the PENDING record, and none is sent when the transaction ends."),
    ("callback-without-transaction-id", MTN,
     "notes [documented]: the callback body is the same record as the status GET",
     "Callbacks of SUCCESSFUL transactions leave out the financialTransactionId that the status GET shows."),
    ("callback-host-suffix-match", MTN,
     "notes [observed]: the callback URL's host must equal the API user's providerCallbackHost, else 500 "
     "INVALID_CALLBACK_URL_HOST",
     "A callback URL whose host merely ends with the registered host (evilexample.com for example.com) is "
     "accepted."),
    ("callback-query-dropped", BOTH,
     "spec §6: the callback is sent to the address given in X-Callback-Url; notes [documented]: sent to "
     "X-Callback-Url",
     "The callback is sent to the X-Callback-Url without its query string."),
]
DEVIATIONS += [
    # --- third batch ---
    # class 2: right at first, wrong after a later event
    ("polling-postpones-outcome", BOTH,
     "spec §3: a request to pay is PENDING 'until the payer authorizes or declines it, or the system times it "
     "out' (a status read is none of these); notes [observed]: 46733123454 is PENDING, then SUCCESSFUL after a "
     "delay",
     "Each status query of a transaction still PENDING restarts its wait for the outcome, so a transaction "
     "polled more often than its delay (e.g. the delayed-approval number every 0.2 s) stays PENDING as long as "
     "it is polled."),
    ("second-api-key-not-stored", BOTH,
     "spec §4.5 #15: '201 with { apiKey }', the created API user key; §5.2: the token credential is the API "
     "user ID and API key",
     "A second POST /v1_0/apiuser/{id}/apikey answers 201 with a new apiKey but keeps the first one: the token "
     "operations refuse the new key (401, mtn-sandbox 500 login_failed) and still take the old."),
    ("refresh-uses-latest-holder", BOTH,
     "spec §2.7 refresh_token and §5.4: the refresh token belongs to the consent of the account holder named "
     "in bc-authorize; §2.11 sub 'Identifier of the end user'; RFC 6749 §6 (a refreshed token keeps the "
     "original grant)",
     "The refresh_token grant issues the consent token for the account holder of the API user's most recent "
     "bc-authorize: after a consent request for another holder, the refreshed token opens that holder's user "
     "information."),
    ("deposit-hold-released-after-success", BOTH,
     "spec §4.3 #10: 'Deposits an amount from the owner's account to a payee account'; §2.9 availableBalance "
     "'Available balance of the account'",
     "The amount held for a deposit is given back to the disbursement balance 3 s after the deposit was "
     "accepted, also when it succeeded (or is still pending): the balance is right at first and too high 3 s "
     "later."),
    ("token-lifetime-sliding", BOTH,
     "spec §2.6 expires_in 'Validity of the token in seconds'; §5.3; notes [documented]: an expired bearer "
     "token gives 401",
     "An access token's validity runs from its last use instead of its issue: a token used at least once every "
     "expires_in seconds is accepted for ever (a token left unused still expires on time)."),
    ("duplicate-deposit-deletes-original", BOTH,
     "spec §2.5 and §7 rule 1: reusing an X-Reference-Id gives 409 (the existing transaction stays); §4.3 #10 "
     "status query by GET /deposit/{referenceId}; notes [observed]: 404 only for an unknown id",
     "A deposit refused with 409 for its reused X-Reference-Id deletes the stored deposit: its status query "
     "then answers 404 RESOURCE_NOT_FOUND and the id is accepted again (202)."),
    ("earlier-consent-request-dropped", BOTH,
     "spec §2.8 expires_in 'Seconds until the authentication request ID expires'; §8 'The consent request ID "
     "expires after expires_in seconds'; §5.4",
     "A new bc-authorize of an API user discards its earlier auth_req_ids not yet redeemed: redeeming the first "
     "of two consent requests answers 400 invalid_grant although it has not expired."),
    # class 5: money
    ("overlapping-payments-lose-credit", BOTH,
     "spec §2.2 'amount: Amount debited from the payer account'; §2.9 availableBalance 'Available balance of "
     "the account'",
     "A successful request to pay sets the collection balance to the balance read when it was accepted plus its "
     "amount, so a payment completing after another one accepted later has been credited wipes out that credit "
     "(…454 for 10, then an ordinary 5: +10 instead of +15)."),
    ("second-refund-not-debited", BOTH,
     "spec §4.3 #9: 'Refunds an amount from the owner's account to a payee account' (every refund); §2.4 "
     "amount; §2.9",
     "Only the first refund of a request to pay debits the disbursement balance: further (partial) refunds of "
     "the same payment succeed without taking their amount."),
    ("remittance-balance-reads-disbursement", BOTH,
     "spec §4.4 #13 remittance balance and §2.9 'Available balance of the account'; §4.3 #10 a deposit moves "
     "money from the owner's disbursement account only",
     "The remittance balance shows the caller's disbursement account: it opens at the disbursement starting "
     "balance and drops with every deposit and refund."),
    ("amount-parsed-as-float", BOTH,
     "spec §2.2/§2.3/§2.4 amount (an amount of money, as a string); §4.2 #2 and §4.3 #9-#10 '400: invalid data'",
     "Amounts are checked with float(): strings that are no decimal amount but float literals (\"Infinity\", "
     "also \"1e3\", \"5_0\") are accepted (202) on request to pay, deposit and refund."),
    # class 4: callbacks
    ("refused-creation-calls-back", BOTH,
     "spec §6: a callback is sent for a transaction; §4.2 #2, §4.3 #9-#10: a 500 refusal creates nothing; notes "
     "[documented]: the callback is sent when the transaction reaches a final state",
     "A request to pay, deposit or refund refused with 500 INVALID_CURRENCY still sends a FAILED callback "
     "(reason INVALID_CURRENCY) to its X-Callback-Url, for a transaction whose status query answers 404."),
    ("callback-url-percent-decoded", BOTH,
     "spec §6: the callback is sent to the address given in X-Callback-Url; RFC 3986 §2.2 and §6.2.2.2 (a "
     "percent-encoded reserved character is not the same as the character itself)",
     "The callback is sent to the X-Callback-Url after percent-decoding it: http://h/cb/a%2Fb is called at "
     "/cb/a/b, and ?x=a%26b becomes ?x=a&b."),
    ("callback-labelled-form-encoded", BOTH,
     "spec §4 'All payloads are JSON except where marked form-encoded'; notes [documented]: the callback body "
     "is the same record as the status GET; RFC 9110 §8.3",
     "Transaction and consent callbacks send their JSON body labelled Content-Type: "
     "application/x-www-form-urlencoded (the HTTP client's default) instead of application/json."),
    ("callback-party-id-masked", MTN,
     "notes [documented]: the callback body is the same record as the status GET; notes [observed]: partyId "
     "comes back exactly as sent",
     "Callbacks mask the payer's or payee's partyId except its last four characters (\"*******0001\") while "
     "the status GET gives it in full."),
    ("callback-amount-as-number", MTN,
     "notes [documented]: the callback body is the same record as the status GET; notes [observed]: amount is "
     "a decimal string (\"12.5\")",
     "Callbacks give amount as a JSON number (12.5) while the status GET of the same transaction gives the "
     "string \"12.5\"."),
    # class 1: right on one operation, wrong on a sibling
    ("deposit-callback-url-required", BOTH,
     "spec §4.3 #10 'Headers: as for refund' and #9 'X-Callback-Url (optional)'; §4.1 X-Callback-Url 'header, "
     "optional'; notes [observed]: without X-Callback-Url the creation always succeeds",
     "A deposit without X-Callback-Url is refused with 400; requests to pay and refunds without it are still "
     "accepted."),
    ("remittance-balance-needs-currency", BOTH,
     "spec §4.4 #13: GET /remittance/v1_0/account/balance (no currency in the path) answers 200 with the "
     "balance record",
     "GET /remittance/v1_0/account/balance answers 400 (the currency check of the collection balance, #4, is "
     "applied to it); only the extension path with a currency answers 200."),
    ("apikey-requires-reference-header", BOTH,
     "spec §4.5 #15: the API user id is the path parameter, 'No body', and the provisioning headers are only "
     "Ocp-Apim-Subscription-Key (§4.5); notes [observed]: POST /v1_0/apiuser/{id}/apikey -> 201",
     "POST /v1_0/apiuser/{id}/apikey without an X-Reference-Id header is refused with 400 (the header check of "
     "API-user creation, #14, runs on it); with the header the key is made for the path id."),
    ("notification-for-deposit-accepted", BOTH,
     "spec §4.2 #3: the path {referenceId} 'is the X-Reference-Id used in the creation POST' of the request to "
     "pay; 404 'Reference ID does not exist'",
     "A delivery notification whose path names one of the caller's SUCCESSFUL deposits or refunds instead of a "
     "request to pay is enqueued (200) instead of 404."),
    # class 3: inputs
    ("reference-id-parsed-leniently", BOTH,
     "spec §2.5 and §4.1: X-Reference-Id is a UUID v4; RFC 9562 §4 (the string form is 8-4-4-4-12 hex digits "
     "with hyphens); notes [observed]: X-Reference-Id not a UUID v4 -> 400",
     "Requests to pay, deposits and refunds parse X-Reference-Id with a lenient UUID parser: a version-4 UUID "
     "written as 32 hex digits without hyphens, in braces or as urn:uuid: is accepted (202)."),
    ("msisdn-16-digits-accepted", BOTH,
     "spec §2.1 'MSISDN: mobile number per ITU-T E.164' (at most 15 digits), 'validated according to "
     "partyIdType'; §4.2 #8 accountHolderId per E.164",
     "An MSISDN of 16 digits is accepted as payer, payee, account holder, login_hint and basic-info MSISDN "
     "(the length check is off by one); 17 digits are still refused."),
    ("access-type-not-checked", BOTH,
     "spec §4.2 #7: access_type is 'online or offline'; §7 '400 Bad request; invalid data'",
     "bc-authorize accepts any access_type, or none, and answers 200 with an auth_req_id instead of 400."),
    ("multiple-scopes-refused", BOTH,
     "spec §2.7 scope 'Scopes that belong to the authentication request ID', §4.2 #7 scope; RFC 6749 §3.3 and "
     "OpenID CIBA Core §7.1 (scope is a space-delimited list)",
     "bc-authorize refuses a scope naming more than one known scope (\"profile openid\") with 400 "
     "UNSUPPORTED_SCOPE; a single scope is accepted."),
    ("apiuser-host-not-string-accepted", BOTH,
     "spec §2.12 'providerCallbackHost (string)'; §4.5 #14 '400 invalid data'",
     "POST /v1_0/apiuser whose providerCallbackHost is a JSON number (e.g. 12345) is accepted (201) and the "
     "number stored as text, instead of 400."),
    ("email-plus-address-refused", BOTH,
     "spec §2.1 'EMAIL: valid e-mail format' and §4.2 #8 'e-mail format'; RFC 5322 §3.2.3 ('+' is an atext "
     "character of the local part)",
     "An e-mail address with '+' in its local part (ann+shop@example.com) is refused with 400 as payer, payee "
     "and account holder; other addresses are accepted."),
    # other
    ("consent-pending-500", BOTH,
     "spec §2.8 and §5.4: the client retries the token operation every interval until the holder has answered; "
     "OpenID CIBA Core §11 (authorization_pending, HTTP 400)",
     "The OAuth 2.0 token operation answers a consent the holder has not answered yet with 500 "
     "INTERNAL_PROCESSING_ERROR instead of 400 authorization_pending."),
    ("holder-test-codes-shifted", MTN,
     "notes [documented]: account holder active …452 -> 500 NOT_ALLOWED, …453 -> 500 "
     "NOT_ALLOWED_TARGET_ENVIRONMENT, …454 -> 500 INTERNAL_PROCESSING_ERROR, …455 -> 503 SERVICE_UNAVAILABLE",
     "The account-holder test errors are shifted by one number: …452 gives NOT_ALLOWED_TARGET_ENVIRONMENT, …453 "
     "INTERNAL_PROCESSING_ERROR, …454 503 SERVICE_UNAVAILABLE and …455 200 true."),
]
DEVIATION_NAMES = [d[0] for d in DEVIATIONS]

# ----------------------------------------------------------------------------------------------
# Controls (--control NAME): each makes the server choose otherwise on a point the documents leave open,
# still within the spec (and, for the mtn-sandbox profile, within what the notes record).
# (name, profiles in which it is legal, clause that allows it, what it does)

CONTROLS = [
    ("ciba-interval-fractional", BOTH,
     "spec §2.8 'interval | number' (a JSON number, not necessarily whole; no value given); notes: bc-authorize "
     "returns numbers [documented]",
     "bc-authorize answers interval 0.5 (seconds) instead of a whole number (own 1, plain 5)."),
    ("consent-scope-reordered", BOTH,
     "spec §2.7 scope 'Scopes that belong to the authentication request ID'; RFC 6749 §3.3 (space-delimited "
     "scopes whose order does not matter); notes silent",
     "The consent token record lists its scopes in the reverse order of the bc-authorize request "
     "(\"all_info openid\" -> \"openid all_info\")."),
    ("jwt-hs512", BOTH,
     "spec §2.6 and §5.3 'The access token is a JWT' (no algorithm given); RFC 7518 §3.1 (HS512); notes show "
     "only '<JWT>'",
     "Access and consent tokens are signed with HS512 (header alg HS512) instead of HS256."),
    ("holders-found-by-msisdn-only", "spec",
     "spec §4.2 #8 and §4.3 #12 '200: ... false if it is not active or not found' (which holders exist is not "
     "given); the notes document MSISDN holders only",
     "Account holders named by email or party_code are not found: the active check answers 200 false for them; "
     "MSISDN holders are unchanged."),
    ("two-given-names", "spec",
     "spec §2.10 given_name 'Given name(s), separated by spaces' and §2.11 given_name 'Given name(s)'; the "
     "live record's 'Sand' is one observation",
     "Basic user information and user information with consent give the holder two given names, \"Sand "
     "Sandy\" (name \"Sand Sandy Box\" where a name is given)."),
    ("remittance-funded", "spec",
     "spec §2.9 and §4.4 #13 availableBalance 'Available balance of the account' (no opening balance given); "
     "the live sandbox's \"0\" is an observation",
     "Every new API user's remittance account opens with --starting-balance (default 1000000) instead of 0; "
     "payments and deposits still do not touch it."),
    ("callback-tracking-headers", BOTH,
     "spec §6 'Callback payload, timing, retries, signing ... not shown'; RFC 9110 §5.1 (a recipient ignores "
     "header fields it does not recognize); notes silent on callback headers",
     "Every callback carries User-Agent: MoMo-Callback/1.0, X-Callback-Id (a fresh UUID) and X-Reference-Id "
     "(the transaction's reference id, or the auth_req_id)."),
]
CONTROL_NAMES = [c[0] for c in CONTROLS]


def now_wall():
    return time.time()


def now_mono():
    return time.monotonic()


# ----------------------------------------------------------------------------------------------
# Options


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("momo_server.py: " + " ".join(str(message).split()) + "\n")
        sys.exit(2)


class BadOption(Exception):
    pass


def _nonneg_seconds(name, text, allow_inf=False):
    try:
        v = float(text)
    except ValueError:
        raise BadOption(f"{name} must be a number of seconds (got {text!r})")
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        raise BadOption(f"{name} must be a finite number >= 0 (got {text!r})")
    return v


def parse_config(argv):
    p = OneLineParser(prog="momo_server.py", description="Independent MoMo Open API server")
    p.add_argument("--port", default="0", help="TCP port on 127.0.0.1; 0 picks a free one (default 0)")
    p.add_argument("--profile", default="spec", help="spec | mtn-sandbox (default spec)")
    p.add_argument("--keys", default="collection=collection-key,disbursement=disbursement-key,"
                                     "remittance=remittance-key",
                   help="subscription keys: collection=K1,disbursement=K2,remittance=K3")
    p.add_argument("--target-environment", default="sandbox")
    p.add_argument("--currency", default="EUR")
    p.add_argument("--token-lifetime", default="3600", help="access token lifetime, seconds")
    p.add_argument("--consent-token-lifetime", default="3600", help="consent access token lifetime, seconds")
    p.add_argument("--delayed-approval-seconds", default="25")
    p.add_argument("--pending-timeout-seconds", default="120")
    p.add_argument("--consent-approval-seconds", default=None,
                   help="delay before the holder approves a consent (default: own 2, plain 0)")
    p.add_argument("--choices", default="own", help="own | plain (default own)")
    p.add_argument("--starting-balance", default="1000000", help="disbursement balance of a new API user")
    p.add_argument("--notification-window-seconds", default=None,
                   help="delivery-notification window after completion (default: own 600, plain 86400)")
    p.add_argument("--notification-cooldown-seconds", default=None,
                   help="429 period after a successful notification; inf = for ever (default: own 20, plain inf)")
    p.add_argument("--verbose", action="store_true", help="log requests to stderr")
    p.add_argument("--deviation", action="append", default=[], metavar="NAME",
                   help="depart from the API in one named way (repeatable, or a comma list); see --list-deviations")
    p.add_argument("--list-deviations", action="store_true",
                   help="print every deviation (name, profiles, clause broken, what it does) and exit")
    p.add_argument("--control", action="append", default=[], metavar="NAME",
                   help="choose otherwise on one point the documents leave open (repeatable, or a comma list); "
                        "see --list-controls")
    p.add_argument("--list-controls", action="store_true",
                   help="print every control (name, profiles where legal, clause that allows it, what it does) "
                        "and exit")
    a = p.parse_args(argv)
    if a.list_deviations or a.list_controls:
        for table, wanted in ((DEVIATIONS, a.list_deviations), (CONTROLS, a.list_controls)):
            if wanted:
                for name, profiles, clause, what in table:
                    sys.stdout.write(f"{name}\t{profiles}\t{clause}\t{what}\n")
        sys.exit(0)

    class Cfg:
        pass

    c = Cfg()
    try:
        try:
            c.port = int(a.port)
        except ValueError:
            raise BadOption(f"--port must be an integer 0..65535 (got {a.port!r})")
        if not 0 <= c.port <= 65535:
            raise BadOption(f"--port must be an integer 0..65535 (got {a.port!r})")
        if a.profile not in ("spec", "mtn-sandbox"):
            raise BadOption(f"--profile must be 'spec' or 'mtn-sandbox' (got {a.profile!r})")
        c.profile = a.profile
        if a.choices not in ("own", "plain"):
            raise BadOption(f"--choices must be 'own' or 'plain' (got {a.choices!r})")
        c.choices = a.choices
        keys = {"collection": "collection-key", "disbursement": "disbursement-key", "remittance": "remittance-key"}
        for item in a.keys.split(","):
            prod, eq, key = item.strip().partition("=")
            if not eq or prod not in PRODUCTS or not key.strip() or any(ch.isspace() for ch in key.strip()):
                raise BadOption("--keys must look like collection=K1,disbursement=K2,remittance=K3 "
                                f"(bad item {item!r})")
            keys[prod] = key.strip()
        c.keys = keys
        te = a.target_environment
        if not te or len(te) > 64 or not re.match(r"^[A-Za-z0-9._-]+$", te):
            raise BadOption(f"--target-environment must be 1-64 of A-Z a-z 0-9 . _ - (got {te!r})")
        c.target_env = te
        if not CURRENCY.match(a.currency):
            raise BadOption(f"--currency must be an ISO 4217 code of three upper-case letters (got {a.currency!r})")
        c.currency = a.currency
        for name, attr, val in (("--token-lifetime", "token_lifetime", a.token_lifetime),
                                ("--consent-token-lifetime", "consent_token_lifetime", a.consent_token_lifetime)):
            try:
                v = int(val)
            except ValueError:
                raise BadOption(f"{name} must be a whole number of seconds >= 1 (got {val!r})")
            if v < 1:
                raise BadOption(f"{name} must be a whole number of seconds >= 1 (got {val!r})")
            setattr(c, attr, v)
        c.delayed_approval = _nonneg_seconds("--delayed-approval-seconds", a.delayed_approval_seconds)
        c.pending_timeout = _nonneg_seconds("--pending-timeout-seconds", a.pending_timeout_seconds)
        own = c.choices == "own"
        c.consent_approval = _nonneg_seconds(
            "--consent-approval-seconds",
            a.consent_approval_seconds if a.consent_approval_seconds is not None else ("2" if own else "0"))
        try:
            c.starting_balance = Decimal(a.starting_balance)
            if not AMOUNT.match(a.starting_balance):
                raise InvalidOperation
        except InvalidOperation:
            raise BadOption(f"--starting-balance must be a plain decimal number >= 0 (got {a.starting_balance!r})")
        c.notif_window = _nonneg_seconds(
            "--notification-window-seconds",
            a.notification_window_seconds if a.notification_window_seconds is not None
            else ("600" if own else "86400"), allow_inf=True)
        c.notif_cooldown = _nonneg_seconds(
            "--notification-cooldown-seconds",
            a.notification_cooldown_seconds if a.notification_cooldown_seconds is not None
            else ("20" if own else "inf"), allow_inf=True)
        devs = set()
        for item in a.deviation:
            for name in item.split(","):
                name = name.strip()
                if not name:
                    continue
                if name not in DEVIATION_NAMES:
                    raise BadOption(f"--deviation: unknown name {name!r} (see --list-deviations)")
                devs.add(name)
        c.deviations = frozenset(devs)
        ctls = set()
        for item in a.control:
            for name in item.split(","):
                name = name.strip()
                if not name:
                    continue
                if name not in CONTROL_NAMES:
                    raise BadOption(f"--control: unknown name {name!r} (see --list-controls)")
                ctls.add(name)
        c.controls = frozenset(ctls)
    except BadOption as e:
        p.error(str(e))
    c.verbose = a.verbose
    return c


class Behaviour:
    """Every profile deviation and every open-point choice, in one place (see README.md)."""

    def __init__(self, cfg):
        spec = cfg.profile == "spec"
        mtn = not spec
        own = cfg.choices == "own"
        self.spec, self.mtn, self.own = spec, mtn, own
        # --- profile deviations (real-api-notes [observed]/[documented]) ---
        self.token_fail_status = 401 if spec else 500
        self.gateway_errors = mtn
        self.token_body_400 = mtn
        self.product_binding = mtn
        self.reject_apostrophe_amp = mtn
        self.holder_table = HOLDER_NUMBERS_SPEC if spec else HOLDER_NUMBERS_MTN
        # --- choices (spec profile: the spec allows them; mtn profile: the notes allow them) ---
        if spec:
            self.token_type = "bearer" if own else "Bearer"
        else:
            self.token_type = "access_token"
        self.reason_object = spec and own
        self.normalise_amount = mtn or own
        self.empty_400 = mtn or own
        self.text_limit = 160 if (mtn or own) else None
        self.ordinary_delay = 1.0 if (spec and own) else 0.0
        self.created_phase = 0.5 if (mtn and own) else 0.0
        self.reject_delay = 1.0 if own else 0.0
        self.timeout_delay = 2.0 if own else 0.0
        self.ftid_on_deposit = not own
        self.extra_record_fields = spec and own
        if spec:
            m = "PUT" if own else "POST"
            self.callback_method = {"requesttopay": m, "deposit": m, "refund": m}
        else:
            self.callback_method = {"requesttopay": "PUT", "deposit": "POST", "refund": "PUT" if own else "POST"}
        self.callback_attempts = 3 if own else 1
        self.exp_float = own
        self.own_401 = own
        self.own_messages = spec and own
        self.message_first = own
        self.holder_bare_bool = spec and own
        self.balance_two_decimals = spec and own
        self.basicinfo_extra = spec and own
        self.userinfo_filter = spec and own
        self.observed_userinfo = mtn
        self.apikey_urlsafe = spec and own
        self.apiuser_extra = spec and own
        self.status_requires_env = own
        self.global_ref_namespace = own
        self.refund_unknown_500 = own
        self.funds_sync = own
        self.notif_404_code = "TRANSACTION_NOT_FOUND" if own else "RESOURCE_NOT_FOUND"
        self.notif_200_body = own
        self.retry_after = own
        self.max_decimals = 2 if own else None
        self.msisdn_plus = own
        self.ciba_interval = 1 if own else 5
        self.ciba_expires = 300 if own else 120
        self.ciba_one_time = own
        self.refresh_rotate = own
        self.refresh_default = 7200 if own else 3600
        self.content_type = "application/json; charset=utf-8" if own else "application/json"
        self.basic_on_business = own
        self.jwt_kid = own

        # --- deliberate deviations (--deviation) and controls (--control) ---
        self.deviations = cfg.deviations
        self.controls = cfg.controls

    def dev(self, name):
        assert name in DEVIATION_NAMES, name
        return name in self.deviations

    def ctl(self, name):
        assert name in CONTROL_NAMES, name
        return name in self.controls

    def message(self, code):
        plain, own = MESSAGES.get(code, (code.replace("_", " ").capitalize() + ".",) * 2)
        return own if self.own_messages else plain


# ----------------------------------------------------------------------------------------------
# Responses as exceptions


class Reply(Exception):
    def __init__(self, status, body=b"", headers=None, close=False):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.close = close


def dumps(obj):
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


class Api:
    """Builds error replies according to the behaviour."""

    def __init__(self, cfg, beh):
        self.cfg, self.beh = cfg, beh

    def json(self, status, obj, headers=None):
        h = {"Content-Type": self.beh.content_type}
        h.update(headers or {})
        return Reply(status, dumps(obj), h)

    def error(self, status, code, message=None, headers=None):
        message = message or self.beh.message(code)
        body = {"message": message, "code": code} if self.beh.message_first else {"code": code, "message": message}
        return self.json(status, body, headers)

    def bad(self, detail):
        h = {"X-Error-Detail": detail[:200].encode("ascii", "replace").decode()}
        if self.beh.empty_400:
            return Reply(400, b"", h)
        return self.json(400, {"code": "BAD_REQUEST", "message": detail}, h)

    def unauthorized(self, kind, detail):
        """kind: subscription | credentials | token | expired | missing | wrong_token"""
        r = self._unauthorized(kind, detail)
        if kind == "credentials":
            r.headers["WWW-Authenticate"] = 'Basic realm="momo"'
        elif kind != "subscription":
            r.headers["WWW-Authenticate"] = 'Bearer realm="momo"'
        return r

    def _unauthorized(self, kind, detail):
        if self.beh.own_401:
            code = {"subscription": "subscription_key_rejected", "credentials": "login_failed",
                    "token": "token_rejected", "expired": "token_expired", "missing": "authorization_required",
                    "wrong_token": "consent_token_required"}[kind]
            return self.json(401, {"error": code, "error_description": detail})
        code = {"subscription": "invalid_subscription_key", "credentials": "invalid_client",
                "token": "invalid_token", "expired": "invalid_token", "missing": "invalid_request",
                "wrong_token": "invalid_token"}[kind]
        return self.json(401, {"error": code})

    def subscription_denied(self):
        if self.beh.gateway_errors:
            return self.json(401, {"statusCode": 401, "message": "Access denied due to invalid subscription key. "
                                   "Make sure to provide a valid key for an active subscription."})
        return self.unauthorized("subscription", "Missing or invalid Ocp-Apim-Subscription-Key.")

    def not_routed(self):
        if self.beh.gateway_errors:
            return self.json(404, {"statusCode": 404, "message": "Resource not found"})
        return self.error(404, "RESOURCE_NOT_FOUND", "No operation at this method and path.")

    def too_large(self):
        r = self.bad("Request body larger than 1 MiB.")
        r.close = True
        return r


# ----------------------------------------------------------------------------------------------
# JWT (HS256)


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_dec(text):
    if not B64URL.match(text):
        raise ValueError("bad base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Jwt:
    def __init__(self, beh):
        self.secret = secrets.token_bytes(32)
        self.beh = beh
        self.kid = uuid.uuid4().hex[:16]
        if beh.ctl("jwt-hs512"):
            self.alg, self.digest = "HS512", hashlib.sha512
        else:
            self.alg, self.digest = "HS256", hashlib.sha256

    def issue(self, claims, lifetime):
        t = now_wall()
        if self.beh.exp_float:
            claims.update(iat=round(t, 3), exp=round(t + lifetime, 3))
        else:
            claims.update(iat=int(t), exp=int(math.ceil(t + lifetime)))
        claims.setdefault("jti", str(uuid.uuid4()))
        header = {"alg": self.alg, "typ": "JWT"}
        if self.beh.jwt_kid:
            header["kid"] = self.kid
        signing = b64u(dumps(header)) + "." + b64u(dumps(claims))
        sig = hmac.new(self.secret, signing.encode("ascii"), self.digest).digest()
        return signing + "." + b64u(sig)

    def verify(self, token, check_exp=True):
        """Returns (claims, None) or (None, 'token'|'expired')."""
        try:
            parts = token.split(".")
            if len(parts) != 3:
                return None, "token"
            header = json.loads(b64u_dec(parts[0]))
            if not isinstance(header, dict) or header.get("alg") != self.alg:
                return None, "token"
            signing = (parts[0] + "." + parts[1]).encode("ascii")
            expected = hmac.new(self.secret, signing, self.digest).digest()
            if not hmac.compare_digest(expected, b64u_dec(parts[2])):
                return None, "token"
            claims = json.loads(b64u_dec(parts[1]))
            if not isinstance(claims, dict):
                return None, "token"
            exp = claims.get("exp")
            if isinstance(exp, bool) or not isinstance(exp, (int, float)):
                return None, "token"
            if check_exp and now_wall() >= exp:
                return None, "expired"
            return claims, None
        except (ValueError, UnicodeError, RecursionError):
            return None, "token"


# ----------------------------------------------------------------------------------------------
# Scheduler and callbacks


class Scheduler(threading.Thread):
    def __init__(self):
        super().__init__(name="scheduler", daemon=True)
        self.cv = threading.Condition()
        self.heap = []
        self.seq = 0
        self.stopping = False

    def at(self, due, fn):
        with self.cv:
            self.seq += 1
            heapq.heappush(self.heap, (due, self.seq, fn))
            self.cv.notify()

    def stop(self):
        with self.cv:
            self.stopping = True
            self.cv.notify()

    def run(self):
        while True:
            with self.cv:
                while not self.stopping and (not self.heap or self.heap[0][0] > now_mono()):
                    self.cv.wait(None if not self.heap else max(0.0, self.heap[0][0] - now_mono()))
                if self.stopping:
                    return
                _, _, fn = heapq.heappop(self.heap)
            try:
                fn()
            except Exception as e:  # never let the scheduler die
                sys.stderr.write(f"scheduler job failed: {e!r}\n")


NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STOP = threading.Event()


def callback_headers(beh, ref):
    """Headers of a callback request."""
    # Without an explicit Content-Type urllib labels the body application/x-www-form-urlencoded.
    h = {} if beh.dev("callback-labelled-form-encoded") else {"Content-Type": "application/json"}
    if beh.ctl("callback-tracking-headers"):
        h.update({"User-Agent": "MoMo-Callback/1.0", "X-Callback-Id": str(uuid.uuid4()),
                  "X-Reference-Id": str(ref)})
    return h


def send_callback(url, method, payload, attempts, verbose=False, headers=None):
    if headers is None:
        headers = {"Content-Type": "application/json"}

    def run():
        data = dumps(payload)
        pauses = [0, 1, 3]
        for i in range(attempts):
            if i and STOP.wait(pauses[min(i, len(pauses) - 1)]):
                return
            try:
                req = urllib.request.Request(url, data=data, method=method, headers=dict(headers))
                with NO_PROXY_OPENER.open(req, timeout=2) as r:
                    r.read(65536)
                    if 200 <= r.status < 300:
                        return
            except urllib.error.HTTPError as e:
                if verbose:
                    sys.stderr.write(f"callback {method} {url} -> {e.code}\n")
            except Exception as e:
                if verbose:
                    sys.stderr.write(f"callback {method} {url} failed: {e!r}\n")

    threading.Thread(target=run, name="callback", daemon=True).start()


# ----------------------------------------------------------------------------------------------
# Store


class ApiUser:
    def __init__(self, uid, callback_host, product, starting, remittance_starting=Decimal(0)):
        self.id = uid
        self.callback_host = callback_host
        self.product = product
        self.api_key = None
        self.balances = {"collection": Decimal(0), "disbursement": starting, "remittance": remittance_starting}


class Txn:
    pass


class Consent:
    pass


class Store:
    def __init__(self, cfg, beh, scheduler):
        self.cfg, self.beh, self.scheduler = cfg, beh, scheduler
        self.lock = threading.RLock()
        self.users = {}
        self.txns = {}      # key: ref (global) or (kind, ref)
        self.consents = {}
        self.refresh = {}
        self.latest_scope = {}  # API user id -> scope of its latest bc-authorize (a deviation uses it)
        self.latest_msisdn = {}  # API user id -> login_hint MSISDN of its latest bc-authorize (a deviation)
        self.token_used = {}  # access-token jti -> wall time of its last use (a deviation uses it)

    def txn_key(self, kind, ref):
        return ref if self.beh.global_ref_namespace else (kind, ref)

    def get_txn(self, kind, ref):
        with self.lock:
            tx = self.txns.get(self.txn_key(kind, ref))
            if tx is None or tx.kind != kind:
                return None
            self.settle(tx)
            return tx

    # -- transitions --
    def settle(self, tx):
        cb = None
        with self.lock:
            if tx.final or now_mono() < tx.due:
                return
            tx.final = True
            tx.status = tx.final_status
            tx.reason = tx.final_reason
            tx.completed_at = now_mono()
            user = self.users.get(tx.owner)
            beh = self.beh
            if tx.status == "SUCCESSFUL":
                if tx.kind != "deposit" or self.beh.ftid_on_deposit:
                    tx.ftid = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9)
                if tx.kind == "requesttopay" and user:
                    if beh.dev("overlapping-payments-lose-credit"):
                        # the balance read when the payment was accepted, plus its amount (a lost update)
                        user.balances["collection"] = tx.collection_snapshot + tx.amount
                    else:
                        user.balances["collection"] += tx.amount
                    if tx.callback_url and beh.dev("payment-credited-twice-with-callback"):
                        user.balances["collection"] += tx.amount
                if tx.kind == "refund" and user and beh.dev("refund-debited-twice"):
                    user.balances["disbursement"] -= tx.amount
            elif tx.reserved and user and not (tx.kind == "deposit" and beh.dev("failed-deposit-keeps-money")):
                user.balances["disbursement"] += tx.reserved
                tx.reserved = Decimal(0)
            if tx.status == "FAILED" and beh.dev("failed-record-has-transaction-id"):
                tx.ftid = str(secrets.randbelow(9 * 10 ** 9) + 10 ** 9)
            if tx.callback_url:
                rec = self.callback_record(tx)
                cb = (callback_target(beh, tx.callback_url), self.beh.callback_method[tx.kind], rec)
        if cb:
            send_callback(cb[0], cb[1], cb[2], self.beh.callback_attempts, self.cfg.verbose,
                          callback_headers(self.beh, tx.ref))

    def callback_record(self, tx):
        """The body of a transaction callback: the status record (unless a deviation says otherwise)."""
        beh = self.beh
        rec = self.record(tx)
        if beh.dev("callback-without-transaction-id"):
            rec.pop("financialTransactionId", None)
        if beh.dev("callback-party-id-masked"):
            for name in ("payer", "payee"):
                party = rec.get(name)
                if isinstance(party, dict) and isinstance(party.get("partyId"), str):
                    pid = party["partyId"]
                    party["partyId"] = "*" * max(0, len(pid) - 4) + pid[-4:]
        if beh.dev("callback-amount-as-number") and isinstance(rec.get("amount"), str):
            try:
                d = Decimal(rec["amount"])
                rec["amount"] = int(d) if d == d.to_integral_value() else float(d)
            except (InvalidOperation, ValueError, OverflowError):
                pass
        return rec

    def record(self, tx):
        beh = self.beh
        rec = {}
        if beh.extra_record_fields:
            rec["referenceId"] = tx.ref
        if tx.final and tx.ftid and (tx.status == "SUCCESSFUL" or beh.dev("failed-record-has-transaction-id")):
            rec["financialTransactionId"] = tx.ftid
        if tx.external_id is not None:
            rec["externalId"] = tx.external_id
        rec["amount"] = fmt_amount(tx.amount) if beh.normalise_amount else tx.amount_text
        if beh.dev("amount-in-exponent-form"):
            rec["amount"] = str(tx.amount.normalize())  # Decimal("100").normalize() -> "1E+2"
        rec["currency"] = tx.currency
        if tx.party is not None:
            name = "payer" if tx.kind == "requesttopay" else "payee"
            if tx.kind == "deposit" and beh.dev("deposit-record-says-payer"):
                name = "payer"
            rec[name] = dict(tx.party)
        if tx.payer_message is not None:
            rec["payerMessage"] = tx.payer_message
        if tx.payee_note is not None:
            rec["payeeNote"] = tx.payee_note
        if tx.kind == "refund" and beh.extra_record_fields:
            rec["referenceIdToRefund"] = tx.ref_to_refund
        rec["status"] = tx.status if tx.final else tx.pre_status
        if tx.final and tx.status == "FAILED":
            if beh.reason_object:
                code = tx.reason
                msg = beh.message(code)
                if code == "COULD_NOT_PERFORM_TRANSACTION":  # not in the section 7 enums
                    code = "INTERNAL_PROCESSING_ERROR"
                rec["reason"] = {"code": code, "message": msg}
            else:
                rec["reason"] = tx.reason
        return rec

    def create_txn(self, tx):
        """Called with the lock held, after all checks.  Schedules the final transition."""
        self.txns[self.txn_key(tx.kind, tx.ref)] = tx
        self.settle(tx)
        if not tx.final and tx.callback_url and self.beh.dev("callback-while-pending"):
            send_callback(callback_target(self.beh, tx.callback_url), self.beh.callback_method[tx.kind],
                          self.callback_record(tx), self.beh.callback_attempts, self.cfg.verbose,
                          callback_headers(self.beh, tx.ref))
            tx.callback_url = None  # no callback at the final state
        if not tx.final:
            self.scheduler.at(tx.due, lambda: self.settle(tx))


def callback_target(beh, url):
    """The address a callback is actually sent to."""
    if beh.dev("callback-url-percent-decoded"):
        url = unquote(url)
    if beh.dev("callback-query-dropped"):
        parts = urlsplit(url)
        return parts._replace(query="", fragment="").geturl()
    return url


def fmt_amount(d):
    s = format(d.normalize(), "f")
    return s


def fmt_balance(beh, d):
    if beh.balance_two_decimals:
        return str(d.quantize(Decimal("0.01")))
    return fmt_amount(d)


# ----------------------------------------------------------------------------------------------
# Validation helpers


def valid_msisdn(beh, s):
    if not isinstance(s, str):
        return False
    if beh.msisdn_plus and s.startswith("+"):
        s = s[1:]
    if beh.dev("msisdn-16-digits-accepted"):
        return re.fullmatch(r"[1-9][0-9]{5,15}", s) is not None
    return re.fullmatch(r"[1-9][0-9]{5,14}", s) is not None


def msisdn_digits(s):
    return s[1:] if s.startswith("+") else s


def valid_party_id(beh, id_type, pid):
    if not isinstance(pid, str) or not pid:
        return False
    if id_type == "MSISDN":
        return valid_msisdn(beh, pid)
    if id_type == "EMAIL":
        if beh.dev("email-plus-address-refused") and "+" in pid.rpartition("@")[0]:
            return False
        return len(pid) <= 254 and EMAIL.match(pid) is not None
    if id_type == "PARTY_CODE":
        return UUID_ANY.match(pid) is not None
    return False


def callback_hostname(host_text):
    """Normalised host name of a providerCallbackHost value or a URL; None if unusable."""
    if not isinstance(host_text, str):
        return None
    t = host_text.strip()
    if not t or any(ch.isspace() for ch in t):
        return None
    if "://" not in t:
        t = "http://" + t
    try:
        parts = urlsplit(t)
        host = parts.hostname
        _ = parts.port
    except ValueError:
        return None
    if not host or not HOSTNAME.match(host):
        return None
    return host.lower().rstrip(".")


# ----------------------------------------------------------------------------------------------
# Request handler


ROUTES = []


def route(method, pattern, product):
    def deco(fn):
        ROUTES.append((method, [s for s in pattern.strip("/").split("/")], product, fn))
        return fn
    return deco


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "MoMoIndependent/1.0"

    def version_string(self):
        return self.server_version
    timeout = 15  # seconds a connection may stay silent; no thread hangs for ever

    # filled in by main()
    cfg = beh = api = store = jwt = None

    def log_message(self, fmt, *args):
        if self.cfg.verbose:
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

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

    def do_HEAD(self):
        self.dispatch("HEAD")

    def do_OPTIONS(self):
        self.dispatch("OPTIONS")

    # -- plumbing --
    def send(self, reply):
        try:
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(reply.body)))
            if reply.close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if reply.body and self.command != "HEAD":
                self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise self.api.bad("Truncated chunked body.")
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise Reply(400, b"", close=True)
                if size == 0:
                    while True:  # trailers
                        t = self.rfile.readline(1024)
                        if t in (b"\r\n", b"\n", b""):
                            break
                    break
                total += size
                if total > MAX_BODY:
                    raise self.api.too_large()
                chunks.append(self.rfile.read(size))
                self.rfile.readline(8)
            return b"".join(chunks)
        cl = self.headers.get("Content-Length")
        if cl is None:
            return b""
        try:
            n = int(cl.strip())
            if n < 0:
                raise ValueError
        except ValueError:
            r = self.api.bad("Invalid Content-Length.")
            r.close = True
            raise r
        if n > MAX_BODY:
            raise self.api.too_large()
        data = self.rfile.read(n)
        if len(data) != n:
            raise Reply(400, b"", close=True)
        return data

    def dispatch(self, method):
        try:
            raw_path = urlsplit(self.path).path
        except ValueError:
            raw_path = "/"
        try:
            try:
                self.body = self.read_body()
            except Reply:
                raise
            segs = [s for s in raw_path.strip("/").split("/")] if raw_path.strip("/") else []
            found = None
            for m, pat, product, fn in ROUTES:
                if len(pat) != len(segs):
                    continue
                params = {}
                ok = True
                for p, s in zip(pat, segs):
                    if p.startswith("{"):
                        if not s:
                            ok = False
                            break
                        params[p[1:-1]] = unquote(s)
                    elif p != s:
                        ok = False
                        break
                if ok:
                    if m == method:
                        found = (product, fn, params)
                        break
            if not found:
                raise self.api.not_routed()
            product, fn, params = found
            self.check_subscription(product)
            reply = fn(self, product, **params)
            if reply is None:
                reply = Reply(200)
            raise reply
        except Reply as r:
            self.send(r)
        except Exception:  # never crash on bad input
            if self.cfg.verbose:
                import traceback
                traceback.print_exc()
            r = self.api.error(500, "INTERNAL_PROCESSING_ERROR")
            r.close = True
            self.send(r)

    # -- common checks --
    def check_subscription(self, product):
        key = self.headers.get("Ocp-Apim-Subscription-Key")
        if key is None:
            raise self.api.subscription_denied()
        key = key.strip()
        allowed = list(self.cfg.keys.values()) if product is None else [self.cfg.keys[product]]
        if not any(hmac.compare_digest(key.encode(), k.encode()) for k in allowed):
            raise self.api.subscription_denied()

    def key_product(self):
        key = (self.headers.get("Ocp-Apim-Subscription-Key") or "").strip()
        for prod in PRODUCTS:
            if self.cfg.keys[prod] == key:
                return prod
        return None

    def basic_user(self, header):
        """Returns the ApiUser for a Basic credential or None."""
        try:
            raw = base64.b64decode(header.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeError):
            return None
        uid, sep, key = raw.partition(":")
        if not sep:
            return None
        with self.store.lock:
            user = self.store.users.get(uid.lower()) if UUID_V4.match(uid) else None
            if user is None or user.api_key is None:
                return None
            if self.beh.dev("api-key-case-insensitive"):
                if user.api_key.lower() != key.lower():
                    return None
                return user
            if not hmac.compare_digest(user.api_key.encode(), key.encode()):
                return None
            return user

    def split_auth(self):
        h = self.headers.get("Authorization")
        if h is None or not h.strip():
            return None, None
        scheme, _, cred = h.strip().partition(" ")
        if self.beh.dev("auth-scheme-case-sensitive") and scheme not in ("Basic", "Bearer"):
            return "unrecognised", cred.strip()
        return scheme.lower(), cred.strip()

    def business_user(self, product, token_kind="access"):
        scheme, cred = self.split_auth()
        if scheme is None:
            raise self.api.unauthorized("missing", "An Authorization header is required.")
        user = None
        if scheme == "bearer" and cred:
            claims, why = self.jwt.verify(cred)
            sliding = self.beh.dev("token-lifetime-sliding")
            if claims is None and why == "expired" and sliding:
                # validity counted from the token's last use instead of its issue
                old, _ = self.jwt.verify(cred, check_exp=False)
                if old is not None and old.get("typ") == "access":
                    with self.store.lock:
                        last = self.store.token_used.get(old.get("jti"))
                    life = old["exp"] - old.get("iat", old["exp"])
                    if last is not None and now_wall() - last < life:
                        claims = old
            if claims is not None and sliding and claims.get("typ") == "access":
                with self.store.lock:
                    self.store.token_used[claims.get("jti")] = now_wall()
            if claims is None:
                if why == "expired" and self.beh.dev("expired-token-500"):
                    raise self.api.error(500, "INTERNAL_PROCESSING_ERROR")
                raise self.api.unauthorized(why, "The access token is invalid or has expired.")
            consent_as_access = (token_kind == "access" and claims.get("typ") == "consent"
                                 and self.beh.dev("consent-token-opens-payments"))
            if claims.get("typ") != token_kind and not consent_as_access:
                raise self.api.unauthorized("wrong_token" if token_kind == "consent" else "token",
                                            "This kind of token is not accepted here.")
            with self.store.lock:
                user = self.store.users.get(claims.get("sub"))
            if user is None:
                raise self.api.unauthorized("token", "The API user of this token no longer exists.")
            self.claims = claims
        elif scheme == "basic" and cred and self.beh.basic_on_business and token_kind == "access":
            user = self.basic_user(cred)
            if user is None:
                raise self.api.unauthorized("credentials", "API user or API key not recognised.")
            self.claims = {}
        else:
            raise self.api.unauthorized("token", "A Bearer access token is required.")
        if self.beh.product_binding and token_kind == "access" and user.product not in (None, product):
            raise self.api.error(500, "NOT_ALLOWED_TARGET_ENVIRONMENT")
        return user

    def check_env(self, required=True):
        v = self.headers.get("X-Target-Environment")
        if v is None or not v.strip():
            if required:
                raise self.api.bad("X-Target-Environment header is required.")
            return
        if v.strip() != self.cfg.target_env:
            raise self.api.error(500, "NOT_ALLOWED_TARGET_ENVIRONMENT")

    def reference_header(self, kind=None):
        ref = (self.headers.get("X-Reference-Id") or "").strip()
        if kind is not None and self.beh.dev("reference-id-parsed-leniently"):
            try:
                u = uuid.UUID(ref)  # also takes 32 bare hex digits, {...} and urn:uuid:...
            except ValueError:
                raise self.api.bad("X-Reference-Id must be a UUID version 4.")
            if u.version != 4:
                raise self.api.bad("X-Reference-Id must be a UUID version 4.")
            return str(u)
        pattern = UUID_V4
        if kind in ("deposit", "refund") and self.beh.dev("disbursement-reference-any-uuid"):
            pattern = UUID_ANY
        if not pattern.match(ref):
            raise self.api.bad("X-Reference-Id must be a UUID version 4.")
        if kind is not None and self.beh.dev("reference-id-case-sensitive"):
            return ref
        return ref.lower()

    def json_body(self):
        if self.beh.dev("json-charset-parameter-refused") and ";" in (self.headers.get("Content-Type") or ""):
            raise self.api.bad("Content-Type must be application/json.")
        if not self.body.strip():
            raise self.api.bad("A JSON body is required.")
        try:
            obj = json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeError, RecursionError):
            raise self.api.bad("The body is not valid JSON.")
        if not isinstance(obj, dict):
            raise self.api.bad("The body must be a JSON object.")
        return obj

    def form_body(self):
        ctype = (self.headers.get("Content-Type") or "").lower()
        try:
            text = self.body.decode("utf-8")
        except UnicodeError:
            raise self.api.bad("The body is not UTF-8.")
        if "json" in ctype and text.strip().startswith("{"):
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError):
                raise self.api.bad("The body is not valid JSON.")
            if not isinstance(obj, dict) or not all(isinstance(v, str) for v in obj.values()):
                raise self.api.bad("The body must be an object of strings.")
            return obj
        try:
            pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text))
        except ValueError:
            raise self.api.bad("The body is not form-encoded.")
        out = {}
        for k, v in pairs:
            if k in out:
                raise self.api.bad(f"Parameter {k} given more than once.")
            out[k] = v
        return out

    def callback_url(self, user):
        """Validated X-Callback-Url or None; raises 400 / 500 INVALID_CALLBACK_URL_HOST."""
        url = self.headers.get("X-Callback-Url")
        if url is None or not url.strip():
            return None
        url = url.strip()
        try:
            parts = urlsplit(url)
            host = parts.hostname
            _ = parts.port
        except ValueError:
            raise self.api.bad("X-Callback-Url is not a valid URL.")
        if parts.scheme.lower() not in ("http", "https") or not host or any(c.isspace() for c in url):
            raise self.api.bad("X-Callback-Url is not a valid http(s) URL.")
        host = host.lower().rstrip(".")
        if self.beh.dev("callback-host-suffix-match"):
            if not (user.callback_host and host.endswith(user.callback_host)):
                raise self.api.error(500, "INVALID_CALLBACK_URL_HOST")
        elif host != user.callback_host:
            raise self.api.error(500, "INVALID_CALLBACK_URL_HOST")
        return url

    def text_field(self, body, name, required=False):
        v = body.get(name)
        if v is None:
            if required:
                raise self.api.bad(f"{name} is required.")
            return None
        if not isinstance(v, str):
            raise self.api.bad(f"{name} must be a string.")
        lim = self.beh.text_limit
        limited = ("payerMessage", "payeeNote", "notificationMessage")
        if self.beh.dev("notification-length-not-checked"):
            limited = ("payerMessage", "payeeNote")
        if lim is not None and len(v) > lim and name in limited:
            raise self.api.bad(f"{name} is longer than {lim} characters.")
        if self.beh.reject_apostrophe_amp and name in ("payerMessage", "payeeNote", "externalId") \
                and ("'" in v or "&" in v):
            raise self.api.bad(f"{name} may not contain an apostrophe or '&'.")
        return v

    def amount_field(self, body):
        a = body.get("amount")
        if self.beh.dev("amount-parsed-as-float") and isinstance(a, str):
            try:
                f = float(a)
            except ValueError:
                raise self.api.bad("amount must be a string holding a positive number.")
            if not f > 0:  # NaN fails as well
                raise self.api.bad("amount must be greater than zero.")
            try:
                return a, Decimal(a.strip())
            except InvalidOperation:
                return a, Decimal(repr(f))
        if not isinstance(a, str) or not AMOUNT.match(a) or len(a) > 32:
            raise self.api.bad("amount must be a string holding a positive decimal number.")
        d = Decimal(a)
        if d <= 0:
            raise self.api.bad("amount must be greater than zero.")
        if self.beh.max_decimals is not None and "." in a and len(a.split(".")[1].rstrip("0")) > self.beh.max_decimals:
            raise self.api.bad(f"amount may have at most {self.beh.max_decimals} decimals.")
        return a, d

    def currency_field(self, body):
        c = body.get("currency")
        if not isinstance(c, str) or not CURRENCY.match(c):
            raise self.api.bad("currency must be an ISO 4217 code.")
        return c

    def party_field(self, body, name):
        p = body.get(name)
        if not isinstance(p, dict):
            raise self.api.bad(f"{name} must be a party object.")
        t, pid = p.get("partyIdType"), p.get("partyId")
        if t not in ("MSISDN", "EMAIL", "PARTY_CODE"):
            raise self.api.bad(f"{name}.partyIdType must be MSISDN, EMAIL or PARTY_CODE.")
        if t == "EMAIL" and self.beh.dev("email-party-refused"):
            raise self.api.bad(f"{name}.partyIdType EMAIL is not supported.")
        if t == "PARTY_CODE" and self.beh.dev("party-code-not-validated") and isinstance(pid, str) and pid:
            return {"partyIdType": t, "partyId": pid}
        if not valid_party_id(self.beh, t, pid):
            raise self.api.bad(f"{name}.partyId is not a valid {t}.")
        return {"partyIdType": t, "partyId": pid}


# ---------------------------------- provisioning (section 4.5) ----------------------------------


@route("POST", "/v1_0/apiuser", None)
def op_apiuser_create(h, product):
    ref = h.reference_header()
    body = h.json_body()
    pch = body.get("providerCallbackHost")
    if h.beh.dev("apiuser-host-not-string-accepted") and isinstance(pch, (int, float)) \
            and not isinstance(pch, bool):
        pch = str(pch)
    host = callback_hostname(pch) if isinstance(pch, str) and len(pch) <= 255 else None
    if host is None and not (pch is None and h.beh.dev("apiuser-host-not-required")):
        raise h.api.bad("providerCallbackHost must be a host name.")
    with h.store.lock:
        if ref in h.store.users:
            raise h.api.error(409, "RESOURCE_ALREADY_EXIST")
        user = ApiUser(ref, host, h.key_product(), h.cfg.starting_balance,
                       h.cfg.starting_balance if h.beh.ctl("remittance-funded") else Decimal(0))
        user.provider_callback_host = pch
        h.store.users[ref] = user
    return Reply(201, b"")


def _apiuser_from_path(h, ref):
    if not UUID_V4.match(ref):
        if h.beh.dev("apiuser-bad-id-404"):
            raise h.api.error(404, "RESOURCE_NOT_FOUND")
        raise h.api.bad("The API user id must be a UUID version 4.")
    user = h.store.users.get(ref.lower())
    if user is None:
        raise h.api.error(404, "RESOURCE_NOT_FOUND")
    return user


@route("POST", "/v1_0/apiuser/{ref}/apikey", None)
def op_apikey_create(h, product, ref):
    if h.beh.dev("apikey-requires-reference-header"):
        h.reference_header()  # the header check of API-user creation; the path id is used below
    with h.store.lock:
        user = _apiuser_from_path(h, ref)
        key = secrets.token_urlsafe(32) if h.beh.apikey_urlsafe else secrets.token_hex(16)
        if not (user.api_key is not None and h.beh.dev("second-api-key-not-stored")):
            user.api_key = key
    return h.api.json(201, {"apiKey": key})


@route("GET", "/v1_0/apiuser/{ref}", None)
def op_apiuser_get(h, product, ref):
    with h.store.lock:
        user = _apiuser_from_path(h, ref)
        rec = {"providerCallbackHost": user.provider_callback_host, "targetEnvironment": h.cfg.target_env}
        if h.beh.apiuser_extra:
            rec["apiUserId"] = user.id
    return h.api.json(200, rec)


# ---------------------------------- tokens (4.2 #1 and extensions) -------------------------------


def _token(h, product):
    if h.beh.token_body_400 and h.body.strip():
        raise h.api.bad("The token operation takes no body.")
    scheme, cred = h.split_auth()
    if scheme is None:
        raise h.api.unauthorized("missing", "Basic credentials are required.")
    user = h.basic_user(cred) if scheme == "basic" and cred else None
    if user is None:
        if h.beh.token_fail_status == 500:
            raise h.api.json(500, {"error": "login_failed"})
        raise h.api.unauthorized("credentials", "API user or API key not recognised.")
    if h.beh.product_binding and user.product not in (None, product):
        raise h.api.error(500, "NOT_ALLOWED_TARGET_ENVIRONMENT")
    lifetime = h.cfg.token_lifetime
    real_life = lifetime / 60 if h.beh.dev("token-dies-early") else lifetime
    tok = h.jwt.issue({"iss": "momo-independent", "sub": user.id, "aud": product, "typ": "access"}, real_life)
    return h.api.json(200, {"access_token": tok, "token_type": h.beh.token_type, "expires_in": lifetime},
                      {"Cache-Control": "no-store", "Pragma": "no-cache"})


for _p in PRODUCTS:
    route("POST", f"/{_p}/token", _p)(lambda h, product: _token(h, product))


# ---------------------------------- transactions -------------------------------------------------


def _outcome(h, kind, party):
    """(final status, reason, delay seconds, status shown before)"""
    beh, cfg = h.beh, h.cfg
    num = msisdn_digits(party["partyId"]) if party and party["partyIdType"] == "MSISDN" else None
    entry = TEST_NUMBERS.get(num)
    if kind == "deposit" and beh.dev("deposit-test-numbers-ignored"):
        entry = None
    if entry is not None and entry[2] == "delayed" and beh.dev("delayed-approval-expires"):
        entry = ("FAILED", "EXPIRED", "delayed")
    if entry is None:
        if kind != "requesttopay" and beh.created_phase:
            return "SUCCESSFUL", None, beh.created_phase, "CREATED"
        return "SUCCESSFUL", None, beh.ordinary_delay, "PENDING"
    status, reason, timing = entry
    delay = {"now": 0.0, "reject": beh.reject_delay, "timeout": beh.timeout_delay,
             "pending": cfg.pending_timeout, "delayed": cfg.delayed_approval}[timing]
    return status, reason, delay, "PENDING"


def _new_txn(h, kind, ref, user, body, amount_text, amount, currency, party, cb):
    tx = Txn()
    tx.kind, tx.ref, tx.owner = kind, ref, user.id
    tx.external_id = h.text_field(body, "externalId")
    tx.payer_message = h.text_field(body, "payerMessage")
    tx.payee_note = h.text_field(body, "payeeNote")
    tx.amount_text, tx.amount, tx.currency = amount_text, amount, currency
    tx.party = party
    tx.callback_url = cb
    tx.final = False
    tx.status = tx.reason = tx.ftid = None
    tx.reserved = Decimal(0)
    tx.created = now_mono()
    tx.completed_at = None
    tx.notif_last = None
    tx.ref_to_refund = None
    tx.delay = 0.0
    tx.collection_snapshot = user.balances["collection"]
    return tx


def _refusal_callback(h, kind, ref, user, body, amount_text, amount, currency, party, cb):
    """Deviation refused-creation-calls-back: a FAILED callback for a creation that was refused."""
    tx = _new_txn(h, kind, ref, user, body, amount_text, amount, currency, party, cb)
    tx.final, tx.status, tx.reason, tx.pre_status = True, "FAILED", "INVALID_CURRENCY", "PENDING"
    send_callback(callback_target(h.beh, cb), h.beh.callback_method[kind], h.store.callback_record(tx),
                  h.beh.callback_attempts, h.cfg.verbose, callback_headers(h.beh, ref))


def _create_common(h, kind, product, party_name):
    user = h.business_user(product)
    h.check_env()
    ref = h.reference_header(kind)
    body = h.json_body()
    a = body.get("amount")
    if kind in ("deposit", "refund") and h.beh.dev("disbursement-amount-as-number") \
            and isinstance(a, (int, float)) and not isinstance(a, bool):
        body["amount"] = format(Decimal(str(a)), "f")
    amount_text, amount = h.amount_field(body)
    currency = h.currency_field(body)
    party = h.party_field(body, party_name) if party_name else None
    for name in ("externalId", "payerMessage", "payeeNote"):
        h.text_field(body, name)
    return user, ref, body, amount_text, amount, currency, party


@route("POST", "/collection/v1_0/requesttopay", "collection")
def op_requesttopay(h, product):
    user, ref, body, amount_text, amount, currency, party = _create_common(h, "requesttopay", product, "payer")
    with h.store.lock:
        if h.store.txn_key("requesttopay", ref) in h.store.txns:
            old = h.store.get_txn("requesttopay", ref)
            if not (old is not None and old.final and old.status == "FAILED"
                    and h.beh.dev("rtp-reference-reusable-after-failure")):
                raise h.api.error(409, "RESOURCE_ALREADY_EXIST")
        ext = body.get("externalId")
        if ext is not None and h.beh.dev("external-id-must-be-unique") and any(
                t.kind == "requesttopay" and t.owner == user.id and t.external_id == ext
                for t in h.store.txns.values()):
            raise h.api.error(409, "RESOURCE_ALREADY_EXIST")
        cb = h.callback_url(user)
        if currency != h.cfg.currency:
            if cb and h.beh.dev("refused-creation-calls-back"):
                _refusal_callback(h, "requesttopay", ref, user, body, amount_text, amount, currency, party, cb)
            raise h.api.error(500, "INVALID_CURRENCY")
        tx = _new_txn(h, "requesttopay", ref, user, body, amount_text, amount, currency, party, cb)
        st, reason, delay, pre = _outcome(h, "requesttopay", party)
        tx.final_status, tx.final_reason, tx.pre_status = st, reason, pre
        tx.delay = delay
        tx.due = tx.created + delay
        h.store.create_txn(tx)
    return Reply(202, b"")


def _disbursement_create(h, kind, product):
    party_name = "payee" if kind == "deposit" else None
    user, ref, body, amount_text, amount, currency, party = _create_common(h, kind, product, party_name)
    ref_to_refund = None
    if kind == "refund":
        r = body.get("referenceIdToRefund")
        if not isinstance(r, str) or not UUID_ANY.match(r):
            raise h.api.bad("referenceIdToRefund must be a UUID.")
        ref_to_refund = r.lower()
    if kind == "deposit" and h.beh.dev("deposit-callback-url-required") \
            and not (h.headers.get("X-Callback-Url") or "").strip():
        raise h.api.bad("X-Callback-Url is required.")
    with h.store.lock:
        if h.store.txn_key(kind, ref) in h.store.txns:
            if kind == "deposit" and h.beh.dev("refused-deposit-still-debits"):
                user.balances["disbursement"] -= amount
            if kind == "deposit" and h.beh.dev("duplicate-deposit-deletes-original"):
                old = h.store.txns.get(h.store.txn_key(kind, ref))
                if old is not None and old.kind == "deposit":
                    del h.store.txns[h.store.txn_key(kind, ref)]  # the "rollback" removes the wrong row
            raise h.api.error(409, "RESOURCE_ALREADY_EXIST")
        cb = h.callback_url(user)
        if currency != h.cfg.currency:
            if cb and h.beh.dev("refused-creation-calls-back"):
                _refusal_callback(h, kind, ref, user, body, amount_text, amount, currency, party, cb)
            raise h.api.error(500, "INVALID_CURRENCY")
        if kind == "refund":
            # Any request to pay of this server's partner may be refunded: API users are per product
            # (mtn-sandbox), so the collection user that was paid is never the disbursement user that refunds.
            orig = h.store.get_txn("requesttopay", ref_to_refund)
            if orig is None:
                if h.beh.refund_unknown_500:
                    raise h.api.error(500, "RESOURCE_NOT_FOUND", "The transaction to refund was not found.")
                raise h.api.bad("referenceIdToRefund names no request to pay of this API user.")
            if not (orig.final and orig.status == "SUCCESSFUL"):
                if h.beh.refund_unknown_500:
                    raise h.api.error(500, "NOT_ALLOWED", "Only a SUCCESSFUL request to pay can be refunded.")
                raise h.api.bad("referenceIdToRefund names a request to pay that is not SUCCESSFUL.")
            party = dict(orig.party)
        # deviation second-refund-not-debited: the debit is keyed by the refunded payment, not by the refund
        skip_debit = kind == "refund" and h.beh.dev("second-refund-not-debited") and any(
            t.kind == "refund" and t.owner == user.id and t.ref_to_refund == ref_to_refund
            for t in h.store.txns.values())
        tx = _new_txn(h, kind, ref, user, body, amount_text, amount, currency, party, cb)
        tx.ref_to_refund = ref_to_refund
        st, reason, delay, pre = _outcome(h, kind, party)
        keeps = kind == "deposit" and h.beh.dev("failed-deposit-keeps-money")
        if skip_debit:
            pass
        elif not (st == "FAILED" and delay == 0) or (keeps and user.balances["disbursement"] >= amount):
            bal = user.balances["disbursement"]
            if bal < amount:
                if h.beh.funds_sync:
                    raise h.api.error(500, "NOT_ENOUGH_FUNDS")
                st, reason, delay, pre = "FAILED", "NOT_ENOUGH_FUNDS", 0.0, "PENDING"
            else:
                user.balances["disbursement"] = bal - amount
                tx.reserved = amount
        tx.final_status, tx.final_reason, tx.pre_status = st, reason, pre
        tx.delay = delay
        tx.due = tx.created + delay
        h.store.create_txn(tx)
        if kind == "deposit" and tx.reserved and h.beh.dev("deposit-hold-released-after-success"):
            store = h.store

            def release_hold():
                # the hold's expiry timer is not cancelled when the deposit goes through
                with store.lock:
                    if tx.reserved and not (tx.final and tx.status == "FAILED"):
                        owner = store.users.get(tx.owner)
                        if owner:
                            owner.balances["disbursement"] += tx.reserved
                        tx.reserved = Decimal(0)
            store.scheduler.at(tx.created + 3.0, release_hold)
    return Reply(202, b"")


@route("POST", "/disbursement/v1_0/deposit", "disbursement")
def op_deposit(h, product):
    return _disbursement_create(h, "deposit", product)


@route("POST", "/disbursement/v1_0/refund", "disbursement")
def op_refund(h, product):
    return _disbursement_create(h, "refund", product)


def _status(h, kind, product, ref):
    user = h.business_user(product)
    h.check_env(required=h.beh.status_requires_env)
    if not UUID_V4.match(ref):
        raise h.api.bad("The reference id must be a UUID version 4.")
    with h.store.lock:
        tx = h.store.get_txn(kind, ref.lower())
        if tx is None or tx.owner != user.id:
            raise h.api.error(404, "RESOURCE_NOT_FOUND")
        if not tx.final and h.beh.dev("polling-postpones-outcome"):
            tx.due = now_mono() + tx.delay  # the outcome timer restarts on every read
            store = h.store
            store.scheduler.at(tx.due, lambda: store.settle(tx))
        rec = h.store.record(tx)
    return h.api.json(200, rec)


@route("GET", "/collection/v1_0/requesttopay/{ref}", "collection")
def op_rtp_status(h, product, ref):
    return _status(h, "requesttopay", product, ref)


@route("GET", "/disbursement/v1_0/deposit/{ref}", "disbursement")
def op_deposit_status(h, product, ref):
    return _status(h, "deposit", product, ref)


@route("GET", "/disbursement/v1_0/refund/{ref}", "disbursement")
def op_refund_status(h, product, ref):
    return _status(h, "refund", product, ref)


@route("POST", "/collection/v1_0/requesttopay/{ref}/deliverynotification", "collection")
def op_delivery_notification(h, product, ref):
    user = h.business_user(product)
    h.check_env()
    if not UUID_V4.match(ref):
        raise h.api.bad("The reference id must be a UUID version 4.")
    lang = h.headers.get("Language")
    if lang is not None and lang.strip() and not LANGUAGE.match(lang.strip()):
        raise h.api.bad("Language must be an ISO 639-1 or ISO 639-3 code.")
    if lang is not None and len(lang.strip()) == 3 and h.beh.dev("language-639-3-refused"):
        raise h.api.bad("Language must be a two-letter ISO 639-1 code.")
    body = h.json_body()
    msg = h.text_field(body, "notificationMessage", required=True)
    if not msg.strip():
        raise h.api.bad("notificationMessage must not be empty.")
    with h.store.lock:
        tx = h.store.get_txn("requesttopay", ref.lower())
        if tx is None and h.beh.dev("notification-for-deposit-accepted"):
            tx = h.store.get_txn("deposit", ref.lower()) or h.store.get_txn("refund", ref.lower())
        if tx is None or (tx.owner != user.id and not h.beh.dev("notification-ignores-owner")):
            raise h.api.error(404, h.beh.notif_404_code)
        if tx.final and tx.status == "FAILED" and h.beh.dev("notification-failed-payment-gone"):
            raise h.api.error(410, "EXPIRED")
        if not (tx.final and tx.status == "SUCCESSFUL"):
            if h.beh.dev("notification-refusal-counts-as-attempt"):
                tx.notif_last = now_mono()
            raise h.api.error(409, "TRANSACTION_NOT_COMPLETED")
        t = now_mono()
        if t - tx.completed_at > h.cfg.notif_window:
            raise h.api.error(410, "EXPIRED")
        if tx.notif_last is not None and t - tx.notif_last < h.cfg.notif_cooldown:
            headers = {}
            if h.beh.retry_after and not math.isinf(h.cfg.notif_cooldown):
                headers["Retry-After"] = str(max(1, int(math.ceil(h.cfg.notif_cooldown - (t - tx.notif_last)))))
            raise h.api.error(429, "NOT_ALLOWED", h.beh.message("TOO_MANY"), headers)
        tx.notif_last = t
    if h.beh.notif_200_body:
        return h.api.json(200, {"referenceId": ref.lower(), "status": "ENQUEUED"})
    return Reply(200, b"")


# ---------------------------------- balances -----------------------------------------------------


def _balance(h, product, currency=None):
    user = h.business_user(product)
    h.check_env()
    if currency is None and product == "remittance" and h.beh.dev("remittance-balance-needs-currency"):
        raise h.api.bad("The currency must be given in the path.")
    if currency is not None:
        if h.beh.dev("balance-currency-any-case"):
            currency = currency.upper()
        if not CURRENCY.match(currency):
            raise h.api.bad("The currency must be an ISO 4217 code.")
        if currency != h.cfg.currency:
            raise h.api.error(500, "INVALID_CURRENCY")
    with h.store.lock:
        account = product
        if product == "remittance" and h.beh.dev("remittance-balance-reads-disbursement"):
            account = "disbursement"
        bal = user.balances[account]
    shown = fmt_balance(h.beh, bal)
    if product == "remittance" and h.beh.dev("remittance-balance-as-number"):
        shown = int(bal) if bal == bal.to_integral_value() else float(bal)
    return h.api.json(200, {"availableBalance": shown, "currency": h.cfg.currency})


for _p in PRODUCTS:
    route("GET", f"/{_p}/v1_0/account/balance", _p)(lambda h, product: _balance(h, product))
    route("GET", f"/{_p}/v1_0/account/balance/{{currency}}", _p)(
        lambda h, product, currency: _balance(h, product, currency))


# ---------------------------------- account holders ----------------------------------------------


def _active(h, product, idtype, holder):
    h.business_user(product)
    h.check_env()
    types = {"msisdn": "MSISDN", "email": "EMAIL", "party_code": "PARTY_CODE"}
    if idtype not in types:
        raise h.api.bad("accountHolderIdType must be msisdn, email or party_code (lower case).")
    if not valid_party_id(h.beh, types[idtype], holder) and not (
            product == "disbursement" and h.beh.dev("disbursement-holder-id-not-validated")):
        raise h.api.bad(f"accountHolderId is not a valid {idtype}.")
    result = True
    if idtype != "msisdn" and h.beh.ctl("holders-found-by-msisdn-only"):
        result = False
    if idtype == "msisdn":
        entry = h.beh.holder_table.get(msisdn_digits(holder))
        if h.beh.dev("holder-test-codes-shifted") and msisdn_digits(holder) in HOLDER_SHIFTED:
            nxt = HOLDER_SHIFTED[msisdn_digits(holder)]
            entry = h.beh.holder_table.get(nxt) if nxt else None
        if msisdn_digits(holder) == "46733123450" and h.beh.dev("holder-not-found-active"):
            entry = None
        if entry is not None:
            status, what = entry
            if status != 200:
                raise h.api.error(status, what)
            result = what
    if h.beh.holder_bare_bool:
        return h.api.json(200, result)
    return h.api.json(200, {"result": result})


# deviation holder-test-codes-shifted: the error table read one number too far
HOLDER_SHIFTED = {"46733123452": "46733123453", "46733123453": "46733123454", "46733123454": "46733123455",
                  "46733123455": None}

for _p in ("collection", "disbursement"):
    route("GET", f"/{_p}/v1_0/accountholder/{{idtype}}/{{holder}}/active", _p)(
        lambda h, product, idtype, holder: _active(h, product, idtype, holder))


SANDBOX_PERSON = {"given_name": "Sand", "family_name": "Box", "birthdate": "1976-08-13"}


@route("GET", "/collection/v1_0/accountholder/msisdn/{msisdn}/basicuserinfo", "collection")
def op_basicuserinfo(h, product, msisdn):
    h.business_user(product, token_kind="consent" if h.beh.dev("basic-user-info-needs-consent") else "access")
    h.check_env()
    if not valid_msisdn(h.beh, msisdn):
        raise h.api.bad("accountHolderMSISDN is not a valid MSISDN.")
    if h.beh.mtn:
        rec = {"sub": "0", "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
               "birthdate": "1976-08-13", "locale": "sv_SE", "gender": "MALE", "updated_at": 1678355127}
    elif h.beh.basicinfo_extra:
        rec = {"sub": msisdn_digits(msisdn), "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
               "birthdate": "1976-08-13", "locale": "sv_SE", "gender": "male", "status": "ACTIVE"}
    else:
        rec = {"given_name": "Sand", "family_name": "Box", "birthdate": "1976-08-13", "locale": "sv-SE",
               "gender": "male", "status": "ACTIVE"}
    two_given_names(h.beh, rec)
    return h.api.json(200, rec)


def two_given_names(beh, rec):
    """Control two-given-names."""
    if beh.ctl("two-given-names"):
        rec["given_name"] = "Sand Sandy"
        if "name" in rec:
            rec["name"] = "Sand Sandy Box"


# ---------------------------------- consent (CIBA) -----------------------------------------------


def _ciba_error(h, error, description, status=400):
    body = {"error": error}
    if h.beh.own_401:
        body["error_description"] = description
    return h.api.json(status, body, {"Cache-Control": "no-store"})


def _bc_authorize(h, product):
    user = h.business_user(product)
    h.check_env()
    form = h.form_body()
    hint = form.get("login_hint")
    m = re.fullmatch(r"ID:(.+)/MSISDN", hint or "")
    if not m or not valid_msisdn(h.beh, m.group(1)):
        raise h.api.bad("login_hint must be ID:<msisdn>/MSISDN.")
    scope = form.get("scope")
    if scope is None or not scope.split():
        raise h.api.error(400, "MISSING_SCOPE_INSTRUCTION")
    if any(s not in SCOPES for s in scope.split()):
        raise h.api.error(400, "UNSUPPORTED_SCOPE")
    if h.beh.dev("multiple-scopes-refused") and len(scope.split()) > 1:
        raise h.api.error(400, "UNSUPPORTED_SCOPE")  # the whole parameter compared with the scope list
    access_type = form.get("access_type")
    if access_type not in ("online", "offline") and not h.beh.dev("access-type-not-checked"):
        raise h.api.bad("access_type must be online or offline.")
    valid_in = form.get("consent_valid_in")
    if valid_in is not None:
        if not re.fullmatch(r"[0-9]{1,9}", valid_in) or int(valid_in) < 1:
            raise h.api.bad("consent_valid_in must be a whole number of seconds >= 1.")
        valid_in = int(valid_in)
    with h.store.lock:
        cb = h.callback_url(user)
        c = Consent()
        c.id = str(uuid.uuid4())
        c.owner = user.id
        c.msisdn = m.group(1)
        c.scope = scope
        c.access_type = access_type
        c.valid_in = valid_in or h.beh.refresh_default
        if h.beh.dev("consent-valid-in-ignored"):
            c.valid_in = h.beh.refresh_default
        c.created = now_mono()
        c.approve_at = c.created + h.cfg.consent_approval
        c.expires_in = int(max(h.beh.ciba_expires, math.ceil(h.cfg.consent_approval) + 60))
        c.expires_at = c.created + c.expires_in
        c.redeemed = False
        if h.beh.dev("earlier-consent-request-dropped"):
            for k in [k for k, o in h.store.consents.items() if o.owner == user.id and not o.redeemed]:
                del h.store.consents[k]
        h.store.consents[c.id] = c
        h.store.latest_scope[user.id] = scope
        h.store.latest_msisdn[user.id] = c.msisdn
    if cb and not h.beh.dev("consent-callback-missing"):
        payload = {"auth_req_id": c.id}
        target = callback_target(h.beh, cb)
        headers = callback_headers(h.beh, c.id)
        h.store.scheduler.at(c.approve_at, lambda: send_callback(target, "POST", payload, h.beh.callback_attempts,
                                                                  h.cfg.verbose, headers))
    interval = 0.5 if h.beh.ctl("ciba-interval-fractional") else h.beh.ciba_interval
    return h.api.json(200, {"auth_req_id": c.id, "interval": interval, "expires_in": c.expires_in})


for _p in ("collection", "disbursement"):
    route("POST", f"/{_p}/v1_0/bc-authorize", _p)(lambda h, product: _bc_authorize(h, product))


def _consent_tokens(h, user, consent_id, msisdn, scope, refresh_lifetime, refresh_expires_at):
    lifetime = h.cfg.consent_token_lifetime
    tok = h.jwt.issue({"iss": "momo-independent", "sub": user.id, "typ": "consent", "scope": scope,
                       "msisdn": msisdn, "consent": consent_id}, lifetime)
    rt = secrets.token_hex(20) if h.beh.dev("refresh-token-not-uuid") else str(uuid.uuid4())
    h.store.refresh[rt] = {"owner": user.id, "consent": consent_id, "msisdn": msisdn, "scope": scope,
                           "expires_at": refresh_expires_at, "lifetime": refresh_lifetime}
    remaining = max(0, int(math.ceil(refresh_expires_at - now_mono())))
    if h.beh.ctl("consent-scope-reordered"):
        scope = " ".join(reversed(scope.split()))
    return {"access_token": tok, "token_type": "Bearer", "expires_in": lifetime, "scope": scope,
            "refresh_token": rt, "refresh_token_expired_in": remaining}


def _oauth_token(h, product):
    scheme, cred = h.split_auth()
    user = h.basic_user(cred) if scheme == "basic" and cred else None
    if scheme is None:
        raise h.api.unauthorized("missing", "Basic credentials are required.")
    if user is None:
        if h.beh.token_fail_status == 500:
            raise h.api.json(500, {"error": "login_failed"})
        raise h.api.unauthorized("credentials", "API user or API key not recognised.")
    h.check_env()
    form = h.form_body()
    grant = form.get("grant_type")
    if not grant:
        raise _ciba_error(h, "invalid_request", "grant_type is required.")
    if grant not in (CIBA_GRANT, "refresh_token") and h.beh.dev("ciba-grant-type-not-checked"):
        grant = CIBA_GRANT
    with h.store.lock:
        if grant == CIBA_GRANT:
            rid = form.get("auth_req_id")
            if not rid:
                raise _ciba_error(h, "invalid_request", "auth_req_id is required.")
            c = h.store.consents.get(rid.lower()) if UUID_ANY.match(rid) else None
            if c is None or (c.owner != user.id and not h.beh.dev("consent-redeemed-by-other-user")):
                raise _ciba_error(h, "invalid_grant", "auth_req_id is unknown.")
            t = now_mono()
            if c.redeemed and h.beh.ciba_one_time:
                raise _ciba_error(h, "invalid_grant", "auth_req_id was already used.")
            if t >= c.expires_at:
                raise _ciba_error(h, "expired_token", "auth_req_id has expired.")
            if t < c.approve_at:
                if h.beh.dev("consent-pending-500"):
                    raise h.api.error(500, "INTERNAL_PROCESSING_ERROR")
                raise _ciba_error(h, "authorization_pending", "The account holder has not answered yet.")
            if not c.redeemed:
                c.redeemed = True
                c.refresh_expires_at = t + c.valid_in
            scope = c.scope
            if h.beh.dev("consent-scope-from-latest-request"):
                scope = h.store.latest_scope.get(user.id, c.scope)
            out = _consent_tokens(h, user, c.id, c.msisdn, scope, c.valid_in, c.refresh_expires_at)
        elif grant == "refresh_token":
            rt = form.get("refresh_token")
            if not rt:
                raise _ciba_error(h, "invalid_request", "refresh_token is required.")
            r = h.store.refresh.get(rt)
            if r is None or r["owner"] != user.id or now_mono() >= r["expires_at"]:
                raise _ciba_error(h, "invalid_grant", "refresh_token is unknown or has expired.")
            expires_at = r["expires_at"]
            if h.beh.dev("refresh-extends-consent"):
                expires_at = r["expires_at"] = now_mono() + r["lifetime"]
            msisdn = r["msisdn"]
            if h.beh.dev("refresh-uses-latest-holder"):
                msisdn = h.store.latest_msisdn.get(user.id, msisdn)
            out = _consent_tokens(h, user, r["consent"], msisdn, r["scope"], r["lifetime"], expires_at)
            if h.beh.refresh_rotate:
                del h.store.refresh[rt]
            else:
                del h.store.refresh[out["refresh_token"]]
                out["refresh_token"] = rt
        else:
            raise _ciba_error(h, "unsupported_grant_type", "Use urn:openid:params:grant-type:ciba.")
    return h.api.json(200, out, {"Cache-Control": "no-store", "Pragma": "no-cache"})


for _p in ("collection", "disbursement"):
    route("POST", f"/{_p}/oauth2/token", _p)(lambda h, product: _oauth_token(h, product))


USERINFO_FULL = {
    "sub": None, "name": "Sand Box", "given_name": "Sand", "family_name": "Box", "middle_name": "",
    "email": "sand.box@example.com", "email_verified": True, "gender": "male", "locale": "sv-SE",
    "phone_number": None, "phone_number_verified": True, "address": "1 Sandbox Street, Stockholm",
    "updated_at": 1678355127, "status": "ACTIVE", "birthdate": "1976-08-13", "credit_score": "700",
    "active": True, "country_of_birth": "SE", "region_of_birth": "Stockholm", "city_of_birth": "Stockholm",
    "occupation": "Tester", "employer_name": "Sandbox AB", "identification_type": "PASSPORT",
    "identification_value": "SB1234567",
}
PROFILE_FIELDS = ("sub", "name", "given_name", "family_name", "middle_name", "gender", "locale",
                  "birthdate", "updated_at")


def _userinfo(h, product):
    h.business_user(product, token_kind="consent")
    h.check_env()
    claims = h.claims
    msisdn = claims.get("msisdn", "")
    if h.beh.observed_userinfo:
        rec = {"sub": "0", "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
               "birthdate": "1976-08-13", "locale": "sv_SE", "gender": "MALE", "updated_at": 1678355127}
        two_given_names(h.beh, rec)
        return h.api.json(200, rec)
    rec = dict(USERINFO_FULL)
    two_given_names(h.beh, rec)
    rec["phone_number"] = msisdn
    if h.beh.userinfo_filter:
        rec["sub"] = str(uuid.uuid5(uuid.NAMESPACE_URL, "msisdn:" + msisdn_digits(msisdn)))
        scopes = set(str(claims.get("scope", "")).split())
        if "all_info" not in scopes:
            keep = {"sub"}
            if "profile" in scopes:
                keep.update(PROFILE_FIELDS)
            rec = {k: v for k, v in rec.items() if k in keep}
    else:
        rec["sub"] = msisdn_digits(msisdn)
    return h.api.json(200, rec)


for _p in ("collection", "disbursement"):
    route("GET", f"/{_p}/oauth2/v1_0/userinfo", _p)(lambda h, product: _userinfo(h, product))


# ----------------------------------------------------------------------------------------------


def main(argv=None):
    cfg = parse_config(sys.argv[1:] if argv is None else argv)
    beh = Behaviour(cfg)
    scheduler = Scheduler()
    Handler.cfg, Handler.beh = cfg, beh
    Handler.api = Api(cfg, beh)
    Handler.store = Store(cfg, beh, scheduler)
    Handler.jwt = Jwt(beh)
    try:
        server = ThreadingHTTPServer(("127.0.0.1", cfg.port), Handler)
    except OSError as e:
        sys.stderr.write(f"momo_server.py: cannot listen on 127.0.0.1:{cfg.port} ({e.strerror or e}); "
                         "choose another --port\n")
        sys.exit(2)
    server.daemon_threads = True
    scheduler.start()

    def stop(signum, frame):
        STOP.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write(f"listening on http://127.0.0.1:{server.server_address[1]}\n")
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        STOP.set()
        scheduler.stop()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
