"""taskLevel (Chatzistergiou & Viglas, Alg. 1-3): the paper's examples, priorities, invariants."""
from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from storm_planner.core.problem import Options, Problem
from storm_planner.generators.topdown import mixed_job, priority_job, random_job, task_count_job
from storm_planner.planners import run
from storm_planner.planners.topdown._groups import job_graph, usable_nodes
from storm_planner.planners.topdown.tasklevel import prioritised_task_pairs, task_level

DATA = Path(__file__).resolve().parents[2] / "data"


def figure2() -> Problem:
    return Problem.from_dict(json.loads((DATA / "figure2.json").read_text()))


def assert_valid(problem: Problem, plan) -> None:
    assert sorted(plan.assignments) == sorted(e.id for e in problem.executors)
    load_on: dict[str, float] = defaultdict(float)
    for executor in problem.executors:
        load_on[plan.assignments[executor.id].node] += executor.load
    for node in problem.nodes:
        assert load_on[node.id] <= node.effective_capacity + 1e-6, node.id
        if node.draining:
            assert load_on[node.id] == 0


def links(problem: Problem, node_of: dict, first: str, second: str) -> int:
    return sum(1 for a in problem.executors_of(first) for b in problem.executors_of(second)
               if node_of[a.id] == node_of[b.id])


def test_example_2_in_the_papers_order_collocates_84_links():
    """Example 2: 7 v1 + 6 v2 on the first node, 3 v1 + 14 v2 on the second: 42 + 42 links.

    The paper leaves the order of task pairs open; this order - six (v1_i, v2_i)
    pairs, then (v1_6, v2_0), then the rest - is one that produces its numbers.
    """
    problem = figure2()
    graph = job_graph(problem, with_links=True)
    v1, v2 = graph.groups[0].tasks, graph.groups[1].tasks
    prefix = [(v1[i], v2[i]) for i in range(6)] + [(v1[6], v2[0])]
    rest = [pair for pair in prioritised_task_pairs(graph, "significance") if pair not in set(prefix)]
    rest_first_pair = sorted(p for p in rest if p[0] in v1 and p[1] in v2)
    others = [p for p in rest if not (p[0] in v1 and p[1] in v2)]
    nodes = task_level(graph, usable_nodes(problem), pairs=prefix + rest_first_pair + others)
    node_of = {graph.task_ids[t]: n for t, n in enumerate(nodes)}
    assert links(problem, node_of, "v1", "v2") == 84
    per_node = Counter((node_of[e.id], e.component) for e in problem.executors if e.component in ("v1", "v2"))
    shapes = sorted((per_node[(n, "v1")], per_node[(n, "v2")]) for n in {n for n, _ in per_node})
    assert shapes == [(3, 14), (7, 6)]


@pytest.mark.parametrize("seed", range(12))
def test_example_1_and_2_in_any_order(seed):
    """Whatever the order within a group pair, taskLevel collocates at most topDown's 100 links
    of <v1, v2>, and, as Example 1 says, no link of <v2, v3>: v2's nodes are full by then."""
    problem = figure2().replace(options=Options(seed=seed))
    plan = run(problem, "tasklevel")
    assert_valid(problem, plan)
    assert links(problem, plan.nodes, "v1", "v2") <= 100
    assert links(problem, plan.nodes, "v2", "v3") == 0


def test_pairs_are_taken_by_relative_significance_of_their_groups():
    problem = figure2()
    graph = job_graph(problem, with_links=True)
    order = prioritised_task_pairs(graph, "significance", seed=3)
    significance = {(p.first, p.second): p.significance for p in graph.pairs}
    keys = [significance[(graph.task_group[i], graph.task_group[j])] for i, j in order]
    assert keys == sorted(keys, reverse=True)
    assert len(order) == len(graph.links)


@pytest.mark.parametrize("seed", range(30))
def test_invariants_on_random_jobs(seed):
    problem = Problem.from_dict(random_job(random.Random(seed), seed=seed))
    for priority in ("significance", "imc"):
        plan = run(problem, "tasklevel", priority=priority)
        assert_valid(problem, plan)


@pytest.mark.parametrize("seed", range(30))
def test_invariants_on_mixed_problems(seed):
    problem = Problem.from_dict(mixed_job(seed))
    plan = run(problem, "tasklevel")
    assert_valid(problem, plan)


def test_deterministic_for_a_seed():
    data = mixed_job(3)
    assert run(Problem.from_dict(data), "tasklevel").assignments == \
        run(Problem.from_dict(data), "tasklevel").assignments


def test_both_tasks_placed_apart_fuses_their_nodes():
    """Alg. 1 lines 17-23: the last pair finds its tasks on two half-empty nodes and fuses them."""
    problem = Problem.from_dict({
        "nodes": [{"id": "n0", "capacity": 100}, {"id": "n1", "capacity": 100}],
        "topology": {"components": [{"id": x, "cost": 20} for x in "abcd"], "streams": [
            {"from": "a", "to": "b", "rate": 30}, {"from": "c", "to": "d", "rate": 20},
            {"from": "b", "to": "c", "rate": 1}]}})
    plan = run(problem, "tasklevel")
    assert len(set(plan.nodes.values())) == 1


def test_relative_significance_beats_imc_priority_in_the_figure_4a_setting():
    """§7.1: with IMC priority the heavy pair <b, c> goes first while its IMC is higher."""
    differences = []
    for second in (19.0, 17.0, 15.0, 13.0, 11.0):
        problem = Problem.from_dict(priority_job(second))
        differences.append(run(problem, "tasklevel").figures["imc_gain"]
                           - run(problem, "tasklevel", priority="imc").figures["imc_gain"])
    assert min(differences) > 0


def test_task_count_hurts_tasklevel_more_than_topdown():
    """Figure 4(b): taskLevel degrades as the second group's task count grows; topDown does not."""
    small, large = (Problem.from_dict(task_count_job(f)) for f in (1, 7))
    assert run(large, "tasklevel", priority="imc").figures["imc_gain"] < \
        run(small, "tasklevel", priority="imc").figures["imc_gain"]
    assert run(large, "tasklevel", priority="imc").figures["imc_gain"] < run(large, "topdown").figures["imc_gain"]


def test_source_pair_order_is_valid_and_never_beats_topdown_on_example_2():
    problem = figure2()
    plan = run(problem, "tasklevel", pair_order="source")
    assert_valid(problem, plan)
    assert links(problem, plan.nodes, "v1", "v2") < links(problem, run(problem, "topdown").nodes, "v1", "v2")


def test_unknown_pair_order_is_a_bad_request():
    from storm_planner.core.errors import ProblemError

    with pytest.raises(ProblemError, match="pair_order"):
        run(figure2(), "tasklevel", pair_order="alphabetical")
