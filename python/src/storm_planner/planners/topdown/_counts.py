"""The dynamic programme over per-node count vectors behind ``optimal``.

A node's content is a count vector v (how many executors of each class of
interchangeable executors it gets); a dynamic programme over the nodes, one at a
time, keyed by the count vector placed so far, finds the placement with the
highest IMC gain: best[k+1][p + v] = max(best[k][p] + gain(v)) over the count
vectors v that fit node k's capacity. See :mod:`.optimal` for why this is exact.

Complexity: O(K * S * V * D) with K nodes, D classes, S = prod(n_A + 1) count
states and V count vectors fitting one node, vectorised with numpy. Problems
beyond ``max_states`` states or ``max_work`` state-vector steps are refused
with :class:`TooLargeError` before any work starts.

Used by ``optimal`` (:mod:`.optimal`) and by the exhaustive repacking of
:mod:`._groups`, which is why it is a module of its own.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from storm_planner.core.errors import InfeasibleError, TooLargeError

EPSILON = 1e-9
MAX_STATES = 2_000_000
MAX_WORK = 1_000_000_000
MAX_CHOICES = 50_000_000  # states x nodes kept to rebuild the best placement


def fitting_vectors(sizes: Sequence[int] | np.ndarray, loads: Sequence[float], capacity: float,
                    limit: int) -> np.ndarray:
    """All count vectors v <= sizes with sum(v * loads) <= capacity (at most ``limit``)."""
    vectors: list[tuple[int, ...]] = []
    current = [0] * len(sizes)

    def extend(depth: int, spare: float) -> None:
        if len(vectors) > limit:
            return
        if depth == len(sizes):
            vectors.append(tuple(current))
            return
        most = sizes[depth] if loads[depth] <= EPSILON else min(
            sizes[depth], int(math.floor(spare / loads[depth] + EPSILON)))
        for count in range(most + 1):
            current[depth] = count
            extend(depth + 1, spare - count * loads[depth])
        current[depth] = 0

    extend(0, capacity)
    return np.array(vectors, dtype=np.int64).reshape(len(vectors), len(sizes))


def solve_counts(sizes: Sequence[int], loads: Sequence[float], class_weights: np.ndarray,
                 capacities: Sequence[float], max_states: int = MAX_STATES,
                 max_work: int = MAX_WORK) -> tuple[float, list[np.ndarray]]:
    """The dynamic programme: (best gain, count vector of every node)."""
    class_sizes = np.asarray(sizes, dtype=np.int64)
    states = int(np.prod(class_sizes + 1))
    if states > max_states:
        raise TooLargeError(f"{states:,} count states (limit {max_states:,})")
    if states * len(capacities) > MAX_CHOICES:
        raise TooLargeError(f"{states:,} count states x {len(capacities)} nodes to remember "
                            f"(limit {MAX_CHOICES:,})")
    vectors_by_capacity: dict[float, np.ndarray] = {}
    work = 0
    for capacity in capacities:
        if capacity not in vectors_by_capacity:
            vectors_by_capacity[capacity] = fitting_vectors(class_sizes, loads, capacity, max_work)
        work += states * len(vectors_by_capacity[capacity])
        if work > max_work:
            raise TooLargeError(f"over {max_work:,} state x node-content steps")

    strides = np.cumprod(np.concatenate(([1], class_sizes[:-1] + 1)))
    digits = (np.arange(states)[:, None] // strides) % (class_sizes + 1)
    # at_most[d][c]: states whose class-d count is <= c, so "p + v <= sizes" is an AND of D masks
    at_most = [[digits[:, d] <= c for c in range(size + 1)] for d, size in enumerate(class_sizes)]
    diagonal = np.diag(class_weights)
    best = np.full(states, -np.inf)
    best[0] = 0.0
    choices = []
    for capacity in capacities:
        vectors = vectors_by_capacity[capacity]
        gains = 0.5 * (np.einsum("vi,ij,vj->v", vectors, class_weights, vectors) - vectors @ diagonal)
        offsets = vectors @ strides
        reachable = best > -np.inf
        new_best = np.full(states, -np.inf)
        choice = np.full(states, -1, dtype=np.int32)
        for v, (vector, gain, offset) in enumerate(zip(vectors, gains, offsets)):
            mask = reachable.copy()
            for d, count in enumerate(vector):
                if count:
                    mask &= at_most[d][class_sizes[d] - count]
            sources = np.flatnonzero(mask)
            targets = sources + offset
            values = best[sources] + gain
            better = values > new_best[targets] + 1e-12
            new_best[targets[better]] = values[better]
            choice[targets[better]] = v
        best = new_best
        choices.append((choice, vectors, offsets))
    final = states - 1
    if best[final] == -np.inf:
        raise InfeasibleError("no placement of the executors fits the nodes' capacities "
                              "(exhaustive search)")
    contents = []
    state = final
    for choice, vectors, offsets in reversed(choices):
        v = choice[state]
        contents.append(vectors[v])
        state -= offsets[v]
    contents.reverse()
    return float(best[final]), contents
