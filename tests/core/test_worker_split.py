"""Which executors share a worker when the heap limit splits a node (core.worker_split)."""
import itertools

import pytest

from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Executor, Slot
from storm_planner.core.resources import fit_to_resources
from storm_planner.core.worker_split import split_by_traffic
from storm_planner.service.planning.convert import problem_from_thrift
from tests.service.test_acker_placement import nodes, topk_spec


def one_node_acker_first(problem):
    """Every executor on one node's first slot, the ackers listed first (as topdown's plan listed them)."""
    order = sorted(problem.executors, key=lambda e: (e.component != "__acker", e.id))
    return {e.id: Slot("sup-0", 6700) for e in order}


def test_the_split_keeps_the_most_tuples_inside_a_worker():
    problem = problem_from_thrift(topk_spec(ackers=4), nodes())
    placed, notes = fit_to_resources(problem, one_node_acker_first(problem))
    assert any("several workers" in note for note in notes)
    slots = sorted(set(placed.values()))
    assert len(slots) == 2 and {s.node for s in slots} == {"sup-0"}
    members = sorted(placed)
    best = min(evaluate(problem, {e: slots[e in first] for e in members})["inter_worker"]
               for size in range(2, 7) for first in map(set, itertools.combinations(members, size)))
    assert evaluate(problem, placed)["inter_worker"] == pytest.approx(best)
    component = {e.id: e.component for e in problem.executors}
    (data,) = [s for s in slots if any(component[e] == "requests" and placed[e] == s for e in placed)]
    assert sorted(component[e] for e in placed if placed[e] == data).count("count") == 2


def executor(i, component, memory=128.0):
    return Executor(id=f"e{i}", component=component, load=1.0, memory=memory)


def test_heap_limit_holds_and_a_lone_oversized_executor_gets_its_own_worker():
    executors = {e.id: e for e in (executor(1, "a", 500), executor(2, "b", 300), executor(3, "b", 300),
                                   executor(4, "c", 900))}
    rates = {"a": {"b": 10.0}, "b": {"a": 10.0}}
    workers = split_by_traffic(list(executors), executors, 768.0, rates)
    # a (500 MB) leaves no room for a b (300 MB); both b share the next worker; c (900 MB) alone.
    assert workers == [["e1"], ["e2", "e3"], ["e4"]]


def test_partners_join_the_seed_before_strangers():
    executors = {e.id: e for e in (executor(1, "spout"), executor(2, "bolt"), executor(3, "other"),
                                   executor(4, "other"))}
    rates = {"spout": {"bolt": 50.0}, "bolt": {"spout": 50.0}, "other": {}}
    workers = split_by_traffic(list(executors), executors, 256.0, rates)
    assert sorted(map(sorted, workers)) == [["e1", "e2"], ["e3", "e4"]]


def test_pair_rates_count_an_all_grouped_stream_once_per_target_executor_as_the_traffic_model_does():
    """An ``all`` stream delivers every emit to each of the target's executors: bargains' watermarks
    (trades -> vwap x2) were counted at half their traffic, so the relief and the swaps undervalued them."""
    from storm_planner.core.problem import Problem
    from storm_planner.core.worker_split import pair_rates

    problem = Problem.from_dict({
        "nodes": [{"id": "n0", "capacity": 100}],
        "topology": {"id": "t", "components": [{"id": "s", "type": "spout", "executors": 2},
                                               {"id": "b", "executors": 3}],
                     "streams": [{"from": "s", "to": "b", "grouping": "all", "rate": 6.0},
                                 {"from": "s", "to": "b", "grouping": "fields", "rate": 6.0, "stream": "other"}]}})
    rates = pair_rates(problem)
    assert rates["s"]["b"] == pytest.approx(6.0 / 2 + 6.0 / (2 * 3))
    assert rates["s"]["b"] * 2 * 3 == pytest.approx(problem.traffic_model.total)
