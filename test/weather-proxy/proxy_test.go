package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// ---- helpers ----

// TestMain lets the CLI tests run this test binary as the real command.
func TestMain(m *testing.M) {
	if os.Getenv("WEATHER_PROXY_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type logEntry struct {
	Time, Condition, Method, Path string
}

func (s *syncBuffer) entries(t *testing.T) []logEntry {
	t.Helper()
	var out []logEntry
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if len(m) != 4 {
			t.Fatalf("log line %q: want exactly time, condition, method, path", line)
		}
		if _, err := time.Parse(time.RFC3339Nano, m["time"]); err != nil {
			t.Fatalf("log line %q: time: %v", line, err)
		}
		out = append(out, logEntry{m["time"], m["condition"], m["method"], m["path"]})
	}
	return out
}

// lineWriter reports the first line written to it.
type lineWriter struct {
	once sync.Once
	ch   chan string
	buf  bytes.Buffer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf.Write(p)
	if i := bytes.IndexByte(l.buf.Bytes(), '\n'); i >= 0 {
		line := l.buf.String()[:i]
		l.once.Do(func() { l.ch <- line })
	}
	return len(p), nil
}

type proxyUnderTest struct {
	URL  string
	Port string
	Log  *syncBuffer
}

// startProxy runs Serve in-process, as main does, and stops it at cleanup.
func startProxy(t *testing.T, upstream string, seed uint64, conditions string) *proxyUnderTest {
	t.Helper()
	cfg, err := ParseArgs([]string{"--port", "0", "--upstream", upstream, "--seed", fmt.Sprint(seed), "--conditions", conditions})
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &syncBuffer{}
	out := &lineWriter{ch: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Serve(ctx, cfg, logBuf, out, io.Discard) }()
	var line string
	select {
	case line = <-out.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("proxy did not start")
	}
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:(\d+))$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	t.Cleanup(func() {
		cancel()
		if rc := <-done; rc != 0 {
			t.Errorf("Serve returned %d", rc)
		}
	})
	return &proxyUnderTest{URL: m[1], Port: m[2], Log: logBuf}
}

// A client that never reuses a connection, so a cut is seen as a cut and
// not retried by net/http.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true, Proxy: nil}}

type stub struct {
	*httptest.Server
	hits atomic.Int64
	mu   sync.Mutex
	reqs []*http.Request
}

// newStub answers every request with 200 {"ok":true} unless handler is given.
func newStub(t *testing.T, handler http.HandlerFunc) *stub {
	s := &stub{}
	if handler == nil {
		handler = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Upstream", "yes")
			io.WriteString(w, `{"ok":true}`)
		}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func do(t *testing.T, method, u string, body string, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

func concretePath(tmpl string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(tmpl, "p1")
}

func conditionsOf(es []logEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Condition+" "+e.Method+" "+e.Path)
	}
	return out
}

// ---- the operation table ----

func TestOperationTable(t *testing.T) {
	want500 := map[string]bool{"1": true, "2": true, "3": true, "4": true, "5": true, "8": true,
		"9": true, "10": true, "12": true, "13": true}
	for _, op := range Operations {
		p := concretePath(op.Path)
		if got := MatchOperation(op.Method, p); got == nil || got.Path != op.Path {
			t.Errorf("%s %s does not match its own template", op.Method, p)
		}
		if got := Allows500(op.Method, p); got != want500[op.Num] {
			t.Errorf("op %s %s %s: Allows500 = %v", op.Num, op.Method, op.Path, got)
		}
	}
	for _, c := range []struct{ m, p string }{
		{"GET", "/collection/v1_0/requesttopay/3f0e8b5a-1111-4111-8111-111111111111"}, // status query
		{"GET", "/disbursement/v1_0/deposit/x"},
		{"POST", "/collection/token"},                // not the listed path (no trailing slash)
		{"GET", "/collection/token/"},                // wrong method
		{"POST", "/collection/v1_0/requesttopay/"},   // extra empty segment
		{"GET", "/collection/v1_0/account/balance/"}, // empty {currency}
		{"GET", "/collection/v1_0/account/balance"},  // not listed
		{"POST", "/collection/v1_0/bc-authorize"},    // listed without 500
		{"POST", "/v1_0/apiuser"},                    // code set C
		{"GET", "/anything/else"},
	} {
		if Allows500(c.m, c.p) {
			t.Errorf("%s %s: internal-error must not be allowed", c.m, c.p)
		}
	}
}

// ---- each condition ----

func TestInternalErrorOnlyWhereListed(t *testing.T) {
	up := newStub(t, nil)
	px := startProxy(t, up.URL, 1, "internal-error=1")
	var wantLog []string
	for _, op := range Operations {
		p := concretePath(op.Path)
		before := up.hits.Load()
		res, body, err := do(t, op.Method, px.URL+p, "", nil)
		if err != nil {
			t.Fatalf("%s %s: %v", op.Method, p, err)
		}
		forwarded := up.hits.Load() - before
		if op.Has500 {
			wantLog = append(wantLog, "internal-error "+op.Method+" "+p)
			if res.StatusCode != 500 || string(body) != internalErrBody || forwarded != 0 {
				t.Errorf("%s %s: got %d %s forwarded=%d; want injected 500, not forwarded", op.Method, p, res.StatusCode, body, forwarded)
			}
			var e struct{ Code, Message string }
			if json.Unmarshal(body, &e) != nil || e.Code != "INTERNAL_PROCESSING_ERROR" || e.Message == "" {
				t.Errorf("500 body %s", body)
			}
			if res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("500 Content-Type %q", res.Header.Get("Content-Type"))
			}
		} else if res.StatusCode != 200 || res.Header.Get("X-Upstream") != "yes" || forwarded != 1 {
			t.Errorf("%s %s (no 500 listed): got %d forwarded=%d; want the upstream answer", op.Method, p, res.StatusCode, forwarded)
		}
	}
	if got := conditionsOf(px.Log.entries(t)); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("log\n got %q\nwant %q", got, wantLog)
	}
}

func TestUnavailable(t *testing.T) {
	up := newStub(t, nil)
	px := startProxy(t, up.URL, 1, "unavailable=1")
	for _, p := range []string{"/collection/v1_0/bc-authorize", "/collection/v1_0/requesttopay", "/nowhere"} {
		res, body, err := do(t, "POST", px.URL+p, `{"a":1}`, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: got %d Retry-After=%q", p, res.StatusCode, res.Header.Get("Retry-After"))
		}
		if string(body) != unavailableBody {
			t.Errorf("body %s", body)
		}
	}
	if up.hits.Load() != 0 {
		t.Errorf("upstream was reached %d times", up.hits.Load())
	}
	if n := len(px.Log.entries(t)); n != 3 {
		t.Errorf("%d log lines, want 3", n)
	}
}

func TestLatency(t *testing.T) {
	up := newStub(t, nil)
	const seed = 42
	px := startProxy(t, up.URL, seed, "latency=1")
	rates, _ := ParseConditions("latency=1")
	ref := NewWeather(seed, rates, nil) // the same draws, to know each delay
	for i := 0; i < 4; i++ {
		want := ref.PlanRequest(false).Latency
		if want < 50*time.Millisecond || want > 1500*time.Millisecond {
			t.Fatalf("planned latency %v out of 50-1500ms", want)
		}
		start := time.Now()
		res, body, err := do(t, "GET", px.URL+"/collection/v1_0/account/balance/EUR", "", nil)
		took := time.Since(start)
		if err != nil || res.StatusCode != 200 || string(body) != `{"ok":true}` {
			t.Fatalf("got %v %v %s", err, res, body)
		}
		if took < want || took > want+time.Second {
			t.Errorf("request %d took %v, planned delay %v", i, took, want)
		}
	}
	if up.hits.Load() != 4 || len(px.Log.entries(t)) != 4 {
		t.Errorf("hits %d, log %d", up.hits.Load(), len(px.Log.entries(t)))
	}
}

func TestCutBefore(t *testing.T) {
	up := newStub(t, nil)
	px := startProxy(t, up.URL, 1, "cut-before=1")
	for _, m := range []string{"GET", "POST"} {
		res, _, err := do(t, m, px.URL+"/collection/v1_0/requesttopay", `{"amount":"1"}`, map[string]string{"X-Reference-Id": "x"})
		if err == nil {
			t.Fatalf("%s: got an answer %d, want a closed connection", m, res.StatusCode)
		}
	}
	if up.hits.Load() != 0 {
		t.Errorf("upstream reached %d times; cut-before must not forward", up.hits.Load())
	}
	if got := conditionsOf(px.Log.entries(t)); len(got) != 2 || got[0] != "cut-before GET /collection/v1_0/requesttopay" {
		t.Errorf("log %q", got)
	}
}

func TestCutAfter(t *testing.T) {
	var gotBody atomic.Value
	up := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody.Store(string(b))
		w.WriteHeader(202)
	})
	px := startProxy(t, up.URL, 1, "cut-after=1")
	_, _, err := do(t, "POST", px.URL+"/collection/v1_0/requesttopay", `{"amount":"5"}`, nil)
	if err == nil {
		t.Fatal("got an answer; want a closed connection")
	}
	if up.hits.Load() != 1 || gotBody.Load() != `{"amount":"5"}` {
		t.Errorf("upstream hits %d body %v; cut-after must forward the whole request", up.hits.Load(), gotBody.Load())
	}
	if got := conditionsOf(px.Log.entries(t)); !reflect.DeepEqual(got, []string{"cut-after POST /collection/v1_0/requesttopay"}) {
		t.Errorf("log %q", got)
	}
}

// ---- callbacks ----

type delivery struct {
	at                time.Time
	method, uri, host string
	body              string
	hdr               http.Header
}

// callbackWorld is a client listener, an upstream that sends a callback to
// X-Callback-Url after answering a request to pay, and a proxy in between.
type callbackWorld struct {
	px         *proxyUnderTest
	up         *stub
	client     *httptest.Server
	deliveries chan delivery
	sentAt     chan time.Time
	seenURL    chan string
	answers    chan string // what the upstream got back from its callback
}

func newCallbackWorld(t *testing.T, conditions string) *callbackWorld {
	w := &callbackWorld{
		deliveries: make(chan delivery, 10),
		sentAt:     make(chan time.Time, 10),
		seenURL:    make(chan string, 10),
		answers:    make(chan string, 10),
	}
	w.client = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.deliveries <- delivery{time.Now(), r.Method, r.RequestURI, r.Host, string(b), r.Header.Clone()}
		rw.Header().Set("X-Client", "answered")
		rw.WriteHeader(http.StatusAccepted)
		io.WriteString(rw, "thanks")
	}))
	t.Cleanup(w.client.Close)
	w.up = newStub(t, func(rw http.ResponseWriter, r *http.Request) {
		cb := r.Header.Get("X-Callback-Url")
		w.seenURL <- cb
		rw.WriteHeader(202)
		go func() {
			body := `{"externalId":"e1","amount":"5","currency":"EUR","status":"SUCCESSFUL"}`
			req, _ := http.NewRequest("PUT", cb, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w.sentAt <- time.Now()
			res, err := client.Do(req)
			if err != nil {
				w.answers <- "error: " + err.Error()
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			w.answers <- fmt.Sprintf("%d %s %s", res.StatusCode, res.Header.Get("X-Client"), b)
		}()
	})
	w.px = startProxy(t, w.up.URL, 3, conditions)
	return w
}

func (w *callbackWorld) requestToPay(t *testing.T, callbackURL string) {
	t.Helper()
	res, _, err := do(t, "POST", w.px.URL+"/collection/v1_0/requesttopay", `{"amount":"5"}`,
		map[string]string{"X-Callback-Url": callbackURL, "X-Reference-Id": "r1"})
	if err != nil || res.StatusCode != 202 {
		t.Fatalf("request to pay: %v %v", err, res)
	}
}

func next[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
	panic("unreachable")
}

func TestCallbackRewriteAndPassThrough(t *testing.T) {
	w := newCallbackWorld(t, "")
	_, cport, _ := net.SplitHostPort(strings.TrimPrefix(w.client.URL, "http://"))
	orig := "http://localhost:" + cport + "/hooks/momo?order=7&x=%2F"
	w.requestToPay(t, orig)

	seen := next(t, w.seenURL, "request upstream")
	u, err := url.Parse(seen)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "http" || u.Hostname() != "localhost" || u.Port() != w.px.Port {
		t.Errorf("rewritten URL %q: want same scheme and hostname, the proxy's port", seen)
	}
	if u.RawQuery != "order=7&x=%2F" {
		t.Errorf("rewritten URL %q: query changed", seen)
	}
	enc := strings.TrimPrefix(u.Path, CallbackPrefix)
	if dec, _ := base64.RawURLEncoding.DecodeString(enc); string(dec) != orig {
		t.Errorf("rewritten path %q does not encode %q", u.Path, orig)
	}

	d := next(t, w.deliveries, "callback at the client")
	if d.method != "PUT" || d.uri != "/hooks/momo?order=7&x=%2F" || d.host != "localhost:"+cport {
		t.Errorf("delivered %s %s Host %s", d.method, d.uri, d.host)
	}
	if d.body != `{"externalId":"e1","amount":"5","currency":"EUR","status":"SUCCESSFUL"}` || d.hdr.Get("Content-Type") != "application/json" {
		t.Errorf("delivered body %q header %v", d.body, d.hdr)
	}
	if a := next(t, w.answers, "answer at the server"); a != "202 answered thanks" {
		t.Errorf("server got %q; want the client's answer", a)
	}
	select {
	case d := <-w.deliveries:
		t.Errorf("unexpected second delivery %v", d)
	case <-time.After(300 * time.Millisecond):
	}
	if n := len(w.px.Log.entries(t)); n != 0 {
		t.Errorf("%d log lines without conditions", n)
	}
}

func TestCallbackNotRewrittenWhenNotCleanHTTP(t *testing.T) {
	p := &Proxy{port: "9"}
	for _, v := range []string{
		"https://example.com/cb", "not a url", "http://exa mple.com/", "http:///nohost",
		"http://example.com/a b", "ftp://example.com/", "http://example.com:99999/", "",
		"http://example.com/%zz", "http://example.com/é",
	} {
		if got := p.RewriteCallbackURL(v); got != v {
			t.Errorf("%q rewritten to %q; want untouched", v, got)
		}
	}
	if got := p.RewriteCallbackURL("http://[::1]:8080/cb"); !strings.HasPrefix(got, "http://[::1]:9/_weather/callback/") {
		t.Errorf("IPv6: %q", got)
	}
}

func TestCallbackLate(t *testing.T) {
	w := newCallbackWorld(t, "callback-late=1")
	w.requestToPay(t, w.client.URL+"/cb")
	rates, _ := ParseConditions("callback-late=1")
	want := NewWeather(3, rates, nil).PlanCallback().Late
	if want < time.Second || want > 5*time.Second {
		t.Fatalf("planned delay %v out of 1-5s", want)
	}
	sent := next(t, w.sentAt, "callback sent")
	d := next(t, w.deliveries, "callback at the client")
	if lag := d.at.Sub(sent); lag < want || lag > want+time.Second {
		t.Errorf("callback delivered after %v; planned %v", lag, want)
	}
	if a := next(t, w.answers, "answer"); a != "202 answered thanks" {
		t.Errorf("server got %q", a)
	}
	if got := conditionsOf(w.px.Log.entries(t)); !reflect.DeepEqual(got, []string{"callback-late PUT /cb"}) {
		t.Errorf("log %q", got)
	}
}

func TestCallbackRepeated(t *testing.T) {
	w := newCallbackWorld(t, "callback-repeated=1")
	w.requestToPay(t, w.client.URL+"/cb?id=1")
	d1 := next(t, w.deliveries, "first delivery")
	d2 := next(t, w.deliveries, "second delivery")
	if d1.body != d2.body || d1.uri != d2.uri || d1.method != d2.method || d1.uri != "/cb?id=1" {
		t.Errorf("deliveries differ: %+v / %+v", d1, d2)
	}
	if a := next(t, w.answers, "answer"); a != "202 answered thanks" {
		t.Errorf("server got %q", a)
	}
	select {
	case d := <-w.deliveries:
		t.Errorf("third delivery %v", d)
	case <-time.After(300 * time.Millisecond):
	}
	if got := conditionsOf(w.px.Log.entries(t)); !reflect.DeepEqual(got, []string{"callback-repeated PUT /cb"}) {
		t.Errorf("log %q", got)
	}
}

// ---- pass-through ----

func TestPassThroughByteForByte(t *testing.T) {
	payload := make([]byte, 3<<20+17) // larger than any buffer: streamed
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	var seen *http.Request
	var seenBody []byte
	up := newStub(t, func(w http.ResponseWriter, r *http.Request) {
		seen = r
		seenBody, _ = io.ReadAll(r.Body)
		h := w.Header()
		h["Date"] = nil // no Date, no Content-Type: the proxy must not add them
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		h.Set("Content-Encoding", "gzip")
		h.Set("Cache-Control", "no-store")
		h.Set("Connection", "X-Hop")
		h.Set("X-Hop", "dropped")
		w.WriteHeader(418)
		w.Write(payload)
	})
	px := startProxy(t, up.URL+"/base/", 1, "")
	req, _ := http.NewRequest("POST", px.URL+"/v1_0/a%2Fb/c?q=%20x&q=y", bytes.NewReader([]byte("hello")))
	req.Header["User-Agent"] = nil // send none
	req.Header.Set("X-Reference-Id", "abc")
	req.Header.Set("Ocp-Apim-Subscription-Key", "k")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()

	if seen.Method != "POST" || seen.RequestURI != "/base/v1_0/a%2Fb/c?q=%20x&q=y" || string(seenBody) != "hello" {
		t.Errorf("upstream saw %s %s %q", seen.Method, seen.RequestURI, seenBody)
	}
	if _, ok := seen.Header["User-Agent"]; ok {
		t.Errorf("proxy added User-Agent %q", seen.Header.Get("User-Agent"))
	}
	if seen.Header.Get("X-Reference-Id") != "abc" || seen.Header.Get("Ocp-Apim-Subscription-Key") != "k" {
		t.Errorf("headers lost: %v", seen.Header)
	}
	for _, k := range []string{"X-Forwarded-For", "Via", "Accept-Encoding"} {
		if _, ok := seen.Header[k]; ok {
			t.Errorf("proxy added %s", k)
		}
	}
	if res.StatusCode != 418 || !bytes.Equal(body, payload) {
		t.Errorf("status %d, body %d bytes equal=%v", res.StatusCode, len(body), bytes.Equal(body, payload))
	}
	for _, k := range []string{"Date", "Content-Type", "X-Hop"} {
		if _, ok := res.Header[k]; ok {
			t.Errorf("answer has %s: %q", k, res.Header[k])
		}
	}
	if !reflect.DeepEqual(res.Header["Set-Cookie"], []string{"a=1", "b=2"}) || res.Header.Get("Content-Encoding") != "gzip" ||
		res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("answer headers %v", res.Header)
	}
}

// ---- repeatability ----

func runScript(t *testing.T, seed uint64, conditions string) (outcomes []string, log []string) {
	up := newStub(t, nil)
	px := startProxy(t, up.URL, seed, conditions)
	paths := []struct{ m, p string }{
		{"POST", "/collection/v1_0/requesttopay"},
		{"GET", "/collection/v1_0/requesttopay/abc"},
		{"POST", "/collection/v1_0/bc-authorize"},
		{"GET", "/remittance/v1_0/account/balance"},
		{"POST", "/collection/token/"},
	}
	for i := 0; i < 40; i++ {
		c := paths[i%len(paths)]
		res, body, err := do(t, c.m, px.URL+c.p, "", nil)
		switch {
		case err != nil:
			outcomes = append(outcomes, "cut")
		default:
			outcomes = append(outcomes, fmt.Sprintf("%d %s", res.StatusCode, body))
		}
	}
	return outcomes, conditionsOf(px.Log.entries(t))
}

func TestRepeatableBySeed(t *testing.T) {
	const conds = "internal-error=0.3,unavailable=0.15,cut-before=0.1,cut-after=0.1,latency=0.05"
	o1, l1 := runScript(t, 7, conds)
	o2, l2 := runScript(t, 7, conds)
	_, l3 := runScript(t, 8, conds)
	if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(l1, l2) {
		t.Errorf("same seed, different weather:\n%q\n%q", l1, l2)
	}
	if reflect.DeepEqual(l1, l3) {
		t.Errorf("seeds 7 and 8 gave the same weather")
	}
	seen := map[string]bool{}
	for _, e := range l1 {
		seen[strings.Fields(e)[0]] = true
	}
	for _, c := range []string{CondInternalError, CondUnavailable, CondCutBefore, CondCutAfter} {
		if !seen[c] {
			t.Errorf("seed 7 never applied %s in 40 requests: %q", c, l1)
		}
	}
	for _, e := range l1 {
		f := strings.Fields(e)
		if f[0] == CondInternalError && !Allows500(f[1], f[2]) {
			t.Errorf("internal-error on %s %s", f[1], f[2])
		}
	}
	t.Logf("seed 7: %q", l1)
	t.Logf("seed 8: %q", l3)

	// Callbacks are drawn from their own stream: same seed, same plans.
	rates, _ := ParseConditions("all=0.5")
	a, b := NewWeather(9, rates, nil), NewWeather(9, rates, nil)
	for i := 0; i < 20; i++ {
		a.PlanRequest(true) // requests do not shift callback draws
		if pa, pb := a.PlanCallback(), b.PlanCallback(); pa != pb {
			t.Fatalf("callback %d: %+v vs %+v", i, pa, pb)
		}
	}
}

// ---- command line ----

func mainCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WEATHER_PROXY_AS_MAIN=1")
	return cmd
}

func TestCLIBadOptions(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--upstream", "ftp://x"},
		{"--upstream", "http://127.0.0.1:1", "--port", "abc"},
		{"--upstream", "http://127.0.0.1:1", "--port", "70000"},
		{"--upstream", "http://127.0.0.1:1", "--seed", "x"},
		{"--upstream", "http://127.0.0.1:1", "--conditions", "rain=0.5"},
		{"--upstream", "http://127.0.0.1:1", "--conditions", "latency=1.5"},
		{"--upstream", "http://127.0.0.1:1", "--conditions", "latency"},
		{"--upstream", "http://127.0.0.1:1", "--bogus"},
		{"--upstream", "http://127.0.0.1:1", "extra"},
		{"--upstream", "http://127.0.0.1:1", "--log", "/nonexistent-dir/x.log"},
	} {
		var stdout, stderr bytes.Buffer
		cmd := mainCmd(args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || lines[0] == "" || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want exit 2 and one line", args, code, stderr.String(), stdout.String())
		}
	}
}

func TestCLIListenLogAndSIGTERM(t *testing.T) {
	up := newStub(t, nil)
	logPath := filepath.Join(t.TempDir(), "weather.jsonl")
	cmd := mainCmd("--port", "0", "--upstream", up.URL, "--seed", "5", "--conditions", "all=0,unavailable=1", "--log", logPath)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	rd := bufio.NewReader(stdout)
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:\d+)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q", line)
	}
	res, _, err := do(t, "GET", m[1]+"/collection/v1_0/account/balance/EUR", "", nil)
	if err != nil || res.StatusCode != 503 {
		t.Fatalf("%v %v", err, res)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(rd)
	err = cmd.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v (stderr %q)", err, stderr.String())
	}
	if len(rest) != 0 {
		t.Errorf("more on stdout: %q", rest)
	}
	b, _ := os.ReadFile(logPath)
	var rec map[string]string
	if err := json.Unmarshal(bytes.TrimSpace(b), &rec); err != nil {
		t.Fatalf("log %q: %v", b, err)
	}
	if rec["condition"] != "unavailable" || rec["method"] != "GET" || rec["path"] != "/collection/v1_0/account/balance/EUR" || rec["time"] == "" || len(rec) != 4 {
		t.Errorf("log record %v", rec)
	}
}
