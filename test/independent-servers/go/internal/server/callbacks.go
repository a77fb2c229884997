package server

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"
)

type callbackJob struct {
	url    string
	method string
	body   []byte
	key    string // the API user's key at the time (for signing)

	headers map[string]string // control callbacks-with-reference-header

	onDelivered func() // deviation status-gone-after-callback: run once a 2xx is received
}

// callbackMethod: PUT for requests to pay (notes: documented), POST for deposits, refunds
// and consent pings.
func (s *Server) callbackMethod(kind string) string {
	if kind == kRTP {
		return http.MethodPut
	}
	return http.MethodPost
}

// deliver sends a callback in the background: up to 4 attempts (at once, then after
// 0.5 s, 2 s and 5 s more) until the receiver answers 2xx; 3 s timeout per attempt.
func (s *Server) deliver(j callbackJob) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for i, wait := range s.tm.callbackWaits {
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-s.closed:
					return
				}
			}
			req, err := http.NewRequest(j.method, j.url, bytes.NewReader(j.body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range j.headers {
				req.Header.Set(k, v)
			}
			if s.on(CtlSignedCallback) {
				ts := strconv.FormatInt(time.Now().Unix(), 10)
				req.Header.Set("X-Callback-Timestamp", ts)
				req.Header.Set("X-Callback-Signature", "sha256="+hmacHex([]byte(j.key), j.body))
			}
			resp, err := s.client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				ok := resp.StatusCode >= 200 && resp.StatusCode < 300
				if s.dev(DevCallback204Retried) {
					ok = resp.StatusCode == http.StatusOK // any other 2xx taken as a failure
				}
				if ok {
					if j.onDelivered != nil {
						j.onDelivered()
					}
					return
				}
				s.logger.Printf("callback %s %s attempt %d: HTTP %d", j.method, j.url, i+1, resp.StatusCode)
			} else {
				s.logger.Printf("callback %s %s attempt %d: %v", j.method, j.url, i+1, err)
			}
		}
	}()
}
