"""Dynamic programming over the grid of instance counts, shared by QCESA, its exact variant and CBA.

The states of an epoch are the vectors of instance counts (one per provision) in a box
``0 <= n_r <= cap_r``; an algorithm chooses which of them an epoch may use (its candidates). The
recurrence is QCESA's (Mu et al. 2020, Alg. 2):

    V_t(s) = run(s) + min_{s'} [ V_{t−1}(s') + move(s', s) ]   for s a candidate of epoch t

with ``move`` the startup and shutdown cost between two count vectors. Evaluated pair by pair, as the
paper's DP reads, an epoch costs O(|C_t| · |C_{t−1}|). ``move`` is a sum over provisions of a convex
function of one count's change (p_u per instance up, p_d per instance down), so the inner minimum is a
distance transform: two linear passes along each axis of the box give it for every state at once
(Felzenszwalb & Huttenlocher's separable transform, here with an L1-type cost), in
O(R · |box|) per epoch — the same values, not an approximation (tests/scaling compare it
with the pairwise DP). Memory: one value grid per epoch, kept to read the schedule back.

Complexity: O(T · R · Π_r (cap_r + 1)) time and O(T · Π_r (cap_r + 1)) memory.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from storm_planner.core.errors import InfeasibleError, TooLargeError
from storm_planner.scaling.scaling_problem import ScalingInstance
from storm_planner.scaling.schedule import TOLERANCE, Schedule

# A candidate rule: (instance, epoch, counts grids per provision, capacity grid) -> bool grid.
CandidateRule = Callable[[ScalingInstance, int, np.ndarray, np.ndarray], np.ndarray]


def box_caps(instance: ScalingInstance) -> np.ndarray:
    """The count bound per provision: enough of it alone for the peak, or what runs now if more.

    No optimal schedule needs more (a sketch of the proof: clipping every epoch's count of r at this
    bound keeps each epoch covered — the count alone covers the peak — lowers the running cost, and
    never adds a startup or shutdown, as clipping is monotone and 1-Lipschitz and leaves the
    starting counts unchanged), so the DP over this box is exact for the cost model."""
    peak = float(instance.workload.max()) if instance.n_epochs else 0.0
    alone = np.ceil(peak / instance.performance * (1 - TOLERANCE)).astype(int)
    caps: np.ndarray = np.maximum(alone, instance.current)
    return caps


def solve(instance: ScalingInstance, candidates: CandidateRule, max_states: int) -> Schedule:
    """The cheapest schedule whose epoch t uses only ``candidates(...)[t]`` states."""
    caps = box_caps(instance)
    shape = tuple(int(c) + 1 for c in caps)
    states = math.prod(shape)
    if states * max(1, instance.n_epochs) > max_states:
        raise TooLargeError(f"{states:,} count vectors × {instance.n_epochs} epochs exceed max_states "
                            f"{max_states:,} (bounds per provision: {dict(zip(instance.resource_ids, caps.tolist()))})")
    counts = np.indices(shape)                       # counts[r] is the grid of n_r
    capacity = np.tensordot(instance.performance, counts, axes=1)
    running = np.tensordot(instance.price, counts, axes=1)
    value = np.full(shape, np.inf)
    value[tuple(instance.current)] = 0.0
    values = []
    for t in range(instance.n_epochs):
        allowed = candidates(instance, t, counts, capacity)
        value = np.where(allowed, _transform(value, instance) + running, np.inf)
        if not np.isfinite(value).any():
            raise InfeasibleError(f"epoch {t}: no candidate covers the workload {instance.workload[t]:g} "
                                  f"tuples/s")
        values.append(value)
    return Schedule(_read_back(values, instance, counts))


def covers(instance: ScalingInstance, t: int, capacity: np.ndarray) -> np.ndarray:
    covered: np.ndarray = capacity >= instance.workload[t] * (1 - TOLERANCE)
    return covered


def _transform(value: np.ndarray, instance: ScalingInstance) -> np.ndarray:
    """min over s' of value(s') + move(s', s), for every s: per axis, one pass up, one down."""
    up, down = instance.startup_cost, instance.shutdown_cost
    result: np.ndarray = value.copy()
    for axis in range(result.ndim):
        view = np.moveaxis(result, axis, 0)          # a view: passes write into ``result``
        for i in range(1, view.shape[0]):            # reach i from below: start instances
            np.minimum(view[i:i + 1], view[i - 1:i] + up, out=view[i:i + 1])
        for i in range(view.shape[0] - 2, -1, -1):   # reach i from above: stop instances
            np.minimum(view[i:i + 1], view[i + 1:i + 2] + down, out=view[i:i + 1])
    return result


def _move_cost(instance: ScalingInstance, counts: np.ndarray,
               target: tuple[int | np.integer[Any], ...]) -> np.ndarray:
    """move(s', target) for every s' of the box."""
    cost = np.zeros(counts.shape[1:])
    for r, n in enumerate(target):
        step = n - counts[r]
        cost += np.where(step > 0, step * instance.startup_cost, -step * instance.shutdown_cost)
    return cost


def _read_back(values: list[np.ndarray], instance: ScalingInstance, counts: np.ndarray) -> np.ndarray:
    """The argmin path: the best last state, then each epoch's best predecessor of the next."""
    chosen = [np.unravel_index(int(np.argmin(values[-1])), values[-1].shape)]
    for t in range(len(values) - 1, 0, -1):
        total = values[t - 1] + _move_cost(instance, counts, chosen[-1])
        chosen.append(np.unravel_index(int(np.argmin(total)), total.shape))
    path: np.ndarray = np.array(chosen[::-1], dtype=int).reshape(len(values), instance.n_resources)
    return path
