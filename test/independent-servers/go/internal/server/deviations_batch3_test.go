package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of the third batch of deviations (they join devTests, so TestDeviations runs each on a
// server with the deviation and on the same server without it) and of the second batch of
// controls (TestControlsBatch2, each on and off).
func init() {
	for name, dt := range batch3Tests {
		devTests[name] = dt
	}
}

// rawStatus sends a request without the testing.T helpers (safe in goroutines).
func rawStatus(base, method, path string, hdr map[string]string, body string) int {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return -1
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

func createUserRaw(e *env, product, host string) (string, resp) {
	id := newUUID()
	r := e.do("POST", "/v1_0/apiuser", map[string]string{
		"Ocp-Apim-Subscription-Key": e.key(product), "X-Reference-Id": id, "Content-Type": "application/json",
	}, `{"providerCallbackHost":"`+host+`"}`)
	return id, r
}

func apiKeyOf(e *env, product, id string) resp {
	return e.do("POST", "/v1_0/apiuser/"+id+"/apikey", map[string]string{"Ocp-Apim-Subscription-Key": e.key(product)}, "")
}

func tokenWith(e *env, product, id, key string) resp {
	return e.do("POST", "/"+product+"/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key(product), "Authorization": basic(id, key)}, "")
}

// paidBy makes a successful request to pay of u (mtn-sandbox: at once).
func paidBy(t *testing.T, u *user, amount string, extra ...string) string {
	t.Helper()
	id, r := u.requestToPay(amount, "46733123998", extra...)
	expect(t, r, 202, "request to pay")
	if rec := u.waitFinal(kRTP, id, 4*time.Second); rec["status"] != "SUCCESSFUL" {
		t.Fatalf("payment %v", rec)
	}
	return id
}

func notifyText(e *env, u *user, id, text string) resp {
	return e.do("POST", "/collection/v1_0/requesttopay/"+id+"/deliverynotification",
		u.h("Content-Type", "application/json", "Language", "en"), `{"notificationMessage":"`+text+`"}`)
}

func activeOf(t *testing.T, r resp) any {
	t.Helper()
	expect(t, r, 200, "account holder check")
	m := r.obj(t)
	if v, ok := m["active"]; ok {
		return v
	}
	return m["result"]
}

func pollConsent(e *env, th map[string]string, id string) resp {
	return e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", cibaGrant, "auth_req_id", id))
}

// statusReceiver answers every callback with one status and counts them.
func statusReceiver(t *testing.T, status int) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

var batch3Tests = map[string]devTest{
	// ---------------- provisioning and authentication ----------------
	DevAPIUserStoredLate: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		id, r := createUserRaw(e, "collection", "localhost")
		expect(t, r, 201, "create API user")
		r = apiKeyOf(e, "collection", id)
		if on {
			expectCode(t, r, 404, "RESOURCE_NOT_FOUND", "API key right after the 201")
		} else {
			expect(t, r, 201, "API key right after the 201")
		}
		time.Sleep(700 * time.Millisecond)
		expect(t, e.do("GET", "/v1_0/apiuser/"+id, map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection")}, ""), 200, "read a moment later")
		expect(t, apiKeyOf(e, "collection", id), 201, "API key a moment later")
	}},
	DevAPIKeyTrailingNewline: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		id, r := createUserRaw(e, "collection", "localhost")
		expect(t, r, 201, "create API user")
		r = apiKeyOf(e, "collection", id)
		expect(t, r, 201, "create API key")
		key := r.obj(t)["apiKey"].(string)
		if strings.HasSuffix(key, "\n") != on {
			t.Fatalf("apiKey %q", key)
		}
		expectEither(t, tokenWith(e, "collection", id, key), on, 500, 200, "token with the key exactly as returned")
		expect(t, tokenWith(e, "collection", id, strings.TrimSpace(key)), 200, "token with the key trimmed")
	}},
	DevAPIKeyPrefixCompared: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u := e.provision("collection", "localhost")
		last := "A"
		if strings.HasSuffix(u.key, "A") {
			last = "B"
		}
		expectEither(t, tokenWith(e, "collection", u.id, u.key[:len(u.key)-1]+last), on, 200, 401, "token with the key's last character changed")
		expectEither(t, tokenWith(e, "collection", u.id, u.key[:16]), on, 200, 401, "token with the key cut to 16 characters")
		first := "A"
		if strings.HasPrefix(u.key, "A") {
			first = "B"
		}
		expect(t, tokenWith(e, "collection", u.id, first+u.key[1:]), 401, "token with the key's first character changed")
	}},
	DevNewKeyResetsBalance: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := paidBy(t, c, "10")
		if b := e.balance(c)["availableBalance"]; b != "10" {
			t.Fatalf("balance after a payment of 10: %v", b)
		}
		expect(t, apiKeyOf(e, "collection", c.id), 201, "a further API key")
		if b := e.balance(c)["availableBalance"]; b != pick(on, "0", "10") {
			t.Fatalf("balance after a new API key: %v", b)
		}
		c.status(kRTP, id) // the payment is still readable
	}},
	DevRemittanceUserAsColl: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		id, r := createUserRaw(e, "remittance", "localhost")
		expect(t, r, 201, "create API user with the remittance key")
		r = apiKeyOf(e, "remittance", id)
		expect(t, r, 201, "API key")
		key := r.obj(t)["apiKey"].(string)
		r = tokenWith(e, "remittance", id, key)
		if on {
			expectCode(t, r, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "remittance token of a remittance user")
		} else {
			expect(t, r, 200, "remittance token of a remittance user")
		}
		expectEither(t, tokenWith(e, "collection", id, key), on, 200, 500, "collection token of a remittance user")
		e.provision("collection", "localhost") // collection users unaffected
	}},
	DevTokenUseLimit: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		for i := 1; i <= tokenUseLimit; i++ {
			expect(t, e.do("GET", "/collection/v1_0/account/balance", c.h(), ""), 200, "balance with a fresh token")
		}
		r := e.do("GET", "/collection/v1_0/account/balance", c.h(), "")
		expectEither(t, r, on, 401, 200, "the token's 51st use")
		c.token = e.accessToken(c)
		expect(t, e.do("GET", "/collection/v1_0/account/balance", c.h(), ""), 200, "a new token")
	}},
	DevTokenCacheKeyTruncated: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		a := e.provision("collection", "127.0.0.1")
		b := e.provision("collection", "127.0.0.1")
		id := paidBy(t, a, "10")
		expectEither(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, b.h(), ""), on, 200, 404, "another API user reads the payment")
		if got := e.balance(b)["availableBalance"]; got != pick(on, "10", "0") {
			t.Fatalf("the other user's balance: %v", got)
		}
	}},

	// ---------------- collection ----------------
	DevPolledNoCallback: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		polled, r := c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/polled")) // PENDING for 2 s
		expect(t, r, 202, "payment to be polled")
		_, r = c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/quiet"))
		expect(t, r, 202, "payment not polled")
		if rec := c.status(kRTP, polled); rec["status"] != "PENDING" {
			t.Fatalf("first read %v", rec)
		}
		paths := rc.drain(3500 * time.Millisecond)
		if paths["/quiet"] != 1 || paths["/polled"] != pick(on, 0, 1) {
			t.Fatalf("callbacks %v", paths)
		}
		if rec := c.status(kRTP, polled); rec["status"] != "SUCCESSFUL" {
			t.Fatalf("polled payment %v", rec)
		}
	}},
	DevCreditPostedOnRead: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		id, r := c.requestToPay("10", "46733123999", "X-Callback-Url", rc.url("/cb"))
		expect(t, r, 202, "request to pay")
		var body map[string]any
		_ = json.Unmarshal(rc.wait(t, 3*time.Second).body, &body)
		if body["status"] != "SUCCESSFUL" {
			t.Fatalf("callback %v", body)
		}
		if b := e.balance(c)["availableBalance"]; b != pick(on, "0", "10") {
			t.Fatalf("balance after the SUCCESSFUL callback: %v", b)
		}
		c.status(kRTP, id)
		if b := e.balance(c)["availableBalance"]; b != "10" {
			t.Fatalf("balance after a status read: %v", b)
		}
	}},
	DevCreditNewestUser: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		a := e.provision("collection", "127.0.0.1")
		b := e.provision("collection", "127.0.0.1") // provisioned later
		paidBy(t, a, "10")
		if got := e.balance(a)["availableBalance"]; got != pick(on, "0", "10") {
			t.Fatalf("payer's merchant balance %v", got)
		}
		if got := e.balance(b)["availableBalance"]; got != pick(on, "10", "0") {
			t.Fatalf("newest user's balance %v", got)
		}
	}},
	DevNotificationRace: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := paidBy(t, c, "10")
		hdr := c.h("Content-Type", "application/json", "Language", "en")
		path := "/collection/v1_0/requesttopay/" + id + "/deliverynotification"
		codes := make([]int, 2)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				codes[i] = rawStatus(e.base, "POST", path, hdr, `{"notificationMessage":"hello"}`)
			}(i)
		}
		wg.Wait()
		sort.Ints(codes)
		if want := pick(on, []int{200, 200}, []int{200, 429}); codes[0] != want[0] || codes[1] != want[1] {
			t.Fatalf("two notifications sent together: %v", codes)
		}
		expect(t, notifyText(e, c, id, "hello"), 429, "a notification after the answers")
	}},
	DevNotifCooldownByText: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "127.0.0.1")
		id := paidBy(t, c, "10")
		expect(t, notifyText(e, c, id, "hello"), 200, "first notification")
		expect(t, notifyText(e, c, id, "hello"), 429, "the same text again")
		expectEither(t, notifyText(e, c, id, "hello again"), on, 200, 429, "another text for the same payment")
	}},
	DevCallbackBodyString: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		c := e.provision("collection", "127.0.0.1")
		_, r := c.requestToPay("10", "46733123999", "X-Callback-Url", rc.url("/cb"))
		expect(t, r, 202, "request to pay")
		cb := rc.wait(t, 3*time.Second)
		raw := cb.body
		var inner string
		if err := json.Unmarshal(cb.body, &inner); (err == nil) != on {
			t.Fatalf("callback body %s", cb.body)
		}
		if on {
			raw = []byte(inner)
		}
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil || body["status"] != "SUCCESSFUL" {
			t.Fatalf("callback record %s", raw)
		}
	}},
	DevCallback204Retried: {profile: ProfileMTN,
		tm: func(tm *timings) {
			tm.callbackWaits = []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
		},
		fn: func(t *testing.T, e *env, on bool) {
			srv204, n204 := statusReceiver(t, http.StatusNoContent)
			srv200, n200 := statusReceiver(t, http.StatusOK)
			c := e.provision("collection", "127.0.0.1")
			_, r := c.requestToPay("1", "46733123999", "X-Callback-Url", srv204.URL+"/cb")
			expect(t, r, 202, "payment, receiver answers 204")
			_, r = c.requestToPay("1", "46733123999", "X-Callback-Url", srv200.URL+"/cb")
			expect(t, r, 202, "payment, receiver answers 200")
			time.Sleep(1500 * time.Millisecond)
			if n204.Load() != int32(pick(on, 4, 1)) || n200.Load() != 1 {
				t.Fatalf("callback attempts: 204-receiver %d, 200-receiver %d", n204.Load(), n200.Load())
			}
		}},

	// ---------------- disbursement ----------------
	DevFullRefundRefused: {profile: ProfileMTN, fn: func(t *testing.T, e *env, on bool) {
		rtp := paidRTP(t, e) // 40
		d := e.provision("disbursement", "127.0.0.1")
		part := newUUID()
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, part), refundBody("10", rtp)), 202, "partial refund")
		if rec := d.status(kRefund, part); rec["status"] != "SUCCESSFUL" {
			t.Fatalf("partial refund %v", rec)
		}
		rest := newUUID()
		expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, rest), refundBody("30", rtp)), 202, "refund of the rest")
		rec := d.status(kRefund, rest)
		if rec["status"] != pick(on, "FAILED", "SUCCESSFUL") || (on && reasonCode(rec) != "NOT_ALLOWED") {
			t.Fatalf("refund of exactly what is left: %v", rec)
		}
	}},
	DevDepositPayeeTypeMSISDN: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		id := newUUID()
		body := `{"amount":"1","currency":"EUR","externalId":"e","payee":{"partyIdType":"EMAIL","partyId":"ann@example.com"}}`
		expect(t, e.createDeposit(d, id, body), 202, "deposit to an e-mail payee")
		payee := d.status(kDeposit, id)["payee"].(map[string]any)
		if payee["partyIdType"] != pick(on, "MSISDN", "EMAIL") || payee["partyId"] != "ann@example.com" {
			t.Fatalf("payee %v", payee)
		}
		c := e.provision("collection", "127.0.0.1")
		rid := newUUID()
		expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, rid), `{"amount":"1","currency":"EUR","payer":{"partyIdType":"EMAIL","partyId":"ann@example.com"}}`), 202, "request to pay from an e-mail payer")
		if p := c.status(kRTP, rid)["payer"].(map[string]any); p["partyIdType"] != "EMAIL" {
			t.Fatalf("payer %v", p)
		}
	}},
	DevDisbRecordsExpire: {profile: ProfileMTN,
		tm: func(tm *timings) { tm.disbRetention = time.Second },
		fn: func(t *testing.T, e *env, on bool) {
			d := e.provision("disbursement", "127.0.0.1")
			c := e.provision("collection", "127.0.0.1")
			dep := newUUID()
			expect(t, e.createDeposit(d, dep, depositBody("1", "46733123999")), 202, "deposit")
			d.status(kDeposit, dep)
			rtp := paidBy(t, c, "1")
			time.Sleep(1300 * time.Millisecond)
			expectEither(t, e.do("GET", "/disbursement/v1_0/deposit/"+dep, d.h(), ""), on, 404, 200, "deposit status after the retention")
			expectEither(t, e.createDeposit(d, dep, depositBody("2", "46733123999")), on, 202, 409, "the deposit's id used again")
			c.status(kRTP, rtp) // requests to pay are kept
		}},
	DevDisbHolderInverted: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		d := e.provision("disbursement", "127.0.0.1")
		c := e.provision("collection", "127.0.0.1")
		path := func(p, n string) string { return "/" + p + "/v1_0/accountholder/msisdn/" + n + "/active" }
		if got := activeOf(t, e.do("GET", path("disbursement", "46733123999"), d.h(), "")); got != !on {
			t.Fatalf("disbursement check of an active holder: %v", got)
		}
		if got := activeOf(t, e.do("GET", path("disbursement", "46733123450"), d.h(), "")); got != on {
			t.Fatalf("disbursement check of a holder not found: %v", got)
		}
		if got := activeOf(t, e.do("GET", path("collection", "46733123999"), c.h(), "")); got != true {
			t.Fatalf("collection check of an active holder: %v", got)
		}
	}},

	// ---------------- consent ----------------
	DevDeniedConsentRepoll: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		u, th, _ := consentSetup(t, e)
		r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded"), form("login_hint", "ID:46733123450/MSISDN", "scope", "profile"))
		expect(t, r, 200, "bc-authorize (the holder denies)")
		id := r.obj(t)["auth_req_id"].(string)
		time.Sleep(1200 * time.Millisecond)
		oauthErr(t, pollConsent(e, th, id), "access_denied", "first poll after the denial")
		r = pollConsent(e, th, id)
		if on {
			expect(t, r, 200, "second poll after the denial")
		} else {
			oauthErr(t, r, "access_denied", "second poll after the denial")
		}
	}},
	DevRefusedConsentKept: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		rc := newReceiver(t)
		u := e.provision("collection", "127.0.0.1")
		th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key), "X-Target-Environment": "sandbox"}
		r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded", "X-Callback-Url", rc.url("/consent")),
			form("login_hint", "ID:46733123999/MSISDN", "scope", "profile bogus"))
		expect(t, r, 400, "bc-authorize with a scope not offered")
		if !on {
			if n := len(rc.drain(2 * time.Second)); n != 0 {
				t.Fatalf("callback for a refused consent request")
			}
			return
		}
		var ping map[string]any
		_ = json.Unmarshal(rc.wait(t, 3*time.Second).body, &ping)
		id, _ := ping["auth_req_id"].(string)
		r = pollConsent(e, th, id)
		expect(t, r, 200, "redeeming the refused request's auth_req_id")
		if got := r.obj(t)["scope"]; got != "profile bogus" {
			t.Fatalf("scope %v", got)
		}
	}},
	DevRefreshScopeFromReq: {profile: ProfileSpec, fn: func(t *testing.T, e *env, on bool) {
		_, th, tok := consent(t, e, "profile")
		r := e.do("POST", "/disbursement/oauth2/token/", th, refreshForm(tok))
		expect(t, r, 200, "refresh without scope")
		if got := r.obj(t)["scope"]; got != pick(on, "", "profile") {
			t.Fatalf("scope after a refresh without scope: %q", got)
		}
		r = e.do("POST", "/disbursement/oauth2/token/", th, refreshForm(tok)+"&scope=all_info")
		expect(t, r, 200, "refresh asking all_info")
		if got := r.obj(t)["scope"]; got != pick(on, "all_info", "profile") {
			t.Fatalf("scope after a refresh asking all_info: %q", got)
		}
	}},
	DevAuthReqExpiryIgnored: {profile: ProfileSpec,
		tm: func(tm *timings) { tm.authReqLife = 1500 * time.Millisecond },
		fn: func(t *testing.T, e *env, on bool) {
			u, th, authorize := consentSetup(t, e)
			approved := authorize() // approved after 1 s, expires after 1.5 s
			r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded"), form("login_hint", "ID:46733123452/MSISDN", "scope", "profile"))
			expect(t, r, 200, "bc-authorize (the holder never answers)")
			silent := r.obj(t)["auth_req_id"].(string)
			time.Sleep(2 * time.Second)
			r = pollConsent(e, th, approved)
			if on {
				expect(t, r, 200, "redeeming after expires_in")
			} else {
				oauthErr(t, r, "expired_token", "redeeming after expires_in")
			}
			oauthErr(t, pollConsent(e, th, silent), pick(on, "authorization_pending", "expired_token"), "polling an unanswered request after expires_in")
		}},
}

// ---------------- controls, second batch ----------------

func TestControlsBatch2(t *testing.T) {
	t.Parallel()
	run := func(name, profile string, fn func(t *testing.T, e *env, on bool), controls ...string) {
		for _, on := range []bool{true, false} {
			on := on
			t.Run(name+"/"+profile+pick(on, "/on", "/off"), func(t *testing.T) {
				t.Parallel()
				ctl := append([]string{}, controls...)
				if on {
					ctl = append(ctl, name)
				}
				fn(t, start(t, profile, ctl...), on)
			})
		}
	}
	for _, p := range profiles {
		run(CtlTokenReissued, p, func(t *testing.T, e *env, on bool) {
			u := e.provision("collection", "localhost") // one token issued
			r := e.tokenResp(u)
			expect(t, r, 200, "second token request")
			m := r.obj(t)
			if (m["access_token"] == u.token) != on {
				t.Fatalf("same token again: %v", m["access_token"] == u.token)
			}
			if exp := m["expires_in"].(float64); exp > 3600 || exp < 3590 {
				t.Fatalf("expires_in %v", exp)
			}
			u.token = m["access_token"].(string)
			expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h(), ""), 200, "the token works")
		})
		run(CtlEmailHoldersUnknown, p, func(t *testing.T, e *env, on bool) {
			c := e.provision("collection", "localhost")
			if got := activeOf(t, e.do("GET", "/collection/v1_0/accountholder/email/ann@example.com/active", c.h(), "")); got != !on {
				t.Fatalf("e-mail holder: %v", got)
			}
			if got := activeOf(t, e.do("GET", "/collection/v1_0/accountholder/party_code/"+newUUID()+"/active", c.h(), "")); got != !on {
				t.Fatalf("party_code holder: %v", got)
			}
			if got := activeOf(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/active", c.h(), "")); got != true {
				t.Fatalf("MSISDN holder: %v", got)
			}
		})
		run(CtlCallbackRefHeader, p, func(t *testing.T, e *env, on bool) {
			rc := newReceiver(t)
			c := e.provision("collection", "127.0.0.1")
			id, r := c.requestToPay("1", "46733123999", "X-Callback-Url", rc.url("/cb"))
			expect(t, r, 202, "request to pay")
			cb := rc.wait(t, 4*time.Second)
			if got := cb.header.Get("X-Reference-Id"); got != pick(on, id, "") {
				t.Fatalf("X-Reference-Id %q", got)
			}
			if got := cb.header.Get("X-Callback-Event"); got != pick(on, "requesttopay.SUCCESSFUL", "") {
				t.Fatalf("X-Callback-Event %q", got)
			}
		}, CtlOrdinaryAtOnceIf(p)...)
		run(CtlBadRequestText, p, func(t *testing.T, e *env, on bool) {
			c := e.provision("collection", "localhost")
			r := e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(c, "not-a-uuid"), rtpBody("1", "46733123999"))
			expect(t, r, 400, "X-Reference-Id not a UUID")
			ct := r.header.Get("Content-Type")
			switch {
			case on && (!strings.HasPrefix(ct, "text/plain") || len(strings.TrimSpace(string(r.body))) == 0):
				t.Fatalf("400 as %q: %q", ct, r.body)
			case !on && strings.HasPrefix(ct, "text/plain"):
				t.Fatalf("text/plain without the control")
			}
			r = e.do("POST", "/collection/v1_0/bc-authorize", c.h("Content-Type", "application/x-www-form-urlencoded"), form("login_hint", "ID:46733123999/MSISDN", "scope", "bogus"))
			expect(t, r, 400, "unsupported scope")
			if strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
				t.Fatalf("a 400 with a code became text/plain")
			}
		})
	}
	run(CtlCollectionOpening, ProfileSpec, func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "localhost")
		if b := e.balance(c)["availableBalance"]; b != pick(on, "1000.00", "0.00") {
			t.Fatalf("opening balance %v", b)
		}
		paidBy(t, c, "10")
		if b := e.balance(c)["availableBalance"]; b != pick(on, "1010.00", "10.00") {
			t.Fatalf("balance after a payment of 10: %v", b)
		}
		if b := e.balance(e.provision("disbursement", "localhost"))["availableBalance"]; b != "1000000.00" {
			t.Fatalf("disbursement opening balance %v", b)
		}
	}, CtlOrdinaryAtOnce)
	run(CtlMSISDNPlus, ProfileSpec, func(t *testing.T, e *env, on bool) {
		c := e.provision("collection", "localhost")
		id, r := c.requestToPay("1", "+46733123999")
		expectEither(t, r, on, 202, 400, "payer +46733123999")
		if on {
			if got := partyIDOf(c.status(kRTP, id), "payer"); got != "+46733123999" {
				t.Fatalf("payer %v", got)
			}
		}
		expectEither(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/+46733123999/active", c.h(), ""), on, 200, 400, "active check of +46733123999")
		_, r = c.requestToPay("1", "46733123999")
		expect(t, r, 202, "payer without +")
	}, CtlOrdinaryAtOnce)
}

func TestControlsBatch2Registry(t *testing.T) {
	t.Parallel()
	for _, c := range controlsBatch2 {
		if _, ok := LookupControl(c.Name); !ok {
			t.Fatalf("%s not registered", c.Name)
		}
		if _, ok := LookupDeviation(c.Name); ok {
			t.Fatalf("%s is also a deviation", c.Name)
		}
	}
	if len(batch3) != 22 || len(controlsBatch2) != 6 {
		t.Fatalf("%d deviations, %d controls in the new batches", len(batch3), len(controlsBatch2))
	}
}
