"""The capacity planner's spout room: spouts on the node with the most CPU where it costs little of the rate."""
from __future__ import annotations

import pytest

import storm_planner
from storm_planner.core.errors import InvalidParameterError
from storm_planner.core.problem import Problem
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.spouts import fail_room, spouts_to_room


def two_spouts(nodes=(("large", 70.0), ("small", 30.0)), spout_load: float = 4.0, bolt_load: float = 10.0,
               link: float | None = None) -> dict:
    """Two spout executors feeding two bolt executors, loads measured at 100 t/s."""
    executors = [{"id": "[1-1]", "component": "spout", "load": spout_load},
                 {"id": "[2-2]", "component": "spout", "load": spout_load},
                 {"id": "[3-3]", "component": "bolt", "load": bolt_load},
                 {"id": "[4-4]", "component": "bolt", "load": bolt_load}]
    return {
        "nodes": [{"id": n, "capacity": c, "slots": [6700, 6701], **({"bandwidth": link} if link else {})}
                  for n, c in nodes],
        "topology": {"id": "t", "components": [{"id": "spout", "type": "spout", "executors": 2},
                                               {"id": "bolt", "executors": 2}],
                     "streams": [{"from": "spout", "to": "bolt", "grouping": "shuffle", "rate": 100.0,
                                  "tuple_bytes": 200.0}]},
        "executors": executors,
        "costs": {"reference_rate": 100.0, "worker_fixed": 2.0, "origin": "measured"},
    }


def model_of(problem: dict) -> CapacityModel:
    return CapacityModel(Problem.from_dict(problem), worker_fixed=2.0)


def test_a_spout_on_a_small_node_moves_to_the_large_one_where_that_costs_little():
    model = model_of(two_spouts())
    placed = {"[1-1]": "small", "[2-2]": "large", "[3-3]": "large", "[4-4]": "small"}
    room = spouts_to_room(model, placed, tolerance=0.5)
    assert room.node_of["[1-1]"] == "large"
    assert {e: n for e, n in room.node_of.items() if e != "[1-1]"} == {e: n for e, n in placed.items() if e != "[1-1]"}
    assert model.factor(room.node_of) >= model.factor(placed) * 0.5
    assert room.note is not None and "[1-1] moved from small to large" in room.note


def test_a_move_that_costs_more_than_the_tolerance_is_refused_with_its_cost():
    # large holds both bolts and is the bottleneck: a spout more there lowers the factor by 15 %.
    model = model_of(two_spouts(spout_load=8.0, bolt_load=20.0))
    placed = {"[1-1]": "small", "[2-2]": "large", "[3-3]": "large", "[4-4]": "large"}
    kept = spouts_to_room(model, placed, tolerance=0.02)
    assert kept.node_of == placed
    assert kept.note is not None and "[1-1] on large would lower the predicted rate" in kept.note
    assert "more than 2.0%" in kept.note
    assert spouts_to_room(model, placed, tolerance=0.9).node_of["[1-1]"] == "large"   # looser: taken


def test_the_tolerance_bounds_every_move_together_not_each_alone():
    model = model_of(two_spouts(nodes=(("large", 70.0), ("small-a", 30.0), ("small-b", 30.0))))
    placed = {"[1-1]": "small-a", "[2-2]": "small-b", "[3-3]": "large", "[4-4]": "large"}
    for tolerance in (0.05, 0.2, 0.5):
        room = spouts_to_room(model, placed, tolerance=tolerance)
        assert model.factor(room.node_of) >= model.factor(placed) * (1 - tolerance) - 1e-9


@pytest.mark.parametrize("placed", [
    {"[1-1]": "large", "[2-2]": "large", "[3-3]": "small", "[4-4]": "small"},     # already where the room is
])
def test_nothing_moves_where_the_spouts_have_the_most_room_or_the_tolerance_is_zero(placed):
    model = model_of(two_spouts())
    assert spouts_to_room(model, placed).node_of == placed and spouts_to_room(model, placed).note is None
    small = {e: "small" for e in placed}
    assert spouts_to_room(model, small, tolerance=0.0).node_of == small


def test_one_core_is_all_a_spout_can_use_so_two_nodes_past_it_are_alike():
    model = model_of(two_spouts(nodes=(("huge", 400.0), ("core", 100.0))))
    assert fail_room(model, "huge") == fail_room(model, "core") == 100.0
    placed = {"[1-1]": "core", "[2-2]": "huge", "[3-3]": "huge", "[4-4]": "core"}
    assert spouts_to_room(model, placed, tolerance=0.5).node_of == placed


def test_topology_workers_keeps_the_spouts_on_the_nodes_already_used():
    model = model_of(two_spouts(nodes=(("large", 70.0), ("small", 30.0))))
    on_small = {"[1-1]": "small", "[2-2]": "small", "[3-3]": "small", "[4-4]": "small"}
    assert spouts_to_room(model, on_small, workers=1, tolerance=0.9).node_of == on_small
    assert spouts_to_room(model, on_small, workers=2, tolerance=0.9).node_of["[1-1]"] == "large"


def test_the_planner_moves_spouts_by_default_and_not_with_spout_room_zero():
    # Spouts that cost next to nothing: the model is indifferent to where they run, the step is not.
    problem = two_spouts(spout_load=0.01, bolt_load=10.0)
    faithful = storm_planner.plan(problem, algorithm="capacity", spout_room=0, acker_spread=0)
    roomy = storm_planner.plan(problem, algorithm="capacity", acker_spread=0)
    def spout_nodes(plan: dict) -> set[str]:
        return {plan["assignments"][e].split(":")[0] for e in ("[1-1]", "[2-2]")}

    assert spout_nodes(faithful) == {"small"}, faithful["assignments"]
    assert spout_nodes(roomy) == {"large"}, roomy["assignments"]
    assert roomy["figures"]["predicted_rate"] >= 0.98 * faithful["figures"]["predicted_rate"]
    assert any(note.startswith("spouts: [1-1] moved from small to large") for note in roomy["notes"])
    assert "then spouts moved" in roomy["notes"][0]


@pytest.mark.parametrize("value", [-0.1, 1.0, "much"])
def test_a_spout_room_outside_zero_to_one_is_refused(value):
    with pytest.raises(InvalidParameterError, match="spout_room"):
        storm_planner.plan(two_spouts(), algorithm="capacity", spout_room=value)
