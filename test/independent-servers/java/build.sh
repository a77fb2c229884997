#!/bin/sh
# Builds the server and the self-test from scratch with the JDK's javac (no dependencies).
set -eu
cd "$(dirname "$0")"
rm -rf out
mkdir -p out
javac --release 17 -Xlint:all,-serial -d out src/momo/*.java
echo "built into $(pwd)/out"
