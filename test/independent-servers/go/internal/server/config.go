// Package server is an in-memory implementation of the Mobile-Money (MoMo) Open API
// described in momo-api-spec.md, with an "mtn-sandbox" profile that follows
// real-api-notes.md where the spec leaves a point open.
package server

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Profiles.
const (
	ProfileSpec = "spec"
	ProfileMTN  = "mtn-sandbox"
)

// Products in the order used when a subscription key is shared.
var Products = []string{"collection", "disbursement", "remittance"}

// Config is everything the command line can set.
type Config struct {
	Profile           string
	Keys              map[string]string // product -> subscription key
	TargetEnvironment string
	Currency          string
	TokenLifetime     int // seconds
	DelayedApproval   time.Duration
	PendingTimeout    time.Duration
	Controls          map[string]bool
	Deviations        map[string]bool // deliberate departures from the API (none by default)
}

// DefaultConfig gives the defaults of the command-line contract.
func DefaultConfig() Config {
	return Config{
		Profile: ProfileSpec,
		Keys: map[string]string{
			"collection":   "collection-key",
			"disbursement": "disbursement-key",
			"remittance":   "remittance-key",
		},
		TargetEnvironment: "sandbox",
		Currency:          "EUR",
		TokenLifetime:     3600,
		DelayedApproval:   25 * time.Second,
		PendingTimeout:    120 * time.Second,
		Controls:          map[string]bool{},
		Deviations:        map[string]bool{},
	}
}

// Validate checks a configuration and says what to fix.
func (c Config) Validate() error {
	if c.Profile != ProfileSpec && c.Profile != ProfileMTN {
		return fmt.Errorf("--profile must be spec or mtn-sandbox, not %q", c.Profile)
	}
	for _, p := range Products {
		if c.Keys[p] == "" {
			return fmt.Errorf("--keys needs a non-empty key for %s", p)
		}
	}
	names := make([]string, 0, len(c.Controls))
	for n, on := range c.Controls {
		if on {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		ctl, ok := LookupControl(n)
		if !ok {
			return fmt.Errorf("--control %q is unknown; --list-controls shows the names", n)
		}
		if !ctl.LegalIn(c.Profile) {
			return fmt.Errorf("--control %s is not legal in profile %s (legal in: %s)", n, c.Profile, strings.Join(ctl.Profiles, ", "))
		}
	}
	devs := make([]string, 0, len(c.Deviations))
	for n, on := range c.Deviations {
		if on {
			devs = append(devs, n)
		}
	}
	sort.Strings(devs)
	for _, n := range devs {
		if _, ok := LookupDeviation(n); !ok {
			return fmt.Errorf("--deviation %q is unknown; --list-deviations shows the names", n)
		}
	}
	return nil
}

// timings are this server's own choices for points the documents leave open.
// They are fixed for a run; the self-test shortens some of them.
type timings struct {
	ordinaryPayer    time.Duration // request to pay, ordinary payer answers (spec 2 s, mtn at once)
	ordinaryPayee    time.Duration // deposit / refund to an ordinary payee
	reject           time.Duration // …451 APPROVAL_REJECTED
	expire           time.Duration // …452 EXPIRED
	consentApproval  time.Duration // an ordinary account holder approves a consent
	consentInterval  int           // bc-authorize interval (s)
	authReqLife      time.Duration // bc-authorize expires_in
	consentTokenLife time.Duration // consent access token validity (spec: 3600 s by default)
	consentValidity  time.Duration // default refresh_token_expired_in
	notifWindow      time.Duration // delivery-notification window after completion
	notifCooldown    time.Duration // how long a 429 lasts after a successful notification
	callbackWaits    []time.Duration
	callbackTimeout  time.Duration
	slowDownStep     int           // seconds added to interval on slow_down (control consent-slow-down)
	disbRetention    time.Duration // deviation disbursement-records-expire: how long final deposits and refunds are kept
}

func defaultTimings(cfg Config) timings {
	t := timings{
		ordinaryPayer:    2 * time.Second,
		ordinaryPayee:    0,
		reject:           3 * time.Second,
		expire:           5 * time.Second,
		consentApproval:  1 * time.Second,
		consentInterval:  3,
		authReqLife:      180 * time.Second,
		consentTokenLife: 3600 * time.Second,
		consentValidity:  86400 * time.Second,
		notifWindow:      3600 * time.Second,
		notifCooldown:    60 * time.Second,
		callbackWaits:    []time.Duration{0, 500 * time.Millisecond, 2 * time.Second, 5 * time.Second},
		callbackTimeout:  3 * time.Second,
		slowDownStep:     5,
		disbRetention:    30 * time.Second,
	}
	if cfg.Profile == ProfileMTN {
		t.ordinaryPayer = 0
	}
	if cfg.Controls[CtlOrdinaryAtOnce] {
		t.ordinaryPayer = 0
	}
	if cfg.Controls[CtlNotifWindow30] {
		t.notifWindow = 30 * time.Second
	}
	return t
}
