"""The capacity planner's movable bolts: each bolt keeps an executor that a move can take without a drain."""
from __future__ import annotations

import pytest

import storm_planner
from storm_planner.adaptation.costs import MoveContext, flow_goes_on
from storm_planner.adaptation.forced import forced_move
from storm_planner.core.errors import InvalidParameterError
from storm_planner.core.problem import Problem
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.movable import free_nodes, keep_bolts_movable

SPOUT, COUNT_1, COUNT_2, TOP, ACKER_1, ACKER_2 = "[1-1]", "[2-2]", "[3-3]", "[4-4]", "[5-5]", "[6-6]"
NODES = (("large", 70.0), ("small-a", 30.0), ("small-b", 30.0), ("small-c", 30.0))


def top_k(nodes=NODES, count_load: float = 4.0, link: float | None = None) -> dict:
    """Top-K's shape: a spout, two counts (fields), one top (global), two ackers; loads at 100 t/s."""
    executors = [{"id": SPOUT, "component": "requests", "load": 6.0},
                 {"id": COUNT_1, "component": "count", "load": count_load},
                 {"id": COUNT_2, "component": "count", "load": count_load},
                 {"id": TOP, "component": "top", "load": 1.0},
                 {"id": ACKER_1, "component": "__acker", "load": 0.5},
                 {"id": ACKER_2, "component": "__acker", "load": 0.5}]
    return {
        "nodes": [{"id": n, "capacity": c, "slots": [6700, 6701], **({"bandwidth": link} if link else {})}
                  for n, c in nodes],
        "topology": {"id": "t", "components": [{"id": "requests", "type": "spout"},
                                               {"id": "count", "executors": 2}, {"id": "top"},
                                               {"id": "__acker", "executors": 2}],
                     "streams": [{"from": "requests", "to": "count", "grouping": "fields", "rate": 100.0,
                                  "tuple_bytes": 200.0},
                                 {"from": "count", "to": "top", "grouping": "global", "rate": 10.0,
                                  "tuple_bytes": 100.0}]},
        "executors": executors,
        "costs": {"reference_rate": 100.0, "worker_fixed": 2.0, "origin": "measured"},
    }


# drain-6's second repetition: one count beside the spout, the other beside the only top.
STUCK = {SPOUT: "large", COUNT_1: "large", COUNT_2: "small-b", TOP: "small-b", ACKER_1: "small-a",
         ACKER_2: "small-c"}


def model_of(problem: dict) -> CapacityModel:
    return CapacityModel(Problem.from_dict(problem), worker_fixed=2.0)


def test_a_node_with_a_spout_or_a_whole_component_is_not_free():
    model = model_of(top_k())
    assert free_nodes(model, STUCK) == {"small-a", "small-c"}
    packed_ackers = {**STUCK, ACKER_2: "small-a"}          # small-a holds every acker
    assert free_nodes(model, packed_ackers) == set()


def test_a_count_stuck_beside_the_spout_and_the_top_gets_one_executor_moved_to_a_free_node():
    model = model_of(top_k())
    result = keep_bolts_movable(model, STUCK, tolerance=0.5)
    moved = [e for e in STUCK if result.node_of[e] != STUCK[e]]
    assert len(moved) == 1 and moved[0] in (COUNT_1, COUNT_2)
    assert result.node_of[moved[0]] in {"small-a", "small-c"}
    assert result.note is not None and result.note.startswith("movable bolts: count:")
    assert model.factor(result.node_of) >= model.factor(STUCK) * 0.5


def test_the_forced_move_of_a_count_then_goes_on_without_a_drain():
    """The drain bench's move (count and acker to a new worker on small-b) before and after the step."""
    def goes_on(node_of: dict[str, str]) -> bool:
        problem = Problem.from_dict({**top_k(), "current": {e: f"{n}:6700" for e, n in node_of.items()}})
        plan, _ = forced_move(problem, "count,__acker@small-b:new")
        context = MoveContext(drained=True, in_flight=0, spout_rate=100.0, pending_room=float("inf"))
        return flow_goes_on(problem, plan, context)[0]

    assert not goes_on(STUCK)
    assert goes_on(keep_bolts_movable(model_of(top_k()), STUCK, tolerance=0.5).node_of)


def test_a_move_that_costs_more_than_the_tolerance_is_refused_with_its_cost():
    # The free nodes are tiny: a count on one lowers the factor far past 2 %.
    model = model_of(top_k(nodes=(("large", 70.0), ("small-a", 10.0), ("small-b", 30.0), ("small-c", 10.0))))
    kept = keep_bolts_movable(model, STUCK, tolerance=0.02)
    assert kept.node_of == STUCK
    assert kept.note is not None and "would lower the predicted rate" in kept.note and "at most 2.0%" in kept.note


def test_nothing_moves_where_a_bolt_is_free_already_or_has_one_executor_or_the_tolerance_is_zero():
    model = model_of(top_k())
    free_count = {**STUCK, COUNT_2: "small-a"}
    assert keep_bolts_movable(model, free_count, tolerance=0.9) == keep_bolts_movable(model, free_count, tolerance=0)
    assert keep_bolts_movable(model, free_count, tolerance=0.9).node_of == free_count
    assert keep_bolts_movable(model, free_count, tolerance=0.9).note is None
    assert keep_bolts_movable(model, STUCK, tolerance=0.0).node_of == STUCK


def test_no_free_node_is_said_and_topology_workers_bounds_new_ones():
    two = (("large", 70.0), ("small-a", 30.0), ("small-b", 30.0))
    model = model_of(top_k(nodes=two))
    on_two = {SPOUT: "large", COUNT_1: "large", COUNT_2: "small-b", TOP: "small-b", ACKER_1: "large",
              ACKER_2: "small-b"}
    assert "no node would leave" in (keep_bolts_movable(model, on_two, workers=2, tolerance=0.9).note or "")
    assert keep_bolts_movable(model, on_two, workers=2, tolerance=0.9).node_of == on_two
    assert keep_bolts_movable(model, on_two, workers=3, tolerance=0.9).node_of != on_two   # small-a may open


def test_the_planner_keeps_bolts_movable_by_default_and_not_with_zero():
    # Slow links and a heavy top: the model alone puts both counts in one worker beside an acker, whole there.
    problem = top_k(count_load=2.0, link=0.5)
    for executor in problem["executors"]:
        executor["load"] = {"requests": 10.0, "top": 10.0, "__acker": 2.0}.get(executor["component"], executor["load"])
    faithful = storm_planner.plan(problem, algorithm="capacity", movable_bolts=0)
    movable = storm_planner.plan(problem, algorithm="capacity")
    model = model_of(problem)

    def free_count(plan: dict) -> bool:
        nodes = {e: slot.split(":")[0] for e, slot in plan["assignments"].items()}
        return any(nodes[c] in free_nodes(model, nodes) for c in (COUNT_1, COUNT_2))

    assert not free_count(faithful) and free_count(movable)
    assert movable["figures"]["predicted_rate"] >= 0.98 * faithful["figures"]["predicted_rate"]
    assert any(note.startswith("movable bolts: count:") for note in movable["notes"])
    assert "then bolts kept movable" in movable["notes"][0]


@pytest.mark.parametrize("value", [-0.1, 1.0, "much"])
def test_a_movable_bolts_outside_zero_to_one_is_refused(value):
    with pytest.raises(InvalidParameterError, match="movable_bolts"):
        storm_planner.plan(top_k(), algorithm="capacity", movable_bolts=value)
