// Command weather-proxy is a reverse proxy for the MoMo Open API that adds
// only the bad weather the API allows. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = "usage: weather-proxy --upstream URL [--port N] [--seed N] [--conditions name=rate,...|all=rate] [--log FILE]"

// Config is the parsed command line.
type Config struct {
	Port     int
	Upstream *url.URL
	Seed     uint64
	Rates    Rates
	LogPath  string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process exit: 0 after SIGTERM/SIGINT, 2 for a bad
// option (one line on stderr), 1 if the proxy cannot start.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "weather-proxy: "+oneLine(err.Error()))
		return 2
	}
	var logw io.Writer
	if cfg.LogPath != "" {
		f, err := os.OpenFile(cfg.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "weather-proxy: --log: "+oneLine(err.Error()))
			return 2
		}
		defer f.Close()
		logw = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return Serve(ctx, cfg, logw, stdout, stderr)
}

// Serve runs the proxy until ctx ends, then shuts down and returns 0.
func Serve(ctx context.Context, cfg *Config, logw io.Writer, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)))
	if err != nil {
		fmt.Fprintln(stderr, "weather-proxy: "+oneLine(err.Error()))
		return 1
	}
	port := ln.Addr().(*net.TCPAddr).Port

	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	var events *EventLog
	if logw != nil {
		events = NewEventLog(logw)
	}
	errlog := log.New(stderr, "weather-proxy: ", 0)
	p := NewProxy(baseCtx, cfg.Upstream, port, NewWeather(cfg.Seed, cfg.Rates, events), events, errlog)
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on http://127.0.0.1:%d\n", port)

	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintln(stderr, "weather-proxy: "+oneLine(err.Error()))
		return 1
	}
	cancelBase() // ends held callbacks and latency waits
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(shutCtx)
	srv.Close()
	waited := make(chan struct{})
	go func() { p.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Second):
	}
	return 0
}

// ParseArgs parses and checks the command line.
func ParseArgs(args []string) (*Config, error) {
	fs := flag.NewFlagSet("weather-proxy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := &Config{Seed: 1}
	var upstream, conditions string
	fs.IntVar(&cfg.Port, "port", 0, "port on 127.0.0.1 (0 = any free port)")
	fs.StringVar(&upstream, "upstream", "", "base URL of the MoMo API server")
	fs.Func("seed", "seed for every random draw (default 1)", func(s string) error {
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			cfg.Seed = u
			return nil
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("not an integer")
		}
		cfg.Seed = uint64(i)
		return nil
	})
	fs.StringVar(&conditions, "conditions", "", "name=rate,... or all=rate")
	fs.StringVar(&cfg.LogPath, "log", "", "file for one JSON line per condition applied")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("--port %d is not 0-65535", cfg.Port)
	}
	if upstream == "" {
		return nil, errors.New("--upstream URL is required")
	}
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("--upstream %q is not an absolute http(s) URL", upstream)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--upstream %q must not have a query or fragment", upstream)
	}
	cfg.Upstream = u
	if cfg.Rates, err = ParseConditions(conditions); err != nil {
		return nil, err
	}
	return cfg, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
