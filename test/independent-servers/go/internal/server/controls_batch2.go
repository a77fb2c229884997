package server

import (
	"net/http"
	"strings"
)

// The second batch of controls: conforming choices at points the documents leave open,
// other than this server's defaults. Each is off by default and only read through s.on(name).
const (
	CtlTokenReissued       = "token-reissued-while-live"
	CtlEmailHoldersUnknown = "email-holders-unregistered"
	CtlCollectionOpening   = "collection-opens-at-1000"
	CtlMSISDNPlus          = "msisdn-plus-accepted"
	CtlCallbackRefHeader   = "callbacks-with-reference-header"
	CtlBadRequestText      = "bad-request-text-plain"
)

var controlsBatch2 = []Control{
	{CtlTokenReissued, both,
		"spec §2.6 / §5.3 give a token and its validity in seconds, but not that each request makes a new one; §4.2 #1 \"200: access token record\"; RFC 6749 §5.1 (expires_in: the lifetime in seconds of the access token); notes silent",
		"a token request while the API user's newest access token of that product still has more than half its life left answers that same access_token again, with expires_in the whole seconds it has left (e.g. 3599), instead of a new token"},
	{CtlEmailHoldersUnknown, both,
		"spec §4.2 #8 \"200: true if the account holder is registered and active; false if it is not active or not found\" (which holders are registered is the service's); notes: only ordinary numbers observed as true",
		"the account-holder check answers false (not registered) for every e-mail and party_code holder, valid ones included; MSISDN holders are unchanged"},
	{CtlCollectionOpening, specOnly,
		"spec §2.9 \"availableBalance: Available balance of the account\" (no opening balance given; the notes observe \"0\" in the live sandbox, so spec only)",
		"a new collection API user's account opens at 1000.00 instead of 0.00; successful requests to pay are credited on top of it"},
	{CtlMSISDNPlus, specOnly,
		"spec §2.1 \"MSISDN: mobile number per ITU-T E.164\" (the international form of an E.164 number is written with a leading \"+\", ITU-T E.123); the mtn-sandbox profile already takes it",
		"an MSISDN written with a leading \"+\" (\"+46733123999\") is accepted wherever an MSISDN is (payer, payee, account holder, basic user info, login_hint) and comes back in records exactly as sent"},
	{CtlCallbackRefHeader, both,
		"spec §6 \"Callback payload, timing, retries, signing and the list of event kinds: not shown\"; notes, Callbacks: the body is the status record (headers not given); RFC 9110 §5.1 (unknown header fields are ignored)",
		"every transaction callback also carries the header X-Reference-Id: <the transaction's reference id> (and X-Callback-Event: <kind>.<status>, e.g. requesttopay.SUCCESSFUL); bodies are unchanged"},
	{CtlBadRequestText, both,
		"spec §7 rule 6 \"Body shape of the 400 responses: not shown\"; notes \"400 bodies are often empty [observed]\" (often, not always)",
		"a 400 without a set-A code answers a one-line text/plain explanation (e.g. \"X-Reference-Id must be a UUID version 4\") instead of the profile's default (spec: problem+json, mtn-sandbox: empty); 400s that carry a code keep the profile's default shape"},
}

func init() { Controls = append(Controls, controlsBatch2...) }

// badRequestText (control bad-request-text-plain) writes a 400 as one line of plain text.
func (s *Server) badRequestText(c *call, code, detail string) bool {
	if !s.on(CtlBadRequestText) || code != "" {
		return false
	}
	if detail == "" {
		detail = "invalid data"
	}
	s.writeBody(c, http.StatusBadRequest, "text/plain; charset=utf-8", []byte(detail+"\n"))
	return true
}

// callbackEvent (control callbacks-with-reference-header) names a transaction callback.
func callbackEvent(kind, status string) string {
	return kind + "." + strings.ToUpper(status)
}
