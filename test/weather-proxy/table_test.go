package main

import (
	"fmt"
	"os"
	"testing"
)

// TestPrintTable prints the operation table in README form when
// WEATHER_PROXY_PRINT_TABLE=1 (used to keep README.md in step with ops.go).
func TestPrintTable(t *testing.T) {
	if os.Getenv("WEATHER_PROXY_PRINT_TABLE") != "1" {
		t.Skip("set WEATHER_PROXY_PRINT_TABLE=1 to print")
	}
	fmt.Println("| # | Method and path | internal-error (500) | Clause |")
	fmt.Println("|---|---|---|---|")
	for _, op := range Operations {
		yes := "no"
		if op.Has500 {
			yes = "**yes**"
		}
		fmt.Printf("| %s | %s `%s` | %s | %s |\n", op.Num, op.Method, op.Path, yes, op.Clause)
	}
}
