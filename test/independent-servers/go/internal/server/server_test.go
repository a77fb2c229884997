package server

import (
	"encoding/base64"
	"encoding/json"
	"math/rand"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestProvisioning(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			ck := map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Content-Type": "application/json"}
			id := newUUID()
			hdr := func(extra map[string]string) map[string]string {
				m := map[string]string{}
				for k, v := range ck {
					m[k] = v
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}
			r := e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": id}), `{"providerCallbackHost":"localhost"}`)
			expect(t, r, 201, "create")
			if len(r.body) != 0 {
				t.Fatalf("201 has a body: %q", r.body)
			}
			expectCode(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": id}), `{"providerCallbackHost":"localhost"}`), 409, "RESOURCE_ALREADY_EXIST", "duplicate user")
			expect(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": "not-a-uuid"}), `{"providerCallbackHost":"localhost"}`), 400, "bad id")
			expect(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": "3f1a2b4c-1d2e-1f3a-8b9c-0d1e2f3a4b5c"}), `{"providerCallbackHost":"localhost"}`), 400, "UUID v1 id")
			expect(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": newUUID()}), `{}`), 400, "missing host")
			expect(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": newUUID()}), ``), 400, "empty body")
			if p == ProfileSpec {
				expect(t, e.do("POST", "/v1_0/apiuser", hdr(map[string]string{"X-Reference-Id": newUUID()}), `{"providerCallbackHost":"http://x/y"}`), 400, "host with scheme")
			}
			// gateway
			r = e.do("POST", "/v1_0/apiuser", map[string]string{"X-Reference-Id": newUUID(), "Content-Type": "application/json"}, `{"providerCallbackHost":"localhost"}`)
			expect(t, r, 401, "no subscription key")
			if p == ProfileMTN {
				if r.obj(t)["statusCode"] != float64(401) {
					t.Fatalf("gateway body %s", r.body)
				}
			} else if r.obj(t)["error"] == nil {
				t.Fatalf("spec 401 body %s", r.body)
			}
			// GET user
			r = e.do("GET", "/v1_0/apiuser/"+id, map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement")}, "")
			expect(t, r, 200, "get user")
			m := r.obj(t)
			if m["providerCallbackHost"] != "localhost" || m["targetEnvironment"] != "sandbox" {
				t.Fatalf("user record %s", r.body)
			}
			if p == ProfileMTN && len(m) != 2 {
				t.Fatalf("mtn user record has extra fields: %s", r.body)
			}
			if p == ProfileSpec && m["product"] != "collection" {
				t.Fatalf("spec user record: %s", r.body)
			}
			expectCode(t, e.do("GET", "/v1_0/apiuser/"+newUUID(), ck, ""), 404, "RESOURCE_NOT_FOUND", "unknown user")
			expect(t, e.do("GET", "/v1_0/apiuser/xyz", ck, ""), 400, "bad path id")
			// API key
			r = e.do("POST", "/v1_0/apiuser/"+id+"/apikey", ck, "")
			expect(t, r, 201, "apikey")
			key := r.obj(t)["apiKey"].(string)
			if p == ProfileMTN && !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(key) {
				t.Fatalf("mtn key %q", key)
			}
			if p == ProfileSpec && len(key) != 48 {
				t.Fatalf("spec key %q", key)
			}
			expectCode(t, e.do("POST", "/v1_0/apiuser/"+newUUID()+"/apikey", ck, ""), 404, "RESOURCE_NOT_FOUND", "key for unknown user")
			// a second key replaces the first
			u := &user{id: id, key: key, product: "collection", e: e}
			e.accessToken(u)
			r = e.do("POST", "/v1_0/apiuser/"+id+"/apikey", ck, "")
			key2 := r.obj(t)["apiKey"].(string)
			if rr := e.tokenResp(u); rr.status == 200 {
				t.Fatalf("old key still works after a new one")
			}
			u.key = key2
			e.accessToken(u)
		})
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Profile = p
			cfg.TokenLifetime = 1
			cfg.Keys["collection"] = "K1"
			e := startWith(t, cfg, nil)
			u := e.provision("collection", "localhost")
			r := e.tokenResp(u)
			expect(t, r, 200, "token")
			if r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("token Cache-Control %q", r.header.Get("Cache-Control"))
			}
			m := r.obj(t)
			wantType := map[string]string{ProfileSpec: "BEARER", ProfileMTN: "access_token"}[p]
			if m["token_type"] != wantType || m["expires_in"] != float64(1) || len(strings.Split(m["access_token"].(string), ".")) != 3 {
				t.Fatalf("token record %s", r.body)
			}
			// wrong key
			bad := &user{id: u.id, key: "nope", product: "collection", e: e}
			r = e.tokenResp(bad)
			if p == ProfileSpec {
				expect(t, r, 401, "wrong key")
				if r.header.Get("WWW-Authenticate") == "" {
					t.Fatalf("401 without WWW-Authenticate")
				}
			} else {
				expect(t, r, 500, "wrong key (mtn)")
				if r.obj(t)["error"] != "login_failed" {
					t.Fatalf("mtn login failure %s", r.body)
				}
			}
			// body on token
			r = e.do("POST", "/collection/token/", map[string]string{"Ocp-Apim-Subscription-Key": "K1", "Authorization": basic(u.id, u.key)}, "x=1")
			expect(t, r, 400, "body on token")
			// other product's user
			r = e.do("POST", "/disbursement/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key)}, "")
			if p == ProfileSpec {
				expect(t, r, 401, "user of another product")
			} else {
				expectCode(t, r, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "user of another product")
			}
			// wrong subscription key
			r = e.do("POST", "/collection/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key)}, "")
			expect(t, r, 401, "other product's subscription key")
			// forged token
			parts := strings.Split(u.token, ".")
			claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
			forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(claims), `"aud":"collection"`, `"aud":"collection" `, 1))) + "." + parts[2]
			r = e.do("GET", "/collection/v1_0/account/balance", u.h("Authorization", "Bearer "+forged), "")
			expect(t, r, 401, "forged token")
			// Basic on a business operation
			expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h("Authorization", basic(u.id, u.key)), ""), 401, "Basic on business op")
			expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h("Authorization", ""), ""), 401, "no Authorization")
			// disbursement and remittance token paths
			d := e.provision("disbursement", "localhost")
			rm := e.provision("remittance", "localhost")
			expect(t, e.do("GET", "/remittance/v1_0/account/balance", rm.h(), ""), 200, "remittance balance")
			// a collection token does not open disbursement
			expect(t, e.do("GET", "/disbursement/v1_0/account/balance", d.h("Authorization", "Bearer "+u.token), ""), 401, "cross-product token")
			// expiry
			time.Sleep(1100 * time.Millisecond)
			r = e.do("GET", "/collection/v1_0/account/balance", u.h(), "")
			expect(t, r, 401, "expired token")
			if r.obj(t)["error"] != "TOKEN_EXPIRED" {
				t.Fatalf("expired: %s", r.body)
			}
		})
	}
}

func TestRequestToPay(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			rc := newReceiver(t)
			u := e.provision("collection", "127.0.0.1")
			id, r := u.requestToPay("12.50", "46733123999", "X-Callback-Url", rc.url("/cb/rtp"))
			expect(t, r, 202, "request to pay")
			if len(r.body) != 0 {
				t.Fatalf("202 with body %q", r.body)
			}
			rec := u.status(kRTP, id)
			if p == ProfileSpec {
				if rec["status"] != "PENDING" || rec["financialTransactionId"] != nil {
					t.Fatalf("spec: first read should be PENDING without id: %v", rec)
				}
				rec = u.waitFinal(kRTP, id, 4*time.Second)
			}
			if rec["status"] != "SUCCESSFUL" {
				t.Fatalf("ordinary payer: %v", rec)
			}
			wantAmount := map[string]string{ProfileSpec: "12.50", ProfileMTN: "12.5"}[p]
			if rec["amount"] != wantAmount || rec["currency"] != "EUR" || rec["externalId"] != "ext-1" ||
				rec["payerMessage"] != "pay please" || rec["payeeNote"] != "thanks" {
				t.Fatalf("record %v", rec)
			}
			if !regexp.MustCompile(`^[1-9][0-9]{9}$`).MatchString(rec["financialTransactionId"].(string)) {
				t.Fatalf("financialTransactionId %v", rec["financialTransactionId"])
			}
			payer := rec["payer"].(map[string]any)
			if payer["partyIdType"] != "MSISDN" || payer["partyId"] != "46733123999" {
				t.Fatalf("payer %v", payer)
			}
			cb := rc.wait(t, 5*time.Second)
			if cb.method != "PUT" || cb.path != "/cb/rtp" {
				t.Fatalf("callback %s %s", cb.method, cb.path)
			}
			var body map[string]any
			_ = json.Unmarshal(cb.body, &body)
			if body["status"] != "SUCCESSFUL" || body["financialTransactionId"] != rec["financialTransactionId"] {
				t.Fatalf("callback body %s", cb.body)
			}
			if p == ProfileSpec && body["referenceId"] != id {
				t.Fatalf("spec callback lacks referenceId: %s", cb.body)
			}
			if p == ProfileMTN && len(body) != len(rec) {
				t.Fatalf("mtn callback differs from the status record: %s vs %v", cb.body, rec)
			}
			// balance credited
			r = e.do("GET", "/collection/v1_0/account/balance/EUR", u.h(), "")
			expect(t, r, 200, "balance")
			want := map[string]string{ProfileSpec: "12.50", ProfileMTN: "12.5"}[p]
			if r.obj(t)["availableBalance"] != want || r.obj(t)["currency"] != "EUR" {
				t.Fatalf("balance %s", r.body)
			}
			expectCode(t, e.do("GET", "/collection/v1_0/account/balance/USD", u.h(), ""), 500, "INVALID_CURRENCY", "balance in USD")
			expect(t, e.do("GET", "/collection/v1_0/account/balance/eur", u.h(), ""), 400, "balance in bad currency")
			// errors on creation
			r = e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, id), rtpBody("1", "46733123999"))
			expectCode(t, r, 409, "RESOURCE_ALREADY_EXIST", "duplicate reference id")
			_, r = u.requestToPay("5", "46733123999", "X-Callback-Url", "http://example.com/cb")
			expectCode(t, r, 500, "INVALID_CALLBACK_URL_HOST", "foreign callback host")
			_, r = u.requestToPay("5", "46733123999", "X-Callback-Url", "not a url")
			expect(t, r, 400, "malformed callback URL")
			// localhost registered, 127.0.0.1 used: the loopback names are one host
			l := e.provision("collection", "localhost")
			_, r = l.requestToPay("5", "46733123999", "X-Callback-Url", rc.url("/cb/l"))
			expect(t, r, 202, "localhost user, 127.0.0.1 callback")
			nid := newUUID()
			r = e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, nid), strings.Replace(rtpBody("5", "46733123999"), "EUR", "USD", 1))
			expectCode(t, r, 500, "INVALID_CURRENCY", "foreign currency")
			expectCode(t, e.do("GET", "/collection/v1_0/requesttopay/"+nid, u.h(), ""), 404, "RESOURCE_NOT_FOUND", "refused creation leaves nothing")
			for name, b := range map[string]string{
				"amount number":  `{"amount":5,"currency":"EUR","payer":{"partyIdType":"MSISDN","partyId":"46733123999"}}`,
				"zero amount":    rtpBody("0", "46733123999"),
				"negative":       rtpBody("-5", "46733123999"),
				"no payer":       `{"amount":"5","currency":"EUR"}`,
				"empty payer":    `{"amount":"5","currency":"EUR","payer":{}}`,
				"bad party type": `{"amount":"5","currency":"EUR","payer":{"partyIdType":"PHONE","partyId":"46733123999"}}`,
				"bad msisdn":     rtpBody("5", "12ab"),
				"not json":       `{"amount":`,
				"array":          `[]`,
				"long message":   strings.Replace(rtpBody("5", "46733123999"), "pay please", strings.Repeat("x", 201), 1),
			} {
				r = e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), b)
				expect(t, r, 400, name)
				if p == ProfileMTN && len(r.body) != 0 {
					t.Fatalf("mtn 400 should be empty: %s", r.body)
				}
				if p == ProfileSpec && r.header.Get("Content-Type") != "application/problem+json" {
					t.Fatalf("spec 400 type %q", r.header.Get("Content-Type"))
				}
			}
			if p == ProfileMTN {
				expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), strings.Replace(rtpBody("5", "46733123999"), "pay please", "it's", 1)), 400, "apostrophe")
			} else {
				expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), strings.Replace(rtpBody("5", "46733123999"), "pay please", "it's & fine", 1)), 202, "apostrophe (spec)")
				expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), strings.Replace(rtpBody("5", "46733123999"), `"payeeNote"`, `"extra":1,"payeeNote"`, 1)), 400, "unknown member (spec)")
			}
			expect(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, "abc"), rtpBody("5", "46733123999")), 400, "non-UUID reference id")
			expectCode(t, e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID(), "X-Target-Environment", "mtnuganda"), rtpBody("5", "46733123999")), 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "wrong environment")
			// status queries
			expect(t, e.do("GET", "/collection/v1_0/requesttopay/nope", u.h(), ""), 400, "non-UUID status")
			expectCode(t, e.do("GET", "/collection/v1_0/requesttopay/"+newUUID(), u.h(), ""), 404, "RESOURCE_NOT_FOUND", "unknown status")
			expectCode(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, u.h("X-Target-Environment", ""), ""), 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "status without environment")
			other := e.provision("collection", "localhost")
			expectCode(t, e.do("GET", "/collection/v1_0/requesttopay/"+id, other.h(), ""), 404, "RESOURCE_NOT_FOUND", "another user's payment")
			// EMAIL and PARTY_CODE payers
			for _, party := range []string{`{"partyIdType":"EMAIL","partyId":"a@b.se"}`, `{"partyIdType":"PARTY_CODE","partyId":"` + newUUID() + `"}`} {
				r = e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), `{"amount":"3","currency":"EUR","payer":`+party+`}`)
				expect(t, r, 202, "payer "+party)
			}
		})
	}
}

func TestTestNumbers(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			u := e.provision("collection", "localhost")
			type c struct {
				msisdn string
				within time.Duration
				status string
				reason string
			}
			cases := []c{
				{"46733123450", 0, "FAILED", "INTERNAL_PROCESSING_ERROR"},
				{"46733123451", 5 * time.Second, "FAILED", "APPROVAL_REJECTED"},
				{"46733123452", 7 * time.Second, "FAILED", "EXPIRED"},
				{"46733123453", 4 * time.Second, "FAILED", "EXPIRED"}, // pending timeout 2 s in the test
				{"46733123454", 4 * time.Second, "SUCCESSFUL", ""},    // delayed approval 1.5 s in the test
			}
			if p == ProfileMTN {
				cases = append(cases, c{"46733123455", 0, "FAILED", "PAYER_NOT_FOUND"}, c{"46733123463", 0, "FAILED", "COULD_NOT_PERFORM_TRANSACTION"})
			}
			ids := map[string]string{}
			for _, tc := range cases {
				id, r := u.requestToPay("7", tc.msisdn)
				expect(t, r, 202, tc.msisdn)
				ids[tc.msisdn] = id
			}
			if rec := u.status(kRTP, ids["46733123453"]); rec["status"] != "PENDING" {
				t.Fatalf("…453 should start PENDING: %v", rec)
			}
			if rec := u.status(kRTP, ids["46733123454"]); rec["status"] != "PENDING" {
				t.Fatalf("…454 should start PENDING: %v", rec)
			}
			for _, tc := range cases {
				rec := u.waitFinal(kRTP, ids[tc.msisdn], tc.within)
				if rec["status"] != tc.status || (tc.reason != "" && reasonCode(rec) != tc.reason) {
					t.Fatalf("%s: %v", tc.msisdn, rec)
				}
				if tc.status == "FAILED" {
					if rec["financialTransactionId"] != nil {
						t.Fatalf("FAILED with a financialTransactionId: %v", rec)
					}
					_, isObj := rec["reason"].(map[string]any)
					if isObj != (p == ProfileSpec) {
						t.Fatalf("reason shape in %s: %v", p, rec["reason"])
					}
				}
			}
			if p == ProfileSpec {
				for n, code := range map[string]string{"46733123455": "PAYER_NOT_FOUND", "46733123459": "INVALID_CALLBACK_URL_HOST", "46733123462": "SERVICE_UNAVAILABLE", "46733123463": "NOT_ALLOWED"} {
					_, r := u.requestToPay("7", n)
					expectCode(t, r, 500, code, "spec test number "+n)
				}
			}
		})
	}
}

func TestDeliveryNotification(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p, CtlOrdinaryAtOnceIf(p)...)
			u := e.provision("collection", "localhost")
			path := func(id string) string { return "/collection/v1_0/requesttopay/" + id + "/deliverynotification" }
			nh := func(extra ...string) map[string]string {
				return u.h(append([]string{"Content-Type", "application/json"}, extra...)...)
			}
			msg := `{"notificationMessage":"Your goods are on their way"}`
			pending, _ := u.requestToPay("3", "46733123453")
			expectCode(t, e.do("POST", path(pending), nh(), msg), 409, "TRANSACTION_NOT_COMPLETED", "pending payment")
			failed, _ := u.requestToPay("3", "46733123450")
			expectCode(t, e.do("POST", path(failed), nh(), msg), 409, "TRANSACTION_NOT_COMPLETED", "failed payment")
			expectCode(t, e.do("POST", path(newUUID()), nh(), msg), 404, "RESOURCE_NOT_FOUND", "unknown payment")
			ok, _ := u.requestToPay("3", "46733123999")
			u.waitFinal(kRTP, ok, 4*time.Second)
			expect(t, e.do("POST", path(ok), nh(), `{"notificationMessage":"`+strings.Repeat("y", 201)+`"}`), 400, "long message")
			expect(t, e.do("POST", path(ok), nh(), `{}`), 400, "missing message")
			expect(t, e.do("POST", path(ok), nh("Language", "english!"), msg), 400, "bad Language")
			other := e.provision("collection", "localhost")
			expectCode(t, e.do("POST", path(ok), other.h("Content-Type", "application/json"), msg), 404, "RESOURCE_NOT_FOUND", "another user's payment")
			r := e.do("POST", path(ok), nh("Language", "sv"), msg)
			expect(t, r, 200, "first notification")
			r = e.do("POST", path(ok), nh(), msg)
			expectCode(t, r, 429, "NOT_ALLOWED", "second notification")
			if r.header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After")
			}
		})
	}
}

// CtlOrdinaryAtOnceIf keeps the spec test fast where the delay is not under test.
func CtlOrdinaryAtOnceIf(p string) []string {
	if p == ProfileSpec {
		return []string{CtlOrdinaryAtOnce}
	}
	return nil
}

func TestDepositAndRefund(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			rc := newReceiver(t)
			col := e.provision("collection", "127.0.0.1")
			d := e.provision("disbursement", "127.0.0.1")
			bal := func() string {
				r := e.do("GET", "/disbursement/v1_0/account/balance", d.h(), "")
				expect(t, r, 200, "disbursement balance")
				return r.obj(t)["availableBalance"].(string)
			}
			start := map[string]string{ProfileSpec: "1000000.00", ProfileMTN: "1000000"}[p]
			if b := bal(); b != start {
				t.Fatalf("starting disbursement balance %s", b)
			}
			// deposit
			id := newUUID()
			r := e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(d, id, "X-Callback-Url", rc.url("/dep")), depositBody("250.25", "46733123999"))
			expect(t, r, 202, "deposit")
			rec := d.status(kDeposit, id)
			if rec["status"] != "SUCCESSFUL" || rec["payee"] == nil || rec["financialTransactionId"] == nil {
				t.Fatalf("deposit record %v", rec)
			}
			cb := rc.wait(t, 5*time.Second)
			if cb.method != "POST" || cb.path != "/dep" {
				t.Fatalf("deposit callback %s %s", cb.method, cb.path)
			}
			want := map[string]string{ProfileSpec: "999749.75", ProfileMTN: "999749.75"}[p]
			if b := bal(); b != want {
				t.Fatalf("balance after deposit %s", b)
			}
			expectCode(t, e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(d, id), depositBody("1", "46733123999")), 409, "RESOURCE_ALREADY_EXIST", "duplicate deposit")
			// not covered by the balance: accepted, then FAILED NOT_ENOUGH_FUNDS
			big := newUUID()
			expect(t, e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(d, big), depositBody("2000000", "46733123999")), 202, "large deposit")
			if rec := d.status(kDeposit, big); rec["status"] != "FAILED" || reasonCode(rec) != "NOT_ENOUGH_FUNDS" {
				t.Fatalf("large deposit %v", rec)
			}
			// a failing payee gives the held funds back
			f := newUUID()
			expect(t, e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(d, f), depositBody("100", "46733123451")), 202, "deposit to …451")
			if b := bal(); b != map[string]string{ProfileSpec: "999649.75", ProfileMTN: "999649.75"}[p] {
				t.Fatalf("funds not held while pending: %s", b)
			}
			if rec := d.waitFinal(kDeposit, f, 5*time.Second); rec["status"] != "FAILED" || reasonCode(rec) != "APPROVAL_REJECTED" {
				t.Fatalf("deposit to …451 %v", rec)
			}
			if b := bal(); b != want {
				t.Fatalf("funds not released: %s", b)
			}
			// refund of a successful request to pay
			rtp, _ := col.requestToPay("40", "46733123998")
			col.waitFinal(kRTP, rtp, 4*time.Second)
			ref := newUUID()
			rb := `{"amount":"15","currency":"EUR","externalId":"r1","payerMessage":"sorry","payeeNote":"refund","referenceIdToRefund":"` + rtp + `"}`
			expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, ref, "X-Callback-Url", rc.url("/ref")), rb), 202, "refund")
			rec = d.status(kRefund, ref)
			if rec["status"] != "SUCCESSFUL" || rec["payee"].(map[string]any)["partyId"] != "46733123998" {
				t.Fatalf("refund record %v", rec)
			}
			cb = rc.wait(t, 5*time.Second)
			if cb.method != "POST" || cb.path != "/ref" {
				t.Fatalf("refund callback %s %s", cb.method, cb.path)
			}
			// more than is left to refund
			over := newUUID()
			expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, over), strings.Replace(rb, `"15"`, `"30"`, 1)), 202, "over-refund")
			if rec := d.status(kRefund, over); rec["status"] != "FAILED" || reasonCode(rec) != "NOT_ALLOWED" {
				t.Fatalf("over-refund %v", rec)
			}
			// unknown request to pay
			unk := newUUID()
			expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, unk), strings.Replace(rb, rtp, newUUID(), 1)), 202, "refund of unknown")
			if rec := d.status(kRefund, unk); rec["status"] != "FAILED" || reasonCode(rec) != "RESOURCE_NOT_FOUND" {
				t.Fatalf("refund of unknown %v", rec)
			}
			expect(t, e.do("POST", "/disbursement/v1_0/refund", jsonHdr(d, newUUID()), strings.Replace(rb, rtp, "x", 1)), 400, "refund with bad referenceIdToRefund")
			// a collection token cannot deposit
			expect(t, e.do("POST", "/disbursement/v1_0/deposit", jsonHdr(col, newUUID(), "Ocp-Apim-Subscription-Key", e.key("disbursement")), depositBody("1", "46733123999")), 401, "collection token on deposit")
		})
	}
}

func TestConsent(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			rc := newReceiver(t)
			u := e.provision("collection", "127.0.0.1")
			fh := u.h("Content-Type", "application/x-www-form-urlencoded")
			r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded", "X-Callback-Url", rc.url("/ciba")),
				form("login_hint", "ID:46733123999/MSISDN", "scope", "profile", "access_type", "offline"))
			expect(t, r, 200, "bc-authorize")
			m := r.obj(t)
			arid, _ := m["auth_req_id"].(string)
			if !isUUID(arid) || m["interval"] != float64(3) || m["expires_in"] != float64(180) {
				t.Fatalf("consent request %s", r.body)
			}
			th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key),
				"X-Target-Environment": "sandbox", "Content-Type": "application/x-www-form-urlencoded"}
			tokenForm := form("grant_type", cibaGrant, "auth_req_id", arid)
			r = e.do("POST", "/disbursement/oauth2/token/", th, tokenForm)
			expect(t, r, 400, "poll before approval")
			if r.obj(t)["error"] != "authorization_pending" {
				t.Fatalf("pending: %s", r.body)
			}
			cb := rc.wait(t, 4*time.Second)
			if cb.method != "POST" || !strings.Contains(string(cb.body), arid) {
				t.Fatalf("ping callback %s %s", cb.method, cb.body)
			}
			r = e.do("POST", "/disbursement/oauth2/token/", th, tokenForm)
			expect(t, r, 200, "consent token")
			ct := r.obj(t)
			if ct["token_type"] != "Bearer" || ct["expires_in"] != float64(3600) || ct["scope"] != "profile" ||
				!isUUID(ct["refresh_token"].(string)) || ct["refresh_token_expired_in"].(float64) < 86300 {
				t.Fatalf("consent token %s", r.body)
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("consent token cacheable")
			}
			consent := ct["access_token"].(string)
			r = e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+consent), "")
			expect(t, r, 200, "userinfo")
			ui := r.obj(t)
			if p == ProfileSpec && (len(ui) != 24 || ui["email_verified"] != true || ui["active"] != true) {
				t.Fatalf("spec userinfo %s", r.body)
			}
			if p == ProfileMTN && (ui["name"] != "Sand Box" || ui["locale"] != "sv_SE") {
				t.Fatalf("mtn userinfo %s", r.body)
			}
			r = e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h(), "")
			expect(t, r, 401, "userinfo with an access token")
			expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h("Authorization", "Bearer "+consent), ""), 401, "consent token on balance")
			// single use
			r = e.do("POST", "/disbursement/oauth2/token/", th, tokenForm)
			if r.status != 400 || r.obj(t)["error"] != "invalid_grant" {
				t.Fatalf("second redemption: %d %s", r.status, r.body)
			}
			// refresh
			r = e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", "refresh_token", "refresh_token", ct["refresh_token"].(string)))
			expect(t, r, 200, "refresh")
			if r.obj(t)["refresh_token"] != ct["refresh_token"] {
				t.Fatalf("refresh rotated the token: %s", r.body)
			}
			expect(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+r.obj(t)["access_token"].(string)), ""), 200, "userinfo after refresh")
			// errors
			r = e.do("POST", "/collection/v1_0/bc-authorize", fh, form("login_hint", "ID:46733123999/MSISDN", "scope", "payments"))
			expect(t, r, 400, "unknown scope")
			if r.obj(t)["code"] != "UNSUPPORTED_SCOPE" {
				t.Fatalf("unknown scope body %s", r.body)
			}
			expect(t, e.do("POST", "/collection/v1_0/bc-authorize", fh, form("login_hint", "46733123999", "scope", "profile")), 400, "bad login_hint")
			expect(t, e.do("POST", "/collection/v1_0/bc-authorize", fh, form("login_hint", "ID:46733123999/MSISDN", "scope", "profile", "consent_valid_in", "soon")), 400, "bad consent_valid_in")
			expectCode(t, e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded", "X-Callback-Url", "http://example.org/x"), form("login_hint", "ID:46733123999/MSISDN", "scope", "profile")), 500, "INVALID_CALLBACK_URL_HOST", "bc-authorize foreign callback")
			r = e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", "password"))
			if r.status != 400 || r.obj(t)["error"] != "unsupported_grant_type" {
				t.Fatalf("grant type: %d %s", r.status, r.body)
			}
			// consent_valid_in shapes refresh_token_expired_in; a denying holder
			r = e.do("POST", "/collection/v1_0/bc-authorize", fh, form("login_hint", "ID:46733123451/MSISDN", "scope", "openid all_info", "consent_valid_in", "600"))
			expect(t, r, 200, "bc-authorize …451")
			denied := r.obj(t)["auth_req_id"].(string)
			r = e.do("POST", "/collection/v1_0/bc-authorize", fh, form("login_hint", "ID:46733123998/MSISDN", "scope", "openid all_info", "consent_valid_in", "600"))
			short := r.obj(t)["auth_req_id"].(string)
			time.Sleep(1200 * time.Millisecond)
			r = e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", cibaGrant, "auth_req_id", denied))
			if r.status != 400 || r.obj(t)["error"] != "access_denied" {
				t.Fatalf("denied consent: %d %s", r.status, r.body)
			}
			r = e.do("POST", "/collection/oauth2/token/", th, form("grant_type", cibaGrant, "auth_req_id", short))
			expect(t, r, 200, "consent with consent_valid_in")
			if v := r.obj(t)["refresh_token_expired_in"].(float64); v > 600 || v < 590 || r.obj(t)["scope"] != "openid all_info" {
				t.Fatalf("consent_valid_in not applied: %s", r.body)
			}
			// another API user cannot redeem it
			other := e.provision("collection", "localhost")
			r = e.do("POST", "/disbursement/oauth2/token/", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection"), "Authorization": basic(other.id, other.key), "X-Target-Environment": "sandbox"}, form("grant_type", cibaGrant, "auth_req_id", arid))
			if r.status != 400 || r.obj(t)["error"] != "invalid_grant" {
				t.Fatalf("foreign auth_req_id: %d %s", r.status, r.body)
			}
		})
	}
}

func TestAccountHolder(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			c := e.provision("collection", "localhost")
			d := e.provision("disbursement", "localhost")
			key := map[string]string{ProfileSpec: "active", ProfileMTN: "result"}[p]
			for _, tc := range []struct {
				u    *user
				path string
				want any
			}{
				{c, "/collection/v1_0/accountholder/msisdn/46733123999/active", true},
				{d, "/disbursement/v1_0/accountholder/msisdn/46733123999/active", true},
				{c, "/collection/v1_0/accountholder/email/a.b@example.com/active", true},
				{c, "/collection/v1_0/accountholder/party_code/" + newUUID() + "/active", true},
			} {
				r := e.do("GET", tc.path, tc.u.h(), "")
				expect(t, r, 200, tc.path)
				if m := r.obj(t); m[key] != tc.want || len(m) != 1 {
					t.Fatalf("%s: %s", tc.path, r.body)
				}
			}
			expect(t, e.do("GET", "/collection/v1_0/accountholder/MSISDN/46733123999/active", c.h(), ""), 400, "upper-case type")
			expect(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/abc/active", c.h(), ""), 400, "bad msisdn")
			expect(t, e.do("GET", "/collection/v1_0/accountholder/party_code/xyz/active", c.h(), ""), 400, "bad party code")
			expectCode(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/active", c.h("X-Target-Environment", "prod"), ""), 500, "NOT_ALLOWED_TARGET_ENVIRONMENT", "wrong env")
			r := e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123450/active", c.h(), "")
			if p == ProfileSpec {
				expect(t, r, 200, "…450 active")
				if r.obj(t)["active"] != false {
					t.Fatalf("…450: %s", r.body)
				}
			} else {
				expectCode(t, r, 404, "RESOURCE_NOT_FOUND", "…450 active")
				expectCode(t, e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123455/active", c.h(), ""), 503, "SERVICE_UNAVAILABLE", "…455")
			}
			// basic user info
			r = e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/basicuserinfo", c.h(), "")
			expect(t, r, 200, "basic user info")
			m := r.obj(t)
			if p == ProfileSpec {
				for _, f := range []string{"given_name", "family_name", "birthdate", "locale", "gender", "status"} {
					if _, ok := m[f].(string); !ok {
						t.Fatalf("basic info lacks %s: %s", f, r.body)
					}
				}
				if len(m) != 6 || m["locale"] != "sv-SE" {
					t.Fatalf("spec basic info %s", r.body)
				}
			} else if m["name"] != "Sand Box" || m["gender"] != "MALE" {
				t.Fatalf("mtn basic info %s", r.body)
			}
			r = e.do("GET", "/collection/v1_0/accountholder/msisdn/46733123999/basicuserinfo", c.h("Authorization", ""), "")
			expect(t, r, 401, "basic info without token")
			if r.obj(t)["error"] == nil {
				t.Fatalf("401 without error: %s", r.body)
			}
		})
	}
}

func TestRobustness(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p)
			u := e.provision("collection", "localhost")
			big := `{"amount":"1","currency":"EUR","payerMessage":"` + strings.Repeat("a", MaxBody) + `"}`
			r := e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, newUUID()), big)
			expect(t, r, 413, "body over 1 MiB")
			// chunked body over 1 MiB (no Content-Length)
			req, _ := http.NewRequest("POST", e.base+"/collection/v1_0/requesttopay", struct{ *strings.Reader }{strings.NewReader(big)})
			for k, v := range jsonHdr(u, newUUID()) {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				if res.StatusCode != 413 {
					t.Fatalf("chunked over 1 MiB: %d", res.StatusCode)
				}
				res.Body.Close()
			}
			expectCode(t, e.do("GET", "/nothing/here", nil, ""), 404, "NOT_FOUND", "unknown path")
			expect(t, e.do("DELETE", "/collection/v1_0/requesttopay", u.h(), ""), 404, "wrong method")
			// random junk never crashes the server and never gets a 5xx other than the documented ones
			rng := rand.New(rand.NewSource(7))
			paths := []string{"/collection/v1_0/requesttopay", "/disbursement/v1_0/deposit", "/disbursement/v1_0/refund", "/v1_0/apiuser",
				"/collection/v1_0/bc-authorize", "/disbursement/oauth2/token/", "/collection/v1_0/requesttopay/" + newUUID() + "/deliverynotification"}
			junk := []string{`{`, `null`, `"x"`, `{"amount":{}}`, `{"payer":[1,2]}`, `{"amount":"1e9","currency":"EUR"}`, "\x00\xff", `{"a":` + strings.Repeat("[", 5000), `login_hint=%zz`, `grant_type=a&grant_type=b`}
			for i := 0; i < 200; i++ {
				h := jsonHdr(u, newUUID())
				if rng.Intn(3) == 0 {
					h["Content-Type"] = "application/x-www-form-urlencoded"
				}
				r := e.do("POST", paths[rng.Intn(len(paths))], h, junk[rng.Intn(len(junk))])
				if r.status < 400 || r.status >= 600 {
					t.Fatalf("junk accepted with %d: %s", r.status, r.body)
				}
			}
			expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h(), ""), 200, "still alive")
		})
	}
}
