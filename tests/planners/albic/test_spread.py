"""``spread``: the §5.4 start keeps one-to-one partners of consecutive components apart."""
from __future__ import annotations

import pytest

from storm_planner.core.errors import InfeasibleError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem
from storm_planner.planners import run
from storm_planner.planners.albic.spread import depths


def airline(nodes: int = 4, parallelism: int = 4, draining: tuple[str, ...] = ()) -> Problem:
    """Job 2's shape: flights -> extract xP -> plane_delays xP (one to one) -> store, and ackers."""
    components = [("flights", "spout", 1), ("extract", "bolt", parallelism), ("plane_delays", "bolt", parallelism),
                  ("store", "bolt", 1), ("__acker", "bolt", nodes)]
    executors, task = [], 1
    for name, _, count in components:
        for _ in range(count):
            executors.append({"id": f"[{task}-{task}]", "component": name, "load": 10.0})
            task += 1
    of = {name: [e["id"] for e in executors if e["component"] == name] for name, _, _ in components}
    traffic = [{"from": f, "to": e, "rate": 10.0} for f in of["flights"] for e in of["extract"]]
    traffic += [{"from": e, "to": p, "rate": 100.0} for e, p in zip(of["extract"], of["plane_delays"])]
    traffic += [{"from": p, "to": of["store"][0], "rate": 1.0} for p in of["plane_delays"]]
    return Problem.from_dict({
        "nodes": [{"id": f"n{i}", "capacity": 100, "slots": [6701, 6700], "draining": f"n{i}" in draining}
                  for i in range(nodes)],
        "topology": {"id": "job2", "components": [{"id": n, "type": t, "executors": c} for n, t, c in components],
                     "streams": [{"from": "flights", "to": "extract"}, {"from": "extract", "to": "plane_delays"},
                                 {"from": "plane_delays", "to": "store"}]},
        "executors": executors, "traffic": traffic})


def test_depths_count_streams_from_the_spouts():
    assert depths(airline()) == {"flights": 0, "extract": 1, "plane_delays": 2, "store": 3, "__acker": 0}


@pytest.mark.parametrize("nodes", [2, 3, 4])
def test_no_one_to_one_pair_shares_a_node_and_every_component_is_spread(nodes):
    problem = airline(nodes=nodes)
    plan = run(problem, "spread")
    figures = evaluate(problem, plan.assignments)
    pairs = [(f"[{2 + k}-{2 + k}]", f"[{6 + k}-{6 + k}]") for k in range(4)]   # extract k -> plane_delays k
    assert all(plan.assignments[a].node != plan.assignments[b].node for a, b in pairs)
    assert figures["collocation_factor"] < 0.25   # of 440 tuples/s only flights' and the store's few stay local
    for component in ("extract", "plane_delays"):
        used = [plan.assignments[e.id].node for e in problem.executors_of(component)]
        assert max(used.count(n) for n in set(used)) - min(used.count(n) for n in set(used)) <= 1
    # One worker per node (the first slot), the spout in a worker of its own (its node's second slot).
    spout = plan.assignments["[1-1]"]
    assert spout.port == 6701
    assert {s.port for e, s in plan.assignments.items() if e != "[1-1]"} == {6700}


def test_a_node_of_one_slot_takes_its_spouts_in_that_slot():
    problem = Problem.from_dict({**airline().to_dict(), "nodes": [{"id": f"n{i}", "capacity": 100, "slots": [6700]}
                                                                   for i in range(2)]})
    plan = run(problem, "spread")
    assert {s.port for s in plan.assignments.values()} == {6700}


def test_draining_nodes_are_left_out_and_no_slot_at_all_is_infeasible():
    plan = run(airline(draining=("n0",)), "spread")
    assert "n0" not in {s.node for s in plan.assignments.values()}
    with pytest.raises(InfeasibleError, match="no usable node"):
        run(airline(nodes=2, draining=("n0", "n1")), "spread")
