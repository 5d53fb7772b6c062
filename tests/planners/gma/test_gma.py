"""gma (Algorithm 1), gma-repair and random on loaded clusters, against exhaustive search."""
from __future__ import annotations

import itertools
import random

import pytest

from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.utilisation import node_network, resource_figures
from storm_planner.planners import run
from storm_planner.planners.gma._model import HEAVY, LIGHT, MODERATE, GmaState
from storm_planner.planners.gma.greedy import greedy_matching

GROUPINGS = ["shuffle", "fields", "global", "all"]


def loaded_instance(seed: int, measured: bool = False) -> dict:
    """A small cluster other work already loads (CPU and links), a topology of <= 6 executors, tight limits."""
    rng = random.Random(seed)
    nodes = [{"id": f"n{i}", "capacity": 100, "slots": [6700], "bandwidth": rng.choice([10, 20]),
              "used": {"cpu": rng.uniform(0, 60), "bandwidth": rng.uniform(0, 8)}}
             for i in range(rng.randint(2, 3))]
    components, left = [], 6
    for i in range(rng.randint(2, 3)):
        n = rng.randint(1, min(3, left - (2 - i if i < 2 else 0)))
        left -= n
        components.append({"id": f"c{i}", "type": "spout" if i == 0 else "bolt", "executors": n,
                           "cost": n * rng.uniform(5, 35)})
    ids = [c["id"] for c in components]
    streams = [{"from": ids[i], "to": ids[i + 1], "grouping": rng.choice(GROUPINGS),
                "rate": rng.uniform(100, 1200), "tuple_bytes": rng.uniform(200, 1500)} for i in range(len(ids) - 1)]
    data = {"nodes": nodes, "topology": {"id": "t", "components": components, "streams": streams},
            "options": {"max_cpu_utilisation": 0.8, "max_bandwidth_utilisation": 0.8, "seed": seed,
                        "time_limit_s": 5}}
    if measured:
        executors = [{"id": f"{c['id']}/{k}", "component": c["id"], "load": rng.uniform(2, 30)}
                     for c in components for k in range(c["executors"])]
        names = [e["id"] for e in executors]
        data["executors"] = executors
        data["traffic"] = [{"from": a, "to": b, "rate": rng.uniform(50, 600)}
                           for a, b in itertools.permutations(names, 2) if rng.random() < 0.3]
    return data


def violations(problem: Problem, node_of: dict[str, str]) -> int:
    loads = {n.id: 0.0 for n in problem.nodes}
    for e in problem.executors:
        loads[node_of[e.id]] += e.load
    return int(resource_figures(problem, node_of, loads)["constraint_violations"])


def feasible_exists(problem: Problem) -> bool:
    """Exhaustive: every placement of the executors on the nodes (<= 3^6)."""
    ids = [e.id for e in problem.executors]
    nodes = [n.id for n in problem.nodes]
    return any(violations(problem, dict(zip(ids, choice))) == 0
               for choice in itertools.product(nodes, repeat=len(ids)))


SEEDS = range(120)


@pytest.fixture(scope="module")
def outcomes():
    """Per instance: (feasible exists, gma's violations, gma-repair's violations, gma-repair's notes)."""
    rows = []
    for seed in SEEDS:
        for measured in (False, True):
            problem = Problem.from_dict(loaded_instance(seed, measured))
            gma, repaired = run(problem, "gma"), run(problem, "gma-repair")
            rows.append((feasible_exists(problem), gma.figures["constraint_violations"],
                         repaired.figures["constraint_violations"], repaired.notes))
    return rows


def test_gma_repair_never_violates_a_limit_when_a_placement_within_them_exists(outcomes):
    feasible = [row for row in outcomes if row[0]]
    assert len(feasible) >= 60  # the generator makes mostly feasible instances
    assert all(repaired == 0 for _, _, repaired, _ in feasible)


def test_literal_gma_does_violate_on_some_feasible_instances(outcomes):
    """Why gma-repair exists: the greedy order of Algorithm 1 leaves operators over a limit."""
    feasible = [row for row in outcomes if row[0]]
    broken = [row for row in feasible if row[1] > 0]
    assert 0 < len(broken) < len(feasible)


def test_when_no_placement_exists_gma_repair_says_it_was_proved(outcomes):
    infeasible = [row for row in outcomes if not row[0]]
    assert infeasible  # the generator also makes some
    for _, gma_violations, repaired, notes in infeasible:
        assert repaired == gma_violations > 0
        assert any("proved" in note for note in notes)


@pytest.mark.parametrize("seed", range(30))
def test_the_incremental_model_ends_where_the_evaluator_does(seed):
    for measured in (False, True):
        problem = Problem.from_dict(loaded_instance(seed, measured))
        state, _ = greedy_matching(problem)
        node_of = state.node_ids()
        expected = node_network(problem, node_of)
        for k, node in enumerate(state.nodes):
            assert state.net[k] + node.used_bandwidth == pytest.approx(expected[node.id], abs=1e-9)
            assert state.load[k] == pytest.approx(sum(e.load for e in problem.executors
                                                      if node_of[e.id] == node.id))
        figures = evaluate(problem, {e: Slot(n, 6700) for e, n in node_of.items()})
        assert state.objective() == pytest.approx(figures["cpu_deviation"] + figures["bandwidth_deviation"])


def test_nodes_are_clustered_light_moderate_heavy_by_the_busier_resource():
    data = {"nodes": [{"id": "a", "bandwidth": 10, "used": {"cpu": 10, "bandwidth": 1}},
                      {"id": "b", "bandwidth": 10, "used": {"cpu": 10, "bandwidth": 5}},
                      {"id": "c", "bandwidth": 10, "used": {"cpu": 85, "bandwidth": 1}},
                      {"id": "d", "used": {"cpu": 39.9}}],
            "topology": {"components": [{"id": "x"}]}}
    state = GmaState(Problem.from_dict(data))
    assert [state.level(k, 40, 80) for k in range(4)] == [LIGHT, MODERATE, HEAVY, LIGHT]


def test_an_operator_goes_to_the_light_level_first_then_to_the_best_node_there():
    # b is lighter by CPU but moderate by its link; a and c are light: c evens CPU out best.
    data = {"nodes": [{"id": "a", "bandwidth": 100, "used": {"cpu": 30}},
                      {"id": "b", "bandwidth": 100, "used": {"cpu": 0, "bandwidth": 50}},
                      {"id": "c", "bandwidth": 100, "used": {"cpu": 20}}],
            "topology": {"components": [{"id": "x", "cost": 10}]}}
    plan = run(Problem.from_dict(data), "gma")
    assert plan.nodes == {"x/0": "c"}


def test_when_no_light_node_takes_an_operator_the_moderate_level_is_searched():
    # a is light but D_CPU leaves it too little room for x; b is moderate with room; c heavy.
    data = {"nodes": [{"id": "a", "capacity": 100, "used": {"cpu": 30}},
                      {"id": "b", "capacity": 400, "used": {"cpu": 200}},
                      {"id": "c", "capacity": 100, "used": {"cpu": 85}}],
            "topology": {"components": [{"id": "x", "cost": 60}]},
            "options": {"max_cpu_utilisation": 0.8}}
    plan = run(Problem.from_dict(data), "gma")
    assert plan.nodes == {"x/0": "b"} and plan.figures["cpu_violations"] == 0


def test_operators_no_node_takes_are_dealt_evenly_over_the_light_nodes_without_the_limits():
    data = {"nodes": [{"id": "a", "used": {"cpu": 10}}, {"id": "b", "used": {"cpu": 20}},
                      {"id": "c", "used": {"cpu": 70}}],
            "topology": {"components": [{"id": "x", "executors": 4, "cost": 200}]},
            "options": {"max_cpu_utilisation": 0.5}}
    plan = run(Problem.from_dict(data), "gma")
    assert sorted(plan.nodes.values()) == ["a", "a", "b", "b"]
    assert any("dealt evenly over the light sub-cluster" in note for note in plan.notes)
    assert plan.figures["cpu_violations"] == 2


def test_t_max_spent_sends_every_remaining_operator_to_the_leftovers(monkeypatch):
    import storm_planner.planners.gma.greedy as greedy

    clock = iter(range(0, 10**6, 10))  # every look at the clock is 10 s later
    monkeypatch.setattr(greedy.time, "monotonic", lambda: next(clock))
    problem = Problem.from_dict(loaded_instance(1))
    plan = run(problem, "gma", time_limit_s=15)
    assert any("t_max (15 s) reached after 1 executor(s)" in note for note in plan.notes)


def benchmark_like(seed: int) -> Problem:
    """Background work on a subset of the nodes, a pipeline to place: gma's setting (§V)."""
    rng = random.Random(seed)
    busy = set(rng.sample(range(8), 4))
    nodes = [{"id": f"n{i}", "capacity": 400, "bandwidth": 100,
              "used": {"cpu": rng.uniform(120, 220) if i in busy else rng.uniform(0, 30),
                       "bandwidth": rng.uniform(20, 40) if i in busy else rng.uniform(0, 5)}}
             for i in range(8)]
    components = [{"id": "spout", "type": "spout", "executors": 2, "cost": 60},
                  {"id": "parse", "executors": 6, "cost": 420}, {"id": "count", "executors": 6, "cost": 300},
                  {"id": "rank", "executors": 3, "cost": 90}, {"id": "merge", "executors": 1, "cost": 20}]
    streams = [{"from": a, "to": b, "grouping": g, "rate": 1000, "tuple_bytes": 800}
               for a, b, g in (("spout", "parse", "shuffle"), ("parse", "count", "fields"),
                               ("count", "rank", "fields"), ("rank", "merge", "global"))]
    return Problem.from_dict({"nodes": nodes, "topology": {"components": components, "streams": streams},
                              "options": {"max_cpu_utilisation": 0.8, "max_bandwidth_utilisation": 0.8,
                                          "seed": seed}})


@pytest.mark.parametrize("seed", range(10))
def test_gma_balances_cpu_better_than_even_and_random_on_loaded_clusters(seed):
    problem = benchmark_like(seed)
    gma = run(problem, "gma").figures
    for baseline in ("even", "random"):
        other = run(problem, baseline).figures
        assert gma["cpu_deviation"] < other["cpu_deviation"]
        assert gma["cpu_utilisation"] >= other["cpu_utilisation"] - 1e-9  # Fig. 4: "the maximum utilization"
    assert gma["constraint_violations"] == 0


def test_random_is_seeded():
    first, again = run(benchmark_like(1), "random"), run(benchmark_like(1), "random")
    other = run(benchmark_like(1).replace(options=benchmark_like(2).options), "random")
    assert first.assignments == again.assignments != other.assignments
