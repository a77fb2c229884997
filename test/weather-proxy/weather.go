package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Condition names, in the order the README describes them.
const (
	CondInternalError    = "internal-error"
	CondUnavailable      = "unavailable"
	CondLatency          = "latency"
	CondCutBefore        = "cut-before"
	CondCutAfter         = "cut-after"
	CondCallbackLate     = "callback-late"
	CondCallbackRepeated = "callback-repeated"
)

// ConditionNames lists every condition accepted by --conditions.
var ConditionNames = []string{
	CondInternalError, CondUnavailable, CondLatency, CondCutBefore,
	CondCutAfter, CondCallbackLate, CondCallbackRepeated,
}

// Rates maps a condition name to its probability (0–1).
type Rates map[string]float64

// ParseConditions parses "name=rate,name=rate" or "all=rate" (entries apply
// left to right, so "all=0.1,latency=0.5" is allowed). Empty means no weather.
func ParseConditions(s string) (Rates, error) {
	r := Rates{}
	for _, n := range ConditionNames {
		r[n] = 0
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return r, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		name, val, ok := strings.Cut(item, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--conditions: %q is not name=rate", item)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || rate != rate || rate < 0 || rate > 1 {
			return nil, fmt.Errorf("--conditions: rate %q for %s is not a number from 0 to 1", val, name)
		}
		name = strings.TrimSpace(name)
		if name == "all" {
			for _, n := range ConditionNames {
				r[n] = rate
			}
			continue
		}
		if _, known := r[name]; !known {
			return nil, fmt.Errorf("--conditions: unknown condition %q (known: all, %s)", name, strings.Join(ConditionNames, ", "))
		}
		r[name] = rate
	}
	return r, nil
}

// Weather draws the conditions. Every request (and, separately, every
// callback) gets its own generator seeded from (seed, stream, sequence
// number), so the n-th request of a run always gets the same draws whatever
// the callbacks or the timing do; a client that sends its requests in the same
// order sees the same weather for the same seed.
type Weather struct {
	seed  uint64
	rates Rates
	reqN  atomic.Uint64
	cbN   atomic.Uint64
	log   *EventLog
}

const (
	streamRequest  = 1
	streamCallback = 2
)

func NewWeather(seed uint64, rates Rates, log *EventLog) *Weather {
	return &Weather{seed: seed, rates: rates, log: log}
}

func (w *Weather) rng(stream, n uint64) *rand.Rand {
	var key [32]byte
	copy(key[:8], "wxproxy1")
	binary.LittleEndian.PutUint64(key[8:], w.seed)
	binary.LittleEndian.PutUint64(key[16:], stream)
	binary.LittleEndian.PutUint64(key[24:], n)
	return rand.New(rand.NewChaCha8(key))
}

// RequestPlan is the weather for one proxied request.
type RequestPlan struct {
	Latency       time.Duration // 0 = none; otherwise 50–1500 ms
	CutBefore     bool
	Unavailable   bool
	InternalError bool
	CutAfter      bool
}

// PlanRequest draws the weather for the next request. The draws are always
// made in the same order and number; at most one of cut-before, unavailable,
// internal-error and cut-after is chosen, in that order of precedence.
// internal-error is only chosen when allows500 is true.
func (w *Weather) PlanRequest(allows500 bool) RequestPlan {
	r := w.rng(streamRequest, w.reqN.Add(1)-1)
	uCutBefore := r.Float64()
	uUnavailable := r.Float64()
	uInternal := r.Float64()
	uCutAfter := r.Float64()
	uLatency := r.Float64()
	latency := time.Duration(50+r.IntN(1451)) * time.Millisecond

	var p RequestPlan
	if uLatency < w.rates[CondLatency] {
		p.Latency = latency
	}
	switch {
	case uCutBefore < w.rates[CondCutBefore]:
		p.CutBefore = true
	case uUnavailable < w.rates[CondUnavailable]:
		p.Unavailable = true
	case allows500 && uInternal < w.rates[CondInternalError]:
		p.InternalError = true
	case uCutAfter < w.rates[CondCutAfter]:
		p.CutAfter = true
	}
	return p
}

// CallbackPlan is the weather for one callback.
type CallbackPlan struct {
	Late     time.Duration // 0 = none; otherwise 1–5 s
	Repeated bool
}

func (w *Weather) PlanCallback() CallbackPlan {
	r := w.rng(streamCallback, w.cbN.Add(1)-1)
	uLate := r.Float64()
	uRepeated := r.Float64()
	late := time.Duration(1000+r.IntN(4001)) * time.Millisecond
	var p CallbackPlan
	if uLate < w.rates[CondCallbackLate] {
		p.Late = late
	}
	if uRepeated < w.rates[CondCallbackRepeated] {
		p.Repeated = true
	}
	return p
}

// EventLog writes one JSON line per condition applied. A nil *EventLog
// discards.
type EventLog struct {
	mu sync.Mutex
	w  io.Writer
}

func NewEventLog(w io.Writer) *EventLog { return &EventLog{w: w} }

type logLine struct {
	Time      string `json:"time"`
	Condition string `json:"condition"`
	Method    string `json:"method"`
	Path      string `json:"path"`
}

func (l *EventLog) Applied(condition, method, path string) {
	if l == nil || l.w == nil {
		return
	}
	b, err := json.Marshal(logLine{
		Time:      time.Now().UTC().Format(time.RFC3339Nano),
		Condition: condition,
		Method:    method,
		Path:      path,
	})
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
}
