"""The component-level traffic model equals the all-pairs computation, and never builds pairs itself."""
from __future__ import annotations

import dataclasses
import math
import random

import pytest

from storm_planner.core.errors import TooLargeError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem, Slot
from storm_planner.core.traffic import TrafficModel

GROUPINGS = ["shuffle", "fields", "global", "all", "local_or_shuffle", "direct", "none", "custom"]


def random_problem(seed: int) -> Problem:
    rng = random.Random(seed)
    components = [{"id": f"c{i}", "type": "spout" if i == 0 else "bolt", "executors": rng.randint(1, 6),
                   "cost": rng.uniform(10, 200)} for i in range(rng.randint(1, 5))]
    ids = [c["id"] for c in components]
    streams = [{"from": rng.choice(ids), "to": rng.choice(ids),  # self-streams included
                "grouping": rng.choice(GROUPINGS), "rate": rng.choice([0.0, rng.uniform(0.1, 50)])}
               for _ in range(rng.randint(0, 7))]
    nodes = [{"id": f"n{i}", "capacity": 400, "slots": [6700, 6701, 6702]} for i in range(rng.randint(1, 4))]
    return Problem.from_dict({"nodes": nodes, "topology": {"id": "t", "components": components, "streams": streams}})


def random_assignment(problem: Problem, rng: random.Random) -> dict[str, Slot]:
    slots = [Slot(n.id, port) for n in problem.nodes for port in n.slots]
    return {e.id: rng.choice(slots) for e in problem.executors}


def all_pairs(problem: Problem) -> TrafficModel:
    """The same traffic written out as executor pairs (as problems held it before)."""
    pairs = problem.traffic_model.executor_pairs(limit=None)
    return TrafficModel(problem.executors, problem.streams, pairs)


@pytest.mark.parametrize("seed", range(200))
def test_component_level_figures_equal_the_all_pairs_ones(seed):
    problem = random_problem(seed)
    rng = random.Random(seed)
    assignment = random_assignment(problem, rng)
    node_of = {e: s.node for e, s in assignment.items()}
    model, pairs = problem.traffic_model, all_pairs(problem)
    assert not pairs.flows  # the reference really works on pairs
    assert math.isclose(model.total, pairs.total, rel_tol=1e-9, abs_tol=1e-9)
    for place in (node_of, assignment):
        assert math.isclose(model.crossing(place), pairs.crossing(place), rel_tol=1e-9, abs_tol=1e-9)
    # Executor groups inside components (topDown's skew sub-groups): the same per group pair.
    group_of = {e.id: hash((e.component, rng.randint(0, 1))) % 97 for e in problem.executors}
    got, want = model.group_rates(group_of), pairs.group_rates(group_of)
    assert set(got) == set(want)
    assert all(math.isclose(got[k], want[k], rel_tol=1e-9) for k in want)


@pytest.mark.parametrize("seed", range(20))
def test_the_evaluator_gives_the_same_figures_from_streams_and_from_pairs(seed):
    problem = random_problem(seed)
    written_out = problem.replace(traffic=problem.traffic_model.executor_pairs(limit=None))
    assignment = random_assignment(problem, random.Random(seed))
    streams, pairs = evaluate(problem, assignment), evaluate(written_out, assignment)
    for figure in ("imc_total", "imc", "imc_gain", "inter_worker", "collocation_factor"):
        assert math.isclose(streams[figure], pairs[figure], rel_tol=1e-9, abs_tol=1e-9), figure


def big_problem(executors_per_component: int, components: int = 5) -> dict:
    names = [f"c{i}" for i in range(components)]
    return {
        "nodes": [{"id": f"n{i}", "capacity": 1000, "slots": [6700, 6701]} for i in range(200)],
        "topology": {"id": "big", "components": [
            {"id": n, "type": "spout" if i == 0 else "bolt", "executors": executors_per_component, "cost": 1000.0}
            for i, n in enumerate(names)],
            "streams": [{"from": a, "to": b, "grouping": "shuffle", "rate": 100.0}
                        for a, b in zip(names, names[1:])]},
    }


def test_a_problem_of_fifty_thousand_executors_holds_no_executor_pairs():
    problem = Problem.from_dict(big_problem(10_000))
    assert len(problem.executors) == 50_000 and problem.traffic == ()
    assignment = {e.id: Slot(f"n{i % 200}", 6700) for i, e in enumerate(problem.executors)}
    figures = evaluate(problem, assignment)
    assert math.isclose(figures["imc_total"], 400.0)
    # Round robin puts 50 executors of every component on each node: 1/200 of each stream stays local.
    assert math.isclose(figures["imc_gain"], 400.0 / 200)
    assert problem.traffic_model._pairs is None  # nothing was written out


def test_pairs_beyond_the_limit_are_refused_with_the_count_and_what_to_use():
    problem = Problem.from_dict(big_problem(1_000, components=2))
    with pytest.raises(TooLargeError, match=r"tasklevel needs every executor pair.*1,000,000.*topdown"):
        problem.traffic_model.executor_pairs(limit=999_999, who="tasklevel")
    assert len(problem.traffic_model.executor_pairs(limit=1_000_000)) == 1_000_000


@pytest.mark.parametrize("seed", range(60))
def test_in_bytes_each_tuple_weighs_its_streams_size_or_the_given_one_when_unknown(seed):
    """Group rates and executor pairs in bytes agree with the tuples' rates times the sizes, a stream of unknown
    size (0) weighing ``unknown_bytes``; the group rates of sized streams alone do not depend on it."""
    rng = random.Random(seed)
    problem = random_problem(seed)
    sized = [dataclasses.replace(s, tuple_bytes=rng.choice([0.0, rng.uniform(10, 500)])) for s in problem.streams]
    problem = problem.replace(streams=tuple(sized))
    model = problem.traffic_model
    unknown = rng.uniform(50, 100)
    size_of = {}
    for s in problem.streams:
        size_of.setdefault((s.source, s.target), []).append(s)
    component = {e.id: e.component for e in problem.executors}
    pairs = model.executor_pairs(limit=None)
    in_bytes = {(t.source, t.target): t.rate for t in model.executor_pairs_in_bytes(unknown, limit=None)}
    for t in pairs:
        streams = size_of[(component[t.source], component[t.target])]
        rate = sum(s.rate for s in streams)
        mean = sum(s.rate * s.tuple_bytes for s in streams) / rate if rate else 0.0
        assert in_bytes[(t.source, t.target)] == pytest.approx(t.rate * (mean or unknown))
    group_of = {e.id: i for i, e in enumerate(problem.executors)}   # one group per executor: the pairs
    groups = model.group_rates(group_of, by_bytes=True, unknown_bytes=unknown)
    for t in pairs:
        streams = size_of[(component[t.source], component[t.target])]
        if len({s.tuple_bytes for s in streams}) == 1:   # one size between the two components: exact per pair
            size = streams[0].tuple_bytes or unknown
            assert groups[(group_of[t.source], group_of[t.target])] == pytest.approx(t.rate * size)
    assert model.some_sizes_known() == any(f.tuple_bytes > 0 for f in model.flows)
