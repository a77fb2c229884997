package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A devTest shows one deviation taking effect: fn runs once on a server with the deviation
// (on=true) and once on the same server without it (on=false), and checks each.
type devTest struct {
	profile string
	cfg     func(*Config)
	tm      func(*timings)
	fn      func(t *testing.T, e *env, on bool)
}

func startDev(t *testing.T, name string, dt devTest, on bool) *env {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Profile = dt.profile
	cfg.DelayedApproval = 1500 * time.Millisecond
	cfg.PendingTimeout = 2 * time.Second
	if dt.cfg != nil {
		dt.cfg(&cfg)
	}
	if on {
		cfg.Deviations[name] = true
	}
	return startWith(t, cfg, dt.tm)
}

// pick gives a when the deviation is on, b when it is off.
func pick[T any](on bool, a, b T) T {
	if on {
		return a
	}
	return b
}

func expectEither(t *testing.T, r resp, on bool, whenOn, whenOff int, what string) {
	t.Helper()
	expect(t, r, pick(on, whenOn, whenOff), what)
}

func (e *env) balance(u *user) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/"+u.product+"/v1_0/account/balance", u.h(), "")
	expect(e.t, r, 200, "balance")
	return r.obj(e.t)
}

func (e *env) createDeposit(u *user, id, body string, extra ...string) resp {
	return e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(u, id, extra...), body)
}

func refundBody(amount, rtp string) string {
	return `{"amount":"` + amount + `","currency":"EUR","externalId":"r","payerMessage":"sorry","payeeNote":"refund","referenceIdToRefund":"` + rtp + `"}`
}

// paidRTP makes a successful request to pay (mtn-sandbox: at once) and returns its id.
func paidRTP(t *testing.T, e *env) string {
	col := e.provision("collection", "127.0.0.1")
	id, r := col.requestToPay("40", "46733123998")
	expect(t, r, 202, "request to pay")
	if rec := col.waitFinal(kRTP, id, 4*time.Second); rec["status"] != "SUCCESSFUL" {
		t.Fatalf("payment %v", rec)
	}
	return id
}

func notify(e *env, u *user, id string, extra ...string) resp {
	return e.do("POST", "/collection/v1_0/requesttopay/"+id+"/deliverynotification",
		u.h(append([]string{"Content-Type", "application/json", "Language", "en"}, extra...)...), `{"notificationMessage":"hello"}`)
}

// consent redeems a consent for an ordinary holder; it returns the token response.
func consent(t *testing.T, e *env, scope string, extraForm ...string) (*user, map[string]string, map[string]any) {
	u := e.provision("collection", "localhost")
	th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key), "X-Target-Environment": "sandbox"}
	r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded"),
		form(append([]string{"login_hint", "ID:46733123999/MSISDN", "scope", scope}, extraForm...)...))
	expect(t, r, 200, "bc-authorize")
	id := r.obj(t)["auth_req_id"].(string)
	time.Sleep(1100 * time.Millisecond)
	r = e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", cibaGrant, "auth_req_id", id))
	expect(t, r, 200, "redeem consent")
	return u, th, r.obj(t)
}

func refreshForm(tok map[string]any) string {
	return form("grant_type", "refresh_token", "refresh_token", tok["refresh_token"].(string))
}

var devTests = map[string]devTest{
	DevRefundRefReused: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rtp := paidRTP(t, e)
		d := e.provision("disbursement", "127.0.0.1")
		ref := newUUID()
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, ref), refundBody("1", rtp)), 202, "refund")
		expectEither(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, ref), refundBody("1", rtp)), on, 202, 409, "reused refund id")
		dep := newUUID()
		expect(t, e.createDeposit(d, dep, depositBody("1", "46733123999")), 202, "deposit")
		expect(t, e.createDeposit(d, dep, depositBody("1", "46733123999")), 409, "reused deposit id (sibling keeps the rule)")
	}},
	DevDepositNoRefID: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		expectEither(t, e.do("POST", "/disbursement/v1_0/deposit", d.h("Content-Type", "application/json"), depositBody("1", "46733123999")), on, 202, 400, "deposit without X-Reference-Id")
		c := e.provision("collection", "127.0.0.1")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", c.h("Content-Type", "application/json"), rtpBody("1", "46733123999")), 400, "request to pay without X-Reference-Id")
	}},
	DevHolderAnyEnv: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		r := e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/active", c.h("X-Target-Environment", "elsewhere"), "")
		if on {
			expect(t, r, 200, "active check in a foreign environment")
		} else {
			expectCode(t, r, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "active check in a foreign environment")
		}
		expectCode(t, e.do("GET", "/collection/v1_0/account/balance", c.h("X-Target-Environment", "elsewhere"), ""), 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "balance in a foreign environment")
	}},
	DevDupPaymentOverwrites: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := newUUID()
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id), rtpBody("5", "46733123999")), 202, "request to pay")
		expectCode(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id), rtpBody("7", "46733123888")), 409, "RESOURCE_ALREADY_EXIST", "duplicate")
		rec := c.status(kRTP, id)
		if got := rec["amount"]; got != pick(on, "7", "5") {
			t.Fatalf("amount after a refused duplicate: %v", rec)
		}
	}},
	DevCallbackHostRefCreates: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := newUUID()
		expectCode(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, id, "X-Callback-Url", "http://other.example/cb"), rtpBody("5", "46733123999")), 500, "INVALID_CALLBACK_URL_HOST", "foreign callback host")
		expectEither(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, c.h(), ""), on, 200, 404, "status of the refused creation")
	}},
	DevFailedPaymentCredits: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("10", "46733123450")
		if rec := c.status(kRTP, id); rec["status"] != "FAILED" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "10", "0") {
			t.Fatalf("balance after a failed payment: %v", b)
		}
	}},
	DevCreditedWhilePending: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("10", "46733123454")
		if rec := c.status(kRTP, id); rec["status"] != "PENDING" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "10", "0") {
			t.Fatalf("balance while pending: %v", b)
		}
		c.waitFinal(kRTP, id, 4*time.Second)
		if b := e.balance(c)["availableBalance"]; b != "10" {
			t.Fatalf("balance after success: %v", b)
		}
	}},
	DevRefundNotDebited: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rtp := paidRTP(t, e)
		d := e.provision("disbursement", "127.0.0.1")
		ref := newUUID()
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, ref), refundBody("15", rtp)), 202, "refund")
		if rec := d.status(kRefund, ref); rec["status"] != "SUCCESSFUL" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(d)["availableBalance"]; b != pick(on, "1000000", "999985") {
			t.Fatalf("balance after refund: %v", b)
		}
	}},
	DevDepositDebitRoundedUp: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		id := newUUID()
		expect(t, e.createDeposit(d, id, depositBody("12.5", "46733123999")), 202, "deposit")
		if rec := d.status(kDeposit, id); rec["status"] != "SUCCESSFUL" {
			t.Fatalf("%v", rec)
		}
		if b := e.balance(d)["availableBalance"]; b != pick(on, "999987", "999987.5") {
			t.Fatalf("balance after deposit: %v", b)
		}
	}},
	DevRejectReasonsSwapped: {profile: ProfileMTN,
		tm: func(tm *timings) { tm.reject, tm.expire = 300*time.Millisecond, 300*time.Millisecond },
		fn: func(t *testing.T, e *env, on bool) {
			c := e.provision("collection", "127.0.0.1")
			a, _ := c.requestToPay("1", "46733123451")
			b, _ := c.requestToPay("1", "46733123452")
			ra, rb := c.waitFinal(kRTP, a, 3*time.Second), c.waitFinal(kRTP, b, 3*time.Second)
			if ra["status"] != "FAILED" || rb["status"] != "FAILED" || reasonCode(ra) != pick(on, "EXPIRED", "APPROVAL_REJECTED") || reasonCode(rb) != pick(on, "APPROVAL_REJECTED", "EXPIRED") {
				t.Fatalf("…451 %v, …452 %v", ra, rb)
			}
		}},
	DevDelayedApprovalAtOnce: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id, _ := c.requestToPay("1", "46733123454")
		if got := c.status(kRTP, id)["status"]; got != pick(on, "SUCCESSFUL", "PENDING") {
			t.Fatalf("…454 first read %v", got)
		}
	}},
	DevNotifCooldownPerUser: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		a, _ := c.requestToPay("1", "46733123999")
		b, _ := c.requestToPay("1", "46733123999")
		expect(t, notify(e, c, a), 200, "first notification")
		expect(t, notify(e, c, a), 429, "same payment again")
		expectEither(t, notify(e, c, b), on, 429, 200, "another payment, never notified")
	}},
	DevNotifLanguageRequired: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		a, _ := c.requestToPay("1", "46733123999")
		expectEither(t, notify(e, c, a, "Language", ""), on, 400, 200, "notification without Language")
	}},
	DevTokenRenewedWithBearer: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		r := e.do("POST", "/collection/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Authorization": "Bearer " + c.token}, "")
		expectEither(t, r, on, 200, 401, "token with a Bearer credential")
		if on {
			c.token = r.obj(t)["access_token"].(string)
			expect(t, e.do("GET", "/collection/v1_0/account/balance", c.h(), ""), 200, "renewed token")
		}
	}},
	DevRenewedTokenDiesFirst: {profile: ProfileSpec,
		cfg: func(c *Config) { c.TokenLifetime = 3 },
		fn: func(t *testing.T, e *env, on bool) {
			c := e.provision("collection", "127.0.0.1") // first token, lives 3 s
			time.Sleep(1500 * time.Millisecond)
			r := e.tokenResp(&user{id: c.id, key: c.key, product: "collection"})
			expect(t, r, 200, "second token")
			if r.obj(t)["expires_in"] != float64(3) {
				t.Fatalf("%s", r.body)
			}
			c.token = r.obj(t)["access_token"].(string)
			time.Sleep(2000 * time.Millisecond) // the first has expired; the second has 1 s left
			expectEither(t, e.do("GET", "/collection/v1_0/account/balance", c.h(), ""), on, 401, 200, "second token within its expires_in")
		}},
	DevRefreshAnyUser: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		_, _, tok := consent(t, e, "profile")
		v := e.provision("collection", "localhost")
		th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(v.id, v.key), "X-Target-Environment": "sandbox"}
		r := e.do("POST", "/disbursement/oauth2/token/", th, refreshForm(tok))
		if on {
			expect(t, r, 200, "another user's refresh token")
		} else {
			oauthErr(t, r, "invalid_grant", "another user's refresh token")
		}
	}},
	DevRefreshAfterConsentEnds: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		_, th, tok := consent(t, e, "profile", "consent_valid_in", "2")
		time.Sleep(2100 * time.Millisecond)
		r := e.do("POST", "/disbursement/oauth2/token/", th, refreshForm(tok))
		if on {
			expect(t, r, 200, "refresh after the consent ended")
		} else {
			oauthErr(t, r, "invalid_grant", "refresh after the consent ended")
		}
	}},
	DevRefreshIssuesAccess: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		u, th, tok := consent(t, e, "profile")
		r := e.do("POST", "/disbursement/oauth2/token/", th, refreshForm(tok))
		expect(t, r, 200, "refresh")
		nt := r.obj(t)["access_token"].(string)
		expectEither(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+nt), ""), on, 401, 200, "userinfo with the refreshed token")
	}},
	DevRefreshOpensUserinfo: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u, _, tok := consent(t, e, "profile")
		expectEither(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+tok["refresh_token"].(string)), ""), on, 200, 401, "userinfo with the refresh token")
	}},
	DevConsentScopeNarrowed: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		_, _, tok := consent(t, e, "profile openid")
		if tok["scope"] != pick(on, "profile", "profile openid") {
			t.Fatalf("scope %v", tok["scope"])
		}
	}},
	DevLoginHintNotChecked: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		u := e.provision("collection", "localhost")
		h := u.h("Content-Type", "application/x-www-form-urlencoded")
		expectEither(t, e.do("POST", "/collection/v1_0/bc-authorize", h, form("scope", "profile")), on, 200, 400, "bc-authorize without login_hint")
		expectEither(t, e.do("POST", "/collection/v1_0/bc-authorize", h, form("login_hint", "ID:nobody/EMAIL", "scope", "profile")), on, 200, 400, "bc-authorize with a bad login_hint")
	}},
	DevBasicInfo401Code: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u := e.provision("collection", "localhost")
		r := e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/basicuserinfo", u.h("Authorization", "Bearer not.a.token"), "")
		expect(t, r, 401, "basic info with a bad token")
		m := r.obj(t)
		if (m["code"] != nil && m["message"] != nil && m["error"] == nil) != on {
			t.Fatalf("401 body %s", r.body)
		}
	}},
	DevDepositPartyTypeAny: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		body := `{"amount":"1","currency":"EUR","payee":{"partyIdType":"ALIAS","partyId":"shop-7"}}`
		expectEither(t, e.createDeposit(d, newUUID(), body), on, 202, 400, "deposit to partyIdType ALIAS")
		c := e.provision("collection", "127.0.0.1")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), strings.Replace(body, "payee", "payer", 1)), 400, "request to pay from partyIdType ALIAS")
	}},
	DevEmailNotValidated: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		body := `{"amount":"1","currency":"EUR","payer":{"partyIdType":"EMAIL","partyId":"not-an-email"}}`
		expectEither(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), body), on, 202, 400, "EMAIL payer that is no address")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), strings.Replace(body, "not-an-email", "ada@example.com", 1)), 202, "valid EMAIL payer")
	}},
	DevMalformedCallbackURL: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("1", "46733123999", "X-Callback-Url", "not a url")
		expectEither(t, r, on, 202, 400, "malformed X-Callback-Url")
	}},
	DevDepositTextLength: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		long := strings.Repeat("x", 170)
		d := e.provision("disbursement", "127.0.0.1")
		expectEither(t, e.createDeposit(d, newUUID(), strings.Replace(depositBody("1", "46733123999"), "here", long, 1)), on, 202, 400, "deposit with a 170-character payerMessage")
		c := e.provision("collection", "127.0.0.1")
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, newUUID()), strings.Replace(rtpBody("1", "46733123999"), "pay please", long, 1)), 400, "request to pay with a 170-character payerMessage")
	}},
	DevTokenBodyAccepted: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		r := e.do("POST", "/collection/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Authorization": basic(c.id, c.key), "Content-Type": "application/json"}, `{"grant_type":"client_credentials"}`)
		expectEither(t, r, on, 200, 400, "token request with a body")
	}},
	DevDisbHolderErrorsIgnored: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		r := e.do("GET", "/disbursement/v1_0/accountholder/msisdn/46733123452/active", d.h(), "")
		if on {
			expect(t, r, 200, "disbursement active check of …452")
		} else {
			expectCode(t, r, 500, "NOT_ALLOWED", "disbursement active check of …452")
		}
		c := e.provision("collection", "127.0.0.1")
		expectCode(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123452/active", c.h(), ""), 500, "NOT_ALLOWED", "collection active check of …452")
	}},
	DevRemittanceCurrencyLower: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		r := e.provision("remittance", "127.0.0.1")
		if cur := e.balance(r)["currency"]; cur != pick(on, "eur", "EUR") {
			t.Fatalf("remittance currency %v", cur)
		}
		if cur := e.balance(e.provision("collection", "127.0.0.1"))["currency"]; cur != "EUR" {
			t.Fatalf("collection currency %v", cur)
		}
	}},
	DevRefundCallbackMissing: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		rtp := paidRTP(t, e)
		d := e.provision("disbursement", "127.0.0.1")
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, newUUID(), "X-Callback-Url", rc.url("/refund")), refundBody("1", rtp)), 202, "refund")
		expect(t, e.createDeposit(d, newUUID(), depositBody("1", "46733123999"), "X-Callback-Url", rc.url("/deposit")), 202, "deposit")
		time.Sleep(1500 * time.Millisecond)
		paths := map[string]bool{}
		for len(rc.ch) > 0 {
			paths[(<-rc.ch).path] = true
		}
		if !paths["/deposit"] || paths["/refund"] == on {
			t.Fatalf("callbacks received on %v", paths)
		}
	}},
	DevCallbackToLatestURL: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		c.requestToPay("1", "46733123454", "X-Callback-Url", rc.url("/a")) // SUCCESSFUL after 1.5 s
		c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/b")) // SUCCESSFUL at once
		for i := 0; i < 2; i++ {
			cb := rc.wait(t, 5*time.Second)
			var rec map[string]any
			_ = json.Unmarshal(cb.body, &rec)
			if rec["payer"].(map[string]any)["partyId"] == "46733123454" && cb.path != pick(on, "/b", "/a") {
				t.Fatalf("callback of the first payment went to %s", cb.path)
			}
		}
	}},
	DevRefusedUserCreated: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		id := newUUID()
		h := map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Content-Type": "application/json", "X-Reference-Id": id}
		expect(t, e.do("POST", "/v1_0/apiuser", h, `{}`), 400, "create without providerCallbackHost")
		expectEither(t, e.do("GET", "/v1_0/apiuser/"+id, h, ""), on, 200, 404, "read the refused user")
		expectEither(t, e.do("POST", "/v1_0/apiuser", h, `{"providerCallbackHost":"localhost"}`), on, 409, 201, "create it properly")
	}},
	DevDupUserOverwritesHost: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		id := newUUID()
		h := map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Content-Type": "application/json", "X-Reference-Id": id}
		expect(t, e.do("POST", "/v1_0/apiuser", h, `{"providerCallbackHost":"localhost"}`), 201, "create")
		expectCode(t, e.do("POST", "/v1_0/apiuser", h, `{"providerCallbackHost":"attacker.example"}`), 409, "RESOURCE_ALREADY_EXIST", "duplicate")
		r := e.do("GET", "/v1_0/apiuser/"+id, h, "")
		expect(t, r, 200, "read")
		if got := r.obj(t)["providerCallbackHost"]; got != pick(on, "attacker.example", "localhost") {
			t.Fatalf("host after a refused duplicate: %v", got)
		}
	}},
	DevFundsRefusalSticks: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		big := newUUID()
		expect(t, e.createDeposit(d, big, depositBody("2000000", "46733123999")), 202, "deposit over the balance")
		if rec := d.status(kDeposit, big); reasonCode(rec) != "NOT_ENOUGH_FUNDS" {
			t.Fatalf("%v", rec)
		}
		small := newUUID()
		expect(t, e.createDeposit(d, small, depositBody("1", "46733123999")), 202, "small deposit")
		rec := d.status(kDeposit, small)
		if rec["status"] != pick(on, "FAILED", "SUCCESSFUL") {
			t.Fatalf("small deposit after a refusal: %v", rec)
		}
	}},
}

func TestDeviationRegistry(t *testing.T) {
	t.Parallel()
	if len(Deviations) < 24 {
		t.Fatalf("only %d deviations", len(Deviations))
	}
	seen := map[string]bool{}
	for _, d := range Deviations {
		if seen[d.Name] || d.Clause == "" || d.Effect == "" || len(d.Profiles) == 0 {
			t.Fatalf("bad deviation entry %+v", d)
		}
		if _, ok := LookupControl(d.Name); ok {
			t.Fatalf("%s is also a control", d.Name)
		}
		seen[d.Name] = true
		for _, p := range d.Profiles {
			if p != ProfileSpec && p != ProfileMTN {
				t.Fatalf("%s: profile %s", d.Name, p)
			}
		}
		dt, ok := devTests[d.Name]
		if !ok {
			t.Fatalf("deviation %s has no test", d.Name)
		}
		if !contains(d.Profiles, dt.profile) {
			t.Fatalf("deviation %s is tested in %s, where it is no deviation", d.Name, dt.profile)
		}
		for _, p := range profiles { // accepted in every profile
			cfg := DefaultConfig()
			cfg.Profile = p
			cfg.Deviations[d.Name] = true
			if err := cfg.Validate(); err != nil {
				t.Fatalf("%s refused in %s: %v", d.Name, p, err)
			}
		}
	}
	if len(devTests) != len(Deviations) {
		t.Fatalf("%d tests for %d deviations", len(devTests), len(Deviations))
	}
	cfg := DefaultConfig()
	cfg.Deviations["no-such-deviation"] = true
	if cfg.Validate() == nil {
		t.Fatal("unknown deviation accepted")
	}
}

func TestDeviations(t *testing.T) {
	t.Parallel()
	for _, d := range Deviations {
		name, dt := d.Name, devTests[d.Name]
		if dt.fn == nil {
			continue // reported by TestDeviationRegistry
		}
		for _, on := range []bool{true, false} {
			on := on
			t.Run(name+pick(on, "/on", "/off"), func(t *testing.T) {
				t.Parallel()
				dt.fn(t, startDev(t, name, dt, on), on)
			})
		}
	}
}
