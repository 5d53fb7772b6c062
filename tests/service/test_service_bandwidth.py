"""Elastic Allocator's inputs through the service: link capacity and other work's traffic per node,
D_CPU and D_BW from a topology's conf, and gma planning with them."""
from __future__ import annotations

import pytest

from storm_planner.core.errors import ProblemError
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.transport.contract import planner_thrift as T


def node(node_id: str, used_cpu: float = 0.0, **fields) -> T.Node:
    return T.Node(id=node_id, host=f"host-{node_id}", cpu_capacity=100.0, memory_mb=4096.0, meta=fields.pop("meta", {}),
                  free_ports=[6700], used_ports=[], used_cpu=used_cpu, **fields)


def spec(algorithm: str = "gma", **options: str) -> T.TopologySpec:
    return T.TopologySpec(
        id="t1",
        name="t1",
        components=[
            T.Component(id="src", type="spout", parallelism=1),
            T.Component(id="work", type="bolt", parallelism=2),
        ],
        streams=[T.Stream(from_component="src", to_component="work", grouping="shuffle")],
        executors=[
            T.Executor(id="[1-1]", component="src"),
            T.Executor(id="[2-2]", component="work"),
            T.Executor(id="[3-3]", component="work"),
        ],
        current={},
        algorithm=algorithm,
        num_workers=1,
        options={"planner.executor.cost": "20", **options},
    )


def test_bandwidth_used_bandwidth_and_the_limits_reach_the_problem():
    nodes = [node("a", bandwidth_mbit=10.0, used_bandwidth_mbit=4.0),
             node("b", meta={"network.bandwidth.mbit": "100"}), node("c")]
    problem = problem_from_thrift(spec(**{"planner.max.cpu.utilisation": "0.7",
                                          "planner.max.bandwidth.utilisation": "0.9"}), nodes)
    by_id = {n.id: n for n in problem.nodes}
    assert (by_id["a"].bandwidth, by_id["a"].used_bandwidth) == (10.0, 4.0)
    assert (by_id["b"].bandwidth, by_id["b"].used_bandwidth) == (100.0, 0.0)
    assert by_id["c"].bandwidth is None
    assert (problem.options.max_cpu_utilisation, problem.options.max_bandwidth_utilisation) == (0.7, 0.9)


def test_a_bad_advertised_bandwidth_is_refused_naming_it():
    with pytest.raises(ProblemError, match="network.bandwidth.mbit='fast' is not a number"):
        problem_from_thrift(spec(), [node("a", meta={"network.bandwidth.mbit": "fast"})])


@pytest.mark.parametrize("algorithm", ["gma", "gma-repair"])
def test_gma_through_the_service_keeps_off_a_node_other_work_fills_past_d_cpu(algorithm):
    # A deadline that never binds: the solver's worker process can take seconds to start on a loaded
    # machine, and a 5 s deadline then timed gma-repair out (what is tested is where it places).
    request = T.PlanRequest(request_id="r1", deadline_ms=60_000,
                            nodes=[node("busy", used_cpu=65.0), node("free-1"), node("free-2")],
                            topologies=[spec(algorithm, **{"planner.max.cpu.utilisation": "0.8"})])
    (plan,) = PlannerHandler().plan(request).plans
    assert plan.error is None
    assert {slot.node_id for slot in plan.assignments.values()} <= {"free-1", "free-2"}
