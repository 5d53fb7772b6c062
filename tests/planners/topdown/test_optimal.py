"""The exact planner: against brute force on tiny problems, size limits, interchangeable classes."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from storm_planner.cli import main as cli_main
from storm_planner.core.errors import InfeasibleError, TooLargeError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot
from storm_planner.generators.topdown import mixed_job, pipeline_job, random_job
from storm_planner.planners import run
from storm_planner.planners.topdown._groups import job_graph
from storm_planner.planners.topdown.optimal import interchangeable_classes, link_matrix


def tiny_problem(seed: int) -> Problem:
    """Up to 7 executors on up to 3 nodes: loads, capacities, speeds and traffic all random,
    traffic measured (non-uniform) or derived from streams of any grouping."""
    rng = random.Random(seed)
    nodes = [{"id": f"n{k}", "capacity": rng.choice((60, 80, 100)), "speed": rng.choice((1.0, 1.5)),
              "draining": k == 2 and rng.random() < 0.3} for k in range(rng.randint(1, 3))]
    components = []
    for i in range(rng.randint(1, 3)):
        executors = rng.randint(1, 7 - sum(c["executors"] for c in components) - (2 - i))
        components.append({"id": f"c{i}", "executors": executors,
                           "cost": executors * rng.choice((10, 20, 30, 45))})
    streams = [{"from": a["id"], "to": b["id"], "rate": rng.randint(1, 9),
                "grouping": rng.choice(("shuffle", "global", "all"))}
               for a, b in itertools.combinations(components, 2) if rng.random() < 0.7]
    data = {"nodes": nodes, "topology": {"components": components, "streams": streams}}
    if rng.random() < 0.4:  # measured, skewed traffic
        ids = [f"{c['id']}/{i}" for c in components for i in range(c["executors"])]
        data["traffic"] = [{"from": a, "to": b, "rate": rng.randint(0, 5)}
                           for a, b in itertools.permutations(ids, 2) if rng.random() < 0.4]
    return Problem.from_dict(data)


def brute_force(problem: Problem) -> float | None:
    """The best IMC gain over all |N|^|T| placements within capacity (None: none fits)."""
    nodes = [n for n in problem.nodes if not n.draining]
    executors = problem.executors
    best = None
    for placement in itertools.product(range(len(nodes)), repeat=len(executors)):
        used = [0.0] * len(nodes)
        for executor, k in zip(executors, placement):
            used[k] += executor.load
        if any(u > n.effective_capacity + 1e-9 for u, n in zip(used, nodes)):
            continue
        assignments = {e.id: Slot(nodes[k].id, 6700) for e, k in zip(executors, placement)}
        gain = evaluate(problem, assignments)["imc_gain"]
        best = gain if best is None else max(best, gain)
    return best


@pytest.mark.parametrize("seed", range(60))
def test_matches_brute_force_on_tiny_problems(seed):
    problem = tiny_problem(seed)
    expected = brute_force(problem)
    if expected is None:
        with pytest.raises(InfeasibleError):
            run(problem, "optimal")
        return
    plan = run(problem, "optimal")
    assert plan.figures["imc_gain"] == pytest.approx(expected, abs=1e-9)
    assert plan.figures["overloaded_nodes"] == 0
    assert plan.figures["drain_load"] == 0


@pytest.mark.parametrize("seed", range(25))
def test_no_heuristic_beats_the_optimum(seed):
    problem = Problem.from_dict(random_job(random.Random(seed), seed=seed))
    optimum = run(problem, "optimal").figures["imc_gain"]
    for algorithm in ("topdown", "tasklevel", "topdown-ls", "even"):
        plan = run(problem, algorithm)
        if plan.figures["overloaded_nodes"] == 0:  # even ignores capacity
            assert plan.figures["imc_gain"] <= optimum + 1e-9, algorithm


@pytest.mark.parametrize("seed", range(15))
def test_classes_are_blocks_of_equal_links(seed):
    """Every pair of classes has one link weight, and each class one load: the counts suffice."""
    problem = Problem.from_dict(mixed_job(seed))
    graph = job_graph(problem, skew_margin=None)
    weights = link_matrix(problem, graph.task_ids)
    classes = interchangeable_classes(graph.task_loads, graph.task_group, weights)
    assert sorted(t for c in classes for t in c) == list(range(len(graph.task_ids)))
    for a in classes:
        assert len({graph.task_loads[t] for t in a}) == 1
        for b in classes:
            block = [weights[i, j] for i in a for j in b if i != j]
            assert not block or np.allclose(block, block[0])


def test_derived_shuffle_traffic_keeps_components_whole_and_global_splits_the_target():
    data = {"nodes": [{"id": "n0"}], "topology": {"components": [
        {"id": "a", "executors": 3, "cost": 30}, {"id": "b", "executors": 4, "cost": 40},
        {"id": "c", "executors": 2, "cost": 20}],
        "streams": [{"from": "a", "to": "b", "grouping": "shuffle"}, {"from": "b", "to": "c", "grouping": "global"}]}}
    problem = Problem.from_dict(data)
    graph = job_graph(problem, skew_margin=None)
    classes = interchangeable_classes(graph.task_loads, graph.task_group, link_matrix(problem, graph.task_ids))
    sizes = sorted(len(c) for c in classes)
    assert sizes == [1, 1, 3, 4]  # c/0 receives the global stream, c/1 does not


def test_refuses_large_problems_with_a_clear_message():
    problem = Problem.from_dict(pipeline_job())
    with pytest.raises(TooLargeError, match=r"too large .* use topdown or topdown-ls"):
        run(problem, "optimal")


def test_refusal_on_the_command_line_is_one_line_and_status_2(tmp_path, capsys):
    import json

    path = tmp_path / "big.json"
    path.write_text(json.dumps(pipeline_job()))
    assert cli_main(["plan", "-a", "optimal", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large" in err


def test_refuses_early_when_measured_traffic_makes_executors_distinct():
    from storm_planner.generators.topdown import scale_job

    problem = Problem.from_dict(scale_job(nodes=5, executors=60, components=6, sparse_targets=3))
    with pytest.raises(TooLargeError, match="count states"):
        run(problem, "optimal")
