#!/bin/sh
# Builds the MoMo Open API server from scratch, offline, with the standard library only.
set -eu
cd "$(dirname "$0")"
mkdir -p bin
GOFLAGS=-buildvcs=false GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -o bin/momo-server .
echo "built $(pwd)/bin/momo-server"
