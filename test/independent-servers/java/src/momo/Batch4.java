package momo;

import java.math.BigDecimal;
import java.util.*;
import java.util.concurrent.CompletableFuture;

import static momo.SelfTest.*;

/** Self-test of the fourth batch of deviations and controls (run from SelfTest). Each deviation group is
 *  matched by a baseline that checks the same points on a server without it. */
final class Batch4 {
    private Batch4() { }

    static Res poll(Srv s, String[] d, Res ba) { return s.form("disbursement", "/oauth2/token/", Srv.basic(d), cibaGrant(ba)); }
    static Res refresh(Srv s, String auth, String rt) { return oauthForm(s, auth, "grant_type=refresh_token&refresh_token=" + rt); }
    /** The OAuth 2.0 token operation; auth may be null (no Authorization header). */
    static Res oauthForm(Srv s, String auth, String form) {
        return s.call("POST", "/disbursement/oauth2/token/", form, "Ocp-Apim-Subscription-Key", s.key("disbursement"),
            "X-Target-Environment", "sandbox", "Content-Type", "application/x-www-form-urlencoded", "Authorization", auth);
    }
    static Res userinfo(Srv s, Object at) { return s.get("collection", "/oauth2/v1_0/userinfo", "Bearer " + at); }
    static Res bc(Srv s, String tok, String msisdn, String scope, String... more) {
        return s.form("collection", "/v1_0/bc-authorize", tok, "login_hint=ID:" + msisdn + "/MSISDN&scope=" + scope, more);
    }
    static double since(long t0) { return (System.currentTimeMillis() - t0) / 1000.0; }
    static String bal(Srv s, String product, String tok) { return (String) s.get(product, "/v1_0/account/balance", tok).get("availableBalance"); }
    static Res holder(Srv s, String product, String tok, String msisdn) {
        return s.get(product, "/v1_0/accountholder/msisdn/" + msisdn + "/active", tok);
    }

    // ------------------------------------------------------------------ spec profile
    static void specPoints(String A, Srv s, boolean dev) throws Exception {
        // ---- consent requests first: their holders answer after 4 s
        String[] cc = s.user("collection", "127.0.0.1"), ck = s.user("collection", "127.0.0.1"), cp = s.user("collection", "127.0.0.1");
        String[] d1 = s.user("disbursement", "127.0.0.1");
        String tc = s.token("collection", cc), tk = s.token("collection", ck), tp = s.token("collection", cp);
        long t0 = System.currentTimeMillis();
        String pingCb = "/d4/ping/" + uuid();
        Res baP = bc(s, tp, "46733123413", "openid", "X-Callback-Url", cbUrl("127.0.0.1", pingCb));
        eq(A, 200, baP.status, "bc-authorize with a callback");
        Res baA = bc(s, tc, "46733123411", "openid+profile+phone");
        long tA = System.currentTimeMillis();
        eq(A, 200, baA.status, "bc-authorize, first holder");
        // auth-req-id-from-clock: pairs of bc-authorize of one API user sent back to back
        Res x = null, y = null;
        boolean same = false;
        for (int i = 0; i < 3 && !same; i++) {
            x = bc(s, tk, "46733123414", "openid+phone");
            y = bc(s, tk, "46733123415", "openid+phone");
            eq(A, 200, x.status, "bc-authorize x");
            eq(A, 200, y.status, "bc-authorize y");
            same = Objects.equals(x.get("auth_req_id"), y.get("auth_req_id"));
        }
        eq(A, dev, same, "[auth-req-id-from-clock] two bc-authorize of one API user within a second share the auth_req_id");
        // consent-ping-before-decision: a client that redeems the auth_req_id as soon as the ping arrives
        CompletableFuture<Res> onPing = CompletableFuture.supplyAsync(() -> {
            List<Hit> h = waitHits(pingCb, 1, 9);
            return h.isEmpty() ? null : poll(s, d1, baP);
        });

        // ---- provisioning: apikey-second-409
        String[] pu = s.user("collection", "127.0.0.1");
        Res k2 = s.call("POST", "/v1_0/apiuser/" + pu[0] + "/apikey", null, "Ocp-Apim-Subscription-Key", s.key("collection"));
        eq(A, dev ? 409 : 201, k2.status, "[apikey-second-409] a second API key");
        eq(A, dev ? "RESOURCE_ALREADY_EXIST" : null, k2.get("code"), "[apikey-second-409] code");
        eq(A, 200, s.tokenRes("collection", pu).status, "[apikey-second-409] the first key still works");

        // ---- tokens: invalid-token-403
        Res garbage = s.get("collection", "/v1_0/account/balance", "Bearer not.a.token");
        eq(A, dev ? 403 : 401, garbage.status, "[invalid-token-403] balance with a garbage bearer token");
        eq(A, "access_token_not_valid", garbage.get("error"), "[invalid-token-403] error");
        eq(A, 401, s.call("GET", "/collection/v1_0/account/balance", null, "Ocp-Apim-Subscription-Key", s.key("collection"),
            "X-Target-Environment", "sandbox").status, "[invalid-token-403] no Authorization: 401");

        // ---- errors: deposit-currency-code-not-allowed
        String[] de = s.user("disbursement", "127.0.0.1"), ce = s.user("collection", "127.0.0.1");
        String ude = s.token("disbursement", de), tce = s.token("collection", ce);
        Res usd = s.create("disbursement", "deposit", ude, uuid(), depBody("1", "46733123499").replace("EUR", "USD"), null);
        eq(A, 500, usd.status, "deposit in USD");
        eq(A, dev ? "NOT_ALLOWED" : "INVALID_CURRENCY", usd.get("code"), "[deposit-currency-code-not-allowed] deposit in USD code");
        eq(A, "INVALID_CURRENCY", s.create("collection", "requesttopay", tce, uuid(), rtpBody("1", "46733123499").replace("EUR", "USD"), null).get("code"),
            "[deposit-currency-code-not-allowed] request to pay keeps INVALID_CURRENCY");
        eq(A, "INVALID_CURRENCY", s.create("disbursement", "refund", ude, uuid(), refBody("1", uuid()).replace("EUR", "USD"), null).get("code"),
            "[deposit-currency-code-not-allowed] refund keeps INVALID_CURRENCY");

        // ---- duplicates: identical-retry-accepted
        String[] ci = s.user("collection", "127.0.0.1"), di = s.user("disbursement", "127.0.0.1");
        String tci = s.token("collection", ci), udi = s.token("disbursement", di);
        String pid = uuid(), did = uuid();
        eq(A, 202, s.create("collection", "requesttopay", tci, pid, rtpBody("3", "46733123499"), null).status, "payment of 3");
        eq(A, dev ? 202 : 409, s.create("collection", "requesttopay", tci, pid, rtpBody("3", "46733123499"), null).status,
            "[identical-retry-accepted] the same request to pay again");
        eq(A, 409, s.create("collection", "requesttopay", tci, pid, rtpBody("4", "46733123499"), null).status,
            "[identical-retry-accepted] the id with another body: 409");
        eq(A, 202, s.create("disbursement", "deposit", udi, did, depBody("7", "46733123499"), null).status, "deposit of 7");
        eq(A, dev ? 202 : 409, s.create("disbursement", "deposit", udi, did, depBody("7", "46733123499"), null).status,
            "[identical-retry-accepted] the same deposit again");

        // ---- account holders: holder-answer-cached-per-user
        String[] ch = s.user("collection", "127.0.0.1"), ch2 = s.user("collection", "127.0.0.1");
        String tch = s.token("collection", ch), tch2 = s.token("collection", ch2);
        eq(A, Json.obj("active", false), holder(s, "collection", tch, "46733123450").obj(), "holder 46733123450 not found");
        eq(A, Json.obj("active", !dev), holder(s, "collection", tch, "46733123499").obj(), "[holder-answer-cached-per-user] an active holder right after");
        eq(A, Json.obj("active", true), holder(s, "collection", tch2, "46733123499").obj(), "[holder-answer-cached-per-user] another API user's check");

        // ---- money and refunds
        String[] cm = s.user("collection", "127.0.0.1"), dm = s.user("disbursement", "127.0.0.1"), dd = s.user("disbursement", "127.0.0.1");
        String tcm = s.token("collection", cm), udm = s.token("disbursement", dm), udd = s.token("disbursement", dd);
        String pay = uuid(), dep = uuid();
        eq(A, 202, s.create("collection", "requesttopay", tcm, pay, rtpBody("10", "46733123499"), null).status, "payment of 10");
        eq(A, 202, s.create("disbursement", "deposit", udd, dep, depBody("5", "46733123499"), null).status, "deposit of 5");

        // ---- notifications: notification-needs-status-read, notification-cooldown-before-owner-check
        String[] cn1 = s.user("collection", "127.0.0.1"), cn2 = s.user("collection", "127.0.0.1");
        String tn1 = s.token("collection", cn1), tn2 = s.token("collection", cn2);
        String n1 = uuid(), n2 = uuid(), n1Cb = "/d4/n1/" + uuid();
        eq(A, 202, s.create("collection", "requesttopay", tn1, n1, rtpBody("1", "46733123499"), cbUrl("127.0.0.1", n1Cb)).status, "payment n1");
        eq(A, 202, s.create("collection", "requesttopay", tn1, n2, rtpBody("1", "46733123499"), null).status, "payment n2");
        eq(A, 1, waitHits(n1Cb, 1, 8).size(), "callback of n1");
        Res nFirst = SelfTest.notify(s, tn1, n1, "{\"notificationMessage\":\"delivered\"}");
        eq(A, dev ? 409 : 200, nFirst.status, "[notification-needs-status-read] notification after the callback, no status read");
        if (dev) eq(A, "TRANSACTION_NOT_COMPLETED", nFirst.get("code"), "[notification-needs-status-read] code");
        eq(A, "SUCCESSFUL", s.status("requesttopay", tn1, n1).get("status"), "n1 status read");
        eq(A, dev ? 200 : 429, SelfTest.notify(s, tn1, n1, "{\"notificationMessage\":\"again\"}").status,
            "[notification-needs-status-read] notification after a status read");
        Res foreign = SelfTest.notify(s, tn2, n1, "{\"notificationMessage\":\"not mine\"}");
        eq(A, dev ? 429 : 404, foreign.status, "[notification-cooldown-before-owner-check] another API user, payment in its 429 period");
        eq(A, "SUCCESSFUL", s.await("requesttopay", tn1, n2, 5).get("status"), "n2 SUCCESSFUL");
        eq(A, 404, SelfTest.notify(s, tn2, n2, "{\"notificationMessage\":\"not mine\"}").status,
            "[notification-cooldown-before-owner-check] another API user, payment never notified: 404");

        // ---- refunds: refund-reversal-credits-payment-account, refund-target-keyed-409, refund-of-deposit-accepted
        eq(A, "SUCCESSFUL", s.await("requesttopay", tcm, pay, 5).get("status"), "payment of 10 SUCCESSFUL");
        eq(A, "SUCCESSFUL", s.await("deposit", udd, dep, 5).get("status"), "deposit of 5 SUCCESSFUL");
        String r1 = uuid(), r2 = uuid(), rd = uuid(), ru = uuid();
        eq(A, 202, s.create("disbursement", "refund", udm, r1, refBody("4", pay), null).status, "refund of 4");
        Res second = s.create("disbursement", "refund", udm, r2, refBody("2", pay), null);
        eq(A, dev ? 409 : 202, second.status, "[refund-target-keyed-409] a second refund of the payment, fresh id");
        if (dev) eq(A, "RESOURCE_ALREADY_EXIST", second.get("code"), "[refund-target-keyed-409] code");
        eq(A, 202, s.create("disbursement", "refund", udd, rd, refBody("1", dep), null).status, "refund naming the deposit");
        eq(A, 202, s.create("disbursement", "refund", udd, ru, refBody("1", uuid()), null).status, "refund naming nothing");
        eq(A, "SUCCESSFUL", s.await("refund", udm, r1, 5).get("status"), "refund of 4 SUCCESSFUL");
        Res r2s = s.await("refund", udm, r2, 5);
        eq(A, dev ? 404 : 200, r2s.status, "[refund-target-keyed-409] the refused refund does not exist");
        Res rds = s.await("refund", udd, rd, 5);
        eq(A, dev ? "SUCCESSFUL" : "FAILED", rds.get("status"), "[refund-of-deposit-accepted] refund of a deposit");
        if (!dev) eq(A, "RESOURCE_NOT_FOUND", rds.get("reason"), "refund of a deposit reason");
        Res rus = s.await("refund", udd, ru, 5);
        eq(A, "FAILED", rus.get("status"), "[refund-of-deposit-accepted] refund of no transaction still fails");
        eq(A, "RESOURCE_NOT_FOUND", rus.get("reason"), "[refund-of-deposit-accepted] reason");
        eq(A, dev ? "999994" : "999995", bal(s, "disbursement", udd), "[refund-of-deposit-accepted] disbursement balance");
        eq(A, dev ? "999996" : "999994", bal(s, "disbursement", udm), "[refund-target-keyed-409] disbursement balance after the refunds");
        eq(A, dev ? "14" : "10", bal(s, "collection", tcm), "[refund-reversal-credits-payment-account] collection balance of the refunded payer's merchant");
        eq(A, "3", bal(s, "collection", tci), "[identical-retry-accepted] the repeat created nothing");
        eq(A, "999993", bal(s, "disbursement", udi), "[identical-retry-accepted] one deposit of 7");

        // ---- consent continued (holders answered at 4 s)
        sleep(Math.max(0, 1.2 - since(tA)));
        Res baB = bc(s, tc, "46733123412", "openid+profile+phone");
        long tB = System.currentTimeMillis();
        eq(A, 200, baB.status, "bc-authorize, second holder");
        sleep(Math.max(0, 5.6 - since(t0)));
        Res pinged = onPing.get();
        check(A, pinged != null, "[consent-ping-before-decision] the bc-authorize callback came");
        if (pinged != null) {
            eq(A, dev ? 400 : 200, pinged.status, "[consent-ping-before-decision] redeeming on the ping");
            eq(A, dev ? "authorization_pending" : null, pinged.get("error"), "[consent-ping-before-decision] error when redeeming on the ping");
        }
        List<Hit> pings = waitHits(pingCb, 1, 0.1);
        if (!pings.isEmpty())
            eq(A, baP.get("auth_req_id"), parseObj(pings.get(0).body) == null ? null : parseObj(pings.get(0).body).get("auth_req_id"), "[consent-ping-before-decision] ping body");
        Res kA = poll(s, d1, baA);
        sleep(Math.max(0, 4.4 - since(tB)));
        Res kB = poll(s, d1, baB);
        eq(A, 200, kA.status, "consent token, first holder");
        eq(A, 200, kB.status, "consent token, second holder");
        eq(A, "no-store", kA.header("Cache-Control"), "[refresh-grant-cacheable] CIBA grant keeps no-store");
        Res uA = userinfo(s, kA.get("access_token")), uB = userinfo(s, kB.get("access_token"));
        eq(A, "+46733123411", uA.get("phone_number"), "userinfo of the first holder");
        eq(A, "+46733123412", uB.get("phone_number"), "userinfo of the second holder");
        eq(A, dev, Objects.equals(uA.get("sub"), uB.get("sub")), "[userinfo-sub-per-client] the two holders share sub");
        eq(A, dev ? "2023-03-09T09:45:27Z" : (Object) new BigDecimal(1678355127), uA.get("updated_at"), "[userinfo-updated-at-iso-string] updated_at");
        Res kx = poll(s, d1, x);
        eq(A, 200, kx.status, "consent token of x's auth_req_id");
        eq(A, dev ? "+46733123415" : "+46733123414", userinfo(s, kx.get("access_token")).get("phone_number"),
            "[auth-req-id-from-clock] x's auth_req_id opens");
        // refresh: refresh-grant-cacheable, refresh-grant-unauthenticated
        String rf = (String) kA.get("refresh_token");
        Res ref = refresh(s, Srv.basic(d1), rf);
        eq(A, 200, ref.status, "refresh with Basic");
        eq(A, dev ? null : "no-store", ref.header("Cache-Control"), "[refresh-grant-cacheable] Cache-Control of the refresh answer");
        Res anon = refresh(s, null, rf);
        eq(A, dev ? 200 : 401, anon.status, "[refresh-grant-unauthenticated] refresh without Authorization");
        if (!dev) eq(A, "invalid_client", anon.get("error"), "refresh without Authorization error");
        if (dev) eq(A, 200, userinfo(s, anon.get("access_token")).status, "[refresh-grant-unauthenticated] the token opens user information");
        eq(A, 401, refresh(s, Srv.basic(new String[]{d1[0], "0000000000000000000000000000000000000000"}), rf).status,
            "[refresh-grant-unauthenticated] a wrong Basic credential: 401");
        Res cibaAnon = oauthForm(s, null, cibaGrant(baB));
        eq(A, 401, cibaAnon.status, "[refresh-grant-unauthenticated] the CIBA grant without Authorization: 401");
    }

    static final String SPEC_DEVS = "notification-cooldown-before-owner-check,notification-needs-status-read,identical-retry-accepted,"
        + "apikey-second-409,refresh-grant-cacheable,userinfo-updated-at-iso-string,userinfo-sub-per-client,refresh-grant-unauthenticated,"
        + "consent-ping-before-decision,refund-of-deposit-accepted,refund-reversal-credits-payment-account,refund-target-keyed-409,"
        + "invalid-token-403,holder-answer-cached-per-user,deposit-currency-code-not-allowed,auth-req-id-from-clock";

    static void specGroup() throws Exception {
        String A = "deviations4-spec";
        Srv s = Srv.start(A, "--profile", "spec", "--deviation", SPEC_DEVS);
        specPoints(A, s, true);
        s.stop();
    }
    static void specBaseline() throws Exception {
        String A = "deviations4-spec-baseline";
        Srv s = Srv.start(A, "--profile", "spec");
        specPoints(A, s, false);
        s.stop();
    }

    // ------------------------------------------------------------------ mtn-sandbox profile
    static void mtnPoints(String A, Srv s, boolean dev) throws Exception {
        String[] c0 = s.user("collection", "127.0.0.1");
        String t0k = s.token("collection", c0);
        long t0 = System.currentTimeMillis();
        // ongoing-number-times-out-early
        String ongoing = uuid();
        eq(A, 202, s.create("collection", "requesttopay", t0k, ongoing, rtpBody("1", "46733123453"), null).status, "payment from 46733123453");
        // test-outcome-consumed-once
        String[] co = s.user("collection", "127.0.0.1");
        String tco = s.token("collection", co);
        String f1 = uuid(), f2 = uuid(), g1 = uuid(), g2 = uuid();
        s.create("collection", "requesttopay", tco, f1, rtpBody("1", "46733123450"), null);
        s.create("collection", "requesttopay", tco, f2, rtpBody("1", "46733123450"), null);
        s.create("collection", "requesttopay", tco, g1, rtpBody("1", "46733123451"), null);
        s.create("collection", "requesttopay", tco, g2, rtpBody("1", "46733123451"), null);
        eq(A, "FAILED", s.status("requesttopay", tco, f1).get("status"), "first payment from 46733123450");
        eq(A, dev ? "SUCCESSFUL" : "FAILED", s.status("requesttopay", tco, f2).get("status"), "[test-outcome-consumed-once] second payment from 46733123450");
        eq(A, "APPROVAL_REJECTED", s.status("requesttopay", tco, g1).get("reason"), "first payment from 46733123451");
        eq(A, dev ? "SUCCESSFUL" : "FAILED", s.status("requesttopay", tco, g2).get("status"), "[test-outcome-consumed-once] second payment from 46733123451");
        // email-party-id-lower-cased
        String[] cem = s.user("collection", "127.0.0.1");
        String tem = s.token("collection", cem);
        String pe = uuid(), peCb = "/d4m/email/" + uuid();
        String emailBody = rtpBody("2", "x").replace("\"MSISDN\",\"partyId\":\"x\"", "\"EMAIL\",\"partyId\":\"Ann.Lee@Example.com\"");
        eq(A, 202, s.create("collection", "requesttopay", tem, pe, emailBody, cbUrl("127.0.0.1", peCb)).status, "payment from an e-mail payer");
        String wantMail = dev ? "ann.lee@example.com" : "Ann.Lee@Example.com";
        Object payer = s.status("requesttopay", tem, pe).get("payer");
        eq(A, wantMail, payer instanceof Map ? ((Map<?, ?>) payer).get("partyId") : null, "[email-party-id-lower-cased] status record partyId");
        List<Hit> eh = waitHits(peCb, 1, 8);
        Object cbPayer = eh.isEmpty() || parseObj(eh.get(0).body) == null ? null : parseObj(eh.get(0).body).get("payer");
        eq(A, wantMail, cbPayer instanceof Map ? ((Map<?, ?>) cbPayer).get("partyId") : null, "[email-party-id-lower-cased] callback partyId");
        // callback-body-from-latest-completion: two payments of one API user sent together
        String[] cl = s.user("collection", "127.0.0.1");
        String tcl = s.token("collection", cl);
        String la = uuid(), lb = uuid(), laCb = "/d4m/la/" + uuid(), lbCb = "/d4m/lb/" + uuid();
        CompletableFuture<Res> fa = CompletableFuture.supplyAsync(() -> s.create("collection", "requesttopay", tcl, la,
            rtpBody("11", "46733123499").replace("ext-1", "ext-a"), cbUrl("127.0.0.1", laCb)));
        CompletableFuture<Res> fb = CompletableFuture.supplyAsync(() -> s.create("collection", "requesttopay", tcl, lb,
            rtpBody("22", "46733123499").replace("ext-1", "ext-b"), cbUrl("127.0.0.1", lbCb)));
        eq(A, 202, fa.get().status, "payment a");
        eq(A, 202, fb.get().status, "payment b");
        List<Hit> ha = waitHits(laCb, 1, 6), hb = waitHits(lbCb, 1, 6);
        Map<String, Object> ba = ha.isEmpty() ? null : parseObj(ha.get(0).body), bb = hb.isEmpty() ? null : parseObj(hb.get(0).body);
        check(A, ba != null && bb != null, "callbacks of a and b");
        if (ba != null && bb != null) {
            if (dev) eq(A, ba.get("amount"), bb.get("amount"), "[callback-body-from-latest-completion] both callbacks carry one record");
            else {
                eq(A, "11", ba.get("amount"), "callback a carries its own amount");
                eq(A, "22", bb.get("amount"), "callback b carries its own amount");
            }
        }
        eq(A, "11", s.status("requesttopay", tcl, la).get("amount"), "[callback-body-from-latest-completion] status GET of a is right");
        // apiuser-environment-from-request
        Res au = apiUserGet(s, c0[0], null);
        eq(A, 200, au.status, "GET API user");
        eq(A, dev ? null : "sandbox", au.get("targetEnvironment"), "[apiuser-environment-from-request] targetEnvironment with only the subscription key");
        Res au2 = s.call("GET", "/v1_0/apiuser/" + c0[0], null, "Ocp-Apim-Subscription-Key", s.key("collection"), "X-Target-Environment", "other");
        eq(A, dev ? "other" : "sandbox", au2.get("targetEnvironment"), "[apiuser-environment-from-request] with X-Target-Environment: other");
        // deposit-record-external-id-missing
        String[] dx = s.user("disbursement", "127.0.0.1");
        String udx = s.token("disbursement", dx);
        String dxId = uuid(), dxCb = "/d4m/dep/" + uuid();
        eq(A, 202, s.create("disbursement", "deposit", udx, dxId, depBody("3", "46733123499"), cbUrl("127.0.0.1", dxCb)).status, "deposit with externalId");
        eq(A, dev ? null : "ext-1", s.status("deposit", udx, dxId).get("externalId"), "[deposit-record-external-id-missing] deposit record externalId");
        List<Hit> dh = waitHits(dxCb, 1, 6);
        eq(A, dev ? null : "ext-1", dh.isEmpty() || parseObj(dh.get(0).body) == null ? "no callback" : parseObj(dh.get(0).body).get("externalId"),
            "[deposit-record-external-id-missing] deposit callback externalId");
        eq(A, "ext-a", s.status("requesttopay", tcl, la).get("externalId"), "[deposit-record-external-id-missing] request-to-pay record keeps externalId");
        // scope-requires-openid
        Res sp = bc(s, tco, "46733123499", "profile");
        eq(A, dev ? 400 : 200, sp.status, "[scope-requires-openid] bc-authorize scope=profile");
        if (dev) eq(A, "MISSING_SCOPE_INSTRUCTION", sp.get("code"), "[scope-requires-openid] code");
        eq(A, 200, bc(s, tco, "46733123499", "openid+profile").status, "[scope-requires-openid] scope=openid profile");
        // holder-answer-cached-per-user (mtn-sandbox answers)
        String[] hu = s.user("collection", "127.0.0.1");
        String thu = s.token("collection", hu);
        eq(A, 404, holder(s, "collection", thu, "46733123450").status, "holder 46733123450: 404");
        Res hOk = holder(s, "collection", thu, "46733123499");
        eq(A, dev ? 404 : 200, hOk.status, "[holder-answer-cached-per-user] an active holder right after");
        // ongoing-number-times-out-early: at 10.8 s
        sleep(Math.max(0, 10.8 - since(t0)));
        Res og = s.status("requesttopay", t0k, ongoing);
        eq(A, dev ? "FAILED" : "PENDING", og.get("status"), "[ongoing-number-times-out-early] 46733123453 after 10.8 s");
        if (dev) eq(A, "EXPIRED", og.get("reason"), "[ongoing-number-times-out-early] reason");
        // callback-host-checked-against-latest-user: last, since it changes what every later callback host check sees
        String[] hx = s.user("collection", "127.0.0.1");
        String thx = s.token("collection", hx);
        s.user("disbursement", "cb.invalid");
        Res own = s.create("collection", "requesttopay", thx, uuid(), rtpBody("1", "46733123499"), cbUrl("127.0.0.1", "/d4m/own/" + uuid()));
        eq(A, dev ? 500 : 202, own.status, "[callback-host-checked-against-latest-user] callback to the caller's own host");
        if (dev) eq(A, "INVALID_CALLBACK_URL_HOST", own.get("code"), "[callback-host-checked-against-latest-user] code");
        Res other = s.create("collection", "requesttopay", thx, uuid(), rtpBody("1", "46733123499"), "http://cb.invalid/cb");
        eq(A, dev ? 202 : 500, other.status, "[callback-host-checked-against-latest-user] callback to the newest API user's host");
    }

    static void mtnGroup() throws Exception {
        String A = "deviations4-mtn";
        Srv s = Srv.start(A, "--profile", "mtn-sandbox", "--deviation",
            "ongoing-number-times-out-early,test-outcome-consumed-once,email-party-id-lower-cased,callback-host-checked-against-latest-user,"
            + "callback-body-from-latest-completion,apiuser-environment-from-request,deposit-record-external-id-missing,scope-requires-openid,"
            + "holder-answer-cached-per-user");
        mtnPoints(A, s, true);
        s.stop();
    }
    static void mtnBaseline() throws Exception {
        String A = "deviations4-mtn-baseline";
        Srv s = Srv.start(A, "--profile", "mtn-sandbox");
        mtnPoints(A, s, false);
        s.stop();
    }

    // ------------------------------------------------------------------ controls, fourth batch
    static void controlPoints(String A, Srv s, boolean on) throws Exception {
        String[] c = s.user("collection", "127.0.0.1"), d = s.user("disbursement", "127.0.0.1");
        // access-token-10-minutes
        Res tr = s.tokenRes("collection", c);
        eq(A, 200, tr.status, "token");
        eq(A, new BigDecimal(on ? 600 : 3600), tr.get("expires_in"), "[access-token-10-minutes] expires_in");
        String ct = "Bearer " + tr.get("access_token"), dt = s.token("disbursement", d);
        eq(A, 200, s.get("collection", "/v1_0/account/balance", ct).status, "[access-token-10-minutes] the token works");
        // consent requests (answered after 4 s)
        long t0 = System.currentTimeMillis();
        Res ba = bc(s, ct, "46733123421", "profile+openid");
        eq(A, 200, ba.status, "bc-authorize scope=profile openid");
        Res be = s.form("collection", "/v1_0/bc-authorize", ct, "login_hint=ID:ann@example.com/EMAIL&scope=openid");
        eq(A, on ? 400 : 200, be.status, "[login-hint-msisdn-only] login_hint ID:<e-mail>/EMAIL");
        // basic-auth-on-status-queries
        String p = uuid();
        eq(A, 202, s.create("collection", "requesttopay", ct, p, rtpBody("1", "46733123499"), null).status, "payment");
        Res sb = s.get("collection", "/v1_0/requesttopay/" + p, Srv.basic(c));
        eq(A, on ? 200 : 401, sb.status, "[basic-auth-on-status-queries] status query with Basic credentials");
        if (on) eq(A, "1.00", sb.get("amount"), "[basic-auth-on-status-queries] the record");
        eq(A, 401, s.get("collection", "/v1_0/requesttopay/" + p, Srv.basic(new String[]{c[0], "0000000000000000000000000000000000000000"})).status,
            "[basic-auth-on-status-queries] a wrong key: 401");
        // deposit-funds-refused-at-creation, deposit-funds-held-while-pending
        String big = uuid(), dep = uuid(), depF = uuid();
        Res bigR = s.create("disbursement", "deposit", dt, big, depBody("2000000", "46733123499"), null);
        eq(A, on ? 500 : 202, bigR.status, "[deposit-funds-refused-at-creation] deposit of 2000000 from 1000000");
        if (on) eq(A, "NOT_ENOUGH_FUNDS", bigR.get("code"), "[deposit-funds-refused-at-creation] code");
        eq(A, 202, s.create("disbursement", "deposit", dt, dep, depBody("100", "46733123499"), null).status, "deposit of 100");
        eq(A, 202, s.create("disbursement", "deposit", dt, depF, depBody("50", "46733123450"), null).status, "deposit of 50 to a failing payee");
        eq(A, on ? "999850" : "1000000", bal(s, "disbursement", dt), "[deposit-funds-held-while-pending] balance while both are PENDING");
        if (on) eq(A, 202, s.create("disbursement", "deposit", dt, big, depBody("1", "46733123499"), null).status,
            "[deposit-funds-refused-at-creation] the refused id is free");
        eq(A, "SUCCESSFUL", s.await("deposit", dt, dep, 5).get("status"), "deposit of 100 SUCCESSFUL");
        eq(A, "FAILED", s.await("deposit", dt, depF, 5).get("status"), "deposit to 46733123450 FAILED");
        Res bigS = s.await("deposit", dt, big, 5);
        eq(A, on ? "SUCCESSFUL" : "FAILED", bigS.get("status"), "deposit under the big id");
        if (!on) eq(A, "NOT_ENOUGH_FUNDS", bigS.get("reason"), "default: the big deposit fails NOT_ENOUGH_FUNDS");
        eq(A, on ? "999899" : "999900", bal(s, "disbursement", dt), "[deposit-funds-held-while-pending] balance after the outcomes (the failed one given back)");
        // consent-scope-reordered, refresh-token-kept
        sleep(Math.max(0, 4.6 - since(t0)));
        Res k = poll(s, d, ba);
        eq(A, 200, k.status, "consent token");
        eq(A, on ? "openid profile" : "profile openid", k.get("scope"), "[consent-scope-reordered] scope");
        eq(A, 200, userinfo(s, k.get("access_token")).status, "userinfo");
        String rf = (String) k.get("refresh_token");
        Res r1 = refresh(s, Srv.basic(d), rf);
        eq(A, 200, r1.status, "refresh");
        eq(A, on, rf.equals(r1.get("refresh_token")), "[refresh-token-kept] the refresh answer gives the same refresh_token");
        eq(A, on ? "openid profile" : "profile openid", r1.get("scope"), "[consent-scope-reordered] scope after refresh");
        eq(A, 200, refresh(s, Srv.basic(d), rf).status, "[refresh-token-kept] the refresh token works again");
        eq(A, 200, refresh(s, Srv.basic(d), (String) r1.get("refresh_token")).status, "[refresh-token-kept] the answered refresh token works");
    }
    static final String SPEC_CONTROLS = "consent-scope-reordered,login-hint-msisdn-only,deposit-funds-refused-at-creation,"
        + "deposit-funds-held-while-pending,access-token-10-minutes,refresh-token-kept,basic-auth-on-status-queries";
    static void controlsSpec() throws Exception {
        String A = "controls4-spec";
        Srv s = Srv.start(A, "--profile", "spec", "--control", SPEC_CONTROLS);
        controlPoints(A, s, true);
        s.stop();
    }
    static void controlsBaseline() throws Exception {
        String A = "controls4-baseline";
        Srv s = Srv.start(A, "--profile", "spec");
        controlPoints(A, s, false);
        s.stop();
    }
    /** mtn-sandbox accepts the mtn-legal controls of the batch and refuses the spec-only ones; their effects there. */
    static void controlsMtn() throws Exception {
        String A = "controls4-mtn";
        for (String only : List.of("access-token-10-minutes", "basic-auth-on-status-queries")) {
            Object[] x = runCli("--profile", "mtn-sandbox", "--control", only);
            eq(A, 2, x[0], "exit status for a spec-only control in mtn-sandbox: " + only);
        }
        Srv s = Srv.start(A, "--profile", "mtn-sandbox", "--delayed-approval-seconds", "3", "--control",
            "consent-scope-reordered,login-hint-msisdn-only,deposit-funds-refused-at-creation,deposit-funds-held-while-pending,refresh-token-kept");
        String[] c = s.user("collection", "127.0.0.1"), d = s.user("disbursement", "127.0.0.1");
        String ct = s.token("collection", c), dt = s.token("disbursement", d);
        long t0 = System.currentTimeMillis();
        Res ba = bc(s, ct, "46733123421", "profile+openid");
        eq(A, 200, ba.status, "bc-authorize");
        eq(A, 400, s.form("collection", "/v1_0/bc-authorize", ct, "login_hint=ID:ann@example.com/EMAIL&scope=openid").status,
            "[login-hint-msisdn-only] e-mail login_hint refused (as by default in mtn-sandbox)");
        Res bigR = s.create("disbursement", "deposit", dt, uuid(), depBody("2000000", "46733123499"), null);
        eq(A, 500, bigR.status, "[deposit-funds-refused-at-creation] mtn-sandbox: deposit over the balance");
        eq(A, "NOT_ENOUGH_FUNDS", bigR.get("code"), "[deposit-funds-refused-at-creation] mtn-sandbox code");
        String late = uuid();
        eq(A, 202, s.create("disbursement", "deposit", dt, late, depBody("100", "46733123454"), null).status, "deposit to 46733123454 (3 s)");
        eq(A, "PENDING", s.status("deposit", dt, late).get("status"), "late deposit PENDING");
        eq(A, "999900", bal(s, "disbursement", dt), "[deposit-funds-held-while-pending] mtn-sandbox: taken while PENDING");
        eq(A, "SUCCESSFUL", s.await("deposit", dt, late, 5).get("status"), "late deposit SUCCESSFUL");
        eq(A, "999900", bal(s, "disbursement", dt), "[deposit-funds-held-while-pending] mtn-sandbox: taken once");
        sleep(Math.max(0, 3.6 - since(t0)));
        Res k = poll(s, d, ba);
        eq(A, 200, k.status, "mtn-sandbox consent token");
        eq(A, "openid profile", k.get("scope"), "[consent-scope-reordered] mtn-sandbox scope");
        String rf = (String) k.get("refresh_token");
        Res r1 = refresh(s, Srv.basic(d), rf);
        eq(A, rf, r1.get("refresh_token"), "[refresh-token-kept] mtn-sandbox: same refresh_token");
        eq(A, 200, refresh(s, Srv.basic(d), rf).status, "[refresh-token-kept] mtn-sandbox: it works again");
        s.stop();
    }
}
