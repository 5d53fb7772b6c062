"""The planner service with the metrics store and the re-planner, over real Thrift and a real ZooKeeper:
measured loads replace estimates, a running topology is re-planned when its traffic says so (within the
budget), and the notes say where the figures came from and what was skipped."""
from __future__ import annotations

import argparse
import time

import pytest
from metrics_docs import encode, window_doc

from storm_planner.adaptation.replan import Replanner
from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import MetricsStore
from storm_planner.service.metrics import metrics_for_serve
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect
from storm_planner.service.transport.contract import planner_thrift as T

TOPOLOGY = "pipe-1-1700000000"
COMPONENTS = ["numbers", "numbers", "relay", "relay", "sink", "__acker"]


def spec(current: dict[str, str], options: dict[str, str] | None = None):
    components = [T.Component(id="numbers", type="spout", parallelism=2),
                  T.Component(id="relay", type="bolt", parallelism=2),
                  T.Component(id="sink", type="bolt", parallelism=1),
                  T.Component(id="__acker", type="bolt", parallelism=1, system=True)]
    executors = [T.Executor(id=f"[{i}-{i}]", component=c) for i, c in enumerate(COMPONENTS, start=1)]
    streams = [T.Stream(from_component="numbers", to_component="relay", grouping="shuffle"),
               T.Stream(from_component="relay", to_component="sink", grouping="global")]
    slots = {e: T.WorkerSlot(node_id=s.split(":")[0], port=int(s.split(":")[1])) for e, s in current.items()}
    return T.TopologySpec(id=TOPOLOGY, name="pipe", components=components, streams=streams, executors=executors,
                          current=slots, algorithm="topdown", num_workers=2, options=options or {})


def nodes(used_a=(6700,), used_b=(6700,)):
    def node(node_id, used):
        return T.Node(id=node_id, host="127.0.0.1", cpu_capacity=400.0, memory_mb=4096.0,
                      meta={"machine.type": "i5", "speed": "1.0"},
                      free_ports=[p for p in (6700, 6701) if p not in used], used_ports=list(used))
    return [node("sup-a", used_a), node("sup-b", used_b)]


# Round robin put each spout away from the relay it feeds: heavy traffic crosses workers.
SPREAD = {"[1-1]": "sup-a:6700", "[2-2]": "sup-b:6700", "[3-3]": "sup-b:6700", "[4-4]": "sup-a:6700",
          "[5-5]": "sup-a:6700", "[6-6]": "sup-b:6700"}


def publish(kazoo, root: str, *, seq: int = 1) -> None:
    """Windows: spout task 1 -> relay 3 and spout 2 -> relay 4 heavy, relays -> sink light, small CPU."""
    docs = [
        window_doc(TOPOLOGY, "numbers", 1, seq=seq, node="sup-a", threads=((1, 300.0),), sent=((3, 5000),)),
        window_doc(TOPOLOGY, "numbers", 2, seq=seq, node="sup-b", pid=101, threads=((2, 300.0),), sent=((4, 5000),)),
        window_doc(TOPOLOGY, "relay", 3, seq=seq, node="sup-b", pid=101, threads=((3, 500.0),), sent=((5, 50),),
                   executed=5000),
        window_doc(TOPOLOGY, "relay", 4, seq=seq, node="sup-a", threads=((4, 500.0),), sent=((5, 50),),
                   executed=5000),
        window_doc(TOPOLOGY, "sink", 5, seq=seq, node="sup-a", threads=((5, 100.0),), executed=100),
        window_doc(TOPOLOGY, "__acker", 6, seq=seq, node="sup-b", pid=101, threads=((6, 50.0),)),
    ]
    for doc in docs:
        path = f"{root}/{TOPOLOGY}/{doc['task']}"
        if kazoo.exists(path):
            kazoo.set(path, encode(doc))
        else:
            kazoo.create(path, encode(doc), makepath=True)


@pytest.fixture
def service(zookeeper, zk_paths):
    root, storm_root = zk_paths
    with MetricsStore(zookeeper.hosts, root, storm_root=storm_root, timeout_s=2.0) as store:
        handler = PlannerHandler(metrics=StoreMetricsSource(store), replanner=Replanner())
        with BackgroundServer(handler) as server:
            yield server, store, root


def plan_once(server, topology_spec, node_list):
    with connect(server.host, server.port) as client:
        (plan,) = client.plan(T.PlanRequest(request_id="r", nodes=node_list, topologies=[topology_spec],
                                            deadline_ms=5000)).plans
    assert plan.error is None, plan.error
    return plan


def wait_for_windows(store, count: int = 6) -> None:
    deadline = time.monotonic() + 10
    while len(store.view(TOPOLOGY).windows) < count:
        assert time.monotonic() < deadline, "windows did not reach the store"
        time.sleep(0.05)


def test_a_running_topology_is_replanned_on_measured_traffic_within_its_budget(service, kazoo):
    server, store, root = service
    publish(kazoo, root)
    wait_for_windows(store)
    # Idle nodes: moved for traffic alone only when the topology asks for it (planner.replan.cautious).
    plan = plan_once(server, spec(SPREAD, {"planner.max.migrations": "2", "planner.replan.cautious": "false"}),
                     nodes())
    moved = [e for e, s in plan.assignments.items() if f"{s.node_id}:{s.port}" != SPREAD[e]]
    assert 1 <= len(moved) <= 2
    assert any("loads and traffic measured for 6 of 6 executors" in n for n in plan.notes)
    assert any(n.startswith("re-planned") and "inter-worker traffic" in n for n in plan.notes), plan.notes
    assert not any("estimates" in n for n in plan.notes)
    before_imc = 1000.0  # 5000 tuples / 10 s x 2 spout->relay pairs crossing
    assert plan.figures["inter_worker"] < before_imc


def test_a_running_topology_short_of_nothing_keeps_its_place_by_default(service, kazoo):
    server, store, root = service
    publish(kazoo, root)
    wait_for_windows(store)
    plan = plan_once(server, spec(SPREAD, {"planner.max.migrations": "2"}), nodes())
    assert {e: f"{s.node_id}:{s.port}" for e, s in plan.assignments.items()} == SPREAD
    assert any("it keeps up" in n and "planner.replan.cautious" in n for n in plan.notes), plan.notes


def test_an_unchanged_running_topology_gets_its_current_placement_back(service, kazoo):
    server, store, root = service
    publish(kazoo, root)
    wait_for_windows(store)
    first = plan_once(server, spec(SPREAD), nodes())
    placed = {e: f"{s.node_id}:{s.port}" for e, s in first.assignments.items()}
    used = {
        n: tuple(sorted({int(s.split(":")[1]) for s in placed.values() if s.startswith(n)})) for n in ("sup-a", "sup-b")
    }
    second = plan_once(server, spec(placed), nodes(used["sup-a"], used["sup-b"]))
    assert {e: f"{s.node_id}:{s.port}" for e, s in second.assignments.items()} == placed
    assert second.figures["moves"] == 0


def test_a_corrupt_znode_does_not_stop_planning_and_the_notes_say_why(service, kazoo):
    server, store, root = service
    publish(kazoo, root)
    kazoo.set(f"{root}/{TOPOLOGY}/3", b"{{{ not json")
    deadline = time.monotonic() + 10
    while not store.view(TOPOLOGY).problems:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    plan = plan_once(server, spec({}), nodes((), ()))
    assert set(plan.assignments) == {f"[{i}-{i}]" for i in range(1, 7)}
    assert any("skipped corrupt metrics znode, task 3: not JSON" in n for n in plan.notes), plan.notes


def test_serve_reads_metrics_only_with_a_zookeeper(zookeeper, monkeypatch):
    monkeypatch.delenv("STORM_PLANNER_ZOOKEEPER", raising=False)
    args = argparse.Namespace(zookeeper=None, metrics_root="/m", storm_root="/storm", no_replan=False)
    with metrics_for_serve(args) as (metrics, replanner):
        assert metrics is None and replanner.enabled
    args.zookeeper, args.no_replan = zookeeper.hosts, True
    with metrics_for_serve(args) as (metrics, replanner):
        assert metrics.store.hosts == zookeeper.hosts and not replanner.enabled
