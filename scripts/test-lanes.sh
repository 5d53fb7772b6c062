#!/usr/bin/env bash
# make test's pytest run in two lanes at once: the tests that start a Storm cluster or make bridges and
# namespaces on this host (markers `cluster`, `host_network`; one after another, as they share ports,
# subnets, cgroups and links) and every other test. The cluster lane spends most of its time waiting on
# topologies (settle, measure, drain windows), so the other lane's CPU work fits in its gaps: on the
# 2-core CI machine this saves the other lane's 7-8 minutes. The other lane prints as it runs; the
# cluster lane's log follows it, live from there on. Exit status: 0 only when both lanes pass (a lane
# with no test selected passes). Extra arguments go to both lanes; a `-m` among them would undo the split.
set -uo pipefail
python=${1:?usage: scripts/test-lanes.sh PYTHON [pytest arguments]}
shift
CLUSTER_LANE="cluster or host_network"
work=$(mktemp -d "${TMPDIR:-/tmp}/storm-planner-test-lanes.XXXXXX")
lanes=()
# Ctrl-C or TERM reaches both lanes (pytest tears its clusters down on SIGINT); the folder goes at exit.
stop() { for lane in "${lanes[@]}"; do kill -INT -- "-$lane" 2>/dev/null; done; }
trap stop INT TERM
trap 'rm -rf "$work"' EXIT
passed() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }   # 5: no test selected
# A lane's exit status; a wait cut short by a trapped signal waits again for the lane to finish.
finish() {
    local status
    while :; do
        wait "$1"; status=$?
        if [ "$status" -gt 128 ] && kill -0 "$1" 2>/dev/null; then continue; fi
        return "$status"
    done
}

# Each lane in its own process group (set -m): a background job of a script otherwise ignores SIGINT.
# Each has its own base temp folder, and no cache is shared.
set -m
"$python" -m pytest -p no:cacheprovider --basetemp "$work/cluster-tmp" -m "$CLUSTER_LANE" "$@" \
    >"$work/cluster.log" 2>&1 &
cluster=$!
"$python" -m pytest -p no:cacheprovider --basetemp "$work/other-tmp" -m "not ($CLUSTER_LANE)" "$@" &
other=$!
set +m
lanes=("$cluster" "$other")
finish "$other"; other_status=$?
echo
echo "==================== the tests with a Storm cluster (lane 2, started with lane 1) ===================="
tail -n +1 -f --pid="$cluster" "$work/cluster.log" &
tailer=$!
finish "$cluster"; cluster_status=$?
wait "$tailer"
echo "lanes: other tests exit $other_status, cluster tests exit $cluster_status"
passed "$other_status" && passed "$cluster_status"
