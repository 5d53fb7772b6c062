#!/usr/bin/env bash
# Regenerates the Java Thrift classes of the plugin from the one wire contract.
#
#   scripts/gen-thrift.sh [OUTPUT_DIR]
#
# OUTPUT_DIR defaults to storm-scheduler/src/main/gen-java (committed). A check generates into a
# temporary directory and diffs it against the committed tree, so the output must be deterministic:
# the @Generated annotation (which carries the date) is suppressed.
# Needs the Apache Thrift compiler 0.17.0 (Debian: apt-get install thrift-compiler), the same version as
# the libthrift the plugin bundles.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
idl="$repo/python/src/storm_planner/service/transport/planner.thrift"
out="${1:-$repo/storm-scheduler/src/main/gen-java}"
want_version="0.17.0"

command -v thrift >/dev/null || { echo "gen-thrift: thrift compiler not found (apt-get install thrift-compiler)" >&2; exit 1; }
have_version="$(thrift --version | awk '{print $3}')"
if [[ "$have_version" != "$want_version" ]]; then
  echo "gen-thrift: thrift $have_version found, $want_version wanted (it must match libthrift in storm-scheduler/pom.xml)" >&2
  exit 1
fi

# Generate into a fresh directory, then replace the package tree, so a struct removed from the IDL does
# not leave a stale class behind.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
thrift -gen java:generated_annotations=suppress -out "$tmp" "$idl"

mkdir -p "$out"
rm -rf "$out/org/stormplanner/thrift"
mkdir -p "$out/org/stormplanner"
cp -R "$tmp/org/stormplanner/thrift" "$out/org/stormplanner/thrift"
echo "gen-thrift: generated $(find "$out/org/stormplanner/thrift" -name '*.java' | wc -l) classes into $out"
