"""The capacity planner's acker spread: ackers in two workers or more where it costs little of the rate."""
from __future__ import annotations

import pytest

import storm_planner
from storm_planner.core.errors import InvalidParameterError
from storm_planner.core.problem import Problem
from storm_planner.planners.capacity.ackers import spread_ackers
from storm_planner.planners.capacity.model import CapacityModel


def with_ackers(ackers: int = 3, nodes=(("a", 100.0), ("b", 100.0)), link: float | None = None,
                bolt_load: float = 10.0, acker_load: float = 1.0) -> dict:
    """A spout feeding two bolt executors, and ``ackers`` ackers, loads measured at 100 t/s."""
    executors = [{"id": "[1-1]", "component": "spout", "load": 10.0},
                 {"id": "[2-2]", "component": "bolt", "load": bolt_load},
                 {"id": "[3-3]", "component": "bolt", "load": bolt_load}]
    executors += [{"id": f"[{i}-{i}]", "component": "__acker", "load": acker_load} for i in range(4, 4 + ackers)]
    return {
        "nodes": [{"id": n, "capacity": c, "slots": [6700, 6701], **({"bandwidth": link} if link else {})}
                  for n, c in nodes],
        "topology": {"id": "t", "components": [{"id": "spout", "type": "spout"}, {"id": "bolt", "executors": 2},
                                               {"id": "__acker", "executors": ackers}],
                     "streams": [{"from": "spout", "to": "bolt", "grouping": "shuffle", "rate": 100.0,
                                  "tuple_bytes": 200.0}]},
        "executors": executors,
        "costs": {"reference_rate": 100.0, "worker_fixed": 2.0, "origin": "measured"},
    }


def acker_nodes(plan: dict) -> set[str]:
    return {slot.split(":")[0] for executor, slot in plan["assignments"].items() if int(executor[1:].split("-")[0]) >= 4}


def test_ackers_packed_on_one_node_get_one_moved_where_it_costs_least():
    model = CapacityModel(Problem.from_dict(with_ackers()), worker_fixed=2.0)
    packed = {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b", "[4-4]": "a", "[5-5]": "a", "[6-6]": "a"}
    spread = spread_ackers(model, packed, tolerance=0.02)
    assert {spread.node_of[a] for a in ("[4-4]", "[5-5]", "[6-6]")} == {"a", "b"}
    assert sum(spread.node_of[e] != packed[e] for e in packed) == 1
    assert model.factor(spread.node_of) >= model.factor(packed) * 0.98
    assert spread.note is not None and "moved from a to b" in spread.note


def test_a_spread_that_costs_more_than_the_tolerance_is_refused_with_its_cost():
    # b is nearly full: an acker there lowers the factor by far more than 2 %.
    model = CapacityModel(Problem.from_dict(with_ackers(nodes=(("a", 100.0), ("b", 16.0)), acker_load=3.0)),
                          worker_fixed=2.0)
    packed = {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b", "[4-4]": "a", "[5-5]": "a", "[6-6]": "a"}
    kept = spread_ackers(model, packed, tolerance=0.02)
    assert kept.node_of == packed
    assert kept.note is not None and "would lower the predicted rate" in kept.note and "more than 2.0%" in kept.note
    assert spread_ackers(model, packed, tolerance=0.9).node_of != packed      # a looser tolerance takes it


@pytest.mark.parametrize("ackers, node_of", [
    (1, {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b", "[4-4]": "a"}),                         # one acker
    (2, {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b", "[4-4]": "a", "[5-5]": "b"}),            # already two nodes
])
def test_nothing_moves_where_the_ackers_are_already_apart_or_alone(ackers, node_of):
    model = CapacityModel(Problem.from_dict(with_ackers(ackers)), worker_fixed=2.0)
    assert spread_ackers(model, node_of) == spread_ackers(model, node_of, tolerance=0.0)
    assert spread_ackers(model, node_of).node_of == node_of and spread_ackers(model, node_of).note is None


def test_topology_workers_keeps_the_acker_on_the_nodes_already_used():
    problem = with_ackers(nodes=(("a", 100.0), ("b", 100.0), ("c", 100.0)))
    model = CapacityModel(Problem.from_dict(problem), worker_fixed=2.0)
    one_node = {e["id"]: "a" for e in problem["executors"]}
    assert spread_ackers(model, one_node, workers=1).node_of == one_node
    assert "no other node may take one" in (spread_ackers(model, one_node, workers=1).note or "")
    assert len(set(spread_ackers(model, one_node, workers=2).node_of.values())) == 2


def test_the_planner_spreads_by_default_and_not_with_acker_spread_zero():
    # Light ackers, and a link that makes every stream across it count: the model alone packs them all.
    problem = with_ackers(ackers=4, link=0.5, acker_load=0.2)
    faithful = storm_planner.plan(problem, algorithm="capacity", acker_spread=0)
    spread = storm_planner.plan(problem, algorithm="capacity")
    assert len(acker_nodes(faithful)) == 1, faithful["assignments"]
    assert len(acker_nodes(spread)) == 2, spread["assignments"]
    assert any(note.startswith("ackers:") for note in spread["notes"])
    assert spread["figures"]["predicted_rate"] >= 0.98 * faithful["figures"]["predicted_rate"]


@pytest.mark.parametrize("value", [-0.1, 1.0, "much"])
def test_an_acker_spread_outside_zero_to_one_is_refused(value):
    with pytest.raises(InvalidParameterError, match="acker_spread"):
        storm_planner.plan(with_ackers(), algorithm="capacity", acker_spread=value)


def test_of_ackers_that_differ_in_load_the_one_that_costs_least_moves():
    problem = with_ackers(nodes=(("a", 100.0), ("b", 30.0)))
    for executor, load in (("[4-4]", 0.5), ("[5-5]", 12.0), ("[6-6]", 12.0)):
        next(e for e in problem["executors"] if e["id"] == executor)["load"] = load
    model = CapacityModel(Problem.from_dict(problem), worker_fixed=2.0)
    packed = {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b", "[4-4]": "a", "[5-5]": "a", "[6-6]": "a"}
    spread = spread_ackers(model, packed, tolerance=0.5)
    assert spread.node_of["[4-4]"] == "b" and spread.node_of["[5-5]"] == spread.node_of["[6-6]"] == "a"

