package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Transaction kinds.
const (
	kRTP     = "requesttopay"
	kDeposit = "deposit"
	kRefund  = "refund"
)

// Internal status values (presented through statusName).
const (
	stPending = "PENDING"
	stSuccess = "SUCCESSFUL"
	stFailed  = "FAILED"
)

type party struct {
	Type string
	ID   string
}

type tx struct {
	kind      string
	id        string
	owner     string
	amount    *big.Int
	currency  string
	extID     *string
	payerMsg  *string
	payeeNote *string
	party     *party // payer (request to pay) or payee (deposit, refund)
	refundOf  string

	status  string
	reason  string
	ftid    string
	created time.Time

	finalAt       time.Time // zero: never
	outcome       string
	outcomeReason string
	completedAt   time.Time

	held         *big.Int // disbursement funds held while pending
	refundHeld   *big.Int // part of the refunded payment's amount held by this refund
	refunded     *big.Int // request to pay: total held or paid back by refunds
	callbackURL  string
	lastNotified time.Time

	creditedEarly bool // deviation payment-credited-while-pending

	tokenJTI       string   // deviation transactions-bound-to-token: the token that created it
	purged         bool     // deviation status-gone-after-callback
	extraCallbacks []string // deviation duplicate-adds-callback-url

	polledPending    bool   // deviation polled-transaction-no-callback: read while PENDING
	creditDue        bool   // deviation credit-posted-on-status-read: success not yet credited
	lastNotifiedText string // deviation notification-cooldown-keyed-by-text
}

// ---------- outcome table ----------

// outcomeFor decides how a transaction ends: after delay, with status and reason.
// never=true: it stays PENDING until the pending timeout.
func (s *Server) outcomeFor(kind string, p *party, amount *big.Int) (delay time.Duration, status, reason string) {
	n := -1
	if p != nil && p.Type == "MSISDN" {
		n = testNumber(p.ID)
	}
	switch n {
	case 50:
		return 0, stFailed, "INTERNAL_PROCESSING_ERROR"
	case 51:
		if s.dev(DevRejectReasonsSwapped) {
			return s.tm.reject, stFailed, "EXPIRED"
		}
		return s.tm.reject, stFailed, "APPROVAL_REJECTED"
	case 52:
		if s.dev(DevRejectReasonsSwapped) {
			return s.tm.expire, stFailed, "APPROVAL_REJECTED"
		}
		return s.tm.expire, stFailed, "EXPIRED"
	case 53:
		return s.cfg.PendingTimeout, stFailed, "EXPIRED"
	case 54:
		if s.dev(DevDelayedApprovalAtOnce) {
			return 0, stSuccess, ""
		}
		return s.cfg.DelayedApproval, stSuccess, ""
	}
	if n >= 55 { // only reached in the mtn-sandbox profile (spec refuses these at creation)
		return 0, stFailed, mtnTestReason(kind, n)
	}
	if kind == kRTP {
		if s.on(CtlPayerLimit) && amount.Cmp(units(10000)) > 0 {
			return s.tm.ordinaryPayer, stFailed, "PAYER_LIMIT_REACHED"
		}
		return s.tm.ordinaryPayer, stSuccess, ""
	}
	return s.tm.ordinaryPayee, stSuccess, ""
}

func mtnTestReason(kind string, n int) string {
	switch n {
	case 55:
		if kind == kRTP {
			return "PAYER_NOT_FOUND"
		}
		return "PAYEE_NOT_FOUND"
	case 56:
		return "PAYEE_NOT_ALLOWED_TO_RECEIVE"
	case 57:
		return "NOT_ALLOWED"
	case 58:
		return "NOT_ALLOWED_TARGET_ENVIRONMENT"
	case 59:
		return "INVALID_CALLBACK_URL_HOST"
	case 60:
		return "INVALID_CURRENCY"
	case 61:
		return "INTERNAL_PROCESSING_ERROR"
	case 62:
		return "SERVICE_UNAVAILABLE"
	default:
		return "COULD_NOT_PERFORM_TRANSACTION"
	}
}

// specTestRefusal: in the spec profile …455–…463 are refused at creation with 500.
func specTestRefusal(kind string, p *party) string {
	if p == nil || p.Type != "MSISDN" {
		return ""
	}
	n := testNumber(p.ID)
	if n < 55 {
		return ""
	}
	if n == 63 {
		return "NOT_ALLOWED"
	}
	return mtnTestReason(kind, n)
}

// ---------- settlement ----------

// settleLocked makes a due transaction final; it queues its callback. Returns true once.
func (s *Server) settleLocked(t *tx, now time.Time) bool {
	if t.status != stPending || t.finalAt.IsZero() || now.Before(t.finalAt) {
		return false
	}
	t.status = t.outcome
	t.reason = t.outcomeReason
	t.completedAt = t.finalAt
	owner := s.users[t.owner]
	if t.status == stSuccess {
		t.ftid = newFTID()
		if t.kind == kRTP && owner != nil && !t.creditedEarly {
			if s.dev(DevCreditPostedOnRead) {
				t.creditDue = true // posted by the next status query
			} else {
				s.creditPaymentLocked(t, owner)
			}
		}
		t.held = nil
	} else {
		if t.kind == kRTP && owner != nil {
			switch {
			case t.creditedEarly:
				owner.balance.Sub(owner.balance, t.amount)
			case s.dev(DevFailedPaymentCredits):
				owner.balance.Add(owner.balance, t.amount)
			}
		}
		if t.held != nil && owner != nil {
			owner.balance.Add(owner.balance, t.held)
			if t.kind == kDeposit && s.dev(DevFailedDepositTwice) {
				owner.balance.Add(owner.balance, t.held) // the hold is released a second time
			}
		}
		t.held = nil
		if t.refundHeld != nil {
			if orig := s.txs[kRTP][t.refundOf]; orig != nil {
				orig.refunded.Sub(orig.refunded, t.refundHeld)
			}
			t.refundHeld = nil
		}
	}
	key := ""
	if owner != nil {
		key = owner.key
	}
	body := s.record(t, true)
	if t.kind == kRefund && s.dev(DevRefundCallbackPayment) {
		if orig := s.txs[kRTP][t.refundOf]; orig != nil {
			body = s.record(orig, true)
		}
	}
	var onDelivered func()
	if s.dev(DevStatusGoneAfterCallback) {
		onDelivered = func() {
			s.lock()
			t.purged = true
			s.unlock()
		}
	}
	payload := mustMarshal(body)
	if s.dev(DevCallbackBodyString) {
		payload = mustMarshal(string(payload)) // the record's JSON sent as a JSON string
	}
	var headers map[string]string
	if s.on(CtlCallbackRefHeader) {
		headers = map[string]string{"X-Reference-Id": t.id, "X-Callback-Event": callbackEvent(t.kind, s.statusName(t.status))}
	}
	if t.polledPending && s.dev(DevPolledNoCallback) {
		// the client polled this transaction: its callback is skipped
	} else if t.callbackURL != "" && !(t.kind == kRefund && s.dev(DevRefundCallbackMissing)) {
		target := t.callbackURL
		if s.dev(DevCallbackToLatestURL) && owner != nil && owner.lastCallbackURL != "" {
			target = owner.lastCallbackURL
		}
		if !(s.dev(DevCallbackDedupByURL) && s.cbURLs[target]) {
			if s.dev(DevCallbackDedupByURL) {
				s.cbURLs[target] = true
			}
			s.outbox = append(s.outbox, callbackJob{
				url:         target,
				method:      s.callbackMethod(t.kind),
				body:        payload,
				key:         key,
				headers:     headers,
				onDelivered: onDelivered,
			})
		}
	}
	for _, extra := range t.extraCallbacks {
		s.outbox = append(s.outbox, callbackJob{url: extra, method: s.callbackMethod(t.kind), body: payload, key: key, headers: headers})
	}
	return true
}

func (s *Server) settleAllLocked(now time.Time) {
	for _, m := range s.txs {
		for _, t := range m {
			s.settleLocked(t, now)
		}
	}
}

func (s *Server) schedule(t *tx) {
	if t.finalAt.IsZero() {
		return
	}
	d := time.Until(t.finalAt)
	if d < 0 {
		d = 0
	}
	time.AfterFunc(d, func() {
		select {
		case <-s.closed:
			return
		default:
		}
		s.lock()
		now := time.Now()
		if now.Before(t.finalAt) {
			now = t.finalAt
		}
		s.settleLocked(t, now)
		s.unlock()
	})
}

// ---------- records ----------

func (s *Server) statusName(st string) string {
	if st == stSuccess && s.on(CtlCompleted) {
		return "COMPLETED"
	}
	return st
}

func (s *Server) fmtAmount(n *big.Int) string {
	if s.spec() {
		return formatAmount(n, 2)
	}
	return formatAmount(n, 0)
}

// record is the status record (and, with forCallback, the callback body).
func (s *Server) record(t *tx, forCallback bool) obj {
	o := obj{}
	if t.status == stSuccess && t.ftid != "" {
		o = append(o, kv{"financialTransactionId", t.ftid})
	}
	if t.extID != nil {
		o = append(o, kv{"externalId", *t.extID})
	}
	o = append(o, kv{"amount", s.fmtAmount(t.amount)}, kv{"currency", t.currency})
	if t.party != nil {
		name := "payee"
		if t.kind == kRTP {
			name = "payer"
		}
		typ := t.party.Type
		if t.kind == kDeposit && s.dev(DevDepositPayeeTypeMSISDN) {
			typ = "MSISDN" // the deposit record writer hard-codes the type
		}
		o = append(o, kv{name, obj{{"partyIdType", typ}, {"partyId", t.party.ID}}})
	}
	if t.payerMsg != nil {
		o = append(o, kv{"payerMessage", *t.payerMsg})
	}
	if t.payeeNote != nil {
		o = append(o, kv{"payeeNote", *t.payeeNote})
	}
	o = append(o, kv{"status", s.statusName(t.status)})
	if t.status == stFailed {
		if s.spec() {
			o = append(o, kv{"reason", obj{{"code", t.reason}, {"message", s.reasonMessage(t.reason)}}})
		} else {
			o = append(o, kv{"reason", t.reason})
		}
	}
	if forCallback && s.spec() {
		o = append(o, kv{"referenceId", t.id})
	}
	return o
}

var reasonMessages = map[string]string{
	"INTERNAL_PROCESSING_ERROR": "The transaction failed inside the service.",
	"APPROVAL_REJECTED":         "The payer declined the transaction.",
	"EXPIRED":                   "Nobody answered the transaction in time.",
	"NOT_ENOUGH_FUNDS":          "The owner's account does not cover the amount.",
	"RESOURCE_NOT_FOUND":        "The request to pay named for refund does not exist.",
	"NOT_ALLOWED":               "The request to pay cannot be refunded (not successful, or the amount exceeds what is left).",
	"PAYER_LIMIT_REACHED":       "The amount exceeds the payer's limit.",
}

func (s *Server) reasonMessage(code string) string {
	if m, ok := reasonMessages[code]; ok {
		return m
	}
	return s.message(code)
}

// ---------- creation (2, 9, 10) ----------

func (s *Server) parseParty(raw json.RawMessage, anyType, anyMSISDN bool) (*party, string) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, "the party must be an object {partyIdType, partyId}"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil {
		return nil, "the party must be an object {partyIdType, partyId}"
	}
	if s.spec() {
		for k := range m {
			if k != "partyIdType" && k != "partyId" {
				return nil, "unknown party member " + k
			}
		}
	}
	typ, tp, ok1 := s.str(m, "partyIdType")
	id, ip, ok2 := s.str(m, "partyId")
	if !ok1 || !ok2 || !tp || !ip {
		return nil, "the party needs partyIdType and partyId, both strings"
	}
	switch typ {
	case "MSISDN":
		if !s.validMSISDN(id) && !(anyMSISDN && id != "") {
			return nil, "partyId is not a valid MSISDN (ITU-T E.164 digits)"
		}
	case "EMAIL":
		if !validEmail(id) && !(s.dev(DevEmailNotValidated) && id != "") {
			return nil, "partyId is not a valid e-mail address"
		}
	case "PARTY_CODE":
		if !isUUID(id) {
			return nil, "partyId is not a UUID"
		}
	default:
		if anyType && typ != "" && id != "" {
			break
		}
		return nil, "partyIdType must be MSISDN, EMAIL or PARTY_CODE"
	}
	return &party{Type: typ, ID: id}, ""
}

// textOK applies the text-field rules of the profile.
func (s *Server) textOK(name, v string) string { return s.textRules(name, v, true) }

// textRules applies the text-field rules; withLimit=false leaves out the length limit.
func (s *Server) textRules(name, v string, withLimit bool) string {
	limit := 200
	if name == "externalId" {
		limit = 64
	}
	if !s.spec() {
		limit = 160
		if name == "externalId" {
			limit = MaxBody
		}
		if strings.ContainsAny(v, "'&") {
			return name + " must not contain an apostrophe or &"
		}
	}
	n := runeLen(v)
	if s.dev(DevTextLengthBytes) {
		n = len(v) // UTF-8 bytes instead of characters
	}
	if withLimit && n > limit {
		return fmt.Sprintf("%s is longer than %d characters", name, limit)
	}
	return ""
}

func (s *Server) hCreateTx(c *call, kind string) {
	if !s.business(c, "access") {
		return
	}
	var id string
	if kind == kDeposit && s.dev(DevDepositNoRefID) && c.r.Header.Get("X-Reference-Id") == "" {
		id = newUUID()
	} else {
		var ok bool
		if id, ok = s.refID(c); !ok {
			return
		}
	}
	allowed := []string{"amount", "currency", "externalId", "payerMessage", "payeeNote"}
	switch kind {
	case kRTP:
		allowed = append(allowed, "payer")
	case kDeposit:
		allowed = append(allowed, "payee")
	case kRefund:
		allowed = append(allowed, "referenceIdToRefund")
	}
	m, ok := s.parseObject(c, allowed...)
	if !ok {
		return
	}
	t := &tx{kind: kind, id: id, owner: c.user.id, created: c.now, status: stPending, tokenJTI: c.tok.jti}

	amountStr, present, okA := s.str(m, "amount")
	if !okA || !present {
		s.badRequest(c, "", "amount (string) is required")
		return
	}
	amount, err := s.parseAmount(amountStr)
	if err != nil {
		s.badRequest(c, "", err.Error())
		return
	}
	t.amount = amount
	cur, present, okC := s.str(m, "currency")
	if !okC || !present || !reCurrency.MatchString(cur) {
		s.badRequest(c, "", "currency must be an ISO 4217 code (three capital letters)")
		return
	}
	t.currency = cur
	for _, f := range []struct {
		name string
		dst  **string
	}{{"externalId", &t.extID}, {"payerMessage", &t.payerMsg}, {"payeeNote", &t.payeeNote}} {
		v, present, ok := s.str(m, f.name)
		if !ok {
			s.badRequest(c, "", f.name+" must be a string")
			return
		}
		if present {
			if msg := s.textRules(f.name, v, !(kind == kDeposit && s.dev(DevDepositTextLength))); msg != "" {
				s.badRequest(c, "", msg)
				return
			}
			vv := v
			*f.dst = &vv
		}
	}
	switch kind {
	case kRTP, kDeposit:
		name := "payer"
		if kind == kDeposit {
			name = "payee"
		}
		raw, has := m[name]
		if !has || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			s.badRequest(c, "", name+" is required")
			return
		}
		p, msg := s.parseParty(raw, kind == kDeposit && s.dev(DevDepositPartyTypeAny), kind == kDeposit && s.dev(DevDepositMSISDNAny))
		if p == nil {
			s.badRequest(c, "", msg)
			return
		}
		t.party = p
	case kRefund:
		ref, present, ok := s.str(m, "referenceIdToRefund")
		if !ok || !present || !isUUID(ref) {
			s.badRequest(c, "", "referenceIdToRefund must be a UUID")
			return
		}
		t.refundOf = strings.ToLower(ref)
	}
	cb, hostRefused, ok := s.checkCallbackURL(c, s.dev(DevCallbackHostRefCreates))
	if !ok {
		return
	}
	t.callbackURL = cb
	if cur != s.cfg.Currency {
		s.fail(c, 500, "INVALID_CURRENCY")
		return
	}

	s.lock()
	if old, dup := s.txs[kind][id]; dup && s.purgedLocked(old, c.now) {
		// deviation disbursement-records-expire: the old record is gone, the id is free again
	} else if dup && !(kind == kRefund && s.dev(DevRefundRefReused)) {
		if kind == kRTP && s.dev(DevDupPaymentOverwrites) {
			old.amount, old.party = t.amount, t.party
			old.extID, old.payerMsg, old.payeeNote = t.extID, t.payerMsg, t.payeeNote
		}
		if cb != "" && s.dev(DevDuplicateAddsCallback) && old.status == stPending {
			old.extraCallbacks = append(old.extraCallbacks, cb)
		}
		s.unlock()
		s.fail(c, 409, "RESOURCE_ALREADY_EXIST")
		return
	}
	s.settleAllLocked(c.now)
	owner := s.users[t.owner]
	if kind == kRTP && owner != nil && s.dev(DevPayerSharedObject) {
		// one payer object per API user, overwritten by each request to pay
		if owner.sharedPayer == nil {
			owner.sharedPayer = t.party
		} else {
			*owner.sharedPayer = *t.party
			t.party = owner.sharedPayer
		}
	}
	failNow := "" // a failure known at creation (asynchronous: the creation still answers 202)
	if kind == kRefund {
		orig := s.txs[kRTP][t.refundOf]
		switch {
		case orig == nil:
			failNow = "RESOURCE_NOT_FOUND"
		case orig.status != stSuccess:
			failNow = "NOT_ALLOWED"
		case new(big.Int).Add(orig.refunded, t.amount).Cmp(orig.amount) > 0:
			failNow = "NOT_ALLOWED"
		case s.dev(DevFullRefundRefused) && new(big.Int).Add(orig.refunded, t.amount).Cmp(orig.amount) == 0:
			failNow = "NOT_ALLOWED" // the check is >= instead of >
		}
		if orig != nil {
			t.party = &party{Type: orig.party.Type, ID: orig.party.ID}
		}
		if failNow == "" {
			orig.refunded.Add(orig.refunded, t.amount)
			t.refundHeld = new(big.Int).Set(t.amount)
		}
	}
	if s.spec() && failNow == "" {
		if code := specTestRefusal(kind, t.party); code != "" {
			if t.refundHeld != nil {
				s.txs[kRTP][t.refundOf].refunded.Sub(s.txs[kRTP][t.refundOf].refunded, t.refundHeld)
			}
			s.unlock()
			s.fail(c, 500, code)
			return
		}
	}
	if failNow == "" && (kind == kDeposit || kind == kRefund) {
		debit := t.amount
		if kind == kDeposit && s.dev(DevDepositDebitRoundedUp) {
			debit = ceilUnits(t.amount)
		}
		if owner.balance.Cmp(debit) < 0 || (owner.fundsRefused && s.dev(DevFundsRefusalSticks)) {
			failNow = "NOT_ENOUGH_FUNDS"
			owner.fundsRefused = true
			if t.refundHeld != nil {
				s.txs[kRTP][t.refundOf].refunded.Sub(s.txs[kRTP][t.refundOf].refunded, t.refundHeld)
				t.refundHeld = nil
			}
		} else if !(kind == kRefund && s.dev(DevRefundNotDebited)) {
			owner.balance.Sub(owner.balance, debit)
			t.held = new(big.Int).Set(debit)
		}
	}
	if kind == kRTP {
		t.refunded = new(big.Int)
	}
	if failNow != "" {
		t.finalAt, t.outcome, t.outcomeReason = c.now, stFailed, failNow
	} else {
		d, st, reason := s.outcomeFor(kind, t.party, t.amount)
		t.finalAt, t.outcome, t.outcomeReason = c.now.Add(d), st, reason
	}
	if kind == kRTP && s.dev(DevCreditedWhilePending) && owner != nil {
		owner.balance.Add(owner.balance, t.amount)
		t.creditedEarly = true
	}
	if cb != "" && owner != nil {
		owner.lastCallbackURL = cb
	}
	s.txs[kind][id] = t
	s.settleLocked(t, c.now)
	s.unlock()
	s.schedule(t)
	if hostRefused {
		s.fail(c, 500, "INVALID_CALLBACK_URL_HOST")
		return
	}
	s.empty(c, 202)
}

// ceilUnits rounds a positive amount up to a whole unit.
func ceilUnits(n *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, scaleFactor, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Mul(q, scaleFactor)
}

// ---------- status queries (4.6) ----------

func (s *Server) hGetTx(c *call, kind string) {
	if !s.business(c, "access") {
		return
	}
	id := c.p["id"]
	if !isUUID(id) {
		if kind != kRTP && s.dev(DevDisbStatusBadID404) {
			s.fail(c, 404, "RESOURCE_NOT_FOUND")
			return
		}
		s.badRequest(c, "", "the reference id must be a UUID")
		return
	}
	key := strings.ToLower(id)
	if s.dev(DevUpperRefUnreadable) {
		key = id // looked up exactly as written, while creation stored it in lower case
	}
	s.lock()
	t := s.txs[kind][key]
	if t == nil || t.owner != c.user.id || t.purged || (s.dev(DevTxBoundToToken) && t.tokenJTI != c.tok.jti) {
		s.unlock()
		s.fail(c, 404, "RESOURCE_NOT_FOUND")
		return
	}
	justSettled := s.settleLocked(t, c.now)
	if s.purgedLocked(t, c.now) {
		s.unlock()
		s.fail(c, 404, "RESOURCE_NOT_FOUND")
		return
	}
	if t.status == stPending && s.dev(DevPolledNoCallback) {
		t.polledPending = true
	}
	if t.creditDue {
		t.creditDue = false
		s.creditPaymentLocked(t, s.users[t.owner])
	}
	if kind == kRTP && t.status == stSuccess && !justSettled && s.dev(DevCreditOnEveryRead) {
		if owner := s.users[t.owner]; owner != nil {
			owner.balance.Add(owner.balance, t.amount)
		}
	}
	rec := s.record(t, false)
	if s.dev(DevCallbackAheadOfStatus) && t.status != stPending && t.finalAt.After(t.created) && c.now.Before(t.completedAt.Add(2*time.Second)) {
		cp := *t
		cp.status, cp.ftid, cp.reason = stPending, "", ""
		rec = s.record(&cp, false)
	}
	s.unlock()
	s.writeJSON(c, 200, rec)
}

// ---------- 3. delivery notification ----------

func (s *Server) hDeliveryNotification(c *call) {
	if !s.business(c, "access") {
		return
	}
	id := c.p["id"]
	if !isUUID(id) {
		s.badRequest(c, "", "the reference id must be a UUID")
		return
	}
	if c.r.Header.Get("Language") == "" && s.dev(DevNotifLanguageRequired) {
		s.badRequest(c, "", "Language is required")
		return
	}
	if lang := c.r.Header.Get("Language"); lang != "" && !reLanguage.MatchString(lang) {
		s.badRequest(c, "", "Language must be an ISO 639-1 or 639-3 code")
		return
	}
	m, ok := s.parseObject(c, "notificationMessage")
	if !ok {
		return
	}
	msg, present, ok := s.str(m, "notificationMessage")
	if !ok || !present || strings.TrimSpace(msg) == "" {
		s.badRequest(c, "", "notificationMessage (non-empty string) is required")
		return
	}
	if e := s.textOK("notificationMessage", msg); e != "" {
		s.badRequest(c, "", e)
		return
	}
	s.lock()
	t := s.txs[kRTP][strings.ToLower(id)]
	if t == nil || t.owner != c.user.id || t.purged || (s.dev(DevTxBoundToToken) && t.tokenJTI != c.tok.jti) {
		s.unlock()
		s.fail(c, 404, "RESOURCE_NOT_FOUND")
		return
	}
	s.settleLocked(t, c.now)
	userCooling := s.dev(DevNotifCooldownPerUser) && !c.user.lastNotified.IsZero() && c.now.Before(c.user.lastNotified.Add(s.tm.notifCooldown))
	switch {
	case t.status != stSuccess:
		s.unlock()
		s.fail(c, 409, "TRANSACTION_NOT_COMPLETED")
		return
	case !c.now.Before(t.completedAt.Add(s.tm.notifWindow)):
		s.unlock()
		s.fail(c, 410, "EXPIRED")
		return
	case !t.lastNotified.IsZero() && c.now.Before(t.lastNotified.Add(s.tm.notifCooldown)) && !(s.dev(DevNotifCooldownByText) && msg != t.lastNotifiedText):
		wait := t.lastNotified.Add(s.tm.notifCooldown).Sub(c.now)
		s.unlock()
		secs := int((wait + time.Second - 1) / time.Second)
		c.w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.fail(c, 429, "NOT_ALLOWED")
		return
	case userCooling:
		wait := c.user.lastNotified.Add(s.tm.notifCooldown).Sub(c.now)
		s.unlock()
		c.w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		s.fail(c, 429, "NOT_ALLOWED")
		return
	}
	if s.dev(DevNotificationRace) {
		// the attempt is recorded after the hand-over to the notification service, unlocked
		s.unlock()
		time.Sleep(notificationRaceGap)
		s.lock()
	}
	t.lastNotified = c.now
	t.lastNotifiedText = msg
	c.user.lastNotified = c.now
	s.unlock()
	s.empty(c, 200)
}

// ---------- balance (4, 13) ----------

func (s *Server) hBalance(c *call) {
	if !s.business(c, "access") {
		return
	}
	if cur, has := c.p["currency"]; has {
		if !reCurrency.MatchString(cur) {
			s.badRequest(c, "", "the currency must be an ISO 4217 code (three capital letters)")
			return
		}
		if cur != s.cfg.Currency {
			s.fail(c, 500, "INVALID_CURRENCY")
			return
		}
	}
	s.lock()
	s.settleAllLocked(c.now)
	bal := new(big.Int).Set(c.user.balance)
	s.unlock()
	if c.product == "collection" && s.dev(DevCollectionBalanceMinor) {
		bal.Mul(bal, big.NewInt(100)) // the ledger's minor units, not converted back
	}
	cur := s.cfg.Currency
	if c.product == "remittance" && s.dev(DevRemittanceCurrencyLower) {
		cur = strings.ToLower(cur)
	}
	s.writeJSON(c, 200, obj{{"availableBalance", s.fmtAmount(bal)}, {"currency", cur}})
}

// creditPaymentLocked credits a successful request to pay to the collection account.
func (s *Server) creditPaymentLocked(t *tx, owner *apiUser) {
	acct := s.creditAccountLocked(owner)
	if acct == nil {
		return
	}
	credit := t.amount
	if s.dev(DevPaymentCreditTruncated) {
		credit = new(big.Int).Mul(new(big.Int).Quo(t.amount, scaleFactor), scaleFactor)
	}
	acct.balance.Add(acct.balance, credit)
}
