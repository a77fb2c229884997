#!/usr/bin/env bash
# Prints the path of an actionlint binary for the check of .github/workflows/: actionlint from PATH when there
# is one, otherwise one built with the Go toolchain into .tools/actionlint (git-ignored, kept between runs).
# actionlint is a Go module (github.com/rhysd/actionlint/cmd/actionlint); the Go module proxy serves it.
# Progress goes to stderr. Exit 3 with a one-line explanation when neither actionlint nor Go is available.
set -euo pipefail

VERSION=v1.7.7
works() { "$1" -version >/dev/null 2>&1; }

source "$(dirname "$0")/go-tool.sh"
use_or_prepare actionlint works "actionlint is needed to check .github/workflows/ and neither actionlint nor Go is installed: install actionlint (https://github.com/rhysd/actionlint/blob/main/docs/install.md) or Go, then run the command again."
echo "Building actionlint with $(go version | cut -d' ' -f3) into .tools/actionlint (once; it takes a minute)..." >&2
# The release this script was written against; otherwise the newest release the module proxy serves.
if ! go install "github.com/rhysd/actionlint/cmd/actionlint@${VERSION}" >&2 2>/dev/null; then
  echo "github.com/rhysd/actionlint@${VERSION} is not served here; building the newest release" >&2
  go install github.com/rhysd/actionlint/cmd/actionlint@latest >&2
fi
if ! works "$built"; then
  echo "The actionlint built into .tools/actionlint does not run; install it by hand (https://github.com/rhysd/actionlint/blob/main/docs/install.md)." >&2
  exit 3
fi
echo "$built"
