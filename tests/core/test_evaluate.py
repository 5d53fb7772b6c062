"""The evaluator's node figures (corrected from the idle cluster's, O(nodes used)) against their definitions."""
from __future__ import annotations

import random

import pytest

from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot


def loaded_cluster(seed: int) -> dict:
    """Many nodes, some draining, most holding other work; a topology that fits on a few of them."""
    rng = random.Random(seed)
    components = [{"id": f"c{i}", "type": "spout" if i == 0 else "bolt", "executors": rng.randint(1, 6),
                   "cost": rng.uniform(5, 150)} for i in range(rng.randint(1, 4))]
    nodes = [{"id": f"n{i:02d}", "capacity": rng.choice([100, 400, 800]), "speed": rng.choice([1.0, 1.5]),
              "slots": [6700, 6701], "draining": rng.random() < 0.2,
              "used": {"cpu": rng.choice([0.0, rng.uniform(0, 90)])}}
             for i in range(rng.randint(1, 30))]
    return {"nodes": nodes, "topology": {"id": "t", "components": components, "streams": []}}


def definitions(problem: Problem, node_of: dict[str, str]) -> dict[str, float]:
    """Every node figure computed over every node, as the evaluator's docstring defines it."""
    load = {n.id: sum(e.load for e in problem.executors if node_of.get(e.id) == n.id) for n in problem.nodes}
    utilisation = {n.id: 100 * (load[n.id] + n.used_cpu * n.speed) / (n.capacity * n.speed) for n in problem.nodes}
    active = [n for n in problem.nodes if not n.draining]
    capacity = sum(n.capacity * n.speed for n in active)
    held = sum(n.used_cpu * n.speed for n in active)
    average = 100 * (sum(e.load for e in problem.executors) + held) / capacity if capacity else 0.0
    effective = {n.id: max(0.0, n.capacity - n.used_cpu) * n.speed for n in problem.nodes}
    return {
        "max_utilisation": max(utilisation.values()),
        "load_distance": max((abs(utilisation[n.id] - average) for n in active), default=0.0),
        "overloaded_nodes": sum(1 for n in problem.nodes if load[n.id] > effective[n.id] + 1e-9),
        "over_capacity": sum(max(0.0, load[n.id] - effective[n.id]) for n in problem.nodes
                             if load[n.id] > effective[n.id] + 1e-9),
        "drain_load": sum(load[n.id] for n in problem.nodes if n.draining),
    }


@pytest.mark.parametrize("seed", range(200))
def test_node_figures_equal_their_definitions_over_every_node(seed):
    problem = Problem.from_dict(loaded_cluster(seed))
    rng = random.Random(seed)
    # A plan on a few nodes (most of the cluster idle), sometimes on the least loaded ones, which move
    # the cluster's lowest utilisation.
    ranked = sorted(problem.nodes, key=lambda n: n.used_cpu / n.capacity)
    count = min(len(problem.nodes), rng.randint(1, 3))
    few = ranked[:count] if rng.random() < 0.5 else rng.sample(problem.nodes, count)
    assignments = {e.id: Slot(rng.choice(few).id, 6700) for e in problem.executors}
    figures = evaluate(problem, assignments)
    expected = definitions(problem, {e: s.node for e, s in assignments.items()})
    for name, value in expected.items():
        assert figures[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name


def test_executors_left_unplaced_add_nothing_to_any_node():
    problem = Problem.from_dict(loaded_cluster(3))
    figures = evaluate(problem, {})
    expected = definitions(problem, {})
    assert figures["max_utilisation"] == pytest.approx(expected["max_utilisation"])
    assert figures["load_distance"] == pytest.approx(expected["load_distance"])
    assert figures["overloaded_nodes"] == 0 and figures["drain_load"] == 0
