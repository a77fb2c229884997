package server

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// ---------- JSON bodies ----------

type jsonBody map[string]json.RawMessage

// parseObject reads the body as one JSON object. spec: unknown members are refused.
func (s *Server) parseObject(c *call, allowed ...string) (jsonBody, bool) {
	if !s.mediaTypeIs(c, "application/json") {
		s.badRequest(c, "", "Content-Type must be application/json")
		return nil, false
	}
	if len(bytes.TrimSpace(c.body)) == 0 {
		s.badRequest(c, "", "a JSON object body is required")
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(c.body))
	var m jsonBody
	if err := dec.Decode(&m); err != nil || m == nil {
		s.badRequest(c, "", "the body must be one JSON object")
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		s.badRequest(c, "", "the body must hold exactly one JSON object")
		return nil, false
	}
	if s.spec() {
		for k := range m {
			if !contains(allowed, k) {
				s.badRequest(c, "", "unknown member "+k)
				return nil, false
			}
		}
	}
	return m, true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// str reads a string member. present=false when absent (or null in the mtn-sandbox profile).
func (s *Server) str(m jsonBody, name string) (val string, present bool, ok bool) {
	raw, has := m[name]
	if !has {
		return "", false, true
	}
	t := bytes.TrimSpace(raw)
	if bytes.Equal(t, []byte("null")) {
		if s.spec() {
			return "", false, false
		}
		return "", false, true
	}
	if err := json.Unmarshal(t, &val); err != nil || len(t) == 0 || t[0] != '"' {
		return "", false, false
	}
	return val, true, true
}

// ---------- 14. POST /v1_0/apiuser ----------

func (s *Server) hCreateUser(c *call) {
	key := c.r.Header.Get("Ocp-Apim-Subscription-Key")
	if !s.gate(c, Products...) {
		return
	}
	id, ok := s.refID(c)
	if !ok {
		return
	}
	product := s.productOfKey(key)
	if product == "remittance" && s.dev(DevRemittanceUserAsColl) {
		product = "collection" // the key-to-product table has no remittance row
	}
	newUser := func(host string) *apiUser {
		return &apiUser{id: id, host: host, product: product, balance: s.openingBalance(product), created: c.now}
	}
	// deviation refused-api-user-still-created: a 400 still stores the user
	refused := func(host string) {
		if !s.dev(DevRefusedUserCreated) {
			return
		}
		s.lock()
		if _, dup := s.users[id]; !dup {
			s.users[id] = newUser(host)
		}
		s.unlock()
	}
	m, ok := s.parseObject(c, "providerCallbackHost")
	if !ok {
		refused("")
		return
	}
	host, present, ok := s.str(m, "providerCallbackHost")
	if !ok || !present || strings.TrimSpace(host) == "" {
		refused(host)
		s.badRequest(c, "", "providerCallbackHost (string) is required")
		return
	}
	if s.spec() && !validHostName(host) {
		refused(host)
		s.badRequest(c, "", "providerCallbackHost must be a host name or IP address, without scheme, port or path")
		return
	}
	s.lock()
	if old, dup := s.users[id]; dup {
		if s.dev(DevDupUserOverwritesHost) {
			old.host = host
		}
		s.unlock()
		s.fail(c, 409, "RESOURCE_ALREADY_EXIST")
		return
	}
	if s.dev(DevAPIUserStoredLate) {
		// the write is queued and lands after the 201 has been answered
		u := newUser(host)
		time.AfterFunc(apiUserStoreDelay, func() {
			s.lock()
			if _, dup := s.users[id]; !dup {
				s.users[id] = u
			}
			s.unlock()
		})
	} else {
		s.users[id] = newUser(host)
	}
	s.unlock()
	if s.spec() {
		c.w.Header().Set("Location", "/v1_0/apiuser/"+id)
	}
	s.empty(c, 201)
}

// pathUser checks a path id (UUID v4) and finds the user; ok=false means answered.
func (s *Server) pathUser(c *call) (*apiUser, bool) {
	id := c.p["id"]
	if !isUUIDv4(id) {
		s.badRequest(c, "", "the API user id in the path must be a UUID version 4")
		return nil, false
	}
	s.lock()
	u := s.users[strings.ToLower(id)]
	s.unlock()
	if u == nil {
		s.fail(c, 404, "RESOURCE_NOT_FOUND")
		return nil, false
	}
	return u, true
}

// ---------- 15. POST /v1_0/apiuser/{id}/apikey ----------

func (s *Server) hCreateKey(c *call) {
	if !s.gate(c, Products...) {
		return
	}
	u, ok := s.pathUser(c)
	if !ok {
		return
	}
	var key string
	if s.spec() {
		key = base64.StdEncoding.EncodeToString(randBytes(36)) // 48 characters, may hold + and /
	} else {
		key = hex.EncodeToString(randBytes(16)) // 32 hex characters, as observed
	}
	s.lock()
	if u.key != "" && s.dev(DevNewKeyResetsBalance) {
		u.balance = s.openingBalance(u.product) // the account is opened anew with the key
	}
	u.key = key // the earlier key stops working
	if s.on(CtlNewKeyRevokes) {
		for _, t := range s.tokens {
			if t.user == u.id && t.kind == "access" {
				t.revoked = true
			}
		}
	}
	s.unlock()
	if s.dev(DevAPIKeyTrailingNewline) {
		key += "\n" // the generator's line end is sent, not stored
	}
	s.writeJSON(c, 201, obj{{"apiKey", key}})
}

// ---------- 16. GET /v1_0/apiuser/{id} ----------

func (s *Server) hGetUser(c *call) {
	if !s.gate(c, Products...) {
		return
	}
	u, ok := s.pathUser(c)
	if !ok {
		return
	}
	o := obj{{"providerCallbackHost", u.host}, {"targetEnvironment", s.cfg.TargetEnvironment}}
	if s.spec() {
		o = append(o, kv{"product", u.product})
	}
	s.writeJSON(c, 200, o)
}

// ---------- 1. POST /{product}/token/ ----------

func (s *Server) hToken(c *call) {
	if !s.gate(c, c.product) {
		return
	}
	if len(c.body) > 0 && !s.dev(DevTokenBodyAccepted) {
		s.badRequest(c, "", "the token operation takes no request body")
		return
	}
	var u *apiUser
	if s.dev(DevTokenRenewedWithBearer) {
		if scheme, cred := splitAuth(c.r.Header.Get("Authorization")); scheme == "bearer" {
			u = s.userOfLiveToken(cred, c.product, c.now)
		}
	}
	if u == nil {
		if u = s.basicUser(c); u == nil {
			return
		}
	}
	if u.product != c.product {
		if s.spec() {
			s.unauthorized(c, "PRODUCT_MISMATCH", "Basic")
		} else {
			s.fail(c, 500, "NOT_ALLOWED_TARGET_ENVIRONMENT")
		}
		return
	}
	life := time.Duration(s.cfg.TokenLifetime) * time.Second
	if s.on(CtlTokenReissued) {
		if old := s.liveTokenOf(u, c.product, c.now, life/2); old != nil {
			s.noStore(c)
			s.writeJSON(c, 200, obj{
				{"access_token", s.signJWT(old, old.issued)},
				{"token_type", tokenTypeOf(s)},
				{"expires_in", int(old.expires.Sub(c.now) / time.Second)},
			})
			return
		}
	}
	rec := &tokenRec{jti: newUUID(), user: u.id, product: c.product, kind: "access", expires: c.now.Add(life), issued: c.now}
	jwt := s.signJWT(rec, c.now)
	s.lock()
	if s.dev(DevRenewedTokenDiesFirst) {
		// the new token silently shares the expiry of the user's oldest live token
		for _, t := range s.tokens {
			if t.user == u.id && t.product == c.product && t.kind == "access" && !t.revoked && c.now.Before(t.expires) && t.expires.Before(rec.expires) {
				rec.expires = t.expires
			}
		}
	}
	s.tokens[rec.jti] = rec
	s.unlock()
	s.noStore(c)
	s.writeJSON(c, 200, obj{
		{"access_token", jwt},
		{"token_type", tokenTypeOf(s)},
		{"expires_in", s.cfg.TokenLifetime},
	})
}

// userOfLiveToken (deviation token-renewed-with-bearer) finds the API user of a live
// access token of the product.
func (s *Server) userOfLiveToken(cred, product string, now time.Time) *apiUser {
	jti, ok := s.verifyJWT(cred)
	if !ok {
		return nil
	}
	s.lock()
	defer s.unlock()
	rec := s.tokens[jti]
	if rec == nil || rec.revoked || rec.kind != "access" || rec.product != product || !now.Before(rec.expires) {
		return nil
	}
	return s.users[rec.user]
}

func tokenTypeOf(s *Server) string {
	if s.spec() {
		return "BEARER"
	}
	return "access_token"
}

// liveTokenOf (control token-reissued-while-live) finds the API user's newest access token of
// the product that still has more than minLeft to live.
func (s *Server) liveTokenOf(u *apiUser, product string, now time.Time, minLeft time.Duration) *tokenRec {
	s.lock()
	defer s.unlock()
	var best *tokenRec
	for _, t := range s.tokens {
		if t.user != u.id || t.product != product || t.kind != "access" || t.revoked || t.issued.IsZero() {
			continue
		}
		if best == nil || t.issued.After(best.issued) {
			best = t
		}
	}
	if best == nil || best.expires.Sub(now) <= minLeft {
		return nil
	}
	return best
}
