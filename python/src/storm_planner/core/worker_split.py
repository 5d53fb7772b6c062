"""Splitting one node's executors into workers so that the tuples they exchange stay inside a worker.

Storm serialises every tuple that leaves a worker, even to a worker on the same node; inside a worker
it hands the object over. When ``topology.worker.max.heap.size.mb`` forces a node's executors into
several workers, *which* executors share a worker therefore decides how much CPU goes on
serialisation. A split by memory alone (first fit) is blind to that: on the end-to-end bench it put the
four ackers and both counts in one worker and the spout and top in the other, so every request, every
ack-init and every completion crossed a worker boundary on a node whose CPU was the bottleneck.

:func:`split_by_traffic` grows one worker at a time, greedily:

1. the seed is an executor of the component with the most traffic per executor (ties: component id);
2. then, while the worker has room under the heap limit, it takes an executor of the component whose
   executors exchange the most tuples with the worker's members so far (its *affinity*), ties broken
   by traffic per executor, then by id;
3. a component whose next executor does not fit is passed over; when none fits, the next worker starts.

Traffic between one executor of A and one of B is the streams' rate between A and B (both
directions, the acker's streams included) over ``n_A × n_B``: the streams spread over the executors
(fields and shuffle groupings do). Executors of one component are interchangeable to this model, so
affinities are kept per component and updated when a member joins: O(deg) per join.

Complexity: O(m · (K + deg)) for m executors of K components on the node, deg a component's stream
partners; the planning core never calls it with more than one node's executors.

Greedy growth may need more workers than first fit by decreasing memory; the caller compares the two
and keeps first fit then (a split that needs a slot the node lacks is no split).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from storm_planner.core.problem import Executor, Problem

EPSILON = 1e-9


def pair_rates(problem: Problem) -> dict[str, dict[str, float]]:
    """Tuples/s between one executor of component A and one of B, both directions summed.

    A stream's rate is what its source emits; an ``all``-grouped stream delivers every emit to each
    target executor (as :mod:`~storm_planner.core.traffic` counts it), the others spread it over them.
    """
    sizes = {c.id: max(1, c.executors) for c in problem.components}
    rates: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for stream in problem.streams:
        if stream.source == stream.target or not stream.rate > 0:
            continue
        spread = 1 if stream.grouping == "all" else sizes.get(stream.target, 1)
        per_pair = stream.rate / (sizes.get(stream.source, 1) * spread)
        rates[stream.source][stream.target] += per_pair
        rates[stream.target][stream.source] += per_pair
    return rates


def split_by_traffic(members: Sequence[str], executors: Mapping[str, Executor], heap: float,
                     rates: Mapping[str, Mapping[str, float]]) -> list[list[str]]:
    """``members`` (one node's executor ids) as workers of at most ``heap`` MB each, traffic kept inside."""
    pool: dict[str, list[str]] = defaultdict(list)   # component -> its executors not yet placed, by id
    for executor_id in sorted(members, reverse=True):    # popped from the end: smallest id first
        pool[executors[executor_id].component].append(executor_id)
    # Traffic per executor with every other member of the node: the seed order and the tie-break.
    counts = {component: len(ids) for component, ids in pool.items()}
    weight = {component: sum(rate * counts.get(partner, 0) for partner, rate in rates.get(component, {}).items())
              for component in pool}
    workers: list[list[str]] = []
    while pool:
        workers.append(_grow_worker(pool, executors, heap, rates, weight))
    return workers


def _grow_worker(pool: dict[str, list[str]], executors: Mapping[str, Executor], heap: float,
                 rates: Mapping[str, Mapping[str, float]], weight: Mapping[str, float]) -> list[str]:
    worker: list[str] = []
    used = 0.0
    affinity: dict[str, float] = defaultdict(float)
    while True:
        fitting = [c for c, ids in pool.items() if used + executors[ids[-1]].memory <= heap + EPSILON]
        if not fitting:
            if not worker:  # one executor over the limit still needs a worker of its own
                fitting = list(pool)
            else:
                return worker
        component = max(fitting, key=lambda c: (affinity[c], weight[c], _reversed(c)))
        executor_id = pool[component].pop()
        if not pool[component]:
            del pool[component]
        worker.append(executor_id)
        used += executors[executor_id].memory
        for partner, rate in rates.get(component, {}).items():
            affinity[partner] += rate
        if not pool:
            return worker


def _reversed(text: str) -> tuple[int, ...]:
    """A key under which ``max`` prefers the smaller string (ties go to the first component by id)."""
    return tuple(-ord(ch) for ch in text) + (0,)
