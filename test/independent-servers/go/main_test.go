package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "momo-server")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func TestCommandLine(t *testing.T) {
	bin := buildBinary(t)

	t.Run("list-controls", func(t *testing.T) {
		out, err := exec.Command(bin, "--list-controls").Output()
		if err != nil {
			t.Fatalf("--list-controls: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 6 {
			t.Fatalf("%d controls", len(lines))
		}
		for _, l := range lines {
			if !strings.Contains(l, "profiles=") || !strings.Contains(l, "clause:") {
				t.Fatalf("control line %q", l)
			}
		}
	})

	t.Run("list-deviations", func(t *testing.T) {
		out, err := exec.Command(bin, "--list-deviations").Output()
		if err != nil {
			t.Fatalf("--list-deviations: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 24 {
			t.Fatalf("%d deviations", len(lines))
		}
		re := regexp.MustCompile(`^[a-z0-9-]+\tprofiles=(spec,mtn-sandbox|mtn-sandbox|spec)\tclause: [^\t]+\teffect: [^\t]+$`)
		for _, l := range lines {
			if !re.MatchString(l) {
				t.Fatalf("deviation line %q", l)
			}
		}
	})

	t.Run("deviations-accepted", func(t *testing.T) {
		// a repeatable, comma-listed option; a deviation of the other profile only is accepted too
		for _, args := range [][]string{
			{"--profile", "spec", "--deviation", "token-body-accepted", "--deviation=refund-reference-reused,refund-not-debited"},
			{"--profile", "mtn-sandbox", "--deviation", "remittance-balance-currency-lower-case"},
		} {
			cmd := exec.Command(bin, append(args, "--port", "0")...)
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			_ = cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			if !strings.HasPrefix(line, "listening on http://127.0.0.1:") || err != nil {
				t.Fatalf("%v: line %q, exit %v", args, line, err)
			}
		}
	})

	t.Run("bad-options", func(t *testing.T) {
		for _, args := range [][]string{
			{"--port", "70000"}, {"--port", "x"}, {"--profile", "live"}, {"--keys", "collection"},
			{"--keys", "wallet=K"}, {"--currency", "eur"}, {"--token-lifetime", "0"},
			{"--delayed-approval-seconds", "-1"}, {"--pending-timeout-seconds", "0"},
			{"--control", "nope"}, {"--profile", "mtn-sandbox", "--control", "success-state-completed"},
			{"--bogus"}, {"stray"}, {"--port"}, {"--target-environment", ""},
			{"--deviation", "nope"}, {"--deviation", ""}, {"--deviation", "refund-not-debited,nope"}, {"--deviation"},
			{"--list-deviations=x"},
		} {
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("%v: %v, want exit 2", args, err)
			}
			if lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n"); len(lines) != 1 || lines[0] == "" {
				t.Fatalf("%v: stderr %q is not one line", args, stderr.String())
			}
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		sig := sig
		t.Run("serve-and-"+sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "--port", "0", "--profile", "mtn-sandbox",
				"--keys", "collection=K1,disbursement=K2,remittance=K3", "--currency", "XAF",
				"--target-environment", "mtnghana", "--token-lifetime", "60",
				"--delayed-approval-seconds", "2", "--pending-timeout-seconds", "10",
				"--control", "callbacks-signed,consent-slow-down", "--control=notification-window-30s")
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lineCh := make(chan string, 1)
			go func() {
				l, _ := bufio.NewReader(stdout).ReadString('\n')
				lineCh <- l
			}()
			var line string
			select {
			case line = <-lineCh:
			case <-time.After(5 * time.Second):
				t.Fatal("no listening line")
			}
			m := regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+)\n$`).FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("listening line %q", line)
			}
			req, _ := http.NewRequest("GET", m[1]+"/v1_0/apiuser/3f1a2b4c-1d2e-4f3a-8b9c-0d1e2f3a4b5c", nil)
			req.Header.Set("Ocp-Apim-Subscription-Key", "K2")
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != 404 {
				t.Fatalf("GET unknown user: %v %v", res, err)
			}
			res.Body.Close()
			_ = cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %s: %v", sig, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no exit after %s", sig)
			}
		})
	}
}
