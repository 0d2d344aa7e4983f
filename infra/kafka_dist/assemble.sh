#!/usr/bin/env bash
# Assemble Apache Kafka (KRaft) from Maven Central artifacts — no download outside the registries.
#
#   bash infra/kafka_dist/assemble.sh [DEST]      (default: .kafka/ in the repository root)
#
# Writes DEST/lib/*.jar (kafka_2.13 and its runtime dependencies, resolved by Maven) and
# DEST/VERSION. Idempotent: an assembly of the same version is reused. Needs a JVM (17+) and mvn.
set -euo pipefail
KAFKA_VERSION="${SCHEDMATE_KAFKA_VERSION:-4.3.1}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="${1:-$here/.kafka}"
if [[ -f "$dest/VERSION" && "$(cat "$dest/VERSION")" == "$KAFKA_VERSION" && -n "$(ls "$dest"/lib/kafka_2.13-*.jar 2>/dev/null)" ]]; then
  echo "Kafka $KAFKA_VERSION already assembled in $dest"
  exit 0
fi
command -v java >/dev/null || { echo "no java on PATH: install a JDK 17+ (apt install openjdk-17-jre-headless)" >&2; exit 1; }
command -v mvn >/dev/null || { echo "no mvn on PATH: install Maven (apt install maven)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>schedmate</groupId><artifactId>kafka-dist</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>2.25.4</version></dependency>
  </dependencies>
</project>
POM
start=$(date +%s)
rm -rf "$dest/lib"
mkdir -p "$dest/lib"
mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dest/lib"
echo "$KAFKA_VERSION" >"$dest/VERSION"
echo "Kafka $KAFKA_VERSION assembled in $dest ($(ls "$dest/lib" | wc -l) jars, $(( $(date +%s) - start )) s)"
