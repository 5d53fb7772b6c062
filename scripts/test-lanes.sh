#!/usr/bin/env bash
# make test's pytest run in two lanes at once: the tests that start a Storm cluster (marker `cluster`,
# run one after another: they share ports and the machine's cgroups and links) and every other test.
# The cluster lane spends most of its time waiting on topologies (settle, measure, drain windows), so
# the other lane's CPU work fits in its gaps: on the 2-core CI machine this saves the other lane's
# 7-8 minutes. The other lane prints as it runs; the cluster lane's log follows it, live from there on.
# Exit status: 0 only when both lanes pass.
set -uo pipefail
python=${1:?usage: scripts/test-lanes.sh PYTHON [pytest arguments]}
shift
logs=$(mktemp -d "${TMPDIR:-/tmp}/storm-planner-test-lanes.XXXXXX")
# Each lane has its own base temp folder: neither clears the other's, and no cache is shared.
"$python" -m pytest -p no:cacheprovider --basetemp "$logs/cluster-tmp" -m cluster "$@" >"$logs/cluster.log" 2>&1 &
cluster=$!
trap 'kill -INT "$cluster" 2>/dev/null' INT TERM  # pytest tears its cluster down on SIGINT
echo "the cluster tests run beside these, their log in $logs/cluster.log (shown once these finish)"
"$python" -m pytest -p no:cacheprovider --basetemp "$logs/other-tmp" -m "not cluster" "$@"
other=$?
echo
echo "==================== the tests with a Storm cluster (lane 2, started with lane 1) ===================="
tail -n +1 -f --pid="$cluster" "$logs/cluster.log"
wait "$cluster"
clustered=$?
echo "lanes: other tests exit $other, cluster tests exit $clustered"
[ "$other" -eq 0 ] && [ "$clustered" -eq 0 ]
