#!/usr/bin/env bash
# Prints the path of a k6 binary recent enough for the load tests: k6 from PATH when it is, otherwise one
# built with the Go toolchain into .tools/k6 (git-ignored, kept between runs). Progress goes to stderr.
# Exit 3 with a one-line explanation when neither k6 nor Go is available.
set -euo pipefail

MINIMUM=1.0.0
version_of() { "$1" version 2>/dev/null | sed -n 's/^k6 v\([0-9][0-9.]*\).*/\1/p' | head -n 1; }
recent_enough() {
  local version
  version=$(version_of "$1")
  [ -n "$version" ] && [ "$(printf '%s\n%s\n' "$MINIMUM" "$version" | sort -V | head -n 1)" = "$MINIMUM" ]
}

source "$(dirname "$0")/go-tool.sh"
use_or_prepare k6 recent_enough "k6 ${MINIMUM} or newer is needed for the load tests and neither k6 nor Go is installed: install k6 (https://grafana.com/docs/k6/latest/set-up/install-k6/) or Go, then run the command again."
echo "Building k6 with $(go version | cut -d' ' -f3) into .tools/k6 (once; it takes a few minutes)..." >&2
# The release the issue names first; otherwise the newest release of k6 the module proxy serves.
if ! go install go.k6.io/k6/v2@v2.3.0 >&2 2>/dev/null; then
  latest=$(go list -m -versions go.k6.io/k6 2>/dev/null | tr ' ' '\n' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1)
  if [ -z "$latest" ]; then
    echo "Could not find a k6 release on the Go module proxy ($(go env GOPROXY)); install k6 by hand (https://grafana.com/docs/k6/latest/set-up/install-k6/)." >&2
    exit 3
  fi
  echo "go.k6.io/k6/v2@v2.3.0 is not served here; building go.k6.io/k6@${latest}" >&2
  go install "go.k6.io/k6@${latest}" >&2
fi
if ! recent_enough "$built"; then
  echo "The k6 built into .tools/k6 is older than ${MINIMUM}; install k6 by hand (https://grafana.com/docs/k6/latest/set-up/install-k6/)." >&2
  exit 3
fi
echo "$built"
