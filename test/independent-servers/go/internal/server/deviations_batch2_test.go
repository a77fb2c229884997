package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Tests of the second batch of deviations; they join devTests, so TestDeviations runs each
// on a server with the deviation and on the same server without it.
func init() {
	for name, dt := range batch2Tests {
		devTests[name] = dt
	}
}

func partyIDOf(rec map[string]any, name string) any {
	if p, ok := rec[name].(map[string]any); ok {
		return p["partyId"]
	}
	return nil
}

// drain collects the paths of the callbacks received within d.
func (rc *receiver) drain(d time.Duration) map[string]int {
	time.Sleep(d)
	paths := map[string]int{}
	for len(rc.ch) > 0 {
		paths[(<-rc.ch).path]++
	}
	return paths
}

var batch2Tests = map[string]devTest{
	// ---------------- A ----------------
	DevDepositMSISDNAny: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		id := newUUID()
		expectEither(t, e.createDeposit(d, id, depositBody("1", "call-me")), on, 202, 400, "deposit to MSISDN 'call-me'")
		if on {
			if rec := d.status(kDeposit, id); rec["status"] != "SUCCESSFUL" {
				t.Fatalf("deposit to a non-number: %v", rec)
			}
		}
		c := e.provision("collection", "127.0.0.1")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), rtpBody("1", "call-me")), 400, "request to pay from MSISDN 'call-me' (sibling keeps the rule)")
	}},
	DevBasicInfoExpiredOK: {profile: ProfileSpec,
		cfg: func(c *Config) { c.TokenLifetime = 1 },
		fn: func(t *testing.T, e *env, on bool) {
			c := e.provision("collection", "127.0.0.1")
			time.Sleep(1300 * time.Millisecond) // the token has expired
			expectEither(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/basicuserinfo", c.h(), ""), on, 200, 401, "basic info with an expired token")
			expect(t, e.do("GET", "/collection/v1_0/account/balance/EUR", c.h(), ""), 401, "balance with the expired token")
		}},
	DevOAuthFailure500: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u := e.provision("collection", "localhost")
		h := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, "wrong-key"),
			"X-Target-Environment": "sandbox", "Content-Type": "application/x-www-form-urlencoded"}
		r := e.do("POST", "/disbursement/oauth2/token/", h, form("grant_type", cibaGrant, "auth_req_id", newUUID()))
		expectEither(t, r, on, 500, 401, "OAuth 2.0 token with a wrong API key")
		if r.obj(t)["error"] == nil {
			t.Fatalf("no error member: %s", r.body)
		}
		r = e.do("POST", "/collection/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Authorization": basic(u.id, "wrong-key")}, "")
		expect(t, r, 401, "/collection/token/ with a wrong API key (sibling keeps the rule)")
	}},
	DevDisbStatusBadID404: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		r := e.do("GET", "/disbursement/v1_0/deposit/not-a-uuid", d.h(), "")
		if on {
			expectCode(t, r, 404, "RESOURCE_NOT_FOUND", "deposit status of a non-UUID id")
		} else {
			expect(t, r, 400, "deposit status of a non-UUID id")
		}
		expectEither(t, e.do("GET", "/disbursement/v1_0/refund/not-a-uuid", d.h(), ""), on, 404, 400, "refund status of a non-UUID id")
		c := e.provision("collection", "127.0.0.1")
		expect(t, e.do("GET", "/collection/v1_0/requesttopay/not-a-uuid", c.h(), ""), 400, "request-to-pay status of a non-UUID id (sibling keeps the rule)")
	}},

	// ---------------- B ----------------
	DevConsentTokenSingleUse: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u, _, tok := consent(t, e, "profile")
		h := u.h("Authorization", "Bearer "+tok["access_token"].(string))
		expect(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", h, ""), 200, "first userinfo call")
		expectEither(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", h, ""), on, 401, 200, "second userinfo call with the same consent token")
	}},
	DevTxBoundToToken: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, r := c.requestToPay("1", "46733123999")
		expect(t, r, 202, "request to pay")
		expect(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, c.h(), ""), 200, "status with the creating token")
		c.token = e.accessToken(c) // the same API user renews its token
		expectEither(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, c.h(), ""), on, 404, 200, "status with a newer token of the same API user")
		expectEither(t, notify(e, c, id), on, 404, 200, "delivery notification with the newer token")
	}},
	DevStatusGoneAfterCallback: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		id, r := c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/cb"))
		expect(t, r, 202, "request to pay")
		rc.wait(t, 3*time.Second)
		time.Sleep(300 * time.Millisecond) // the server has read the 200
		expectEither(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, c.h(), ""), on, 404, 200, "status after the callback was acknowledged")
	}},
	DevPayerSharedObject: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		a, _ := c.requestToPay("1", "46733123998")
		if got := partyIDOf(c.status(kRTP, a), "payer"); got != "46733123998" {
			t.Fatalf("first payer %v", got)
		}
		b, _ := c.requestToPay("1", "46733123997")
		if got := partyIDOf(c.status(kRTP, a), "payer"); got != pick(on, "46733123997", "46733123998") {
			t.Fatalf("first payment's payer after a second payment: %v", got)
		}
		if got := partyIDOf(c.status(kRTP, b), "payer"); got != "46733123997" {
			t.Fatalf("second payer %v", got)
		}
	}},

	// ---------------- C ----------------
	DevMSISDN15Refused: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("1", "467331239981234") // 15 digits, the E.164 maximum
		expectEither(t, r, on, 400, 202, "payer with a 15-digit MSISDN")
		_, r = c.requestToPay("1", "46733123998123") // 14 digits
		expect(t, r, 202, "payer with a 14-digit MSISDN")
		expectEither(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/467331239981234/active", c.h(), ""), on, 400, 200, "active check of a 15-digit MSISDN")
	}},
	DevUpperRefUnreadable: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := strings.ToUpper(newUUID())
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id), rtpBody("1", "46733123999")), 202, "request to pay with an upper-case reference id")
		expectEither(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, c.h(), ""), on, 404, 200, "status with the same upper-case id")
		expect(t, e.do("GET", "/collection/v1_0/requesttopay/"+strings.ToLower(id), c.h(), ""), 200, "status in lower case")
	}},
	DevCallbackPortRefused: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t) // http://127.0.0.1:<port>
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/cb"))
		if on {
			expectCode(t, r, 500, "INVALID_CALLBACK_URL_HOST", "callback URL with a port on the registered host")
		} else {
			expect(t, r, 202, "callback URL with a port on the registered host")
			rc.wait(t, 3*time.Second)
		}
		expectCode(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID(), "X-Callback-Url", "http://other.example:8080/cb"), rtpBody("1", "46733123999")), 500, "INVALID_CALLBACK_URL_HOST", "another host")
	}},
	DevFormNotDecoded: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u := e.provision("collection", "localhost")
		h := u.h("Content-Type", "application/x-www-form-urlencoded")
		expectEither(t, e.do("POST", "/collection/v1_0/bc-authorize", h, "login_hint=ID%3A46733123999%2FMSISDN&scope=profile&access_type=offline"), on, 400, 200, "percent-encoded login_hint")
		r := e.do("POST", "/collection/v1_0/bc-authorize", h, "login_hint=ID:46733123999/MSISDN&scope=profile")
		expect(t, r, 200, "login_hint written without percent-encoding")
		id := r.obj(t)["auth_req_id"].(string)
		time.Sleep(1100 * time.Millisecond)
		th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key), "X-Target-Environment": "sandbox", "Content-Type": "application/x-www-form-urlencoded"}
		r = e.do("POST", "/disbursement/oauth2/token/", th, "grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id="+id)
		if on {
			oauthErr(t, r, "unsupported_grant_type", "percent-encoded grant_type")
		} else {
			expect(t, r, 200, "percent-encoded grant_type")
		}
	}},
	DevAmountTrailingZeros: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("12.50", "46733123999")
		expectEither(t, r, on, 400, 202, "amount 12.50")
		id, r := c.requestToPay("12.5", "46733123999")
		expect(t, r, 202, "amount 12.5")
		if got := c.status(kRTP, id)["amount"]; got != "12.5" {
			t.Fatalf("amount %v", got)
		}
		d := e.provision("disbursement", "127.0.0.1")
		expectEither(t, e.createDeposit(d, newUUID(), depositBody("5.0", "46733123999")), on, 400, 202, "deposit of 5.0")
	}},
	DevTextLengthBytes: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		msg := strings.Repeat("é", 100) // 100 characters, 200 bytes
		r := e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), strings.Replace(rtpBody("1", "46733123999"), "pay please", msg, 1))
		expectEither(t, r, on, 400, 202, "payerMessage of 100 non-ASCII characters")
		r = e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), strings.Replace(rtpBody("1", "46733123999"), "pay please", strings.Repeat("x", 161), 1))
		expect(t, r, 400, "payerMessage of 161 characters")
	}},
	DevMediaTypeCaseSensitive: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		r := e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID(), "Content-Type", "Application/JSON"), rtpBody("1", "46733123999"))
		expectEither(t, r, on, 400, 202, "Content-Type Application/JSON")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), rtpBody("1", "46733123999")), 202, "Content-Type application/json")
		r = e.do("POST", "/collection/v1_0/bc-authorize", c.h("Content-Type", "application/X-WWW-form-urlencoded"), form("login_hint", "ID:46733123999/MSISDN", "scope", "profile"))
		expectEither(t, r, on, 400, 200, "Content-Type application/X-WWW-form-urlencoded")
	}},

	// ---------------- D ----------------
	DevCallbackDedupByURL: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/hook"))
		expect(t, r, 202, "first payment")
		rc.wait(t, 3*time.Second)
		_, r = c.requestToPay("2", "46733123999", "X-Callback-Url", rc.url("/hook"))
		expect(t, r, 202, "second payment, same URL")
		if got := rc.drain(1500 * time.Millisecond)["/hook"]; got != pick(on, 0, 1) {
			t.Fatalf("callbacks of the second payment: %d", got)
		}
	}},
	DevConsentDenialNoCallback: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		u := e.provision("collection", "127.0.0.1")
		h := func(path string) map[string]string {
			return u.h("Content-Type", "application/x-www-form-urlencoded", "X-Callback-Url", rc.url(path))
		}
		expect(t, e.do("POST", "/collection/v1_0/bc-authorize", h("/denied"), form("login_hint", "ID:46733123450/MSISDN", "scope", "profile")), 200, "bc-authorize (holder denies)")
		expect(t, e.do("POST", "/collection/v1_0/bc-authorize", h("/approved"), form("login_hint", "ID:46733123999/MSISDN", "scope", "profile")), 200, "bc-authorize (holder approves)")
		paths := rc.drain(2 * time.Second)
		if paths["/approved"] != 1 || (paths["/denied"] == 1) == on {
			t.Fatalf("consent callbacks %v", paths)
		}
	}},
	DevRefundCallbackPayment: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		rtp := paidRTP(t, e) // amount 40
		d := e.provision("disbursement", "127.0.0.1")
		ref := newUUID()
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, ref, "X-Callback-Url", rc.url("/refund")), refundBody("1", rtp)), 202, "refund")
		cb := rc.wait(t, 3*time.Second)
		var body map[string]any
		_ = json.Unmarshal(cb.body, &body)
		if body["amount"] != pick(on, "40", "1") || body["externalId"] != pick(on, "ext-1", "r") {
			t.Fatalf("refund callback %s", cb.body)
		}
		if got := d.status(kRefund, ref)["amount"]; got != "1" {
			t.Fatalf("refund status amount %v", got)
		}
	}},
	DevDuplicateAddsCallback: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		id := newUUID()
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id, "X-Callback-Url", rc.url("/first")), rtpBody("1", "46733123454")), 202, "payment (approved after 1.5 s)")
		expectCode(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id, "X-Callback-Url", rc.url("/second")), rtpBody("1", "46733123454")), 409, "RESOURCE_ALREADY_EXIST", "reused reference id")
		paths := rc.drain(3 * time.Second)
		if paths["/first"] != 1 || (paths["/second"] == 1) != on {
			t.Fatalf("callbacks %v", paths)
		}
	}},
	DevCallbackAheadOfStatus: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		id, r := c.requestToPay("1", "46733123454", "X-Callback-Url", rc.url("/cb"))
		expect(t, r, 202, "payment (approved after 1.5 s)")
		cb := rc.wait(t, 4*time.Second)
		var body map[string]any
		_ = json.Unmarshal(cb.body, &body)
		if body["status"] != "SUCCESSFUL" {
			t.Fatalf("callback %s", cb.body)
		}
		if got := c.status(kRTP, id)["status"]; got != pick(on, "PENDING", "SUCCESSFUL") {
			t.Fatalf("status right after the callback: %v", got)
		}
	}},

	// ---------------- E ----------------
	DevFailedDepositTwice: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		id := newUUID()
		expect(t, e.createDeposit(d, id, depositBody("10", "46733123450")), 202, "deposit to …450")
		if rec := d.status(kDeposit, id); rec["status"] != "FAILED" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(d)["availableBalance"]; b != pick(on, "1000010", "1000000") {
			t.Fatalf("balance after a failed deposit: %v", b)
		}
	}},
	DevCreditOnEveryRead: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("10", "46733123999")
		for i := 0; i < 2; i++ {
			if rec := c.status(kRTP, id); rec["status"] != "SUCCESSFUL" {
				t.Fatalf("%v", rec)
			}
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "30", "10") {
			t.Fatalf("balance after one payment of 10 read twice: %v", b)
		}
	}},
	DevPaymentCreditTruncated: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("12.75", "46733123999")
		if rec := c.status(kRTP, id); rec["status"] != "SUCCESSFUL" || rec["amount"] != "12.75" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "12", "12.75") {
			t.Fatalf("balance after a payment of 12.75: %v", b)
		}
	}},
	DevCollectionBalanceMinor: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("10", "46733123999")
		if rec := c.status(kRTP, id); rec["status"] != "SUCCESSFUL" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "1000", "10") {
			t.Fatalf("collection balance after a payment of 10: %v", b)
		}
		if b := e.balance(e.provision("disbursement", "127.0.0.1"))["availableBalance"]; b != "1000000" {
			t.Fatalf("disbursement balance %v", b)
		}
	}},
}
