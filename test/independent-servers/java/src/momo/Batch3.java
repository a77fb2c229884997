package momo;

import java.math.BigDecimal;
import java.util.*;
import java.util.concurrent.CompletableFuture;

import static momo.SelfTest.*;

/** Self-test of the third batch of deviations and controls (run from SelfTest). Each deviation group is
 *  matched by a baseline that checks the same points on a server without it. */
final class Batch3 {
    private Batch3() { }

    static final BigDecimal N500 = new BigDecimal(500);

    static Res poll(Srv s, String[] d, Res ba) { return s.form("disbursement", "/oauth2/token/", Srv.basic(d), cibaGrant(ba)); }
    static Res refresh(Srv s, String[] d, String rt, String extra) {
        return s.form("disbursement", "/oauth2/token/", Srv.basic(d), "grant_type=refresh_token&refresh_token=" + rt + extra);
    }
    static Res userinfo(Srv s, String at) { return s.get("collection", "/oauth2/v1_0/userinfo", "Bearer " + at); }
    static String rtpEmptyPayer() { return "{\"amount\":\"1\",\"currency\":\"EUR\",\"payer\":{}}"; }
    static String depEmptyPayee() { return "{\"amount\":\"1\",\"currency\":\"EUR\",\"payee\":{}}"; }
    static String rtpHalfPayer() { return "{\"amount\":\"1\",\"currency\":\"EUR\",\"payer\":{\"partyIdType\":\"MSISDN\"}}"; }

    /** Everything the spec-profile group and its baseline both do; dev says which answers to expect. */
    static void specPoints(String A, Srv s, boolean dev) throws Exception {
        // ---- provisioning: apiuser-get-shows-latest-host, apiuser-duplicate-400
        String x = uuid(), y = uuid();
        eq(A, 201, newApiUser(s, x, "{\"providerCallbackHost\":\"a.example\"}").status, "API user x");
        eq(A, 201, newApiUser(s, y, "{\"providerCallbackHost\":\"b.example\"}").status, "API user y");
        eq(A, dev ? "b.example" : "a.example", apiUserGet(s, x, null).get("providerCallbackHost"), "[apiuser-get-shows-latest-host] GET x gives the host of");
        Res dup = newApiUser(s, x, "{\"providerCallbackHost\":\"c.example\"}");
        eq(A, dev ? 400 : 409, dup.status, "[apiuser-duplicate-400] reused API-user id");
        if (!dev) eq(A, "RESOURCE_ALREADY_EXIST", dup.get("code"), "reused API-user id code");
        // ---- tokens: token-accepts-other-users-key
        String[] p1 = s.user("collection", "127.0.0.1"), p2 = s.user("collection", "127.0.0.1");
        eq(A, dev ? 200 : 401, s.tokenRes("collection", new String[]{p1[0], p2[1]}).status, "[token-accepts-other-users-key] user 1's id with user 2's key");
        eq(A, 401, s.tokenRes("collection", new String[]{p1[0], "0123456789abcdef0123456789abcdef01234567"}).status, "[token-accepts-other-users-key] a key nobody holds");
        eq(A, 200, s.tokenRes("collection", p1).status, "own key works");
        String[] c1 = s.user("collection", "127.0.0.1"), c2 = s.user("collection", "127.0.0.1"), c3 = s.user("collection", "127.0.0.1");
        String[] d1 = s.user("disbursement", "127.0.0.1"), d2 = s.user("disbursement", "127.0.0.1"), d3 = s.user("disbursement", "127.0.0.1"),
            d4 = s.user("disbursement", "127.0.0.1"), d5 = s.user("disbursement", "127.0.0.1");
        String[] r1 = s.user("remittance", "127.0.0.1");
        String t1 = s.token("collection", c1), t2 = s.token("collection", c2), t3 = s.token("collection", c3);
        String u1 = s.token("disbursement", d1), u2 = s.token("disbursement", d2);
        String rt1 = s.token("remittance", r1);
        // ---- consent: start the requests early, their holders answer after 4 s
        Res baSlow = s.form("collection", "/v1_0/bc-authorize", t1, "login_hint=ID:46733123401/MSISDN&scope=profile");
        Res baH1 = s.form("collection", "/v1_0/bc-authorize", t1, "login_hint=ID:46733123401/MSISDN&scope=openid+phone");
        Res baH2 = s.form("collection", "/v1_0/bc-authorize", t1, "login_hint=ID:46733123402/MSISDN&scope=openid+phone");
        Res baRef = s.form("collection", "/v1_0/bc-authorize", t1, "login_hint=ID:46733123403/MSISDN&scope=openid");
        for (Res b : List.of(baSlow, baH1, baH2, baRef)) eq(A, 200, b.status, "bc-authorize");
        long tConsent = System.currentTimeMillis();
        Res first = poll(s, d3, baSlow);
        eq(A, "authorization_pending", first.get("error"), "[slow-down-at-interval] first poll pending");
        // ---- account holders: disbursement-holder-wants-collection-token
        Res dh = s.get("disbursement", "/v1_0/accountholder/msisdn/46733123499/active", u1);
        eq(A, dev ? 401 : 200, dh.status, "[disbursement-holder-wants-collection-token] disbursement check with a disbursement token");
        if (dev) eq(A, "access_token_of_another_product", dh.get("error"), "[disbursement-holder-wants-collection-token] error");
        eq(A, dev ? 200 : 401, s.get("disbursement", "/v1_0/accountholder/msisdn/46733123499/active", t1).status,
            "[disbursement-holder-wants-collection-token] disbursement check with a collection token");
        eq(A, 200, s.get("collection", "/v1_0/accountholder/msisdn/46733123499/active", t1).status, "collection check with a collection token");
        // ---- remittance: remittance-env-error-gateway-shape
        Res re = s.get("remittance", "/v1_0/account/balance", rt1, "X-Target-Environment", "elsewhere");
        eq(A, 500, re.status, "[remittance-env-error-gateway-shape] remittance balance, foreign environment");
        eq(A, dev ? null : "NOT_ALLOWED_TARGET_ENVIRONMENT", re.get("code"), "[remittance-env-error-gateway-shape] code");
        eq(A, dev ? N500 : null, re.get("statusCode"), "[remittance-env-error-gateway-shape] statusCode");
        eq(A, "NOT_ALLOWED_TARGET_ENVIRONMENT", s.get("collection", "/v1_0/account/balance", t1, "X-Target-Environment", "elsewhere").get("code"),
            "collection balance keeps the code");
        // ---- errors: empty-party-500
        Res ep = s.create("collection", "requesttopay", t2, uuid(), rtpEmptyPayer(), null);
        eq(A, dev ? 500 : 400, ep.status, "[empty-party-500] request to pay with payer {}");
        if (dev) eq(A, "INTERNAL_PROCESSING_ERROR", ep.get("code"), "[empty-party-500] code");
        eq(A, dev ? 500 : 400, s.create("disbursement", "deposit", u2, uuid(), depEmptyPayee(), null).status, "[empty-party-500] deposit with payee {}");
        eq(A, 400, s.create("collection", "requesttopay", t2, uuid(), rtpHalfPayer(), null).status, "[empty-party-500] payer without partyId still 400");
        // ---- idempotency: payment-id-scoped-per-user
        String shared = uuid();
        eq(A, 202, s.create("collection", "requesttopay", t2, shared, rtpBody("2", "46733123499"), null).status, "payment of user 2");
        eq(A, dev ? 202 : 409, s.create("collection", "requesttopay", t3, shared, rtpBody("3", "46733123499"), null).status,
            "[payment-id-scoped-per-user] another API user reuses the id");
        eq(A, 409, s.create("collection", "requesttopay", t2, shared, rtpBody("2", "46733123499"), null).status, "[payment-id-scoped-per-user] the same user's reuse: 409");
        // ---- notifications: notification-third-attempt-accepted, notification-sent-to-callback-url; currency-balance-never-updated
        String np = uuid(), npCb = "/d3/notify/" + uuid();
        eq(A, 202, s.create("collection", "requesttopay", t1, np, rtpBody("5", "46733123499"), cbUrl("127.0.0.1", npCb)).status, "payment to notify");
        // ---- refunds: refund-relabels-payment, refund-target-id-not-validated, refund-callback-host-plain-400
        String okPay = uuid();
        s.create("collection", "requesttopay", t3, okPay, rtpBody("10", "46733123499"), null);
        Res refCb = s.create("disbursement", "refund", u1, uuid(), refBody("1", okPay), "http://example.com/cb");
        eq(A, dev ? 400 : 500, refCb.status, "[refund-callback-host-plain-400] refund with a foreign callback host");
        eq(A, dev ? null : "INVALID_CALLBACK_URL_HOST", refCb.get("code"), "[refund-callback-host-plain-400] code");
        Res rtpCb = s.create("collection", "requesttopay", t3, uuid(), rtpBody("1", "46733123499"), "http://example.com/cb");
        eq(A, 500, rtpCb.status, "[refund-callback-host-plain-400] request to pay keeps 500");
        eq(A, "INVALID_CALLBACK_URL_HOST", rtpCb.get("code"), "[refund-callback-host-plain-400] request to pay keeps the code");
        String badTarget = uuid();
        Res bt = s.create("disbursement", "refund", u1, badTarget, refBody("1", "x").replace("\"x\"", "\"order-17\""), null);
        eq(A, dev ? 202 : 400, bt.status, "[refund-target-id-not-validated] referenceIdToRefund order-17");
        // ---- money: deposit-funds-checked-at-acceptance (d2: two deposits of 600000 together)
        String dA = uuid(), dB = uuid();
        eq(A, 202, s.create("disbursement", "deposit", u2, dA, depBody("600000", "46733123499"), null).status, "deposit A");
        eq(A, 202, s.create("disbursement", "deposit", u2, dB, depBody("600000", "46733123499"), null).status, "deposit B");
        // ---- consent continued
        sleep(Math.max(0, 3.2 - (System.currentTimeMillis() - tConsent) / 1000.0));
        Res second = poll(s, d3, baSlow);
        eq(A, dev ? "slow_down" : "authorization_pending", second.get("error"), "[slow-down-at-interval] poll after interval (3 s)");
        sleep(Math.max(0, 4.5 - (System.currentTimeMillis() - tConsent) / 1000.0));
        // consent-token-cached-per-client: d4 redeems the consents of two holders
        Res k1 = poll(s, d4, baH1), k2 = poll(s, d4, baH2);
        eq(A, 200, k1.status, "first holder's consent token");
        eq(A, 200, k2.status, "second holder's consent token");
        eq(A, dev, Objects.equals(k1.get("access_token"), k2.get("access_token")), "[consent-token-cached-per-client] the second redemption returns the first token");
        Res ui2 = userinfo(s, (String) k2.get("access_token"));
        eq(A, 200, ui2.status, "userinfo with the second token");
        eq(A, dev ? "+46733123401" : "+46733123402", ui2.get("phone_number"), "[consent-token-cached-per-client] the second token opens the holder");
        // refresh deviations: d5
        Res k = poll(s, d5, baRef);
        eq(A, 200, k.status, "consent token to refresh");
        String at0 = (String) k.get("access_token"), rf1 = (String) k.get("refresh_token");
        Object sub0 = userinfo(s, at0).get("sub");
        check(A, sub0 instanceof String, "userinfo sub");
        Res noAri = refresh(s, d5, rf1, "");
        eq(A, dev ? 400 : 200, noAri.status, "[refresh-grant-requires-auth-req-id] refresh without auth_req_id");
        if (dev) eq(A, "invalid_request", noAri.get("error"), "[refresh-grant-requires-auth-req-id] error");
        Res withAri = refresh(s, d5, rf1, "&auth_req_id=" + uuid());
        eq(A, 200, withAri.status, "[refresh-grant-requires-auth-req-id] refresh with some auth_req_id");
        Object sub1 = userinfo(s, (String) withAri.get("access_token")).get("sub");
        eq(A, dev ? rf1 : sub0, sub1, "[userinfo-sub-changes-after-refresh] sub after refresh");
        Res viaNew = refresh(s, d5, (String) withAri.get("refresh_token"), "&auth_req_id=" + uuid());
        eq(A, dev ? 400 : 200, viaNew.status, "[refreshed-refresh-token-unknown] the refreshed refresh token");
        if (dev) eq(A, "invalid_grant", viaNew.get("error"), "[refreshed-refresh-token-unknown] error");
        eq(A, 200, refresh(s, d5, rf1, "&auth_req_id=" + uuid()).status, "[refreshed-refresh-token-unknown] the first refresh token still works");
        // payments are final by now (2 s)
        eq(A, "SUCCESSFUL", s.await("requesttopay", t1, np, 5).get("status"), "payment to notify SUCCESSFUL");
        eq(A, 1, waitHits(npCb, 1, 5).size(), "payment callback");
        eq(A, 200, SelfTest.notify(s, t1, np, "{\"notificationMessage\":\"delivered\"}").status, "first notification");
        eq(A, 429, SelfTest.notify(s, t1, np, "{\"notificationMessage\":\"again\"}").status, "second notification");
        eq(A, dev ? 200 : 429, SelfTest.notify(s, t1, np, "{\"notificationMessage\":\"third\"}").status, "[notification-third-attempt-accepted] third notification");
        List<Hit> nh = waitHits(npCb, 2, dev ? 5 : 1);
        eq(A, dev ? 3 : 1, waitHits(npCb, dev ? 3 : 2, dev ? 5 : 0.5).size(), "[notification-sent-to-callback-url] callbacks after notifications");
        if (dev && nh.size() >= 2) {
            eq(A, Json.obj("notificationMessage", "delivered"), parseObj(nh.get(1).body), "[notification-sent-to-callback-url] body of the extra callback");
            eq(A, "POST", nh.get(1).method, "[notification-sent-to-callback-url] by POST");
        }
        eq(A, "5", s.get("collection", "/v1_0/account/balance", t1).get("availableBalance"), "collection balance after a payment of 5");
        eq(A, dev ? "0" : "5", s.get("collection", "/v1_0/account/balance/EUR", t1).get("availableBalance"), "[currency-balance-never-updated] balance in EUR");
        Res own2 = s.status("requesttopay", t2, shared), own3 = s.status("requesttopay", t3, shared);
        eq(A, "2.00", own2.get("amount"), "[payment-id-scoped-per-user] user 2 reads its own payment");
        eq(A, dev ? 200 : 404, own3.status, "[payment-id-scoped-per-user] user 3 reads the id");
        if (dev) eq(A, "3.00", own3.get("amount"), "[payment-id-scoped-per-user] user 3 reads its own payment");
        // refunds
        eq(A, "SUCCESSFUL", s.await("requesttopay", t3, okPay, 5).get("status"), "payment of 10 SUCCESSFUL");
        String rOk = uuid();
        s.create("disbursement", "refund", u1, rOk, refBody("4", okPay), null);
        eq(A, "SUCCESSFUL", s.await("refund", u1, rOk, 5).get("status"), "refund of 4");
        eq(A, "999996", s.get("disbursement", "/v1_0/account/balance", u1).get("availableBalance"), "disbursement balance after the refund of 4");
        if (dev) {
            Res btR = s.await("refund", u1, badTarget, 5);
            eq(A, "FAILED", btR.get("status"), "[refund-target-id-not-validated] refund of order-17 fails");
            eq(A, "RESOURCE_NOT_FOUND", btR.get("reason"), "[refund-target-id-not-validated] reason");
        }
        eq(A, dev ? "REFUNDED" : "SUCCESSFUL", s.status("requesttopay", t3, okPay).get("status"), "[refund-relabels-payment] refunded payment's status");
        eq(A, dev ? 409 : 200, SelfTest.notify(s, t3, okPay, "{\"notificationMessage\":\"delivered\"}").status, "[refund-relabels-payment] notification for the refunded payment");
        String rAgain = uuid();
        s.create("disbursement", "refund", u1, rAgain, refBody("2", okPay), null);
        eq(A, dev ? "FAILED" : "SUCCESSFUL", s.await("refund", u1, rAgain, 5).get("status"), "[refund-relabels-payment] a further partial refund");
        // deposits
        Res depA = s.await("deposit", u2, dA, 5), depB = s.await("deposit", u2, dB, 5);
        eq(A, "SUCCESSFUL", depA.get("status"), "deposit A SUCCESSFUL");
        eq(A, dev ? "SUCCESSFUL" : "FAILED", depB.get("status"), "[deposit-funds-checked-at-acceptance] deposit B");
        if (!dev) eq(A, "NOT_ENOUGH_FUNDS", depB.get("reason"), "deposit B reason");
        eq(A, dev ? "-200000" : "400000", s.get("disbursement", "/v1_0/account/balance", u2).get("availableBalance"),
            "[deposit-funds-checked-at-acceptance] disbursement balance");
        // slow-down-at-interval: 5 s after the slow_down the consent comes through
        sleep(Math.max(0, 8.4 - (System.currentTimeMillis() - tConsent) / 1000.0));
        eq(A, 200, poll(s, d3, baSlow).status, "[slow-down-at-interval] a later poll gets the consent token");
    }

    static final String SPEC_DEVS = "apiuser-get-shows-latest-host,apiuser-duplicate-400,token-accepts-other-users-key,slow-down-at-interval,"
        + "userinfo-sub-changes-after-refresh,consent-token-cached-per-client,refresh-grant-requires-auth-req-id,payment-id-scoped-per-user,"
        + "notification-third-attempt-accepted,notification-sent-to-callback-url,disbursement-holder-wants-collection-token,"
        + "currency-balance-never-updated,refund-target-id-not-validated,refund-relabels-payment,"
        + "refund-callback-host-plain-400,deposit-funds-checked-at-acceptance,remittance-env-error-gateway-shape,empty-party-500,"
        + "refreshed-refresh-token-unknown";

    static void specGroup() throws Exception {
        String A = "deviations3-spec";
        Srv s = Srv.start(A, "--profile", "spec", "--deviation", SPEC_DEVS);
        specPoints(A, s, true);
        s.stop();
    }
    static void specBaseline() throws Exception {
        String A = "deviations3-spec-baseline";
        Srv s = Srv.start(A, "--profile", "spec");
        specPoints(A, s, false);
        s.stop();
    }

    /** payment-duplicate-race: two requests to pay with one X-Reference-Id sent together. */
    static void racePoints(String A, Srv s, boolean dev) throws Exception {
        String[] c = s.user("collection", "127.0.0.1");
        String t = s.token("collection", c);
        String id = uuid();
        CompletableFuture<Res> a = CompletableFuture.supplyAsync(() -> s.create("collection", "requesttopay", t, id, rtpBody("7", "46733123499"), null));
        CompletableFuture<Res> b = CompletableFuture.supplyAsync(() -> s.create("collection", "requesttopay", t, id, rtpBody("7", "46733123499"), null));
        List<Integer> st = new ArrayList<>(List.of(a.get().status, b.get().status));
        Collections.sort(st);
        eq(A, dev ? List.of(202, 202) : List.of(202, 409), st, "[payment-duplicate-race] two requests to pay with one id sent together");
        eq(A, 409, s.create("collection", "requesttopay", t, id, rtpBody("7", "46733123499"), null).status, "[payment-duplicate-race] a later reuse: 409");
        eq(A, "SUCCESSFUL", s.await("requesttopay", t, id, 5).get("status"), "payment SUCCESSFUL");
        sleep(0.5);
        eq(A, dev ? "14" : "7", s.get("collection", "/v1_0/account/balance", t).get("availableBalance"), "[payment-duplicate-race] collection balance");
        // refund-debits-running-total: refunds of 4 and then 2 of a payment of 10
        String[] d = s.user("disbursement", "127.0.0.1");
        String u = s.token("disbursement", d);
        String pay = uuid(), r1 = uuid(), r2 = uuid();
        s.create("collection", "requesttopay", t, pay, rtpBody("10", "46733123499"), null);
        eq(A, "SUCCESSFUL", s.await("requesttopay", t, pay, 5).get("status"), "payment of 10");
        s.create("disbursement", "refund", u, r1, refBody("4", pay), null);
        eq(A, "SUCCESSFUL", s.await("refund", u, r1, 5).get("status"), "refund of 4");
        eq(A, "999996", s.get("disbursement", "/v1_0/account/balance", u).get("availableBalance"), "[refund-debits-running-total] first refund takes 4");
        s.create("disbursement", "refund", u, r2, refBody("2", pay), null);
        eq(A, "SUCCESSFUL", s.await("refund", u, r2, 5).get("status"), "refund of 2");
        eq(A, dev ? "999990" : "999994", s.get("disbursement", "/v1_0/account/balance", u).get("availableBalance"), "[refund-debits-running-total] second refund takes");
        eq(A, "2.00", s.status("refund", u, r2).get("amount"), "[refund-debits-running-total] the refund record keeps its amount");
    }
    static void race() throws Exception {
        String A = "deviations3-race-refunds";
        Srv s = Srv.start(A, "--profile", "spec", "--deviation", "payment-duplicate-race,refund-debits-running-total");
        racePoints(A, s, true);
        s.stop();
        Srv b = Srv.start(A + "-baseline", "--profile", "spec");
        racePoints(A + "-baseline", b, false);
        b.stop();
    }

    static void mtnPoints(String A, Srv s, boolean dev) throws Exception {
        String[] c = s.user("collection", "127.0.0.1"), d = s.user("disbursement", "127.0.0.1"), r = s.user("remittance", "127.0.0.1");
        eq(A, "access_token", s.tokenRes("collection", c).get("token_type"), "[token-type-bearer-off-collection] collection token_type");
        eq(A, dev ? "Bearer" : "access_token", s.tokenRes("disbursement", d).get("token_type"), "[token-type-bearer-off-collection] disbursement token_type");
        eq(A, dev ? "Bearer" : "access_token", s.tokenRes("remittance", r).get("token_type"), "[token-type-bearer-off-collection] remittance token_type");
        String ct = s.token("collection", c), dt = s.token("disbursement", d);
        Res dh = s.get("disbursement", "/v1_0/accountholder/msisdn/46733123499/active", dt);
        eq(A, dev ? Json.obj("active", true) : Json.obj("result", true), dh.obj(), "[disbursement-holder-result-renamed] disbursement check body");
        eq(A, Json.obj("result", true), s.get("collection", "/v1_0/accountholder/msisdn/46733123499/active", ct).obj(), "[disbursement-holder-result-renamed] collection check body");
        Res bad = s.get("collection", "/v1_0/requesttopay/not-a-uuid", ct);
        eq(A, dev ? 500 : 400, bad.status, "[rtp-status-bad-id-500] request-to-pay status of not-a-uuid");
        if (dev) eq(A, "INTERNAL_PROCESSING_ERROR", bad.get("code"), "[rtp-status-bad-id-500] code");
        eq(A, 400, s.get("disbursement", "/v1_0/deposit/not-a-uuid", dt).status, "[rtp-status-bad-id-500] deposit status keeps 400");
        String cb = "/d3m/flaky/" + uuid();
        eq(A, 202, s.create("collection", "requesttopay", ct, uuid(), rtpBody("1", "46733123499"), cbUrl("127.0.0.1", cb)).status, "payment with a callback answered 500 first");
        List<Hit> h = waitHits(cb, 2, 4);
        eq(A, 2, h.size(), "callback retried after the 500");
        if (h.size() >= 2) {
            eq(A, "SUCCESSFUL", parseObj(h.get(0).body) == null ? null : parseObj(h.get(0).body).get("status"), "[callback-retry-without-body] first attempt carries the record");
            if (dev) eq(A, "", h.get(1).body, "[callback-retry-without-body] the retry's body");
            else eq(A, h.get(0).body, h.get(1).body, "the retry carries the same record");
        }
    }
    static void mtnGroup() throws Exception {
        String A = "deviations3-mtn";
        Srv s = Srv.start(A, "--profile", "mtn-sandbox", "--deviation",
            "token-type-bearer-off-collection,disbursement-holder-result-renamed,callback-retry-without-body,rtp-status-bad-id-500");
        mtnPoints(A, s, true);
        s.stop();
    }
    static void mtnBaseline() throws Exception {
        String A = "deviations3-mtn-baseline";
        Srv s = Srv.start(A, "--profile", "mtn-sandbox");
        mtnPoints(A, s, false);
        s.stop();
    }

    // ------------------------------------------------------------------ controls, third batch
    static void controlPoints(String A, Srv s, boolean on) throws Exception {
        // api-key-base64url
        String[] c = s.user("collection", "127.0.0.1"), d = s.user("disbursement", "127.0.0.1");
        check(A, c[1] != null && c[1].matches(on ? "[A-Za-z0-9_-]{32}" : "[0-9a-f]{40}"), "[api-key-base64url] apiKey form: " + c[1]);
        String ct = s.token("collection", c);
        // callback-single-attempt
        String cb = "/c3/flaky/" + uuid();
        String p = uuid();
        eq(A, 202, s.create("collection", "requesttopay", ct, p, rtpBody("1", "46733123499"), cbUrl("127.0.0.1", cb)).status, "payment with a flaky callback");
        // consent-request-short-lived, consent-validity-30-days, userinfo-all-claims
        Res ba = s.form("collection", "/v1_0/bc-authorize", ct, "login_hint=ID:46733123499/MSISDN&scope=openid");
        Res bv = s.form("collection", "/v1_0/bc-authorize", ct, "login_hint=ID:46733123499/MSISDN&scope=openid&consent_valid_in=600");
        eq(A, new BigDecimal(on ? 60 : 180), ba.get("expires_in"), "[consent-request-short-lived] bc-authorize expires_in");
        eq(A, "SUCCESSFUL", s.await("requesttopay", ct, p, 5).get("status"), "payment SUCCESSFUL");
        eq(A, 200, SelfTest.notify(s, ct, p, "{\"notificationMessage\":\"delivered\"}").status, "notification");
        Res again = SelfTest.notify(s, ct, p, "{\"notificationMessage\":\"again\"}");
        eq(A, 429, again.status, "repeated notification");
        String ra = again.header("Retry-After");
        check(A, on ? ra != null && ra.matches("[0-9]+") && Integer.parseInt(ra) >= 110 && Integer.parseInt(ra) <= 120 : ra == null,
            "[retry-after-on-429] Retry-After: " + ra);
        sleep(4.5);
        Res k = poll(s, d, ba), kv = poll(s, d, bv);
        eq(A, 200, k.status, "consent token");
        Object kex = k.get("expires_in");
        check(A, kex instanceof BigDecimal && (on ? ((BigDecimal) kex).longValue() == 3600 : ((BigDecimal) kex).longValue() >= 3590),
            "[consent-validity-30-days] the consent token still lives 3600 s: " + kex);
        Object rte = k.get("refresh_token_expired_in");
        check(A, rte instanceof BigDecimal && (on ? ((BigDecimal) rte).longValue() >= 2591990 && ((BigDecimal) rte).longValue() <= 2592000
            : ((BigDecimal) rte).longValue() <= 3600), "[consent-validity-30-days] refresh_token_expired_in " + rte);
        Object rtv = kv.get("refresh_token_expired_in");
        check(A, rtv instanceof BigDecimal && ((BigDecimal) rtv).longValue() <= 600 && ((BigDecimal) rtv).longValue() >= 590, "[consent-validity-30-days] consent_valid_in still wins: " + rtv);
        Res ui = userinfo(s, (String) k.get("access_token"));
        eq(A, 200, ui.status, "userinfo");
        eq(A, on ? 24 : 1, ui.obj() == null ? -1 : ui.obj().size(), "[userinfo-all-claims] claims for scope openid");
        List<Hit> h = waitHits(cb, 2, 1.5);
        eq(A, on ? 1 : 2, h.size(), "[callback-single-attempt] attempts after a 500");
        // notification-cooldown-long: 11 s after the first notification
        sleep(6.5);
        eq(A, on ? 429 : 200, SelfTest.notify(s, ct, p, "{\"notificationMessage\":\"later\"}").status, "[notification-cooldown-long] notification 11 s later");
    }
    static final String SPEC_CONTROLS = "callback-single-attempt,notification-cooldown-long,consent-request-short-lived,consent-validity-30-days,"
        + "userinfo-all-claims,retry-after-on-429,api-key-base64url";
    static void controlsSpec() throws Exception {
        String A = "controls3-spec";
        Srv s = Srv.start(A, "--profile", "spec", "--control", SPEC_CONTROLS);
        controlPoints(A, s, true);
        s.stop();
    }
    static void controlsBaseline() throws Exception {
        String A = "controls3-baseline";
        Srv s = Srv.start(A, "--profile", "spec");
        controlPoints(A, s, false);
        s.stop();
    }
    /** mtn-sandbox accepts the mtn-legal controls; a few of their effects there. */
    static void controlsMtn() throws Exception {
        String A = "controls3-mtn";
        Srv s = Srv.start(A, "--profile", "mtn-sandbox", "--control",
            "callback-single-attempt,notification-cooldown-long,consent-request-short-lived,consent-validity-30-days,userinfo-all-claims,retry-after-on-429");
        String[] c = s.user("collection", "127.0.0.1");
        check(A, c[1] != null && c[1].matches("[0-9a-f]{32}"), "mtn apiKey stays 32 hex: " + c[1]);
        String ct = s.token("collection", c);
        String cb = "/c3m/flaky/" + uuid(), p = uuid();
        s.create("collection", "requesttopay", ct, p, rtpBody("1", "46733123499"), cbUrl("127.0.0.1", cb));
        Res ba = s.form("collection", "/v1_0/bc-authorize", ct, "login_hint=ID:46733123499/MSISDN&scope=profile");
        eq(A, new BigDecimal(60), ba.get("expires_in"), "[consent-request-short-lived] mtn-sandbox expires_in");
        eq(A, 200, SelfTest.notify(s, ct, p, "{\"notificationMessage\":\"delivered\"}").status, "notification");
        Res again = SelfTest.notify(s, ct, p, "{\"notificationMessage\":\"again\"}");
        eq(A, 429, again.status, "repeated notification");
        String ra = again.header("Retry-After");
        check(A, ra != null && ra.matches("[0-9]+") && Integer.parseInt(ra) >= 110 && Integer.parseInt(ra) <= 120, "[retry-after-on-429] mtn-sandbox Retry-After: " + ra);
        eq(A, 1, waitHits(cb, 2, 2.5).size(), "[callback-single-attempt] mtn-sandbox: one attempt (default 3)");
        s.stop();
    }
}
