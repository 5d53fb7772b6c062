#!/usr/bin/env bash
# Issue #13's benchmark: Storm's DefaultScheduler, ResourceAwareScheduler and the PlannerScheduler plugin
# (against the real Python planner service) side by side on generated production-sized clusters.
#
#   benchmarks/harness/scripts/bench-scale.sh [--scale 1.0] [--topologies 45] [--clusters production,huge]
#       [--schedulers default,ras,even,topdown,milp] [--milp-time-limit-secs 2] [--deadline-ms 120000]
#       [--seed 13] [--repeat 3] [--out benchmarks/results/scale]
#
# --deadline-ms is the plugin's planner.service.timeout.ms (the service answers within 80 % of it; a topology
# it could not plan in time falls back to DefaultScheduler). A quick run: benchmarks/harness/scripts/bench-scale.sh
# --scale 0.05. Progress on stderr; the report in <out>/storm-scale.csv and storm-scale.md (paths relative to the
# repository root); Storm's and the plugin's log in benchmarks/harness/java/target/bench-scale.log, the service's
# in benchmarks/harness/java/target/bench-scale-service.log.
# PLANNER_PYTHON (default .venv/bin/python, made by `make python-env`) runs the service; BENCH_HEAP sets -Xmx;
# BENCH_DUMP_REQUESTS=DIR writes every plugin request there (replayed in process by
# `python -m storm_planner_bench.common.profile_request DIR/request-1.thrift`).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PLANNER_PYTHON="${PLANNER_PYTHON:-$PWD/.venv/bin/python}"
module=benchmarks/harness/java

# One Maven run: compiling in the same build makes the classpath name the plugin's own classes
# (storm-scheduler/target/classes and test-classes) instead of artifacts looked up in a repository.
mvn -B -q -Dstyle.color=never -pl "$module" -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-scale.classpath
classpath="$(cat "$module/target/bench-scale.classpath")"

java -Xmx"${BENCH_HEAP:-3g}" -Dbench.command="benchmarks/harness/scripts/bench-scale.sh" \
  ${BENCH_DUMP_REQUESTS:+-Dbench.dump.requests="$BENCH_DUMP_REQUESTS"} \
  -Dbench.service.log="$module/target/bench-scale-service.log" \
  -cp "$module/target/test-classes:$classpath" \
  org.stormplanner.scheduler.bench.ClusterScaleBenchmark "$@" > "$module/target/bench-scale.log"
