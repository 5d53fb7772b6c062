"""The foundation end to end, on a real multi-process cluster (ZooKeeper, Nimbus with the
plugin, two supervisors, worker JVMs, Python shell bolts, the planner service):

1. Twitter trends is submitted; Nimbus' assignment equals the plan the service answered, and the
   status Nimbus shows says so; the sink's final top-k equals a direct count over the replay file.
2. The planner service is stopped: a second topology is still scheduled (fallback to Storm's
   DefaultScheduler), Nimbus stays up and the topology's status says why.
3. The service is started again: the next topology is planned by it.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from storm_planner.cluster.launcher import running_cluster
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.submit import nimbus
from storm_planner.submit.operations import submit_project

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
TRENDS = REPO / "topologies" / "trends"
WORDCOUNT = REPO / "tests" / "cluster" / "fixtures" / "wordcount"
FEED = TRENDS / "src" / "trends" / "data" / "tweets.jsonl"


def expected_top_k(k: int) -> list[list]:
    sys.path.insert(0, str(TRENDS / "src"))
    try:
        from trends.oracle import expected_top_k as oracle
    finally:
        sys.path.remove(str(TRENDS / "src"))
    return oracle(FEED, k)


def last_rankings(sink: Path) -> list[list] | None:
    lines = sink.read_text().splitlines() if sink.exists() else []
    return json.loads(lines[-1])["rankings"] if lines else None


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def scheduler_status(cluster, topology_id: str) -> str:
    a = cluster.addresses
    with nimbus.nimbus_client(a.nimbus_host, a.nimbus_port) as client:
        return client.getTopologyInfo(topology_id).sched_status or ""


def applied_plan(cluster, topology_id: str) -> dict[str, str]:
    return {row["executor"]: f"{row['node']}:{row['port']}" for row in cluster.assignment(topology_id)}


def planned(cluster, topology_id: str) -> list[dict]:
    return [r for r in read_plan_log(cluster.plan_log) if r["topology"] == topology_id]


@pytest.mark.skipif(default_plugin_jar() is None or not default_plugin_jar().is_file(),
                    reason="plugin jar not built (make plugin)")
def test_trends_is_planned_applied_and_correct_then_fallback_and_recovery(tmp_path):
    sink = tmp_path / "trends.jsonl"
    k = 5
    with running_cluster(tmp_path, plugin=True, planner=True) as cluster:
        a = cluster.addresses
        trends = submit_project(TRENDS, nimbus=a.nimbus, wait_active=180, options={
            "trends.sink": str(sink), "trends.feed": str(FEED), "trends.top_k": k,
            "topology.workers": 2, "planner.algorithm": "even",
        })

        # 1. What Nimbus applied is what the planner answered.
        plans = wait_for(lambda: planned(cluster, trends.id), 30, "the planner's plan for trends")
        assert plans[-1]["error"] is None
        assert applied_plan(cluster, trends.id) == plans[-1]["assignments"]
        assert {slot.split(":")[0] for slot in plans[-1]["assignments"].values()} == set(a.supervisors)
        assert scheduler_status(cluster, trends.id).startswith("Planned by storm-planner (algorithm even")

        # ... and the topology computes the right answer through Python shell bolts.
        wait_for(lambda: Path(f"{sink}.feed-done").exists(), 240, "the trends feed to drain")
        expected = expected_top_k(k)
        wait_for(lambda: last_rankings(sink) == expected, 60,
                 f"the final top-{k} {expected} (last: {last_rankings(sink)})")

        # 2. Planner down: the next topology still runs, scheduled by Storm's DefaultScheduler.
        assert cluster.stop_daemon("planner") == "stopped"
        fallback = submit_project(WORDCOUNT, nimbus=a.nimbus, name="wordcount-fallback", wait_active=120,
                                  options={"wordcount.output": str(tmp_path / "fallback.txt"),
                                           "topology.workers": 1})
        assert len(cluster.assignment(fallback.id)) == fallback.executors
        status = scheduler_status(cluster, fallback.id)
        assert status.startswith("Fell back to DefaultScheduler (unreachable)"), status
        assert not planned(cluster, fallback.id)
        assert nimbus.cluster_summary(a.nimbus_host, a.nimbus_port).nimbuses  # Nimbus is still up
        assert applied_plan(cluster, trends.id) == plans[-1]["assignments"]  # left alone

        # 3. Planner back: the next topology is planned by it again.
        cluster.start_planner()
        again = submit_project(WORDCOUNT, nimbus=a.nimbus, name="wordcount-planned", wait_active=120,
                               options={"wordcount.output": str(tmp_path / "planned.txt"),
                                        "topology.workers": 1})
        plans = wait_for(lambda: planned(cluster, again.id), 30, "the planner's plan after restart")
        assert applied_plan(cluster, again.id) == plans[-1]["assignments"]
        assert scheduler_status(cluster, again.id).startswith("Planned by storm-planner")
