package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// env is one running server on 127.0.0.1 for a test.
type env struct {
	t    *testing.T
	base string
	srv  *Server
	cfg  Config
}

func startWith(t *testing.T, cfg Config, tune func(*timings)) *env {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if tune != nil {
		tune(&s.tm)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Close)
	return &env{t: t, base: "http://" + ln.Addr().String(), srv: s, cfg: cfg}
}

func start(t *testing.T, profile string, controls ...string) *env {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Profile = profile
	cfg.DelayedApproval = 1500 * time.Millisecond
	cfg.PendingTimeout = 2 * time.Second
	for _, c := range controls {
		cfg.Controls[c] = true
	}
	return startWith(t, cfg, nil)
}

var profiles = []string{ProfileSpec, ProfileMTN}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %q (%v)", r.body, err)
	}
	return m
}

func (e *env) do(method, path string, hdr map[string]string, body string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func expect(t *testing.T, r resp, status int, what string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.body)
	}
}

func expectCode(t *testing.T, r resp, status int, code, what string) {
	t.Helper()
	expect(t, r, status, what)
	if got := r.obj(t)["code"]; got != code {
		t.Fatalf("%s: code %v, want %s; body %s", what, got, code, r.body)
	}
}

type user struct {
	id, key, product, token string
	e                       *env
}

func (e *env) key(product string) string { return e.cfg.Keys[product] }

func (e *env) provision(product, host string) *user {
	e.t.Helper()
	id := newUUID()
	r := e.do("POST", "/v1_0/apiuser", map[string]string{
		"Ocp-Apim-Subscription-Key": e.key(product), "X-Reference-Id": id, "Content-Type": "application/json",
	}, `{"providerCallbackHost":"`+host+`"}`)
	expect(e.t, r, 201, "create API user")
	r = e.do("POST", "/v1_0/apiuser/"+id+"/apikey", map[string]string{"Ocp-Apim-Subscription-Key": e.key(product)}, "")
	expect(e.t, r, 201, "create API key")
	u := &user{id: id, key: r.obj(e.t)["apiKey"].(string), product: product, e: e}
	u.token = e.accessToken(u)
	return u
}

func basic(id, key string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+key))
}

func (e *env) tokenResp(u *user) resp {
	return e.do("POST", "/"+u.product+"/token/", map[string]string{
		"Ocp-Apim-Subscription-Key": e.key(u.product), "Authorization": basic(u.id, u.key),
	}, "")
}

func (e *env) accessToken(u *user) string {
	e.t.Helper()
	r := e.tokenResp(u)
	expect(e.t, r, 200, "token")
	return r.obj(e.t)["access_token"].(string)
}

// headers for a business call by u.
func (u *user) h(extra ...string) map[string]string {
	m := map[string]string{
		"Ocp-Apim-Subscription-Key": u.e.key(u.product),
		"Authorization":             "Bearer " + u.token,
		"X-Target-Environment":      u.e.cfg.TargetEnvironment,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(m, extra[i])
		} else {
			m[extra[i]] = extra[i+1]
		}
	}
	return m
}

func jsonHdr(u *user, id string, extra ...string) map[string]string {
	return u.h(append([]string{"Content-Type", "application/json", "X-Reference-Id", id}, extra...)...)
}

func rtpBody(amount, msisdn string) string {
	return `{"amount":"` + amount + `","currency":"EUR","externalId":"ext-1","payer":{"partyIdType":"MSISDN","partyId":"` + msisdn + `"},"payerMessage":"pay please","payeeNote":"thanks"}`
}

func depositBody(amount, msisdn string) string {
	return `{"amount":"` + amount + `","currency":"EUR","externalId":"ext-2","payee":{"partyIdType":"MSISDN","partyId":"` + msisdn + `"},"payerMessage":"here","payeeNote":"you go"}`
}

func (u *user) requestToPay(amount, msisdn string, extra ...string) (string, resp) {
	id := newUUID()
	r := u.e.do("POST", "/collection/v1_0/requesttopay", jsonHdr(u, id, extra...), rtpBody(amount, msisdn))
	return id, r
}

func (u *user) status(kind, id string) map[string]any {
	u.e.t.Helper()
	prefix := "/collection/v1_0/"
	if kind != kRTP {
		prefix = "/disbursement/v1_0/"
	}
	r := u.e.do("GET", prefix+kind+"/"+id, u.h(), "")
	expect(u.e.t, r, 200, "status of "+kind)
	return r.obj(u.e.t)
}

// waitStatus polls until the status differs from PENDING or the deadline passes.
func (u *user) waitFinal(kind, id string, within time.Duration) map[string]any {
	u.e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		rec := u.status(kind, id)
		if rec["status"] != "PENDING" || time.Now().After(deadline) {
			return rec
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func reasonCode(rec map[string]any) any {
	switch r := rec["reason"].(type) {
	case map[string]any:
		return r["code"]
	default:
		return r
	}
}

// receiver collects callbacks.
type cbReq struct {
	method string
	path   string
	header http.Header
	body   []byte
	at     time.Time
}

type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []cbReq
	failNext atomic.Int32
	ch       chan cbReq
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{ch: make(chan cbReq, 64)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := cbReq{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: b, at: time.Now()}
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		rc.mu.Unlock()
		if rc.failNext.Load() > 0 {
			rc.failNext.Add(-1)
			w.WriteHeader(503)
			return
		}
		rc.ch <- req
		w.WriteHeader(200)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) url(path string) string { return rc.srv.URL + path }

func (rc *receiver) wait(t *testing.T, within time.Duration) cbReq {
	t.Helper()
	select {
	case r := <-rc.ch:
		return r
	case <-time.After(within):
		t.Fatalf("no callback within %v", within)
	}
	return cbReq{}
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func form(kv ...string) string {
	var b bytes.Buffer
	for i := 0; i+1 < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(kv[i] + "=" + strings.ReplaceAll(kv[i+1], " ", "%20"))
	}
	return b.String()
}
