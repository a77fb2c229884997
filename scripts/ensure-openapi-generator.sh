#!/usr/bin/env bash
# Prints the path of the OpenAPI Generator command-line jar (org.openapitools:openapi-generator-cli) for the test
# that generates a client from the sandbox's /openapi.json. Maven keeps it in its local repository (~/.m2, kept
# between runs); on a cold cache Maven fetches it from Maven Central once (about 40 MB with the plugin that
# fetches it). Progress goes to stderr. Exit 3 with a one-line explanation when Java or Maven is missing.
set -euo pipefail

VERSION=7.25.0
REPOSITORY="${MAVEN_REPOSITORY:-$HOME/.m2/repository}"
JAR="$REPOSITORY/org/openapitools/openapi-generator-cli/$VERSION/openapi-generator-cli-$VERSION.jar"

if ! command -v java >/dev/null 2>&1; then
  echo "Java is needed to run OpenAPI Generator and is not installed: install a JDK 11 or later (Debian: apt-get install default-jdk-headless), then run the command again." >&2
  exit 3
fi
if [ ! -f "$JAR" ]; then
  if ! command -v mvn >/dev/null 2>&1; then
    echo "Maven is needed to fetch OpenAPI Generator $VERSION and is not installed: install Maven (Debian: apt-get install maven), or put openapi-generator-cli-$VERSION.jar at $JAR, then run the command again." >&2
    exit 3
  fi
  echo "Fetching org.openapitools:openapi-generator-cli:$VERSION from Maven Central into $REPOSITORY (once)..." >&2
  mvn -q -B -Dmaven.repo.local="$REPOSITORY" dependency:get -Dartifact="org.openapitools:openapi-generator-cli:$VERSION" -Dtransitive=false >&2
fi
echo "$JAR"
