"""``cola`` (COLA as summarised by Madsen et al. §2.1): recursive balanced partitioning from scratch."""
from __future__ import annotations

from storm_planner.core.problem import Problem
from storm_planner.generators.albic import CollocationWorkload, fluctuation_problem
from storm_planner.planners import available, run


def workload_problem(one_to_one: float = 1.0, seed: int = 1) -> Problem:
    workload = CollocationWorkload.build(nodes=5, executors=60, operators=4, one_to_one=one_to_one, seed=seed)
    return workload.problem(workload.base, workload.random_placement(seed), {"seed": seed})


def test_registered_as_a_baseline():
    assert available()["cola"].baseline


def test_balanced_within_max_ld_and_collocates_one_to_one_chains():
    problem = workload_problem()
    plan = run(problem, "cola", max_ld=10.0)
    even = run(problem, "even")
    assert plan.figures["load_distance"] <= 10.0
    # One-to-one chains are the cheap cuts METIS keeps whole: far more traffic stays local.
    assert plan.figures["collocation_factor"] > even.figures["collocation_factor"] + 0.3


def test_tighter_balance_means_more_partitions():
    problem = workload_problem()
    loose = run(problem, "cola", max_ld=20.0)
    tight = run(problem, "cola", max_ld=2.0)
    assert tight.figures["cola_partitions"] >= loose.figures["cola_partitions"]
    assert tight.figures["load_distance"] <= max(2.0, loose.figures["load_distance"])


def test_from_scratch_ignores_the_budget_and_the_current_placement():
    data = fluctuation_problem(nodes=6, executors=60, budget=2, seed=3)
    plan = run(Problem.from_dict(data), "cola")
    assert plan.figures["migrations"] > 2


def test_nothing_on_draining_nodes_and_deterministic():
    data = fluctuation_problem(nodes=6, executors=60, seed=3)
    data["nodes"][0]["draining"] = True
    problem = Problem.from_dict(data)
    plan = run(problem, "cola")
    assert "n00" not in set(plan.nodes.values())
    assert plan.assignments == run(problem, "cola").assignments
