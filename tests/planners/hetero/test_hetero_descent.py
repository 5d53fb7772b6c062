"""``hetero``'s refinement 4: the re-placement descent after Alg. 2 (planners/hetero/_hetero_descent.py)."""
from __future__ import annotations

import numpy as np
import pytest

from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import micro_problem, random_problem
from storm_planner.planners import run
from storm_planner.planners.hetero._hetero_descent import (
    _largest_remainder,
    _water_fill,
    improve,
    placement_from_counts,
)
from storm_planner.planners.hetero.hetero import first_assignment, maximize_throughput
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.plans import placement_from_assignments
from storm_planner.planners.hetero.simulate import max_input_rate


def rate_of(problem: Problem, plan) -> float:
    model = build_model(problem)
    return max_input_rate(model, placement_from_assignments(problem, model, plan.assignments))


# The instances where Alg. 2 with refinements 1-3 alone ended more than 4 % below the exhaustive optimum
# (benchmarks/reports/hetero.md, before the descent): Star on one Pentium and two identical slower machines,
# and the worst related random instances of `storm-planner bench hetero`.
MISSED = [
    pytest.param(lambda: Problem.from_dict(micro_problem("star", (1, 2, 0))), id="star-1/2/0"),
    pytest.param(lambda: Problem.from_dict(micro_problem("star", (1, 0, 2))), id="star-1/0/2"),
    pytest.param(lambda: Problem.from_dict(random_problem(11, related=True)), id="related-11"),
    pytest.param(lambda: Problem.from_dict(random_problem(29, related=True)), id="related-29"),
    pytest.param(lambda: Problem.from_dict(random_problem(40, related=False)), id="unrelated-40"),
]


@pytest.mark.parametrize("make", MISSED)
def test_the_descent_brings_hetero_within_4_percent_where_alg2_alone_missed(make):
    problem = make()
    without = rate_of(problem, run(problem, "hetero", descent=False, polish_nodes=0))
    hetero = run(problem, "hetero")
    optimal = run(problem, "hetero-optimal")
    best = optimal.figures["max_input_rate"]
    assert without < 0.96 * best                    # the case is a real miss without the descent
    assert hetero.figures["max_input_rate"] >= 0.96 * best
    assert hetero.figures["max_input_rate"] <= best * (1 + 1e-9)
    assert hetero.figures["descent_steps"] >= 1


@pytest.mark.parametrize("seed", range(30))
def test_the_descent_never_lowers_the_rate_and_keeps_the_bounds(seed):
    problem = Problem.from_dict(random_problem(seed, related=seed % 2 == 0))
    model = build_model(problem)
    state = first_assignment(model, [1] * model.n_components, model.input_rate)
    start = maximize_throughput(model, state, model.input_rate, max_instances=[3] * model.n_components).state
    lower, upper = [1] * model.n_components, [4] * model.n_components
    improved, steps = improve(model, start.placement(), lower, upper)
    assert max_input_rate(model, improved) >= max_input_rate(model, start.placement()) * (1 - 1e-12)
    assert all(1 <= n <= 4 for n in improved.parallelism)
    if steps:
        assert max_input_rate(model, improved) > max_input_rate(model, start.placement())
    else:
        assert improved == start.placement()


def test_a_fixed_graph_keeps_its_instance_counts():
    problem = Problem.from_dict(random_problem(3, related=False))
    model = build_model(problem)
    counts = np.zeros((model.n_components, model.n_machines), dtype=int)
    counts[:, 0] = 2  # everything on the first machine: the descent must spread it, not resize it
    improved, steps = improve(model, placement_from_counts(counts), [2] * model.n_components,
                              [2] * model.n_components)
    assert steps >= 1
    assert improved.parallelism.tolist() == [2] * model.n_components
    assert max_input_rate(model, improved) > max_input_rate(model, placement_from_counts(counts))


@pytest.mark.parametrize("grouping", ["all", "global"])
def test_graphs_with_all_or_global_streams_are_left_alone(grouping):
    problem = Problem.from_dict({
        "nodes": [{"id": "a", "capacity": 100, "machine_type": "x"}, {"id": "b", "capacity": 100, "machine_type": "y"}],
        "topology": {"id": "t", "components": [{"id": "s", "type": "spout"}, {"id": "b", "type": "bolt"}],
                     "streams": [{"from": "s", "to": "b", "grouping": grouping}]},
        "profiles": {"components": {"s": {"times": {"x": 0.1, "y": 0.2}}, "b": {"times": {"x": 1.0, "y": 0.5}}}},
    })
    model = build_model(problem)
    everything_on_a = placement_from_counts(np.array([[2, 0], [2, 0]]))
    assert improve(model, everything_on_a, [1, 1], [4, 4]) == (everything_on_a, 0)


def test_the_papers_rules_as_written_skip_the_descent():
    problem = Problem.from_dict(micro_problem("star", (1, 2, 0)))
    assert run(problem, "hetero", literal=True).figures["descent_steps"] == 0


def test_the_fluid_start_reaches_what_pairs_from_the_heuristic_cannot():
    # unrelated seed 41: the optimum changes all three components at once (benchmarks/reports/hetero.md)
    problem = Problem.from_dict(random_problem(41, related=False))
    model = build_model(problem)
    bound = [2 * model.n_machines] * model.n_components
    heuristic = run(problem, "hetero", descent=False, polish_nodes=0)
    start = placement_from_assignments(problem, model, heuristic.assignments)
    best = run(problem, "hetero-optimal").figures["max_input_rate"]
    pairs_only, _ = improve(model, start, [1] * model.n_components, bound, fluid_start=False, triples=False)
    both, _ = improve(model, start, [1] * model.n_components, bound)
    assert max_input_rate(model, pairs_only) < 0.96 * best
    assert max_input_rate(model, both) >= 0.96 * best


@pytest.mark.parametrize("seed", range(20))
def test_water_filling_at_once_equals_placing_one_by_one(seed):
    rng = np.random.default_rng(seed)
    base, per_instance, n = rng.uniform(0, 1, 7), rng.uniform(0.01, 0.5, 7), int(rng.integers(1, 30))
    row = _water_fill(base, per_instance, n)
    total = base + row * per_instance
    one_by_one = base.copy()
    for _ in range(n):
        m = int(np.argmin(one_by_one + per_instance))
        one_by_one[m] += per_instance[m]
    assert row.sum() == n
    np.testing.assert_allclose(np.sort(total), np.sort(one_by_one))  # ties may pick another machine
    assert total.max() == pytest.approx(one_by_one.max())


@pytest.mark.parametrize("n", [1, 2, 5, 13])
def test_rounding_the_fluid_shares_keeps_the_instance_count(n):
    shares = np.array([0.5, 0.3333333, 0.1666667, 0.0])
    row = _largest_remainder(shares, n)
    assert row.sum() == n and (row >= 0).all() and row[3] == 0
    assert np.abs(row / n - shares).max() <= 1 / n
