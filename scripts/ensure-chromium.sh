#!/usr/bin/env bash
# Prints the path of a Chromium for the browser test of the certification report
# (test/certification/report-run.test.ts): the one on PATH, otherwise Debian's chromium package installed with
# apt-get (as root). Progress goes to stderr. Exit 3 with a one-line explanation when it cannot be had.
set -euo pipefail

find_chromium() {
  local candidate
  for candidate in chromium chromium-browser; do
    if command -v "$candidate" >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

if find_chromium; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "Chromium is needed for the browser test of the certification report and is not installed: run 'sudo apt-get install chromium' (Debian, Ubuntu), or install Chromium and put it on PATH." >&2
  exit 3
fi
echo "Installing Debian's chromium for the browser test (once; a few minutes)..." >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 || ! find_chromium; then
  echo "Could not install Chromium with apt-get (is a Debian package mirror reachable?): install it by hand, e.g. 'apt-get install chromium'." >&2
  exit 3
fi
