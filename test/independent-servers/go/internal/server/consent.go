package server

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const cibaGrant = "urn:openid:params:grant-type:ciba"

// Scopes offered (spec §5.7 leaves them open; these are the ones the notes saw).
var offeredScopes = []string{"openid", "profile", "all_info"}

type authReq struct {
	id          string
	user        string
	product     string
	msisdn      string
	scope       string
	accessType  string
	validity    time.Duration
	expires     time.Time
	decision    string // "", "approved", "denied"
	decideAt    time.Time
	interval    int
	lastPoll    time.Time
	redeemed    bool
	grant       *grant
	callbackURL string

	deniedReported bool // deviation denied-consent-granted-on-repoll
}

type grant struct {
	refresh string
	user    string
	product string
	msisdn  string
	scope   string
	expires time.Time
	revoked bool
	tokens  []string
}

var reLoginHint = regexp.MustCompile(`^ID:(.+)/MSISDN$`)

// parseForm reads a form body; parameters may not repeat (RFC 6749 §3.2).
func (s *Server) parseForm(c *call) (url.Values, string) {
	if !s.mediaTypeIs(c, "application/x-www-form-urlencoded") {
		return nil, "Content-Type must be application/x-www-form-urlencoded"
	}
	form, err := url.ParseQuery(string(c.body))
	if s.dev(DevFormNotDecoded) {
		form, err = url.Values{}, nil // names and values taken raw, not percent-decoded
		for _, pair := range strings.Split(string(c.body), "&") {
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			form[k] = append(form[k], v)
		}
	}
	if err != nil {
		return nil, "the form body is malformed"
	}
	for k, v := range form {
		if len(v) > 1 {
			return nil, "parameter " + k + " is repeated"
		}
	}
	return form, ""
}

// ---------- 7. bc-authorize ----------

func (s *Server) hBCAuthorize(c *call) {
	if !s.business(c, "access") {
		return
	}
	form, msg := s.parseForm(c)
	if form == nil {
		s.badRequest(c, "", msg)
		return
	}
	m := reLoginHint.FindStringSubmatch(form.Get("login_hint"))
	msisdn := ""
	if m != nil {
		msisdn = m[1]
	}
	if (m == nil || !s.validMSISDN(m[1])) && !s.dev(DevLoginHintNotChecked) {
		s.badRequest(c, "", "login_hint must be ID:<msisdn>/MSISDN")
		return
	}
	scopeParam := strings.TrimSpace(form.Get("scope"))
	if scopeParam == "" {
		s.badRequest(c, "MISSING_SCOPE_INSTRUCTION", "scope is required")
		return
	}
	scopes := strings.Fields(scopeParam)
	for _, sc := range scopes {
		if !contains(offeredScopes, sc) {
			if s.dev(DevRefusedConsentKept) {
				// the request was stored before its scopes were checked
				cb := s.quietCallbackURL(c)
				s.startConsent(s.newAuthReq(c, msisdn, scopes, "offline", s.tm.consentValidity, cb), c.now)
			}
			s.badRequest(c, "UNSUPPORTED_SCOPE", "scope "+sc+" is not offered (offered: openid, profile, all_info)")
			return
		}
	}
	accessType := form.Get("access_type")
	if accessType != "" && accessType != "online" && accessType != "offline" {
		s.badRequest(c, "", "access_type must be online or offline")
		return
	}
	if accessType == "" {
		accessType = "offline"
	}
	validity := s.tm.consentValidity
	if v := form.Get("consent_valid_in"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 315360000 || strings.TrimLeft(v, "0123456789") != "" {
			s.badRequest(c, "", "consent_valid_in must be a whole number of seconds between 1 and 315360000")
			return
		}
		validity = time.Duration(n) * time.Second
	}
	cb, ok := s.callbackURL(c)
	if !ok {
		return
	}
	ar := s.newAuthReq(c, msisdn, scopes, accessType, validity, cb)
	s.startConsent(ar, c.now)
	s.writeJSON(c, 200, obj{{"auth_req_id", ar.id}, {"interval", ar.interval}, {"expires_in", int(s.tm.authReqLife / time.Second)}})
}

func (s *Server) newAuthReq(c *call, msisdn string, scopes []string, accessType string, validity time.Duration, cb string) *authReq {
	return &authReq{
		id: newUUID(), user: c.user.id, product: c.product, msisdn: msisdn,
		scope: strings.Join(scopes, " "), accessType: accessType, validity: validity,
		expires: c.now.Add(s.tm.authReqLife), interval: s.tm.consentInterval, callbackURL: cb,
	}
}

// startConsent stores a consent request, lets the account holder decide (by test number)
// and schedules the ping callback.
func (s *Server) startConsent(ar *authReq, now time.Time) {
	msisdn, cb := ar.msisdn, ar.callbackURL
	switch testNumber(msisdn) {
	case 50, 51:
		ar.decision, ar.decideAt = "denied", now.Add(s.tm.consentApproval)
	case 52, 53:
		// the holder never answers: the request expires
	case 54:
		ar.decision, ar.decideAt = "approved", now.Add(s.cfg.DelayedApproval)
	default:
		ar.decision, ar.decideAt = "approved", now.Add(s.tm.consentApproval)
	}
	s.lock()
	s.reqs[ar.id] = ar
	s.unlock()
	if ar.decision != "" && cb != "" && ar.decideAt.Before(ar.expires) && !(ar.decision == "denied" && s.dev(DevConsentDenialNoCallback)) {
		time.AfterFunc(time.Until(ar.decideAt), func() {
			select {
			case <-s.closed:
				return
			default:
			}
			s.lock()
			key := ""
			if u := s.users[ar.user]; u != nil {
				key = u.key
			}
			// CIBA ping mode: the client is told the request is decided and then polls.
			s.outbox = append(s.outbox, callbackJob{url: cb, method: "POST", body: mustMarshal(obj{{"auth_req_id", ar.id}}), key: key})
			s.unlock()
		})
	}
}

// ---------- 11. consent token (CIBA grant and refresh) ----------

func (s *Server) oauthError(c *call, code string) {
	s.noStore(c)
	s.writeJSON(c, 400, obj{{"error", code}})
}

func (s *Server) hOAuthToken(c *call) {
	// The consent flow spans products (bc-authorize and userinfo are collection operations,
	// this one is under disbursement): either product's key is taken here.
	if !s.gate(c, collDisb...) {
		return
	}
	c.oauthFail500 = s.dev(DevOAuthFailure500)
	u := s.basicUser(c)
	if u == nil || !s.targetEnv(c) {
		return
	}
	form, _ := s.parseForm(c)
	if form == nil {
		s.oauthError(c, "invalid_request")
		return
	}
	switch form.Get("grant_type") {
	case "":
		s.oauthError(c, "invalid_request")
	case cibaGrant:
		s.cibaGrant(c, u, form.Get("auth_req_id"))
	case "refresh_token":
		s.refreshGrant(c, u, form.Get("refresh_token"), form)
	default:
		s.oauthError(c, "unsupported_grant_type")
	}
}

func (s *Server) cibaGrant(c *call, u *apiUser, id string) {
	if id == "" {
		s.oauthError(c, "invalid_request")
		return
	}
	s.lock()
	ar := s.reqs[strings.ToLower(id)]
	if ar == nil || ar.user != u.id {
		s.unlock()
		s.oauthError(c, "invalid_grant")
		return
	}
	if ar.redeemed {
		if s.on(CtlReplayRevokes) && ar.grant != nil {
			ar.grant.revoked = true
			for _, j := range ar.grant.tokens {
				if t := s.tokens[j]; t != nil {
					t.revoked = true
				}
			}
		}
		s.unlock()
		s.oauthError(c, "invalid_grant")
		return
	}
	if !c.now.Before(ar.expires) && !s.dev(DevAuthReqExpiryIgnored) {
		s.unlock()
		s.oauthError(c, "expired_token")
		return
	}
	if s.on(CtlSlowDown) && !ar.lastPoll.IsZero() && c.now.Sub(ar.lastPoll) < time.Duration(ar.interval)*time.Second {
		ar.lastPoll = c.now
		ar.interval += s.tm.slowDownStep
		s.unlock()
		s.oauthError(c, "slow_down")
		return
	}
	ar.lastPoll = c.now
	if ar.decision == "" || c.now.Before(ar.decideAt) {
		s.unlock()
		s.oauthError(c, "authorization_pending")
		return
	}
	if ar.decision == "denied" && !(ar.deniedReported && s.dev(DevDeniedConsentRepoll)) {
		ar.deniedReported = true // the denial is "delivered" once, then the request looks fresh
		s.unlock()
		s.oauthError(c, "access_denied")
		return
	}
	ar.redeemed = true
	scope := ar.scope
	if s.dev(DevConsentScopeNarrowed) {
		scope = strings.Fields(scope)[0]
	}
	g := &grant{refresh: newUUID(), user: u.id, product: ar.product, msisdn: ar.msisdn, scope: scope, expires: c.now.Add(ar.validity)}
	ar.grant = g
	s.grants[g.refresh] = g
	resp := s.issueConsentTokenLocked(c, g, "consent")
	s.unlock()
	s.noStore(c)
	s.writeJSON(c, 200, resp)
}

func (s *Server) refreshGrant(c *call, u *apiUser, rt string, form url.Values) {
	if rt == "" {
		s.oauthError(c, "invalid_request")
		return
	}
	s.lock()
	g := s.grants[rt]
	if g == nil || (g.user != u.id && !s.dev(DevRefreshAnyUser)) || g.revoked || (!c.now.Before(g.expires) && !s.dev(DevRefreshAfterConsentEnds)) {
		s.unlock()
		s.oauthError(c, "invalid_grant")
		return
	}
	if s.dev(DevRefreshScopeFromReq) {
		g.scope = strings.Join(strings.Fields(form.Get("scope")), " ") // the request's scope, not the consent's
	}
	kind := "consent"
	if s.dev(DevRefreshIssuesAccess) {
		kind = "access"
	}
	resp := s.issueConsentTokenLocked(c, g, kind)
	s.unlock()
	s.noStore(c)
	s.writeJSON(c, 200, resp)
}

func (s *Server) issueConsentTokenLocked(c *call, g *grant, kind string) obj {
	rec := &tokenRec{jti: newUUID(), user: g.user, product: g.product, kind: kind, msisdn: g.msisdn, scope: g.scope, expires: c.now.Add(s.tm.consentTokenLife)}
	s.tokens[rec.jti] = rec
	g.tokens = append(g.tokens, rec.jti)
	left := int(g.expires.Sub(c.now) / time.Second)
	if left < 0 { // only with the deviation refresh-after-consent-ends
		left = 0
	}
	return obj{
		{"access_token", s.signJWT(rec, c.now)},
		{"token_type", "Bearer"},
		{"expires_in", int(s.tm.consentTokenLife / time.Second)},
		{"scope", g.scope},
		{"refresh_token", g.refresh},
		{"refresh_token_expired_in", left},
	}
}

// refreshAsBearer (deviation refresh-token-opens-userinfo) treats a live refresh token as a
// consent token of its grant.
func (s *Server) refreshAsBearer(cred, product string, now time.Time) (*tokenRec, *apiUser) {
	s.lock()
	defer s.unlock()
	g := s.grants[cred]
	if g == nil || g.revoked || g.product != product || !now.Before(g.expires) {
		return nil, nil
	}
	u := s.users[g.user]
	if u == nil {
		return nil, nil
	}
	return &tokenRec{jti: "refresh:" + g.refresh, user: g.user, product: g.product, kind: "consent", msisdn: g.msisdn, scope: g.scope, expires: g.expires}, u
}

// ---------- 6. userinfo with consent ----------

func (s *Server) hUserInfo(c *call) {
	if !s.business(c, "consent") {
		return
	}
	if s.dev(DevConsentTokenSingleUse) {
		s.lock()
		c.tok.revoked = true // spent by its first use
		s.unlock()
	}
	s.writeJSON(c, 200, s.userInfoRecord(c.tok.msisdn))
}
