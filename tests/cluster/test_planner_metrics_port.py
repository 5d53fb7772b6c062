"""The planner service's /metrics in the clusters the kit starts: a port of its own in the description, passed
to ``storm-planner serve`` by the local launcher, the compose file and the compose hosts, and printed."""
from __future__ import annotations

import pytest
from test_description import minimal

from storm_planner.cluster import compose, compose_hosts
from storm_planner.cluster.description import DescriptionError, default_description, parse_description
from storm_planner.cluster.launcher import ClusterOptions, LocalCluster


def metrics_arguments(command: list[str]) -> tuple[str, str]:
    return command[command.index("--metrics-host") + 1], command[command.index("--metrics-port") + 1]


def test_the_description_gives_the_planner_metrics_a_port_the_offset_moves():
    assert default_description().ports.planner_metrics == 9627
    moved = parse_description(minimal(ports={"offset": 1000, "planner_metrics": 9700}))
    assert moved.ports.planner_metrics == 10700 and 10700 in moved.port_list()
    with pytest.raises(DescriptionError, match="ports.planner_metrics: port 7627 is already used by ports.planner"):
        parse_description(minimal(ports={"planner_metrics": 7627}))


def test_the_local_cluster_serves_the_planner_metrics_on_its_host_and_says_where(tmp_path, monkeypatch):
    cluster = LocalCluster(default_description().with_offset(100), tmp_path)
    started = []
    monkeypatch.setattr(cluster, "_start", lambda name, command, port, env=None: started.append(command))
    cluster.start_planner(wait=False)
    (command,) = started
    assert metrics_arguments(command) == ("127.0.0.1", "9727")
    assert cluster._addresses().planner_metrics_url == "http://127.0.0.1:9727/metrics"
    without = LocalCluster(default_description(), tmp_path, ClusterOptions(planner=False))
    assert without._addresses().planner_metrics_url is None


def test_the_compose_clusters_serve_the_planner_metrics_too():
    description = default_description()
    planner = compose.compose_document(description)["services"]["planner"]
    assert metrics_arguments(planner["command"]) == (compose.ANY_ADDRESS, "9627")
    assert "127.0.0.1:9627:9627" in planner["ports"]
    (serve,) = [c for c in compose_hosts._master_commands(description) if "serve" in c]
    assert metrics_arguments(serve) == (description.host, "9627")
