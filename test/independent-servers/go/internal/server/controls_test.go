package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestControlRegistry(t *testing.T) {
	t.Parallel()
	if len(Controls) < 6 {
		t.Fatalf("only %d controls", len(Controls))
	}
	seen := map[string]bool{}
	for _, c := range Controls {
		if seen[c.Name] || c.Clause == "" || c.Effect == "" || !c.LegalIn(ProfileSpec) {
			t.Fatalf("bad control entry %+v", c)
		}
		seen[c.Name] = true
		cfg := DefaultConfig()
		cfg.Controls[c.Name] = true
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s refused in spec: %v", c.Name, err)
		}
		cfg.Profile = ProfileMTN
		if err := cfg.Validate(); (err == nil) != c.LegalIn(ProfileMTN) {
			t.Fatalf("%s: mtn legality mismatch (%v)", c.Name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Controls["no-such-control"] = true
	if cfg.Validate() == nil {
		t.Fatal("unknown control accepted")
	}
}

func consentSetup(t *testing.T, e *env) (*user, map[string]string, func() string) {
	u := e.provision("collection", "localhost")
	th := map[string]string{"Ocp-Apim-Subscription-Key": e.key("disbursement"), "Authorization": basic(u.id, u.key), "X-Target-Environment": "sandbox"}
	authorize := func() string {
		r := e.do("POST", "/collection/v1_0/bc-authorize", u.h("Content-Type", "application/x-www-form-urlencoded"), form("login_hint", "ID:46733123999/MSISDN", "scope", "profile"))
		expect(t, r, 200, "bc-authorize")
		return r.obj(t)["auth_req_id"].(string)
	}
	return u, th, authorize
}

func oauthErr(t *testing.T, r resp, want, what string) {
	t.Helper()
	if r.status != 400 || r.obj(t)["error"] != want {
		t.Fatalf("%s: %d %s, want 400 %s", what, r.status, r.body, want)
	}
}

func TestControlConsentSlowDown(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p, CtlSlowDown)
			_, th, authorize := consentSetup(t, e)
			id := authorize()
			f := form("grant_type", cibaGrant, "auth_req_id", id)
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, f), "authorization_pending", "first poll")
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, f), "slow_down", "second poll at once")
			time.Sleep(3200 * time.Millisecond) // the old interval (3 s) is no longer enough: it grew to 8 s
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, f), "slow_down", "poll after the old interval")
			time.Sleep(13200 * time.Millisecond) // each slow_down adds 5 s: now 13 s
			expect(t, e.do("POST", "/disbursement/oauth2/token/", th, f), 200, "poll after the grown interval")
		})
	}
	t.Run("default-has-no-slow-down", func(t *testing.T) {
		t.Parallel()
		e := start(t, ProfileSpec)
		_, th, authorize := consentSetup(t, e)
		f := form("grant_type", cibaGrant, "auth_req_id", authorize())
		for i := 0; i < 3; i++ {
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, f), "authorization_pending", "rapid polls")
		}
	})
}

func TestControlConsentReplayRevokes(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p, CtlReplayRevokes)
			u, th, authorize := consentSetup(t, e)
			id := authorize()
			time.Sleep(1100 * time.Millisecond)
			f := form("grant_type", cibaGrant, "auth_req_id", id)
			r := e.do("POST", "/disbursement/oauth2/token/", th, f)
			expect(t, r, 200, "redeem")
			tok, refresh := r.obj(t)["access_token"].(string), r.obj(t)["refresh_token"].(string)
			expect(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+tok), ""), 200, "userinfo")
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, f), "invalid_grant", "replay")
			expect(t, e.do("GET", "/collection/oauth2/v1_0/userinfo", u.h("Authorization", "Bearer "+tok), ""), 401, "userinfo after replay")
			oauthErr(t, e.do("POST", "/disbursement/oauth2/token/", th, form("grant_type", "refresh_token", "refresh_token", refresh)), "invalid_grant", "refresh after replay")
		})
	}
}

func TestControlNewKeyRevokesTokens(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		for _, on := range []bool{true, false} {
			p, on := p, on
			name := p + map[bool]string{true: "-on", false: "-off"}[on]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var ctl []string
				if on {
					ctl = []string{CtlNewKeyRevokes}
				}
				e := start(t, p, ctl...)
				u := e.provision("collection", "localhost")
				r := e.do("POST", "/v1_0/apiuser/"+u.id+"/apikey", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection")}, "")
				expect(t, r, 201, "new key")
				r = e.do("GET", "/collection/v1_0/account/balance", u.h(), "")
				if on {
					expect(t, r, 401, "old token after a new key")
					if r.obj(t)["error"] != "TOKEN_INVALID" {
						t.Fatalf("%s", r.body)
					}
				} else {
					expect(t, r, 200, "old token after a new key (default)")
				}
				mustKey(t, e, u)
			})
		}
	}
}

func mustKey(t *testing.T, e *env, u *user) {
	r := e.do("POST", "/v1_0/apiuser/"+u.id+"/apikey", map[string]string{"Ocp-Apim-Subscription-Key": e.key("collection")}, "")
	expect(t, r, 201, "key")
	k := r.obj(t)["apiKey"].(string)
	u.key = k
	u.token = e.accessToken(u)
	expect(t, e.do("GET", "/collection/v1_0/account/balance", u.h(), ""), 200, "fresh token works")
}

func TestControlNotificationWindow(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		for _, on := range []bool{true, false} {
			p, on := p, on
			t.Run(p+map[bool]string{true: "-on", false: "-off"}[on], func(t *testing.T) {
				t.Parallel()
				ctl := CtlOrdinaryAtOnceIf(p)
				if on {
					ctl = append(ctl, CtlNotifWindow30)
				}
				e := start(t, p, ctl...)
				u := e.provision("collection", "localhost")
				a, _ := u.requestToPay("5", "46733123999")
				b, _ := u.requestToPay("5", "46733123999")
				path := func(id string) string { return "/collection/v1_0/requesttopay/" + id + "/deliverynotification" }
				msg := `{"notificationMessage":"hello"}`
				expect(t, e.do("POST", path(a), u.h("Content-Type", "application/json"), msg), 200, "within the window")
				time.Sleep(31 * time.Second)
				r := e.do("POST", path(b), u.h("Content-Type", "application/json"), msg)
				if on {
					expectCode(t, r, 410, "EXPIRED", "after 30 s")
					expectCode(t, e.do("POST", path(a), u.h("Content-Type", "application/json"), msg), 410, "EXPIRED", "after 30 s, notified before")
				} else {
					expect(t, r, 200, "after 31 s (default window 3600 s)")
				}
			})
		}
	}
}

func TestControlSignedCallbacksAndRetries(t *testing.T) {
	t.Parallel()
	for _, p := range profiles {
		p := p
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			e := start(t, p, append(CtlOrdinaryAtOnceIf(p), CtlSignedCallback)...)
			rc := newReceiver(t)
			rc.failNext.Store(1) // the first attempt gets 503: the server retries
			u := e.provision("collection", "127.0.0.1")
			_, r := u.requestToPay("9", "46733123999", "X-Callback-Url", rc.url("/signed"))
			expect(t, r, 202, "request to pay")
			cb := rc.wait(t, 5*time.Second)
			if rc.count() != 2 {
				t.Fatalf("attempts %d, want 2 (one refused, one accepted)", rc.count())
			}
			want := "sha256=" + hmacHex([]byte(u.key), cb.body)
			if cb.header.Get("X-Callback-Signature") != want || cb.header.Get("X-Callback-Timestamp") == "" {
				t.Fatalf("signature %q want %q", cb.header.Get("X-Callback-Signature"), want)
			}
			time.Sleep(3 * time.Second)
			if rc.count() != 2 {
				t.Fatalf("callback repeated after a 200: %d attempts", rc.count())
			}
		})
	}
	t.Run("unsigned-by-default", func(t *testing.T) {
		t.Parallel()
		e := start(t, ProfileMTN)
		rc := newReceiver(t)
		u := e.provision("collection", "127.0.0.1")
		u.requestToPay("9", "46733123999", "X-Callback-Url", rc.url("/plain"))
		if cb := rc.wait(t, 5*time.Second); cb.header.Get("X-Callback-Signature") != "" {
			t.Fatal("signed without the control")
		}
	})
}

func TestControlSuccessStateCompleted(t *testing.T) {
	t.Parallel()
	e := start(t, ProfileSpec, CtlCompleted, CtlOrdinaryAtOnce)
	rc := newReceiver(t)
	u := e.provision("collection", "127.0.0.1")
	id, _ := u.requestToPay("9", "46733123999", "X-Callback-Url", rc.url("/c"))
	if rec := u.status(kRTP, id); rec["status"] != "COMPLETED" || rec["financialTransactionId"] == nil {
		t.Fatalf("record %v", rec)
	}
	var body map[string]any
	_ = json.Unmarshal(rc.wait(t, 5*time.Second).body, &body)
	if body["status"] != "COMPLETED" {
		t.Fatalf("callback %v", body)
	}
	expect(t, e.do("POST", "/collection/v1_0/requesttopay/"+id+"/deliverynotification", u.h("Content-Type", "application/json"), `{"notificationMessage":"x"}`), 200, "notification on COMPLETED")
	f, _ := u.requestToPay("9", "46733123450")
	if rec := u.status(kRTP, f); rec["status"] != "FAILED" {
		t.Fatalf("failed record %v", rec)
	}
}

func TestControlPayerLimit(t *testing.T) {
	t.Parallel()
	e := start(t, ProfileSpec, CtlPayerLimit)
	u := e.provision("collection", "localhost")
	over, _ := u.requestToPay("10000.01", "46733123999")
	at, _ := u.requestToPay("10000", "46733123999")
	if rec := u.status(kRTP, over); rec["status"] != "PENDING" {
		t.Fatalf("over the limit should first be PENDING: %v", rec)
	}
	if rec := u.waitFinal(kRTP, over, 4*time.Second); rec["status"] != "FAILED" || reasonCode(rec) != "PAYER_LIMIT_REACHED" {
		t.Fatalf("over the limit %v", rec)
	}
	if rec := u.waitFinal(kRTP, at, 4*time.Second); rec["status"] != "SUCCESSFUL" {
		t.Fatalf("at the limit %v", rec)
	}
}

func TestControlOrdinaryAtOnce(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		var ctl []string
		if on {
			ctl = []string{CtlOrdinaryAtOnce}
		}
		e := start(t, ProfileSpec, ctl...)
		u := e.provision("collection", "localhost")
		id, _ := u.requestToPay("1", "46733123999")
		got := u.status(kRTP, id)["status"]
		want := map[bool]string{true: "SUCCESSFUL", false: "PENDING"}[on]
		if got != want {
			t.Fatalf("control %v: first read %v, want %s", on, got, want)
		}
	}
	if !strings.Contains(strings.Join(ProfilesOf(CtlOrdinaryAtOnce), ","), ProfileSpec) {
		t.Fatal("registry")
	}
}

func ProfilesOf(name string) []string {
	c, _ := LookupControl(name)
	return c.Profiles
}
