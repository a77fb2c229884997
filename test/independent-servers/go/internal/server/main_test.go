package server

import (
	"flag"
	"os"
	"testing"
)

// TestMain lets the sleep-bound tests overlap: most of them wait for timers, not the CPU.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			explicit = true
		}
	})
	if !explicit {
		_ = flag.Set("test.parallel", "32")
	}
	os.Exit(m.Run())
}
