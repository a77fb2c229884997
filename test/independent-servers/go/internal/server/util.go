package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ---------- ordered JSON ----------

type kv struct {
	K string
	V any
}

// obj is a JSON object that keeps its key order.
type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(p.K)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(p.V)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o obj) get(k string) (any, bool) {
	for _, p := range o {
		if p.K == k {
			return p.V, true
		}
	}
	return nil, false
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func mustMarshal(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// ---------- identifiers ----------

func randBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func newUUID() string {
	b := randBytes(16)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newFTID gives a financialTransactionId: 10 digits, the first not zero (like "1574559373").
func newFTID() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(9_000_000_000))
	return fmt.Sprintf("%d", n.Int64()+1_000_000_000)
}

var (
	reUUID   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	reUUIDv4 = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)
)

func isUUID(s string) bool   { return reUUID.MatchString(s) }
func isUUIDv4(s string) bool { return reUUIDv4.MatchString(s) }

// ---------- party identifiers ----------

var (
	reMSISDNSpec = regexp.MustCompile(`^[1-9][0-9]{6,14}$`)    // E.164, digits only
	reMSISDNPlus = regexp.MustCompile(`^\+?[1-9][0-9]{6,14}$`) // control msisdn-plus-accepted
	reMSISDNMTN  = regexp.MustCompile(`^\+?[0-9]{5,15}$`)      // lax: local forms too
	reEmail      = regexp.MustCompile(`^[A-Za-z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)
	reHostname   = regexp.MustCompile(`^(?i)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$`)
	reCurrency   = regexp.MustCompile(`^[A-Z]{3}$`)
	reLanguage   = regexp.MustCompile(`^[A-Za-z]{2,3}$`)
)

func (s *Server) validMSISDN(v string) bool {
	if s.dev(DevMSISDN15Refused) && len(strings.TrimPrefix(v, "+")) >= 15 {
		return false
	}
	if s.spec() {
		if s.on(CtlMSISDNPlus) {
			return reMSISDNPlus.MatchString(v)
		}
		return reMSISDNSpec.MatchString(v)
	}
	return reMSISDNMTN.MatchString(v)
}

func validEmail(v string) bool { return len(v) <= 254 && reEmail.MatchString(v) }

// testNumber returns 50..63 for the sandbox test numbers 46733123450..46733123463, else -1.
func testNumber(msisdn string) int {
	d := strings.TrimPrefix(msisdn, "+")
	if len(d) != 11 || !strings.HasPrefix(d, "467331234") {
		return -1
	}
	if d[9] < '0' || d[9] > '9' || d[10] < '0' || d[10] > '9' {
		return -1
	}
	n := int(d[9]-'0')*10 + int(d[10]-'0')
	if n >= 50 && n <= 63 {
		return n
	}
	return -1
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	if reHostname.MatchString(h) {
		return true
	}
	return net.ParseIP(strings.Trim(h, "[]")) != nil
}

// hostOf extracts the host from a registered providerCallbackHost (which may, in the lax
// profile, have been registered with a scheme or port).
func hostOf(registered string) string {
	r := strings.TrimSpace(registered)
	if strings.Contains(r, "://") {
		if u, err := url.Parse(r); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
	}
	if h, _, err := net.SplitHostPort(r); err == nil {
		return h
	}
	return strings.Trim(r, "[]")
}

func isLoopbackName(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// sameHost compares a callback URL host with the registered host: case-insensitive, and the
// loopback names (localhost, 127.0.0.1, ::1) count as one host.
func sameHost(urlHost, registered string) bool {
	a := strings.ToLower(strings.Trim(urlHost, "[]"))
	b := strings.ToLower(hostOf(registered))
	if a == b {
		return true
	}
	return isLoopbackName(a) && isLoopbackName(b)
}

// ---------- decimals ----------

// Amounts are kept as integers scaled by 10^18.
const amountScale = 18

var scaleFactor = new(big.Int).Exp(big.NewInt(10), big.NewInt(amountScale), nil)

var (
	reAmountSpec = regexp.MustCompile(`^(0|[1-9][0-9]{0,14})(\.[0-9]{1,2})?$`)
	reAmountMTN  = regexp.MustCompile(`^[0-9]{1,18}(\.[0-9]{1,18})?$`)
)

var errAmount = errors.New("amount must be a positive decimal string")

func (s *Server) parseAmount(v string) (*big.Int, error) {
	re := reAmountMTN
	if s.spec() {
		re = reAmountSpec
	}
	if s.dev(DevAmountTrailingZeros) && strings.Contains(v, ".") && strings.HasSuffix(v, "0") {
		return nil, errors.New("amount must not end in a zero after the decimal point")
	}
	if !re.MatchString(v) {
		if s.spec() {
			return nil, errors.New("amount must be a positive decimal string with at most 15 integer digits, no leading zeros and at most 2 decimals")
		}
		return nil, errAmount
	}
	intPart, frac, _ := strings.Cut(v, ".")
	frac = frac + strings.Repeat("0", amountScale-len(frac))
	n, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok || n.Sign() <= 0 {
		return nil, errors.New("amount must be greater than zero")
	}
	return n, nil
}

// formatAmount writes an exact decimal with trailing zeros removed, but at least minDec decimals.
func formatAmount(n *big.Int, minDec int) string {
	neg := n.Sign() < 0
	a := new(big.Int).Abs(n)
	q, r := new(big.Int).QuoRem(a, scaleFactor, new(big.Int))
	frac := fmt.Sprintf("%0*s", amountScale, r.String())
	frac = strings.TrimRight(frac, "0")
	for len(frac) < minDec {
		frac += "0"
	}
	out := q.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

func units(whole int64) *big.Int { return new(big.Int).Mul(big.NewInt(whole), scaleFactor) }

// ---------- misc ----------

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func hmacHex(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
