"""The simulator: sustainable rate, utilisation, eq. 9-10, Storm's default placement, the fluid bound."""
from __future__ import annotations

import pytest

from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import micro_problem
from storm_planner.planners import run
from storm_planner.planners.hetero.bounds import fluid_bound
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.plans import placement_from_assignments
from storm_planner.planners.hetero.simulate import Placement, max_input_rate, simulate, type_weights


def two_machine_problem(executor_cap=None):
    """s -> b on a fast (type f) and a slow (type s) machine; costs in ms per tuple."""
    profile = {"components": {"s": {"times": {"f": 1.0, "s": 2.0}}, "b": {"times": {"f": 4.0, "s": 8.0}}}}
    if executor_cap:
        profile["executor_cap"] = executor_cap
    return Problem.from_dict({
        "nodes": [{"id": "fast", "machine_type": "f", "capacity": 100},
                  {"id": "slow", "machine_type": "s", "capacity": 200}],
        "topology": {"id": "t", "components": [{"id": "s", "type": "spout"}, {"id": "b"}],
                     "streams": [{"from": "s", "to": "b"}]},
        "profiles": profile,
    })


def test_the_highest_sustainable_rate_saturates_the_bottleneck_machine():
    model = build_model(two_machine_problem())
    # s on fast; b's two instances: one fast, one slow. Per tuple/s: fast 0.1 + 0.2 = 0.3 %, slow 0.4 %
    placement = Placement(((0,), (0, 1)))
    assert max_input_rate(model, placement) == pytest.approx(min(100 / 0.3, 200 / 0.4))
    at_max = simulate(model, placement)
    assert at_max.max_utilisation == pytest.approx(100)
    assert at_max.load == pytest.approx({"fast": 100.0, "slow": 0.4 * 100 / 0.3})
    assert at_max.throughput == pytest.approx(2 * at_max.input_rate)  # eq. 2: s and b each process IR
    assert simulate(model, placement, at_max.input_rate * 1.1).max_utilisation > 100


def test_an_executor_cap_limits_the_rate_of_a_single_hot_executor():
    model = build_model(two_machine_problem(executor_cap=50))
    placement = Placement(((0,), (1,)))  # b alone on the slow machine: 0.8 % per tuple/s, capped at 50 %
    assert max_input_rate(model, placement) == pytest.approx(50 / 0.8)


def test_weights_of_eq10_follow_capacity_and_speed():
    model = build_model(two_machine_problem())
    # power per type: capacity x mean(1 / cost) over the component types; the slow type is half as fast
    fast = 100 * (1 / 0.1 + 1 / 0.4) / 2
    slow = 200 * (1 / 0.2 + 1 / 0.8) / 2
    assert type_weights(model) == pytest.approx({"f": fast / (fast + slow), "s": slow / (fast + slow)})


def test_weighted_utilisation_is_the_weighted_mean_of_the_type_means():
    model = build_model(two_machine_problem())
    result = simulate(model, Placement(((0,), (0, 1))), input_rate=100)
    expected = sum(result.type_weights[t] * u for t, u in result.type_utilisation.items())
    assert result.weighted_utilisation == pytest.approx(expected)
    assert result.type_utilisation == pytest.approx({"f": 30.0, "s": 20.0})


def test_storm_default_deals_the_graph_round_robin_in_task_order():
    problem = Problem.from_dict(micro_problem("linear", (1, 1, 1)))
    plan = run(problem, "storm-default", parallelism={"high": 12, "mid": 2})
    nodes = plan.nodes
    # task order: components sorted by id (high, mid, sink, spout), instances by number; nodes sorted by id
    order = [f"high/{i}" for i in range(12)] + ["mid/0", "mid/1", "sink/0", "spout/0"]
    machines = sorted(n["id"] for n in micro_problem("linear", (1, 1, 1))["nodes"])
    assert [nodes[e] for e in order] == [machines[i % 3] for i in range(len(order))]
    assert dict(plan.parallelism) == {"spout": 1, "mid": 2, "high": 12, "sink": 1}


def test_a_plan_converts_to_a_placement_and_back():
    problem = Problem.from_dict(micro_problem("diamond", "paper"))
    plan = run(problem, "hetero")
    model = build_model(problem)
    placement = placement_from_assignments(problem, model, plan.assignments)
    assert dict(zip(model.components, placement.parallelism.tolist())) == dict(plan.parallelism)
    assert simulate(model, placement).input_rate == pytest.approx(plan.figures["max_input_rate"])


def test_no_placement_beats_the_fluid_bound():
    problem = Problem.from_dict(micro_problem("star", "paper"))
    model = build_model(problem)
    bound = fluid_bound(model)
    for algorithm in ("hetero", "storm-default"):
        placement = placement_from_assignments(problem, model, run(problem, algorithm).assignments)
        assert max_input_rate(model, placement) <= bound * (1 + 1e-9)
