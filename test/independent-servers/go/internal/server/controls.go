package server

import (
	"fmt"
	"io"
	"strings"
)

// Control names.
const (
	CtlSlowDown       = "consent-slow-down"
	CtlReplayRevokes  = "consent-replay-revokes"
	CtlNewKeyRevokes  = "new-key-revokes-tokens"
	CtlNotifWindow30  = "notification-window-30s"
	CtlSignedCallback = "callbacks-signed"
	CtlCompleted      = "success-state-completed"
	CtlPayerLimit     = "payer-limit-10000"
	CtlOrdinaryAtOnce = "ordinary-approval-at-once"
)

// Control is a conforming alternative that the default choices do not give.
type Control struct {
	Name     string
	Profiles []string
	Clause   string
	Effect   string
}

// LegalIn tells whether the control may be turned on in a profile.
func (c Control) LegalIn(profile string) bool {
	for _, p := range c.Profiles {
		if p == profile {
			return true
		}
	}
	return false
}

var both = []string{ProfileSpec, ProfileMTN}
var specOnly = []string{ProfileSpec}

// Controls lists every control.
var Controls = []Control{
	{CtlSlowDown, both,
		"spec §2.8 (client waits `interval` between retries), §4.3 #11 errors not shown; OpenID CIBA Core §11 (slow_down); notes silent on polling",
		"polling the CIBA token endpoint for an auth_req_id sooner than `interval` seconds after the previous poll answers 400 {error:slow_down} and adds 5 s to that request's interval"},
	{CtlReplayRevokes, both,
		"spec §4.3 #11 silent on a second redemption; RFC 6749 §4.1.2 / §10.5 (a grant replayed SHOULD revoke what it issued); notes silent",
		"redeeming an auth_req_id a second time answers 400 invalid_grant and revokes the consent access token(s) and the refresh token issued from it"},
	{CtlNewKeyRevokes, both,
		"spec §4.5 #15 and §5.6 silent on what a new API key does to tokens issued before; notes silent",
		"creating a new API key for an API user revokes every access token issued to that user (they then get 401 TOKEN_INVALID)"},
	{CtlNotifWindow30, both,
		"spec §8 \"Duration of the delivery-notification window: not shown\"; notes give no duration",
		"the delivery-notification window closes 30 s after the transaction completed (410 EXPIRED after that) instead of 3600 s"},
	{CtlSignedCallback, both,
		"spec §6 \"Callback payload, timing, retries, signing … not shown\"; notes silent on signing",
		"every callback carries X-Callback-Signature: sha256=<hex HMAC-SHA256 of the body keyed with the API user's current API key> and X-Callback-Timestamp"},
	{CtlCompleted, specOnly,
		"spec §3 \"names of the resulting states: not shown\" (the notes fix SUCCESSFUL for the mtn-sandbox profile)",
		"a successfully completed transaction reads status COMPLETED (instead of SUCCESSFUL) in status records and callbacks"},
	{CtlPayerLimit, specOnly,
		"spec §8 \"Amount … bounds: not shown\"; §7 set A has PAYER_LIMIT_REACHED; §3 the payer may decline (notes: ordinary numbers succeed, so spec only)",
		"a request to pay over 10000 (in the service currency) from an ordinary payer ends FAILED with reason PAYER_LIMIT_REACHED after the usual approval delay"},
	{CtlOrdinaryAtOnce, specOnly,
		"spec §3 \"Transitions: not shown\", §8 timings not shown (mtn-sandbox already behaves so per the notes)",
		"an ordinary payer answers at once: a request to pay is SUCCESSFUL on its first status read instead of PENDING for 2 s"},
}

// LookupControl finds a control by name.
func LookupControl(name string) (Control, bool) {
	for _, c := range Controls {
		if c.Name == name {
			return c, true
		}
	}
	return Control{}, false
}

// PrintControls writes one line per control: name, profiles, clause, effect.
func PrintControls(w io.Writer) {
	for _, c := range Controls {
		fmt.Fprintf(w, "%s\tprofiles=%s\tclause: %s\teffect: %s\n", c.Name, strings.Join(c.Profiles, ","), c.Clause, c.Effect)
	}
}
