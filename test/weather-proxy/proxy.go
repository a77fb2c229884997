package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// CallbackPrefix is the path under which the proxy receives callbacks;
	// the rest of the path is the original X-Callback-Url, base64url-encoded.
	CallbackPrefix = "/_weather/callback/"

	copyBufferSize  = 32 << 10         // one buffer per stream being copied
	maxCallbackBody = 1 << 20          // callbacks held (late / repeated) are bounded to this
	drainLimit      = 16 << 20         // at most this much of an answer is read and discarded
	deliveryTimeout = 30 * time.Second // for callback deliveries detached from the server's request
	internalErrBody = `{"code":"INTERNAL_PROCESSING_ERROR","message":"An internal error occurred while processing the request."}`
	unavailableBody = `{"statusCode":503,"message":"Service temporarily unavailable. Retry after 1 second."}`
)

// Proxy is the weather proxy: an http.Handler that forwards to one upstream.
type Proxy struct {
	upstream  *url.URL
	port      string // the proxy's own port, put into rewritten callback URLs
	weather   *Weather
	log       *EventLog
	transport http.RoundTripper
	baseCtx   context.Context // cancelled on shutdown
	errlog    *log.Logger
	bg        sync.WaitGroup // background (repeated) callback deliveries
}

func NewProxy(baseCtx context.Context, upstream *url.URL, port int, w *Weather, l *EventLog, errlog *log.Logger) *Proxy {
	if errlog == nil {
		errlog = log.New(io.Discard, "", 0)
	}
	return &Proxy{
		upstream: upstream,
		port:     strconv.Itoa(port),
		weather:  w,
		log:      l,
		baseCtx:  baseCtx,
		errlog:   errlog,
		transport: &http.Transport{
			Proxy:                 nil, // never route through an environment proxy
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			DisableCompression:    true, // pass bodies and Content-Encoding through untouched
			MaxIdleConns:          64,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: 0,
		},
	}
}

// Wait waits for background callback deliveries (bounded by deliveryTimeout
// and by baseCtx).
func (p *Proxy) Wait() { p.bg.Wait() }

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, CallbackPrefix) {
		p.serveCallback(w, r)
		return
	}
	plan := p.weather.PlanRequest(Allows500(r.Method, r.URL.Path))
	path := r.URL.EscapedPath()

	if plan.Latency > 0 {
		p.log.Applied(CondLatency, r.Method, path)
		if !sleep(plan.Latency, r.Context(), p.baseCtx) {
			abort()
		}
	}
	switch {
	case plan.CutBefore:
		p.log.Applied(CondCutBefore, r.Method, path)
		cut(w)
		return
	case plan.Unavailable:
		p.log.Applied(CondUnavailable, r.Method, path)
		writeOwn(w, http.StatusServiceUnavailable, unavailableBody, "1")
		return
	case plan.InternalError:
		p.log.Applied(CondInternalError, r.Method, path)
		writeOwn(w, http.StatusInternalServerError, internalErrBody, "")
		return
	}
	p.forward(w, r, plan.CutAfter)
}

// writeOwn writes an answer the proxy makes up (nothing was forwarded).
func writeOwn(w http.ResponseWriter, status int, body, retryAfter string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, cutAfter bool) {
	out := p.upstreamRequest(r)
	res, err := p.transport.RoundTrip(out)
	if err != nil {
		if r.Context().Err() == nil {
			// The upstream could not be reached or broke off: the client
			// gets what it would get talking to it directly, a broken
			// connection, rather than an answer the server never gave.
			p.errlog.Printf("upstream %s %s: %v", r.Method, r.URL.EscapedPath(), err)
		}
		cut(w)
		return
	}
	defer res.Body.Close()
	if cutAfter {
		// The server has acted and answered; the client never hears it.
		p.log.Applied(CondCutAfter, r.Method, r.URL.EscapedPath())
		io.Copy(io.Discard, io.LimitReader(res.Body, drainLimit))
		cut(w)
		return
	}
	if err := copyResponse(w, res); err != nil {
		abort()
	}
}

func (p *Proxy) upstreamRequest(r *http.Request) *http.Request {
	up := p.upstream
	u := &url.URL{
		Scheme:   up.Scheme,
		Host:     up.Host,
		Path:     strings.TrimSuffix(up.Path, "/") + r.URL.Path,
		RawPath:  strings.TrimSuffix(up.EscapedPath(), "/") + r.URL.EscapedPath(),
		RawQuery: r.URL.RawQuery,
	}
	if u.RawPath == u.Path {
		u.RawPath = ""
	}
	h := outboundHeader(r.Header)
	if vs, ok := h["X-Callback-Url"]; ok {
		nv := make([]string, len(vs))
		for i, v := range vs {
			nv[i] = p.RewriteCallbackURL(v)
		}
		h["X-Callback-Url"] = nv
	}
	out := &http.Request{
		Method:        r.Method,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Host:          u.Host,
		ContentLength: r.ContentLength,
		Body:          r.Body,
		Trailer:       r.Trailer,
	}
	if r.ContentLength == 0 {
		out.Body = http.NoBody
	}
	return out.WithContext(r.Context())
}

// ---- callbacks ----

// RewriteCallbackURL turns an X-Callback-Url value into one that points at
// the proxy: same scheme, user info, hostname, query and fragment; only the
// port (the proxy's) and the path (CallbackPrefix + the encoded original)
// change. Values that are not a clean absolute http URL are left alone, so
// the server judges exactly what the client sent.
func (p *Proxy) RewriteCallbackURL(v string) string {
	u, ok := cleanHTTPURL(v)
	if !ok {
		return v
	}
	n := *u
	n.Host = net.JoinHostPort(u.Hostname(), p.port)
	n.Path = CallbackPrefix + base64.RawURLEncoding.EncodeToString([]byte(v))
	n.RawPath = ""
	return n.String()
}

func cleanHTTPURL(v string) (*url.URL, bool) {
	if v == "" || len(v) > 4096 {
		return nil, false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(v) || !isHex(v[i+1]) || !isHex(v[i+2]) {
				return nil, false
			}
		default:
			return nil, false // space, control, non-ASCII, quotes, <>, \ ^ ` { | }
		}
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.Opaque != "" || u.Host == "" {
		return nil, false
	}
	host := u.Hostname()
	if host == "" || strings.ContainsAny(host, "%") {
		return nil, false
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return nil, false
		}
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, false
	}
	return u, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func decodeCallbackToken(tok string) (*url.URL, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, false
	}
	return cleanHTTPURL(string(b))
}

func (p *Proxy) serveCallback(w http.ResponseWriter, r *http.Request) {
	orig, ok := decodeCallbackToken(strings.TrimPrefix(r.URL.Path, CallbackPrefix))
	if !ok {
		http.Error(w, "weather-proxy: not a callback address this proxy issued", http.StatusNotFound)
		return
	}
	target := *orig
	target.RawQuery = r.URL.RawQuery // the query we handed out comes back here
	target.Fragment, target.RawFragment = "", ""
	path := target.EscapedPath()
	if path == "" {
		path = "/"
	}

	plan := p.weather.PlanCallback()

	// A callback that is held (late) or sent twice is read first, bounded,
	// so that its delivery does not depend on the server still waiting.
	var (
		body     io.Reader = r.Body
		length             = r.ContentLength
		held     []byte
		isHeld   bool
		deliverC = r.Context()
	)
	if plan.Late > 0 || plan.Repeated {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxCallbackBody+1))
		if err != nil {
			cut(w)
			return
		}
		if len(b) <= maxCallbackBody {
			held, isHeld = b, true
			body, length = bytes.NewReader(b), int64(len(b))
		} else {
			// Too large to hold: deliver once, streamed, still late if so drawn.
			body = io.MultiReader(bytes.NewReader(b), r.Body)
			plan.Repeated = false
		}
	}
	if isHeld {
		var cancel context.CancelFunc
		deliverC, cancel = context.WithTimeout(p.baseCtx, deliveryTimeout)
		defer cancel()
	}
	if plan.Repeated {
		p.log.Applied(CondCallbackRepeated, r.Method, path)
	}
	if plan.Late > 0 {
		p.log.Applied(CondCallbackLate, r.Method, path)
		if !sleep(plan.Late, deliverC, p.baseCtx) {
			abort()
		}
	}

	method, hdr := r.Method, outboundHeader(r.Header) // the repeat must not touch r after return
	res, err := p.deliver(deliverC, method, hdr.Clone(), &target, body, length)
	if err != nil {
		// The client could not be reached: the server sees a broken
		// connection, as it would calling the client directly.
		p.errlog.Printf("callback %s %s: %v", r.Method, path, err)
		cut(w)
		return
	}
	copyErr := copyResponse(w, res)
	res.Body.Close()

	if plan.Repeated {
		p.bg.Add(1)
		go func() {
			defer p.bg.Done()
			ctx, cancel := context.WithTimeout(p.baseCtx, deliveryTimeout)
			defer cancel()
			res, err := p.deliver(ctx, method, hdr, &target, bytes.NewReader(held), int64(len(held)))
			if err != nil {
				p.errlog.Printf("repeated callback %s %s: %v", method, path, err)
				return
			}
			io.Copy(io.Discard, io.LimitReader(res.Body, drainLimit))
			res.Body.Close()
		}()
	}
	if copyErr != nil {
		abort()
	}
}

func (p *Proxy) deliver(ctx context.Context, method string, hdr http.Header, target *url.URL, body io.Reader, length int64) (*http.Response, error) {
	t := *target
	req := &http.Request{
		Method:        method,
		URL:           &t,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		Host:          t.Host,
		ContentLength: length,
		Body:          io.NopCloser(body),
	}
	if length == 0 {
		req.Body = http.NoBody
	}
	return p.transport.RoundTrip(req.WithContext(ctx))
}

// ---- plumbing ----

// hopHeaders are the connection-specific fields of RFC 9110 §7.6.1 that a
// proxy must not forward; everything else passes through.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

func outboundHeader(in http.Header) http.Header {
	h := in.Clone()
	if h == nil {
		h = http.Header{}
	}
	removeHopHeaders(h)
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = nil // do not add Go's default User-Agent
	}
	return h
}

// copyResponse passes an answer through: status, end-to-end header fields
// and body, streamed through one fixed buffer. Header fields the answer did
// not have (Date, Content-Type) are not added.
func copyResponse(w http.ResponseWriter, res *http.Response) error {
	removeHopHeaders(res.Header)
	h := w.Header()
	for k, vv := range res.Header {
		h[k] = append([]string(nil), vv...)
	}
	if _, ok := res.Header["Date"]; !ok {
		h["Date"] = nil
	}
	if _, ok := res.Header["Content-Type"]; !ok {
		h["Content-Type"] = nil
	}
	for k := range res.Trailer {
		h.Add("Trailer", k)
	}
	w.WriteHeader(res.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, copyBufferSize)
	for {
		n, rerr := res.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			rc.Flush()
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	for k, vv := range res.Trailer {
		h[k] = append([]string(nil), vv...)
	}
	return nil
}

// cut closes the client connection without an answer.
func cut(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	abort()
}

// abort ends the handler without an answer (net/http closes the connection
// and writes nothing that was not already sent).
func abort() { panic(http.ErrAbortHandler) }

// sleep waits d, or returns false early if either context ends.
func sleep(d time.Duration, a, b context.Context) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.Done():
		return false
	case <-b.Done():
		return false
	}
}
