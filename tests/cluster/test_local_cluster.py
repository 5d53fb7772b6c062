"""A real multi-process cluster: up, supervisors with capacities and meta,
submit the word count, its output fills, kill, down leaves nothing behind.

Runs once with Storm's default scheduler and, when the plugin jar has been
built, once with the planner plugin and service.
"""
from __future__ import annotations

import time
from collections import defaultdict

import pytest

from storm_planner.cluster import daemons
from storm_planner.cluster.locations import default_plugin_jar
from storm_planner.submit import nimbus
from storm_planner.submit.operations import kill_topology, list_topologies, submit_project

pytestmark = pytest.mark.cluster


def _final_counts(path):
    counts = defaultdict(int)
    if path.exists():
        for line in path.read_text().splitlines():
            word, _, count = line.partition(" ")
            if count.isdigit():
                counts[word] = max(counts[word], int(count))
    return dict(counts)


def _plugin_available():
    jar = default_plugin_jar()
    return jar is not None and jar.is_file()


@pytest.mark.parametrize(
    "with_planner",
    [
        pytest.param(False, id="default-scheduler"),
        pytest.param(True, id="planner", marks=pytest.mark.skipif(
            not _plugin_available(), reason="plugin jar not built (mvn -f storm-scheduler package)")),
    ],
)
def test_cluster_runs_a_python_topology(tmp_path, wordcount_project, with_planner):
    from storm_planner.cluster import running_cluster

    output = tmp_path / "counts.txt"
    with running_cluster(tmp_path, plugin=with_planner, planner=with_planner) as cluster:
        a = cluster.addresses
        state_dir = cluster.state_dir
        records = daemons.records(cluster.run_dir)
        expected = {"zookeeper", "nimbus", "dashboard", *(f"supervisor-{s}" for s in a.supervisors)}
        if with_planner:
            expected.add("planner")
        assert {r.name for r in records} == expected

        # Supervisors: readable ids, their capacities (Nimbus) and meta (ZooKeeper).
        summary = nimbus.cluster_summary(a.nimbus_host, a.nimbus_port)
        seen = {v.id: v for v in nimbus.supervisors_from_summary(summary)}
        in_zk = nimbus.supervisors_in_zookeeper(a.zookeeper, a.zookeeper_root)
        for sup in cluster.description.supervisors:
            assert seen[sup.name].cpu == sup.cpu
            assert seen[sup.name].memory_mb == sup.memory_mb
            assert seen[sup.name].slots == len(sup.slot_ports)
            assert in_zk[sup.name].meta == dict(sup.meta)
            assert in_zk[sup.name].ports == sup.slot_ports

        options = {"wordcount.output": str(output), "topology.workers": 2}
        if with_planner:
            options["planner.algorithm"] = "even"
        row = submit_project(wordcount_project, nimbus=a.nimbus, options=options, wait_active=120)
        assert row.status == "ACTIVE" and row.workers == 2
        placed = cluster.assignment(row.id)
        assert len(placed) == row.executors
        assert {p["node"] for p in placed} <= set(a.supervisors)
        assert {p["component"] for p in placed} >= {"words", "count"}

        from wordcount_fixture import ROUNDS, WORDS  # imported from the project's src/ by submit

        deadline = time.monotonic() + 90
        while _final_counts(output) != {w: ROUNDS for w in WORDS} and time.monotonic() < deadline:
            time.sleep(1)
        assert _final_counts(output) == {w: ROUNDS for w in WORDS}

        if with_planner:
            log = (cluster.log_dir / "planner.out").read_text()
            assert f"topology={row.id}" in log and "outcome=ok" in log
            # The e2e tests stop and restart the service to exercise the fallback.
            assert cluster.stop_daemon("planner") == "stopped"
            assert "planner" not in {r.name for r in daemons.records(cluster.run_dir)}
            cluster.start_planner()
            records = daemons.records(cluster.run_dir)

        kill_topology(a.nimbus, "wordcount", wait_secs=0)
        assert list_topologies(a.nimbus) == []
    # running_cluster's exit ran `down`: nothing of the cluster may be left.
    assert all(not daemons.is_alive(r) for r in records)
    assert daemons.stray_processes(state_dir) == []
