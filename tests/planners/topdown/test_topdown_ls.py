"""topdown-ls: topDown plus a bounded local search that never breaks capacity."""
from __future__ import annotations

import random
from collections import defaultdict

import pytest

from storm_planner.core.problem import Problem
from storm_planner.generators.topdown import mixed_job, pipeline_job, random_job
from storm_planner.planners import run
from storm_planner.planners.topdown._groups import job_graph, usable_nodes
from storm_planner.planners.topdown._pool import complete
from storm_planner.planners.topdown.topdown import top_down
from storm_planner.planners.topdown.topdown_ls import LocalSearch


def assert_valid(problem: Problem, plan) -> None:
    assert sorted(plan.assignments) == sorted(e.id for e in problem.executors)
    load_on: dict[str, float] = defaultdict(float)
    for executor in problem.executors:
        load_on[plan.assignments[executor.id].node] += executor.load
    for node in problem.nodes:
        assert load_on[node.id] <= node.effective_capacity + 1e-6, node.id
        if node.draining:
            assert load_on[node.id] == 0


@pytest.mark.parametrize("seed", range(25))
def test_invariants_and_never_worse_than_topdown(seed):
    for data in (random_job(random.Random(seed), seed=seed), mixed_job(seed)):
        problem = Problem.from_dict(data)
        plan = run(problem, "topdown-ls")
        assert_valid(problem, plan)
        assert plan.figures["imc_gain"] >= run(problem, "topdown").figures["imc_gain"] - 1e-9


def test_deterministic_for_a_seed():
    data = random_job(random.Random(11), seed=5)
    first, second = (run(Problem.from_dict(data), "topdown-ls") for _ in range(2))
    assert first.assignments == second.assignments


def test_reaches_99_percent_of_the_optimum_on_the_73_protocol():
    """§7.3 random jobs (a sample; the benchmark runs 2,000)."""
    rng = random.Random(2024)
    gained = optimum = 0.0
    for index in range(40):
        problem = Problem.from_dict(random_job(rng, seed=index))
        gained += run(problem, "topdown-ls").figures["imc_gain"]
        optimum += run(problem, "optimal").figures["imc_gain"]
    assert gained >= 0.99 * optimum


def test_bounded_search_stops_early_and_stays_valid():
    problem = Problem.from_dict(pipeline_job(tasks=40, nodes=6, cost=100))
    plan = run(problem, "topdown-ls", kicks=3, max_evaluations=2_000)
    assert_valid(problem, plan)
    assert plan.figures["imc_gain"] >= run(problem, "topdown").figures["imc_gain"] - 1e-9


@pytest.mark.parametrize("seed", range(10))
def test_incremental_gain_matches_a_recount_and_undo_restores(seed):
    problem = Problem.from_dict(mixed_job(seed))
    graph = job_graph(problem, with_links=True)
    nodes = usable_nodes(problem)
    start = complete(top_down(graph, nodes), graph.task_loads, nodes, [])
    search = LocalSearch(graph, [n.effective_capacity for n in nodes], start)
    rng = random.Random(seed)
    before = list(search.node_of)
    for _ in range(30):
        search.kick(rng, 1)
        recount = sum(w for (i, j), w in graph.links.items() if search.node_of[i] == search.node_of[j])
        assert search.gain == pytest.approx(recount)
        for node, used in enumerate(search.used):
            assert used <= search.capacities[node] + 1e-6  # kicks keep capacity too
    search.undo_to(0)
    assert search.node_of == before
