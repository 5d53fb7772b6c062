"""Parallelism applied at runtime, on a real multi-process cluster (ZooKeeper, Nimbus with the plugin, a
fast and a slow supervisor, worker JVMs, Python shell bolts, the planner service with ``--nimbus``):

1. The word count is submitted with one ``count`` executor over four tasks (``wordcount.tasks.count=4``):
   Nimbus creates four tasks in one executor.
2. ``hetero`` places it and advises more ``count`` executors (its profile makes ``count`` the hot
   component); with ``planner.rebalance: true`` the service asks Nimbus to rebalance, after its answer.
   Nimbus ends up running the advised executors, placed where the service's last plan says, and the plan
   log records the rebalance as applied (the service checks; it asks again if Storm lost the request).
3. ``storm-planner rebalance`` refuses more executors than tasks, unknown components and unknown
   topologies, then moves ``count`` back to one executor; the service places it and, within its
   cooldown, does not rebalance again.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from storm_planner.cli import main
from storm_planner.cluster.launcher import running_cluster
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.submit import nimbus
from storm_planner.submit.operations import running_components, submit_project

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(default_plugin_jar() is None or not default_plugin_jar().is_file(),
                       reason="plugin jar not built (mvn package)"),
]

WORDCOUNT = Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "wordcount"
TASKS = 4
# count costs 40x words per tuple; one executor thread may use one core at most (executor_cap), so one
# count executor cannot use the fast supervisor's two cores, let alone the slow one's.
PROFILE = {"input_rate": 10, "executor_cap": 100, "components": {
    "words": {"times": {"i7": 0.05, "i5": 0.1}},
    "count": {"times": {"i7": 2.0, "i5": 4.0}},
}}


def wait_for(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def running(cluster, name: str):
    a = cluster.addresses
    with nimbus.nimbus_client(a.nimbus_host, a.nimbus_port) as client:
        return running_components(client, name)


def plans(cluster, topology_id: str) -> list[dict]:
    return [r for r in read_plan_log(cluster.plan_log) if r["topology"] == topology_id]


def rebalances(cluster, topology_id: str) -> list[dict]:
    return [r for r in read_plan_log(cluster.plan_log, event="rebalance") if r["topology"] == topology_id]


def count_executors_placed_as_planned(cluster, topology_id: str, expected: int):
    """Nimbus runs ``expected`` count executors, exactly where the service's last plan put them."""
    rows = cluster.assignment(topology_id)
    assignment = {row["executor"]: f"{row['node']}:{row['port']}" for row in rows}
    last = (plans(cluster, topology_id) or [None])[-1]
    if sum(row["component"] == "count" for row in rows) != expected or last is None:
        return None
    return last if last["assignments"] == assignment else None


def test_the_service_rebalances_to_hetero_advice_and_the_cli_rebalances_within_the_task_count(tmp_path, capsys):
    with running_cluster(tmp_path, ui=False) as cluster:
        a = cluster.addresses
        started = time.monotonic()
        row = submit_project(WORDCOUNT, nimbus=a.nimbus, name="hot", wait_active=120, options={
            "wordcount.output": str(tmp_path / "counts.txt"),
            "wordcount.parallelism.count": 1,
            "wordcount.tasks.count": TASKS,
            "topology.workers": 2,
            "planner.algorithm": "hetero",
            "planner.hetero.profiles": json.dumps(PROFILE),
            "planner.rebalance": True,
            "planner.rebalance.wait.secs": 1,
        })

        # 1. Four tasks of count in one executor: the first plan places "[a-(a+3)]".
        first = wait_for(lambda: plans(cluster, row.id), 30, "the first plan")[0]
        assert first["error"] is None
        count_first = first["advice"]["current"]["count"]
        assert count_first == 1 and first["advice"]["tasks"]["count"] == TASKS
        assert sum(_tasks_of(e) == TASKS for e in first["assignments"]) == 1
        # 2. The advice: more count executors, for a higher predicted max input rate, and the service asks.
        advised = first["advice"]["parallelism"]["count"]
        assert 1 < advised <= TASKS
        assert first["advice"]["max_input_rate"] > 1.1 * first["advice"]["current_max_input_rate"]
        assert any(n.startswith("rebalance: asking Nimbus for count 1->") for n in first["notes"]), first["notes"]
        (request,) = wait_for(lambda: rebalances(cluster, row.id), 30, "the service's rebalance request")
        assert request["outcome"] == "applied", request["message"]
        assert request["name"] == "hot" and request["executors"] == {"count": advised}
        assert request["message"].startswith(f"rebalance of 'hot' applied: count 1->{advised}")

        final = wait_for(lambda: count_executors_placed_as_planned(cluster, row.id, advised), 60,
                         f"Nimbus to run {advised} count executors where the service planned them")
        assert final["advice"]["current"]["count"] == advised and "rebalance: asking" not in " ".join(final["notes"])
        after = running(cluster, "hot")
        assert after.executors["count"] == advised and after.tasks["count"] == TASKS
        nodes = {slot.split(":")[0] for slot in final["assignments"].values()}
        with capsys.disabled():
            print(f"\nauto rebalance: count 1 -> {advised} executors over {TASKS} tasks on {sorted(nodes)}; "
                  f"predicted max input rate {first['advice']['current_max_input_rate']:.0f} -> "
                  f"{first['advice']['max_input_rate']:.0f} tuples/s; applied {time.monotonic() - started:.0f} s "
                  f"after the submit began")

        # 3. The command: checked against the task counts Nimbus reports, then applied.
        capsys.readouterr()
        assert main(["rebalance", "hot", "-e", f"count={TASKS + 1}", "--nimbus", a.nimbus]) == 2
        assert f"has {TASKS} task(s) of 'count'" in capsys.readouterr().err
        assert main(["rebalance", "hot", "-e", "cuont=2", "--nimbus", a.nimbus]) == 2
        assert "no component 'cuont'" in capsys.readouterr().err
        assert main(["rebalance", "cold", "-e", "count=2", "--nimbus", a.nimbus]) == 2
        assert "no topology named 'cold'" in capsys.readouterr().err
        assert running(cluster, "hot").executors["count"] == advised  # nothing refused reached Nimbus

        assert main(["rebalance", "hot", "-e", "count=1", "--wait-secs", "0", "--wait-applied", "60",
                     "--nimbus", a.nimbus]) == 0
        assert f"rebalance of 'hot' applied: count {advised}->1" in capsys.readouterr().out
        manual = wait_for(lambda: count_executors_placed_as_planned(cluster, row.id, 1), 60,
                          "Nimbus to run 1 count executor where the service planned it")
        # hetero advises more again, but the service's cooldown holds it back.
        assert manual["advice"]["parallelism"]["count"] > 1 and manual["advice"]["current"]["count"] == 1
        assert any("waits for the cooldown" in n for n in manual["notes"]), manual["notes"]
        assert len(rebalances(cluster, row.id)) == 1


def _tasks_of(executor: str) -> int:
    first, last = executor.strip("[]").split("-")
    return int(last) - int(first) + 1
