// Command momo-server runs an in-memory MoMo Open API server on 127.0.0.1.
package main

import (
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"momoserver/internal/server"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	cfg          server.Config
	port         int
	listControls bool
	listDevs     bool
	help         bool
}

const usage = `usage: momo-server [--port N] [--profile spec|mtn-sandbox]
       [--keys collection=K1,disbursement=K2,remittance=K3] [--target-environment NAME]
       [--currency CODE] [--token-lifetime S] [--delayed-approval-seconds S]
       [--pending-timeout-seconds S] [--control NAME ...] [--list-controls]
       [--deviation NAME ...] [--list-deviations]
`

var valued = map[string]bool{
	"port": true, "profile": true, "keys": true, "target-environment": true, "currency": true,
	"token-lifetime": true, "delayed-approval-seconds": true, "pending-timeout-seconds": true,
	"control": true, "deviation": true,
}

var reEnvName = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,64}$`)
var reKey = regexp.MustCompile(`^[!-~]{1,256}$`)

func parseSeconds(name, v string, allowZero bool) (time.Duration, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || (!allowZero && f == 0) || f > 1e7 {
		if allowZero {
			return 0, fmt.Errorf("--%s must be a number of seconds >= 0, not %q", name, v)
		}
		return 0, fmt.Errorf("--%s must be a number of seconds > 0, not %q", name, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func parseArgs(args []string) (options, error) {
	o := options{cfg: server.DefaultConfig(), port: 0}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return o, fmt.Errorf("unexpected argument %q; options start with --", a)
		}
		name := strings.TrimLeft(a, "-")
		val, hasVal := "", false
		if k, v, ok := strings.Cut(name, "="); ok {
			name, val, hasVal = k, v, true
		}
		switch name {
		case "list-controls":
			if hasVal {
				return o, fmt.Errorf("--list-controls takes no value")
			}
			o.listControls = true
			continue
		case "list-deviations":
			if hasVal {
				return o, fmt.Errorf("--list-deviations takes no value")
			}
			o.listDevs = true
			continue
		case "help", "h":
			o.help = true
			continue
		}
		if !valued[name] {
			return o, fmt.Errorf("unknown option --%s; see --help", name)
		}
		if !hasVal {
			if i+1 >= len(args) {
				return o, fmt.Errorf("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "port":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 65535 {
				return o, fmt.Errorf("--port must be an integer from 0 to 65535, not %q", val)
			}
			o.port = n
		case "profile":
			if val != server.ProfileSpec && val != server.ProfileMTN {
				return o, fmt.Errorf("--profile must be spec or mtn-sandbox, not %q", val)
			}
			o.cfg.Profile = val
		case "keys":
			if strings.TrimSpace(val) == "" {
				return o, fmt.Errorf("--keys must look like collection=K1,disbursement=K2,remittance=K3")
			}
			for _, part := range strings.Split(val, ",") {
				p, k, ok := strings.Cut(part, "=")
				p = strings.TrimSpace(p)
				if !ok {
					return o, fmt.Errorf("--keys entry %q must be product=key (collection, disbursement or remittance)", part)
				}
				if p != "collection" && p != "disbursement" && p != "remittance" {
					return o, fmt.Errorf("--keys names unknown product %q; use collection, disbursement or remittance", p)
				}
				if !reKey.MatchString(k) {
					return o, fmt.Errorf("--keys needs a non-empty key without spaces for %s", p)
				}
				o.cfg.Keys[p] = k
			}
		case "target-environment":
			if !reEnvName.MatchString(val) {
				return o, fmt.Errorf("--target-environment must be 1-64 letters, digits, '.', '_', '~' or '-', not %q", val)
			}
			o.cfg.TargetEnvironment = val
		case "currency":
			if !regexp.MustCompile(`^[A-Z]{3}$`).MatchString(val) {
				return o, fmt.Errorf("--currency must be an ISO 4217 code of three capital letters, not %q", val)
			}
			o.cfg.Currency = val
		case "token-lifetime":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 315360000 {
				return o, fmt.Errorf("--token-lifetime must be a whole number of seconds from 1 to 315360000, not %q", val)
			}
			o.cfg.TokenLifetime = n
		case "delayed-approval-seconds":
			d, err := parseSeconds(name, val, true)
			if err != nil {
				return o, err
			}
			o.cfg.DelayedApproval = d
		case "pending-timeout-seconds":
			d, err := parseSeconds(name, val, false)
			if err != nil {
				return o, err
			}
			o.cfg.PendingTimeout = d
		case "control":
			for _, c := range strings.Split(val, ",") {
				c = strings.TrimSpace(c)
				if c == "" {
					return o, fmt.Errorf("--control needs a control name; --list-controls shows them")
				}
				if _, ok := server.LookupControl(c); !ok {
					return o, fmt.Errorf("--control %q is unknown; --list-controls shows the names", c)
				}
				o.cfg.Controls[c] = true
			}
		case "deviation":
			for _, d := range strings.Split(val, ",") {
				d = strings.TrimSpace(d)
				if d == "" {
					return o, fmt.Errorf("--deviation needs a deviation name; --list-deviations shows them")
				}
				if _, ok := server.LookupDeviation(d); !ok {
					return o, fmt.Errorf("--deviation %q is unknown; --list-deviations shows the names", d)
				}
				o.cfg.Deviations[d] = true
			}
		}
	}
	if err := o.cfg.Validate(); err != nil {
		return o, err
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, "momo-server: "+strings.ReplaceAll(err.Error(), "\n", " "))
		return 2
	}
	if o.help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if o.listControls {
		server.PrintControls(stdout)
		return 0
	}
	if o.listDevs {
		server.PrintDeviations(stdout)
		return 0
	}
	srv, err := server.New(o.cfg)
	if err != nil {
		fmt.Fprintln(stderr, "momo-server: "+err.Error())
		return 2
	}
	if os.Getenv("MOMO_SERVER_DEBUG") != "" {
		srv.SetLogger(log.New(stderr, "momo-server: ", log.LstdFlags))
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		fmt.Fprintf(stderr, "momo-server: cannot listen on 127.0.0.1:%d: %v\n", o.port, err)
		return 1
	}
	port := ln.Addr().(*net.TCPAddr).Port

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	fmt.Fprintf(stdout, "listening on http://127.0.0.1:%d\n", port)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	select {
	case <-sigs:
		srv.Close()
		return 0
	case err := <-errc:
		if err != nil {
			fmt.Fprintln(stderr, "momo-server: "+err.Error())
			return 1
		}
		return 0
	}
}
