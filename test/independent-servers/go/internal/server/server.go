package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxBody is the largest request body accepted (1 MiB).
const MaxBody = 1 << 20

type apiUser struct {
	id      string
	host    string
	product string
	key     string // the current API key ("" until one is created)
	balance *big.Int
	created time.Time

	// read only by deviations
	lastNotified    time.Time // the user's latest successful delivery notification
	lastCallbackURL string    // the X-Callback-Url of the user's latest creation
	fundsRefused    bool      // a deposit or refund of the user ended NOT_ENOUGH_FUNDS
	sharedPayer     *party    // deviation payer-overwritten-by-next-payment
}

// Server holds all state in memory.
type Server struct {
	cfg Config
	tm  timings

	mu        sync.Mutex
	users     map[string]*apiUser
	tokens    map[string]*tokenRec
	txs       map[string]map[string]*tx // kind -> reference id -> transaction
	reqs      map[string]*authReq       // auth_req_id -> consent request
	grants    map[string]*grant         // refresh token -> consent grant
	outbox    []callbackJob
	cbURLs    map[string]bool           // deviation callback-dedup-by-url: URLs already called back
	authCache map[string]authCacheEntry // deviation token-cache-key-truncated
	secret    []byte
	client    *http.Client
	closed    chan struct{}
	closeOne  sync.Once
	wg        sync.WaitGroup
	httpSrv   *http.Server
	logger    *log.Logger
}

// New builds a server; cfg must be valid.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Controls == nil {
		cfg.Controls = map[string]bool{}
	}
	if cfg.Deviations == nil {
		cfg.Deviations = map[string]bool{}
	}
	s := &Server{
		cfg:       cfg,
		tm:        defaultTimings(cfg),
		users:     map[string]*apiUser{},
		tokens:    map[string]*tokenRec{},
		txs:       map[string]map[string]*tx{kRTP: {}, kDeposit: {}, kRefund: {}},
		reqs:      map[string]*authReq{},
		grants:    map[string]*grant{},
		cbURLs:    map[string]bool{},
		authCache: map[string]authCacheEntry{},
		secret:    randBytes(32),
		closed:    make(chan struct{}),
		logger:    log.New(io.Discard, "", 0),
	}
	s.client = &http.Client{
		Timeout: s.tm.callbackTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return s, nil
}

// SetLogger sends diagnostics (never needed for operation) to l.
func (s *Server) SetLogger(l *log.Logger) { s.logger = l }

// Serve serves on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.httpSrv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	err := s.httpSrv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the listener, pending timers' callbacks and callback deliveries.
func (s *Server) Close() {
	s.closeOne.Do(func() {
		close(s.closed)
		if s.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.httpSrv.Shutdown(ctx)
			cancel()
		}
	})
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
}

func (s *Server) spec() bool         { return s.cfg.Profile == ProfileSpec }
func (s *Server) on(ctl string) bool { return s.cfg.Controls[ctl] }

// lock / unlock: unlock also sends the callbacks queued while the lock was held.
func (s *Server) lock() { s.mu.Lock() }
func (s *Server) unlock() {
	jobs := s.outbox
	s.outbox = nil
	s.mu.Unlock()
	for _, j := range jobs {
		s.deliver(j)
	}
}

// ---------- request plumbing ----------

type call struct {
	w       http.ResponseWriter
	r       *http.Request
	body    []byte
	p       map[string]string
	product string
	now     time.Time
	user    *apiUser
	tok     *tokenRec

	authAsCode bool // deviation basic-info-401-code-message: 401 as {code,message}

	allowExpired bool // deviation basic-info-accepts-expired-token
	oauthFail500 bool // deviation oauth-token-failure-500
}

type route struct {
	method   string
	pattern  []string // literal segments, "{name}" parameters, "{product}" one of products
	products []string
	handler  func(*Server, *call)
}

var coll = []string{"collection"}
var disb = []string{"disbursement"}
var collDisb = []string{"collection", "disbursement"}
var allProducts = Products

var routes = []route{
	// sandbox provisioning
	{"POST", []string{"v1_0", "apiuser"}, nil, (*Server).hCreateUser},
	{"POST", []string{"v1_0", "apiuser", "{id}", "apikey"}, nil, (*Server).hCreateKey},
	{"GET", []string{"v1_0", "apiuser", "{id}"}, nil, (*Server).hGetUser},
	// access tokens (collection in the spec; disbursement and remittance per the notes)
	{"POST", []string{"{product}", "token"}, allProducts, (*Server).hToken},
	// consent (CIBA) token
	{"POST", []string{"{product}", "oauth2", "token"}, collDisb, (*Server).hOAuthToken},
	{"GET", []string{"{product}", "oauth2", "v1_0", "userinfo"}, collDisb, (*Server).hUserInfo},
	{"POST", []string{"{product}", "v1_0", "bc-authorize"}, collDisb, (*Server).hBCAuthorize},
	// transactions
	{"POST", []string{"collection", "v1_0", "requesttopay"}, coll, func(s *Server, c *call) { s.hCreateTx(c, kRTP) }},
	{"GET", []string{"collection", "v1_0", "requesttopay", "{id}"}, coll, func(s *Server, c *call) { s.hGetTx(c, kRTP) }},
	{"POST", []string{"collection", "v1_0", "requesttopay", "{id}", "deliverynotification"}, coll, (*Server).hDeliveryNotification},
	{"POST", []string{"disbursement", "v1_0", "deposit"}, disb, func(s *Server, c *call) { s.hCreateTx(c, kDeposit) }},
	{"GET", []string{"disbursement", "v1_0", "deposit", "{id}"}, disb, func(s *Server, c *call) { s.hGetTx(c, kDeposit) }},
	{"POST", []string{"disbursement", "v1_0", "refund"}, disb, func(s *Server, c *call) { s.hCreateTx(c, kRefund) }},
	{"GET", []string{"disbursement", "v1_0", "refund", "{id}"}, disb, func(s *Server, c *call) { s.hGetTx(c, kRefund) }},
	// account information
	{"GET", []string{"{product}", "v1_0", "account", "balance", "{currency}"}, allProducts, (*Server).hBalance},
	{"GET", []string{"{product}", "v1_0", "account", "balance"}, allProducts, (*Server).hBalance},
	{"GET", []string{"{product}", "v1_0", "accountholder", "msisdn", "{msisdn}", "basicuserinfo"}, allProducts, (*Server).hBasicUserInfo},
	{"GET", []string{"{product}", "v1_0", "accountholder", "{type}", "{holder}", "active"}, allProducts, (*Server).hActive},
}

func matchRoute(rt route, method string, segs []string) (map[string]string, string, bool) {
	if rt.method != method || len(rt.pattern) != len(segs) {
		return nil, "", false
	}
	p := map[string]string{}
	product := ""
	for i, pat := range rt.pattern {
		seg := segs[i]
		switch {
		case pat == "{product}":
			ok := false
			for _, pr := range rt.products {
				if seg == pr {
					ok = true
				}
			}
			if !ok {
				return nil, "", false
			}
			product = seg
		case strings.HasPrefix(pat, "{"):
			if seg == "" {
				return nil, "", false
			}
			p[strings.Trim(pat, "{}")] = seg
		default:
			if seg != pat {
				return nil, "", false
			}
		}
	}
	if product == "" && len(rt.products) == 1 {
		product = rt.products[0]
	}
	return p, product, true
}

// ServeHTTP routes every request; it never lets a panic escape.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{w: w, r: r, now: time.Now()}
	defer func() {
		if rec := recover(); rec != nil {
			s.logger.Printf("panic on %s %s: %v", r.Method, r.URL.Path, rec)
			s.fail(c, 500, "INTERNAL_PROCESSING_ERROR")
		}
	}()
	if r.ContentLength > MaxBody {
		s.tooLarge(c)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.tooLarge(c)
			return
		}
		s.badRequest(c, "", "the request body could not be read")
		return
	}
	c.body = body

	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, rt := range routes {
		if p, product, ok := matchRoute(rt, r.Method, segs); ok {
			c.p = p
			c.product = product
			rt.handler(s, c)
			return
		}
	}
	s.fail(c, 404, "NOT_FOUND")
}

// ---------- responses ----------

func (s *Server) jsonType() string {
	if s.spec() {
		return "application/json; charset=utf-8"
	}
	return "application/json"
}

func (s *Server) writeBody(c *call, status int, ctype string, body []byte) {
	h := c.w.Header()
	if len(body) > 0 {
		h.Set("Content-Type", ctype)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.w.WriteHeader(status)
	if len(body) > 0 {
		_, _ = c.w.Write(body)
	}
}

func (s *Server) writeJSON(c *call, status int, v any) {
	s.writeBody(c, status, s.jsonType(), mustMarshal(v))
}

func (s *Server) empty(c *call, status int) { s.writeBody(c, status, "", nil) }

// fail writes the business error record {code, message}.
func (s *Server) fail(c *call, status int, code string) {
	s.writeJSON(c, status, obj{{"code", code}, {"message", s.message(code)}})
}

// badRequest writes a 400. spec: an RFC 9457 problem document (with the set-A code as an
// extension member when one applies). mtn-sandbox: an empty body, or {code,message} when a
// code applies.
func (s *Server) badRequest(c *call, code, detail string) {
	if s.badRequestText(c, code, detail) {
		return
	}
	if s.spec() {
		o := obj{{"type", "about:blank"}, {"title", "Bad Request"}, {"status", 400}, {"detail", detail}}
		if code != "" {
			o = append(o, kv{"code", code})
		}
		s.writeBody(c, 400, "application/problem+json", mustMarshal(o))
		return
	}
	if code == "" {
		s.empty(c, 400)
		return
	}
	s.fail(c, 400, code)
}

func (s *Server) tooLarge(c *call) {
	c.w.Header().Set("Connection", "close")
	if s.spec() {
		o := obj{{"type", "about:blank"}, {"title", "Content Too Large"}, {"status", 413}, {"detail", fmt.Sprintf("request bodies are limited to %d bytes", MaxBody)}}
		s.writeBody(c, 413, "application/problem+json", mustMarshal(o))
		return
	}
	s.empty(c, 413)
}

// unauthorized writes 401 {error}. spec: with WWW-Authenticate (RFC 9110 §11.6.1).
func (s *Server) unauthorized(c *call, code, scheme string) {
	if c.authAsCode {
		s.fail(c, 401, code)
		return
	}
	if s.spec() {
		c.w.Header().Set("WWW-Authenticate", scheme+` realm="momo"`)
	}
	s.writeJSON(c, 401, obj{{"error", code}})
}

func (s *Server) noStore(c *call) { c.w.Header().Set("Cache-Control", "no-store") }

var specMessages = map[string]string{
	"RESOURCE_ALREADY_EXIST":         "This reference id has been used before; choose a new UUID v4.",
	"RESOURCE_NOT_FOUND":             "Nothing with this id belongs to the caller.",
	"NOT_FOUND":                      "No operation is served at this path with this method.",
	"INVALID_CALLBACK_URL_HOST":      "The callback URL's host differs from the API user's provider callback host.",
	"INVALID_CURRENCY":               "This service only takes its configured currency.",
	"NOT_ALLOWED_TARGET_ENVIRONMENT": "X-Target-Environment is missing or names an environment this service does not route to.",
	"INTERNAL_PROCESSING_ERROR":      "The service failed while processing the request.",
	"TRANSACTION_NOT_COMPLETED":      "The transaction is not successfully completed.",
	"EXPIRED":                        "The delivery-notification window of this transaction has closed.",
	"NOT_ALLOWED":                    "The operation is not allowed now.",
	"PAYER_NOT_FOUND":                "The payer is not known to the service.",
	"PAYEE_NOT_FOUND":                "The payee is not known to the service.",
	"PAYEE_NOT_ALLOWED_TO_RECEIVE":   "The payee may not receive this transfer.",
	"SERVICE_UNAVAILABLE":            "The service is unavailable at the moment.",
	"UNSUPPORTED_SCOPE":              "A requested scope is not offered.",
	"MISSING_SCOPE_INSTRUCTION":      "The scope parameter is missing.",
}

var mtnMessages = map[string]string{
	"RESOURCE_ALREADY_EXIST":         "Duplicated reference id. Creation of resource failed.",
	"RESOURCE_NOT_FOUND":             "Requested resource was not found.",
	"NOT_FOUND":                      "Resource not found.",
	"INVALID_CALLBACK_URL_HOST":      "Callback URL does not match the configured value.",
	"INVALID_CURRENCY":               "Currency not supported.",
	"NOT_ALLOWED_TARGET_ENVIRONMENT": "Access to target environment is forbidden.",
	"INTERNAL_PROCESSING_ERROR":      "An internal error occurred while processing.",
	"TRANSACTION_NOT_COMPLETED":      "Transaction is not completed.",
	"EXPIRED":                        "Delivery notification opportunity has expired.",
	"NOT_ALLOWED":                    "Authorization failed. Insufficient permissions.",
	"SERVICE_UNAVAILABLE":            "Service is unavailable.",
	"UNSUPPORTED_SCOPE":              "Unsupported scope.",
	"MISSING_SCOPE_INSTRUCTION":      "Missing scope.",
}

func (s *Server) message(code string) string {
	m := specMessages
	if !s.spec() {
		m = mtnMessages
	}
	if v, ok := m[code]; ok {
		return v
	}
	if v, ok := specMessages[code]; ok {
		return v
	}
	return strings.ToLower(strings.ReplaceAll(code, "_", " "))
}

// ---------- gateway, authorization, routing checks ----------

const gatewayMessage = "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."

// gate checks Ocp-Apim-Subscription-Key against the keys of the given products.
func (s *Server) gate(c *call, products ...string) bool {
	key := c.r.Header.Get("Ocp-Apim-Subscription-Key")
	if key != "" {
		for _, p := range products {
			if s.cfg.Keys[p] == key {
				return true
			}
		}
	}
	if s.spec() {
		s.unauthorized(c, "SUBSCRIPTION_KEY_INVALID", "Bearer")
	} else {
		s.writeJSON(c, 401, obj{{"statusCode", 401}, {"message", gatewayMessage}})
	}
	return false
}

// productOfKey gives the product a subscription key belongs to.
func (s *Server) productOfKey(key string) string {
	for _, p := range Products {
		if s.cfg.Keys[p] == key {
			return p
		}
	}
	return ""
}

func splitAuth(h string) (scheme, cred string) {
	h = strings.TrimSpace(h)
	scheme, cred, _ = strings.Cut(h, " ")
	return strings.ToLower(scheme), strings.TrimSpace(cred)
}

// basicUser authenticates HTTP Basic API-user credentials. On failure it answers and
// returns nil.
func (s *Server) basicUser(c *call) *apiUser {
	h := c.r.Header.Get("Authorization")
	if h == "" {
		s.unauthorized(c, "AUTHORIZATION_MISSING", "Basic")
		return nil
	}
	scheme, cred := splitAuth(h)
	if scheme != "basic" {
		s.unauthorized(c, "AUTHORIZATION_SCHEME_UNSUPPORTED", "Basic")
		return nil
	}
	bad := func() *apiUser {
		if s.spec() && !c.oauthFail500 {
			s.unauthorized(c, "CREDENTIALS_INVALID", "Basic")
		} else {
			s.writeJSON(c, 500, obj{{"error", "login_failed"}})
		}
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return bad()
	}
	id, key, ok := strings.Cut(string(raw), ":")
	if !ok {
		return bad()
	}
	s.lock()
	u := s.users[strings.ToLower(id)]
	okKey := u != nil && u.key != "" && (u.key == key || (s.dev(DevAPIKeyPrefixCompared) && len(key) >= 16 && len(u.key) >= 16 && key[:16] == u.key[:16]))
	s.unlock()
	if !okKey {
		return bad()
	}
	return u
}

// bearer authenticates a Bearer access token (kind "access") or consent token (kind
// "consent") for the product of the path.
func (s *Server) bearer(c *call, kind string) bool {
	h := c.r.Header.Get("Authorization")
	if h == "" {
		s.unauthorized(c, "AUTHORIZATION_MISSING", "Bearer")
		return false
	}
	scheme, cred := splitAuth(h)
	if scheme != "bearer" {
		s.unauthorized(c, "AUTHORIZATION_SCHEME_UNSUPPORTED", "Bearer")
		return false
	}
	if s.cachedBearer(c, cred, kind) {
		return true
	}
	jti, ok := s.verifyJWT(cred)
	if !ok && kind == "consent" && s.dev(DevRefreshOpensUserinfo) {
		if rec, u := s.refreshAsBearer(cred, c.product, c.now); rec != nil {
			c.tok, c.user = rec, u
			return true
		}
	}
	if !ok {
		s.unauthorized(c, "TOKEN_INVALID", "Bearer")
		return false
	}
	s.lock()
	rec := s.tokens[jti]
	var u *apiUser
	if rec != nil {
		u = s.users[rec.user]
	}
	s.unlock()
	switch {
	case rec == nil || rec.revoked || u == nil || rec.product != c.product:
		s.unauthorized(c, "TOKEN_INVALID", "Bearer")
		return false
	case !c.now.Before(rec.expires) && !c.allowExpired:
		s.unauthorized(c, "TOKEN_EXPIRED", "Bearer")
		return false
	case rec.kind != kind:
		if kind == "consent" {
			s.unauthorized(c, "CONSENT_REQUIRED", "Bearer")
		} else {
			s.unauthorized(c, "TOKEN_INVALID", "Bearer")
		}
		return false
	case s.wornOut(rec):
		s.unauthorized(c, "TOKEN_INVALID", "Bearer")
		return false
	}
	c.tok = rec
	c.user = u
	s.rememberBearer(c, cred)
	return true
}

// targetEnv: a missing or other X-Target-Environment gives 500 NOT_ALLOWED_TARGET_ENVIRONMENT.
func (s *Server) targetEnv(c *call) bool {
	if c.r.Header.Get("X-Target-Environment") != s.cfg.TargetEnvironment {
		s.fail(c, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT")
		return false
	}
	return true
}

// business: subscription key of the path's product, Bearer token, target environment.
func (s *Server) business(c *call, kind string) bool {
	return s.gate(c, c.product) && s.bearer(c, kind) && s.targetEnv(c)
}

// mediaTypeIs checks an optional Content-Type.
func (s *Server) mediaTypeIs(c *call, want string) bool {
	ct := c.r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	if s.dev(DevMediaTypeCaseSensitive) {
		raw, _, _ := strings.Cut(ct, ";")
		if strings.TrimSpace(raw) != want {
			return false
		}
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == want
}

// callbackURL validates X-Callback-Url; ok=false means an answer was written.
func (s *Server) callbackURL(c *call) (string, bool) {
	u, _, ok := s.checkCallbackURL(c, false)
	return u, ok
}

// checkCallbackURL validates X-Callback-Url. With deferHostRefusal a host mismatch is not
// answered but reported (hostRefused), for the deviation callback-host-refusal-still-creates.
func (s *Server) checkCallbackURL(c *call, deferHostRefusal bool) (cb string, hostRefused bool, ok bool) {
	raw := c.r.Header.Get("X-Callback-Url")
	if raw == "" {
		return "", false, true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		if s.dev(DevMalformedCallbackURL) {
			return "", false, true
		}
		s.badRequest(c, "", "X-Callback-Url must be an absolute http or https URL")
		return "", false, false
	}
	host := u.Hostname()
	if s.dev(DevCallbackPortRefused) {
		host = u.Host // host:port compared with the registered host
	}
	if !sameHost(host, c.user.host) {
		if deferHostRefusal {
			return "", true, true
		}
		s.fail(c, 500, "INVALID_CALLBACK_URL_HOST")
		return "", false, false
	}
	return raw, false, true
}

// refID reads and checks X-Reference-Id (UUID v4), lower-cased.
func (s *Server) refID(c *call) (string, bool) {
	id := c.r.Header.Get("X-Reference-Id")
	if id == "" {
		s.badRequest(c, "", "X-Reference-Id is required")
		return "", false
	}
	if !isUUIDv4(id) {
		s.badRequest(c, "", "X-Reference-Id must be a UUID version 4")
		return "", false
	}
	return strings.ToLower(id), true
}

var _ = bytes.MinRead
