#!/usr/bin/env bash
# make test's pytest run in two lanes at once:
#   lane 1: every test that starts no local Storm cluster, then the docker-compose cluster's tests
#           (marker `compose`: containers on their own ports and subnet, so they run beside lane 2);
#   lane 2: the tests that start a local Storm cluster or make bridges and namespaces on this host
#           (markers `cluster`, `host_network`), one after another, as they share ports, subnets,
#           cgroups and links. Not the benchmarks run end to end (marker `bench`): `make test-bench`.
# Lane 2 spends most of its time waiting on topologies (settle, measure, drain windows), so lane 1's work
# fits in its gaps: on the 2-core CI machine lane 2 alone takes about as long as both did one after the
# other. Lane 1 prints as it runs; lane 2's log follows it, live from there on. Exit status: 0 only when
# both lanes pass (a run with no test selected passes). Extra arguments go to every run; a `-m` among
# them would undo the split.
set -uo pipefail
python=${1:?usage: scripts/test-lanes.sh PYTHON [pytest arguments]}
shift
CLUSTER_LANE="(cluster or host_network) and not compose and not bench"
work=$(mktemp -d "${TMPDIR:-/tmp}/storm-planner-test-lanes.XXXXXX")
lanes=()
# Ctrl-C or TERM reaches both lanes (pytest tears its clusters down on SIGINT); the folder goes at exit.
stop() { for lane in "${lanes[@]}"; do kill -INT -- "-$lane" 2>/dev/null; done; }
trap stop INT TERM
trap 'rm -rf "$work"' EXIT
passed() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }   # 5: no test selected
# Lane 1: the tests without a local cluster, then the compose module's (whatever the first run's result).
lane_one() {
    local first second
    "$python" -m pytest -p no:cacheprovider --basetemp "$work/other-tmp" -m "not (cluster or host_network)" "$@"
    first=$?
    [ "$first" -eq 2 ] && return 2   # interrupted: the compose tests do not start
    echo
    echo "==================== the docker-compose cluster's tests (lane 1, second part) ===================="
    "$python" -m pytest -p no:cacheprovider --basetemp "$work/compose-tmp" -m compose "$@"
    second=$?
    passed "$first" || return "$first"
    return "$second"
}
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
lane_one "$@" &
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
