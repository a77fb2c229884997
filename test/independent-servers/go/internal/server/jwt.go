package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// tokenRec is what the server remembers of every token it issued. A JWT is accepted only
// if its signature is right and its jti names a live record.
type tokenRec struct {
	jti     string
	user    string
	product string
	kind    string // "access" or "consent"
	msisdn  string // consent tokens: the account holder
	scope   string
	expires time.Time
	revoked bool

	issued time.Time // control token-reissued-while-live: the JWT's iat
	uses   int       // deviation access-token-use-limit
}

const jwtHeader = `{"alg":"HS256","typ":"at+jwt"}`

// signJWT builds an HS256 JWT (RFC 7519) with whole-second NumericDates.
func (s *Server) signJWT(rec *tokenRec, issued time.Time) string {
	claims := obj{
		{"iss", "momo-server"},
		{"sub", rec.user},
		{"aud", rec.product},
		{"iat", issued.Unix()},
		{"nbf", issued.Unix()},
		{"exp", rec.expires.Unix()},
		{"jti", rec.jti},
		{"token_use", rec.kind},
	}
	if rec.scope != "" {
		claims = append(claims, kv{"scope", rec.scope})
	}
	head := b64url([]byte(jwtHeader))
	body := b64url(mustMarshal(claims))
	sig := b64url(hmacSum(s.secret, head+"."+body))
	return head + "." + body + "." + sig
}

func hmacSum(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// verifyJWT checks the signature and returns the jti.
func (s *Server) verifyJWT(tok string) (string, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", false
	}
	if !hmac.Equal(sig, hmacSum(s.secret, parts[0]+"."+parts[1])) {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Jti string `json:"jti"`
	}
	if json.Unmarshal(payload, &c) != nil || c.Jti == "" {
		return "", false
	}
	return c.Jti, true
}
