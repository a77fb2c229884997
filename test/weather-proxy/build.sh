#!/bin/sh
# Builds bin/weather-proxy from this directory, offline, with the Go standard library only.
set -eu
cd "$(dirname "$0")"
mkdir -p bin
GOFLAGS=-buildvcs=false GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -o bin/weather-proxy .
