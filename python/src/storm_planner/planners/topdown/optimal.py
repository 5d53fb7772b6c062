"""``optimal``: the exact maximum IMC gain, for small problems (a baseline).

§7.3 of Chatzistergiou & Viglas (CIKM 2014) compares topDown and taskLevel with
"the optimal solution ... computed with a brute force algorithm", which is only
feasible for 17 tasks. This planner is exact too, but enumerates *counts* rather
than task placements, which breaks the two symmetries that make brute force
explode:

1. Interchangeable executors. Executors are partitioned into classes such that
   all executors of a class have the same load and every pair of classes (A, B)
   has one link weight w(a, b) for all a in A, b in B (also inside a class).
   Components with derived traffic (shuffle, fields) are classes as they are;
   measured or skewed traffic splits them (:func:`interchangeable_classes`,
   a partition refinement). Within a class only *how many* executors a node
   gets matters, so a node's content is a count vector v and its IMC gain is
   sum_{A<B} w_AB v_A v_B + sum_A w_AA v_A (v_A - 1) / 2.
2. Node order. A dynamic programme over the nodes, one at a time, keyed by the
   count vector placed so far, never distinguishes two placements that put the
   same counts on the same nodes: best[k+1][p + v] = max(best[k][p] + gain(v))
   over the count vectors v that fit node k's capacity (capacity x speed).

The answer best[K][all] is the maximum of phi(X) of §2.2 under the capacity
constraint, and -infinity proves that no placement fits (then
:class:`InfeasibleError`). Draining nodes get nothing.

The dynamic programme itself is :func:`~._counts.solve_counts` (shared with the
exhaustive repacking of :mod:`._groups`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from storm_planner.core.errors import InfeasibleError, TooLargeError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners._parameters import checked, to_whole
from storm_planner.planners.base import Planner
from storm_planner.planners.topdown._counts import (  # noqa: F401  (re-exported)
    MAX_CHOICES,
    MAX_STATES,
    MAX_WORK,
    fitting_vectors,
    solve_counts,
)
from storm_planner.planners.topdown._groups import finish_plan, job_graph, usable_nodes

MAX_TASKS = 400


def link_matrix(problem: Problem, task_ids: Sequence[str]) -> np.ndarray:
    """Symmetric executor x executor IMC (both directions summed), zero diagonal."""
    index = {executor: i for i, executor in enumerate(task_ids)}
    weights = np.zeros((len(task_ids), len(task_ids)))
    for traffic in problem.traffic_model.executor_pairs(who="optimal"):
        i, j = index[traffic.source], index[traffic.target]
        if i != j:
            weights[i, j] += traffic.rate
            weights[j, i] += traffic.rate
    return weights


def interchangeable_classes(loads: Sequence[float], groups: Sequence[int],
                            weights: np.ndarray, max_states: int | None = None) -> list[list[int]]:
    """Coarsest-found partition of tasks into classes with constant blocks of ``weights``.

    Starts from (group, load) and splits until every block between two classes
    (and inside each class, off the diagonal) holds one value. Splitting only
    grows the count states prod(n_A + 1), so past ``max_states`` it stops with
    :class:`TooLargeError` instead of refining further.
    """
    start: dict[tuple[int, float], list[int]] = {}
    for task, key in enumerate(zip(groups, (round(load, 9) for load in loads))):
        start.setdefault(key, []).append(task)
    classes = list(start.values())
    changed = True
    while changed:
        changed = False
        for a in range(len(classes)):
            for b in range(a, len(classes)):
                split = _split_block(classes[a], classes[b], weights, same=(a == b))
                if split is not None:
                    index, parts = split
                    target = a if index == 0 else b
                    classes[target:target + 1] = parts
                    changed = True
                    if max_states is not None and _states(classes) > max_states:
                        raise TooLargeError(f"over {max_states:,} count states")
                    break
            if changed:
                break
    return classes


def _states(classes: Sequence[Sequence[int]]) -> int:
    return math.prod(len(c) + 1 for c in classes)


def class_weight_matrix(classes: Sequence[Sequence[int]], weights: np.ndarray) -> np.ndarray:
    """The one link weight of each block (diagonal: between two tasks of one class)."""
    matrix = np.zeros((len(classes), len(classes)))
    for a, members_a in enumerate(classes):
        for b, members_b in enumerate(classes):
            if a != b:
                matrix[a, b] = weights[members_a[0], members_b[0]]
            elif len(members_a) > 1:
                matrix[a, a] = weights[members_a[0], members_a[1]]
    return matrix


def _split_block(rows: list[int], cols: list[int], weights: np.ndarray,
                 same: bool) -> tuple[int, list[list[int]]] | None:
    """None when the block is constant; else (0 or 1, parts) splitting rows or cols."""
    block = weights[np.ix_(rows, cols)]
    values = block[~np.eye(len(rows), dtype=bool)] if same else block.ravel()
    if values.size == 0 or np.allclose(values, values[0], rtol=1e-9, atol=1e-12):
        return None
    if same:
        # Split off by the links of the first task: rows equal in multiset may still differ.
        pivot = rows[0]
        return 0, _partition(rows, lambda t: -1.0 if t == pivot else round(weights[pivot, t], 9))
    by_row = _partition(rows, lambda t: tuple(np.round(weights[t, cols], 9)))
    if len(by_row) > 1:
        return 0, by_row
    return 1, _partition(cols, lambda t: round(weights[rows[0], t], 9))


def _partition(items: list[int], key: Callable[[int], Any]) -> list[list[int]]:
    parts: dict[Any, list[int]] = {}
    for item in items:
        parts.setdefault(key(item), []).append(item)
    return list(parts.values())


class OptimalPlanner(Planner):
    """The exact maximum IMC gain under the nodes' capacities, by dynamic programming over how many
    executors of each interchangeable class each node holds (small problems; the §7.3 comparison point).

    Parameters
    ----------
    max_states : int, default=2000000
        Most count states the dynamic programme may keep; a larger problem is refused as too large.
    max_work : int, default=1000000000
        Most state-by-vector steps the dynamic programme may take; a larger problem is refused as too
        large.
    max_tasks : int, default=400
        Most executors accepted; a problem with more is refused before any work.
    """

    name = "optimal"
    summary = "exact maximum IMC gain by dynamic programming over per-node counts (small problems)"
    baseline = True

    def __init__(self, *, max_states: int = MAX_STATES, max_work: int = MAX_WORK,
                 max_tasks: int = MAX_TASKS) -> None:
        self.max_states = checked(self.name, "max_states", max_states, to_whole, minimum=1)
        self.max_work = checked(self.name, "max_work", max_work, to_whole, minimum=1)
        self.max_tasks = checked(self.name, "max_tasks", max_tasks, to_whole, minimum=0)

    def plan(self, problem: Problem) -> Plan:
        nodes = usable_nodes(problem)
        if not nodes:
            raise InfeasibleError("every node is draining: no node may receive executors")
        tasks = len(problem.executors)
        if tasks > self.max_tasks:
            raise TooLargeError(self._too_large(problem, f"{tasks} executors (limit {self.max_tasks})"))
        graph = job_graph(problem, skew_margin=None)
        weights = link_matrix(problem, graph.task_ids)
        try:
            classes = interchangeable_classes(graph.task_loads, graph.task_group, weights, self.max_states)
        except TooLargeError as error:
            raise TooLargeError(self._too_large(problem, f"measured traffic makes executors distinct: "
                                                         f"{error}")) from None
        class_weights = class_weight_matrix(classes, weights)
        sizes = [len(members) for members in classes]
        loads = [graph.task_loads[members[0]] for members in classes]
        try:
            _, contents = solve_counts(sizes, loads, class_weights,
                                       [n.effective_capacity for n in nodes],
                                       self.max_states, self.max_work)
        except TooLargeError as error:
            raise TooLargeError(self._too_large(problem, f"{len(classes)} interchangeable classes: "
                                                         f"{error}")) from None
        node_of = [-1] * tasks
        next_member = [0] * len(classes)
        for node, counts in enumerate(contents):
            for c, count in enumerate(counts):
                for task in classes[c][next_member[c]:next_member[c] + int(count)]:
                    node_of[task] = node
                next_member[c] += int(count)
        return finish_plan(problem, self.name, graph, nodes, node_of,
                           [f"exact: {len(classes)} classes of interchangeable executors"])

    def _too_large(self, problem: Problem, reason: str) -> str:
        return (f"optimal: problem too large for the exact search ({len(problem.executors)} executors "
                f"on {len(usable_nodes(problem))} nodes, {reason}); use topdown or topdown-ls")
