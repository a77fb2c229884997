# Sourced by the ensure-*.sh scripts: a tool from PATH when it is usable, else the one built with the Go
# toolchain into .tools/<name>/bin (git-ignored, kept between runs).
#
# use_or_prepare NAME USABLE HINT: prints the path of a usable NAME and exits 0 when PATH or .tools has one
# (USABLE is a function that takes a path); exits 3 with HINT when there is none and no Go to build it; else
# sets $built and GOBIN for `go install` and returns.
use_or_prepare() {
  local name=$1 usable=$2 hint=$3
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  built="$root/.tools/$name/bin/$name"
  if command -v "$name" >/dev/null 2>&1 && "$usable" "$(command -v "$name")"; then
    command -v "$name"
    exit 0
  fi
  if [ -x "$built" ] && "$usable" "$built"; then
    echo "$built"
    exit 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "$hint" >&2
    exit 3
  fi
  mkdir -p "$(dirname "$built")"
  export GOBIN="$(dirname "$built")" GOFLAGS="${GOFLAGS:--buildvcs=false}"
}
