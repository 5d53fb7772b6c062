"""``flux`` (Flux as summarised by Madsen et al. §2.2): pairwise moves within the budget."""
from __future__ import annotations

from storm_planner.core.evaluate import load_distance
from storm_planner.core.problem import Problem
from storm_planner.generators.albic import fluctuation_problem, scale_in_problem
from storm_planner.planners import available, run


def two_nodes(loads_a: list[float], loads_b: list[float], budget: int) -> Problem:
    executors = [{"id": f"a{i}", "component": "c", "load": load} for i, load in enumerate(loads_a)]
    executors += [{"id": f"b{i}", "component": "c", "load": load} for i, load in enumerate(loads_b)]
    current = {e["id"]: ("A" if e["id"].startswith("a") else "B") + ":6700" for e in executors}
    return Problem.from_dict({
        "nodes": [{"id": "A", "capacity": 100}, {"id": "B", "capacity": 100}],
        "topology": {"id": "t", "components": [{"id": "c", "executors": len(executors)}]},
        "executors": executors, "current": current, "options": {"max_migrations": budget},
    })


def test_registered_as_a_baseline():
    assert available()["flux"].baseline


def test_moves_the_biggest_suitable_executor_and_never_reverses_the_imbalance():
    # A carries 30 + 8 + 5 = 43, B nothing. 30 would overshoot (B busier than A afterwards): 8 goes
    # first, then 5 (A 35 vs B 8: 30 still unsuitable); then nothing fits.
    problem = two_nodes([30.0, 8.0, 5.0], [], budget=10)
    plan = run(problem, "flux")
    assert plan.node_of("a0") == "A"
    assert plan.node_of("a1") == "B" and plan.node_of("a2") == "B"
    assert plan.figures["migrations"] == 2


def test_budget_is_respected_and_balance_improves():
    for seed in (1, 2, 3):
        problem = Problem.from_dict(fluctuation_problem(nodes=10, executors=150, budget=5, seed=seed))
        plan = run(problem, "flux")
        assert plan.figures["migrations"] <= 5
        before = load_distance(problem, {e: s.node for e, s in problem.current.items()})
        assert plan.figures["load_distance"] < before


def test_never_moves_onto_draining_nodes():
    problem = Problem.from_dict(scale_in_problem(nodes=8, executors=64, marked=2, overloaded=1, budget=10))
    draining = {n.id for n in problem.nodes if n.draining}
    plan = run(problem, "flux")
    for executor, node in plan.nodes.items():
        if node in draining:
            assert problem.current[executor].node == node


def test_deterministic():
    problem = Problem.from_dict(fluctuation_problem(nodes=10, executors=150, budget=8, seed=9))
    assert run(problem, "flux").assignments == run(problem, "flux").assignments
