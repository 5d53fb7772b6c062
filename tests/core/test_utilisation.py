"""Elastic Allocator's figures (core.utilisation) against a brute-force all-pairs computation."""
from __future__ import annotations

import json
import math
import random
import re
import statistics
from pathlib import Path

import pytest

from storm_planner.core.errors import ProblemError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.utilisation import node_network

GROUPINGS = ["shuffle", "fields", "global", "all", "local_or_shuffle", "direct"]
SMALL_PROBLEM = Path(__file__).resolve().parents[1] / "data" / "small-problem.json"


def random_problem_dict(seed: int) -> dict:
    rng = random.Random(seed)
    components = [{"id": f"c{i}", "type": "spout" if i == 0 else "bolt", "executors": rng.randint(1, 5),
                   "cost": rng.uniform(10, 140)} for i in range(rng.randint(1, 4))]
    ids = [c["id"] for c in components]
    streams = [{"from": rng.choice(ids), "to": rng.choice(ids),  # self-streams included
                "grouping": rng.choice(GROUPINGS), "rate": rng.uniform(0.0, 900),
                "tuple_bytes": rng.choice([0, rng.uniform(50, 2000)])}
               for _ in range(rng.randint(0, 6))]
    nodes = [{"id": f"n{i}", "capacity": rng.choice([200, 400]), "speed": rng.choice([1.0, 1.5]),
              "slots": [6700, 6701],
              **({"bandwidth": rng.uniform(5, 50)} if rng.random() < 0.8 else {}),
              "used": {"cpu": rng.uniform(0, 50), "bandwidth": rng.uniform(0, 10)}}
             for i in range(rng.randint(1, 4))]
    return {"nodes": nodes, "topology": {"id": "t", "components": components, "streams": streams},
            "options": {"max_cpu_utilisation": rng.uniform(0.5, 1.0),
                        "max_bandwidth_utilisation": rng.uniform(0.5, 1.0)}}


def brute_force_pairs(problem: Problem) -> list[tuple[str, str, float]]:
    """Every executor pair of every stream with its Mbit/s, written out (as core.derive spreads rates)."""
    members = {c.id: [e.id for e in problem.executors if e.component == c.id] for c in problem.components}
    pairs = []
    for s in problem.streams:
        sources, targets = members[s.source], members[s.target]
        if s.grouping == "global":
            candidates, rate = [(a, targets[0]) for a in sources], s.rate / len(sources)
        elif s.grouping == "all":
            candidates, rate = [(a, b) for a in sources for b in targets], s.rate / len(sources)
        else:
            candidates, rate = [(a, b) for a in sources for b in targets], s.rate / (len(sources) * len(targets))
        pairs += [(a, b, rate * s.tuple_bytes * 8 / 1e6) for a, b in candidates if a != b]
    return pairs


def brute_force_network(problem: Problem, node_of: dict[str, str]) -> dict[str, float]:
    use = {n.id: n.used_bandwidth for n in problem.nodes}
    for a, b, mbit in brute_force_pairs(problem):
        if node_of[a] != node_of[b]:
            use[node_of[a]] += mbit
            use[node_of[b]] += mbit
    return use


def placement(problem: Problem, rng: random.Random) -> dict[str, Slot]:
    return {e.id: Slot(rng.choice(problem.nodes).id, 6700) for e in problem.executors}


@pytest.mark.parametrize("seed", range(150))
def test_network_per_node_equals_the_all_pairs_sum(seed):
    problem = Problem.from_dict(random_problem_dict(seed))
    node_of = {e: s.node for e, s in placement(problem, random.Random(seed)).items()}
    expected = brute_force_network(problem, node_of)
    got = node_network(problem, node_of)
    assert got.keys() == expected.keys()
    for node in expected:
        assert got[node] == pytest.approx(expected[node], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("seed", range(150))
def test_utilisation_deviation_and_violations_equal_their_definitions(seed):
    problem = Problem.from_dict(random_problem_dict(seed))
    assignments = placement(problem, random.Random(seed))
    node_of = {e: s.node for e, s in assignments.items()}
    figures = evaluate(problem, assignments)
    network = brute_force_network(problem, node_of)
    load = {n.id: sum(e.load for e in problem.executors if node_of[e.id] == n.id) for n in problem.nodes}
    d_cpu, d_bw = problem.options.max_cpu_utilisation, problem.options.max_bandwidth_utilisation
    cpu_share, cpu_used, cpu_total, cpu_over = [], 0.0, 0.0, 0
    for n in problem.nodes:
        capacity = n.capacity * n.speed
        demand = load[n.id] + n.used_cpu * n.speed
        cpu_share.append(100 * demand / capacity)
        cpu_used += min(demand, capacity)
        cpu_total += capacity
        cpu_over += load[n.id] > 0 and demand > d_cpu * capacity + 1e-9
    linked = [n for n in problem.nodes if n.bandwidth is not None]
    bw_share = [100 * network[n.id] / n.bandwidth for n in linked]
    bw_over = sum(1 for n in linked if network[n.id] > n.used_bandwidth + 1e-9
                  and network[n.id] > d_bw * n.bandwidth + 1e-9)
    assert figures["cpu_utilisation"] == pytest.approx(100 * cpu_used / cpu_total)
    assert figures["cpu_deviation"] == pytest.approx(statistics.pstdev(cpu_share), abs=1e-9)
    assert figures["cpu_violations"] == cpu_over
    if linked:
        bw_used = sum(min(network[n.id], n.bandwidth) for n in linked)
        assert figures["bandwidth_utilisation"] == pytest.approx(100 * bw_used / sum(n.bandwidth for n in linked))
        assert figures["bandwidth_deviation"] == pytest.approx(statistics.pstdev(bw_share), abs=1e-9)
        assert figures["max_network_utilisation"] == pytest.approx(max(bw_share))
    assert figures["bandwidth_violations"] == bw_over
    assert figures["constraint_violations"] == cpu_over + bw_over
    crossing = sum(mbit for a, b, mbit in brute_force_pairs(problem) if node_of[a] != node_of[b])
    assert figures["network"] == pytest.approx(crossing, abs=1e-9)


def test_measured_pairs_take_their_streams_tuple_size():
    data = random_problem_dict(3)
    data["topology"]["streams"] = [{"from": "c0", "to": "c0", "rate": 10, "tuple_bytes": 1000}]
    data["topology"]["components"] = [{"id": "c0", "executors": 3, "cost": 30}]
    data["executors"] = [{"id": f"e{i}", "component": "c0", "load": 10} for i in range(3)]
    data["traffic"] = [{"from": "e0", "to": "e1", "rate": 100.0}, {"from": "e1", "to": "e2", "rate": 50.0}]
    data["nodes"] = [{"id": "a", "bandwidth": 10}, {"id": "b", "bandwidth": 10, "used": {"bandwidth": 1}}]
    problem = Problem.from_dict(data)
    network = node_network(problem, {"e0": "a", "e1": "b", "e2": "b"})
    assert network == pytest.approx({"a": 0.8, "b": 1.8})  # 100 tuples/s × 1000 B = 0.8 Mbit/s


def test_a_node_only_other_work_takes_past_its_limit_is_no_violation_of_this_placement():
    data = {"nodes": [{"id": "a", "capacity": 100, "used": {"cpu": 95}}, {"id": "b", "capacity": 100}],
            "topology": {"components": [{"id": "c", "executors": 1, "cost": 10}]},
            "options": {"max_cpu_utilisation": 0.8}}
    problem = Problem.from_dict(data)
    assert evaluate(problem, {"c/0": Slot("b", 6700)})["cpu_violations"] == 0
    assert evaluate(problem, {"c/0": Slot("a", 6700)})["cpu_violations"] == 1


def test_new_fields_round_trip_and_old_problems_keep_their_meaning():
    data = random_problem_dict(7)
    problem = Problem.from_dict(data)
    again = Problem.from_dict(json.loads(json.dumps(problem.to_dict())))
    assert (again.nodes, again.streams, again.options) == (problem.nodes, problem.streams, problem.options)
    old = Problem.from_dict(json.loads(SMALL_PROBLEM.read_text()))
    assert old.options.max_cpu_utilisation is None and all(n.bandwidth is None for n in old.nodes)
    assert "tuple_bytes" not in json.dumps(old.to_dict())
    figures = evaluate(old, {e.id: Slot("sup-a", 6700) for e in old.executors})
    assert figures["network"] == 0 and figures["bandwidth_violations"] == 0
    assert figures["cpu_violations"] == figures["overloaded_nodes"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d["nodes"][0]["used"].update(network=3), "unknown key"),
    (lambda d: d["nodes"][0].update(bandwidth=0), "nodes[0].bandwidth"),
    (lambda d: d["options"].update(max_cpu_utilisation=-1), "options.max_cpu_utilisation"),
    (lambda d: d["options"].update(max_bandwidth_utilisation="a lot"), "options.max_bandwidth_utilisation"),
    (lambda d: d["topology"]["streams"].append({"from": "c0", "to": "c0", "tuple_bytes": -5}), "tuple_bytes"),
])
def test_bad_new_fields_are_refused_naming_them(change, message):
    data = random_problem_dict(11)
    change(data)
    with pytest.raises(ProblemError, match=re.escape(message)):
        Problem.from_dict(data)


def test_the_network_figure_is_linear_not_quadratic_in_executors():
    """A 2,000 × 2,000 shuffle (4 million pairs) is evaluated from counts, in well under a second."""
    import time

    data = {"nodes": [{"id": f"n{i}", "bandwidth": 1000} for i in range(20)],
            "topology": {"components": [{"id": "a", "executors": 2000}, {"id": "b", "executors": 2000}],
                         "streams": [{"from": "a", "to": "b", "rate": 1e5, "tuple_bytes": 100}]}}
    problem = Problem.from_dict(data)
    assignments = {e.id: Slot(f"n{i % 20}", 6700) for i, e in enumerate(problem.executors)}
    started = time.perf_counter()
    figures = evaluate(problem, assignments)
    assert time.perf_counter() - started < 2.0
    # 1/20 of the traffic stays on each node: 19/20 of 80 Mbit/s crosses.
    assert figures["network"] == pytest.approx(80 * 19 / 20)
    assert math.isfinite(figures["bandwidth_deviation"])
