"""Many topologies in one request share what the other tenants left, within declared CPU and memory."""
from __future__ import annotations

from collections import defaultdict

from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect
from storm_planner.service.transport.contract import planner_thrift as T

CPU, MEMORY, HEAP = 50.0, 256.0, 768.0


def tenant_node(k: int, used_cpu: float, used_memory: float) -> T.Node:
    return T.Node(id=f"sup-{k}", host=f"host-{k}", cpu_capacity=400.0, memory_mb=2048.0, meta={},
                  free_ports=[6700, 6701, 6702, 6703], used_ports=[], used_cpu=used_cpu, used_memory_mb=used_memory)


def tenant_topology(name: str, executors: int, algorithm: str = "topdown", current=None) -> T.TopologySpec:
    components = [T.Component(id="spout", type="spout", parallelism=executors // 2),
                  T.Component(id="bolt", type="bolt", parallelism=executors - executors // 2)]
    owners = ["spout"] * (executors // 2) + ["bolt"] * (executors - executors // 2)
    return T.TopologySpec(
        id=f"{name}-1", name=name, components=components,
        streams=[T.Stream(from_component="spout", to_component="bolt", grouping="shuffle")],
        executors=[T.Executor(id=f"[{i}-{i}]", component=c, cpu=CPU, memory_mb=MEMORY)
                   for i, c in enumerate(owners, start=1)],
        current=current or {}, algorithm=algorithm, num_workers=4, options={}, worker_max_heap_mb=HEAP)


def plan(request: T.PlanRequest) -> list:
    with BackgroundServer(PlannerHandler()) as server, connect(server.host, server.port) as client:
        return client.plan(request).plans


def declared_per_node(plans, specs) -> tuple[dict, dict]:
    cpu, per_worker = defaultdict(float), defaultdict(float)
    for result, spec in zip(plans, specs):
        for slot in result.assignments.values():
            cpu[slot.node_id] += CPU
            per_worker[(spec.id, slot.node_id, slot.port)] += MEMORY
    return cpu, per_worker


def test_topologies_of_one_request_share_the_capacity_left_by_other_tenants():
    # 4 nodes × 400 % with 250 % held by topologies outside the request: 600 % left, 12 executors' worth.
    nodes = [tenant_node(k, used_cpu=250.0, used_memory=512.0) for k in range(4)]
    specs = [tenant_topology("a", 6), tenant_topology("b", 6)]
    plans = plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=specs, deadline_ms=10_000))
    assert all(p.error is None for p in plans), [p.error for p in plans]
    cpu, per_worker = declared_per_node(plans, specs)
    assert all(cpu[n.id] <= 400.0 - 250.0 for n in nodes), dict(cpu)
    assert max(per_worker.values()) <= HEAP


def test_a_topology_that_does_not_fit_beside_the_others_is_infeasible_not_overloading():
    nodes = [tenant_node(k, used_cpu=250.0, used_memory=512.0) for k in range(4)]
    specs = [tenant_topology("a", 10), tenant_topology("b", 6)]  # 16 × 50 % > 600 % left
    first, second = plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=specs, deadline_ms=10_000))
    assert first.error is None
    assert second.error.kind == T.ErrorKind.INFEASIBLE
    assert "CPU" in second.error.message


def test_storms_even_baseline_ignores_declared_resources_as_storm_does():
    nodes = [tenant_node(k, used_cpu=390.0, used_memory=0.0) for k in range(2)]
    (result,) = plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=[tenant_topology("a", 6, "even")],
                                   deadline_ms=10_000))
    assert result.error is None and len(result.assignments) == 6


def test_nodes_other_tenants_fill_completely_are_avoided_not_a_crash():
    # Two of four nodes are full with other topologies' declarations: every planner must still answer.
    nodes = [tenant_node(k, used_cpu=400.0 if k < 2 else 0.0, used_memory=0.0) for k in range(4)]
    for algorithm in ("topdown", "milp", "flux", "cola", "even"):
        (result,) = plan(T.PlanRequest(request_id="r", nodes=nodes, topologies=[tenant_topology("a", 6, algorithm)],
                                       deadline_ms=20_000))
        assert result.error is None, (algorithm, result.error)
        if algorithm != "even":  # Storm's baseline is resource-unaware, as Storm's is
            assert {slot.node_id for slot in result.assignments.values()} <= {"sup-2", "sup-3"}, algorithm
        assert result.figures["max_utilisation"] < float("inf")
