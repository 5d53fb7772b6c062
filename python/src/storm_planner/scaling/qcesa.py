"""QCESA: the quantitative and cost-based elastic scaling algorithm (Mu et al., ICCS 2020, Alg. 2).

For the epochs of the horizon [t_C, t_F], QCESA takes the largest workload W_max, builds for every
epoch t the candidates — combinations of instances of the provisions whose total performance lies in
[W_t, W_max] — and chooses one candidate per epoch by dynamic programming, minimising running cost plus
startup and shutdown costs (:mod:`.schedule`). Every epoch is covered by construction.

Reconstructed (the extracted text lost Alg. 2): with whole instances, a total of exactly W_max is
usually out of reach, so the upper end reads as "no instance is surplus at the peak": a candidate's
performance less its weakest used instance is below W_max. Single-provision combinations of
``ceil(W_max / perf_r)`` instances are candidates, so QCESA never costs more than CBA with any one
provision (tested). The pairwise DP becomes a distance transform over the grid of counts
(:mod:`._grid`): the same optimum over the same candidates, in O(T · R · |box|) rather than
O(T · |C|²).

``qcesa-exact`` goes past the paper: the same DP over every count vector of the box of
:func:`._grid.box_caps` that covers the epoch — the exact optimum of the cost model (equal to the
integer program of :mod:`.integer_program`, tested), at the price of a larger state space. The benchmark
(``storm-planner bench qescalor``) reports QCESA's gap to it.
"""
from __future__ import annotations

import numpy as np

from storm_planner.planners._parameters import checked, to_whole
from storm_planner.scaling import _grid
from storm_planner.scaling.base import Scaler
from storm_planner.scaling.scaling_problem import ScalingInstance
from storm_planner.scaling.schedule import TOLERANCE, Schedule

DEFAULT_MAX_STATES = 50_000_000  # count vectors × epochs: about 400 MB of value grids


def paper_candidates(instance: ScalingInstance, t: int, counts: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Performance in [W_t, W_max]: covers epoch t, and no instance is surplus at the peak."""
    peak = float(instance.workload.max())
    weakest = np.full(capacity.shape, np.inf)
    for r, perf in enumerate(instance.performance):
        weakest = np.where(counts[r] > 0, np.minimum(weakest, perf), weakest)
    candidates: np.ndarray = _grid.covers(instance, t, capacity) & (capacity - weakest < peak * (1 + TOLERANCE))
    return candidates


def covering(instance: ScalingInstance, t: int, counts: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    return _grid.covers(instance, t, capacity)


class _GridScaler(Scaler):
    """The DP of :mod:`._grid` with the candidate rule ``candidates`` (a staticmethod of the subclass)."""

    candidates = staticmethod(covering)

    def __init__(self, *, max_states: int = DEFAULT_MAX_STATES):
        self.max_states = checked(self.name, "max_states", max_states, to_whole, minimum=1)

    def schedule(self, instance: ScalingInstance) -> Schedule:
        return _grid.solve(instance, self.candidates, self.max_states)


class QCESA(_GridScaler):
    """QEScalor's QCESA (Mu et al., ICCS 2020, Alg. 2): per epoch, the candidates whose performance lies
    in [W_t, W_max], chosen by dynamic programming over running, startup and shutdown costs.

    Parameters
    ----------
    max_states : int, default=50000000
        Most count vectors times epochs the dynamic programme may hold; a larger problem is refused.
    """

    name = "qcesa"
    summary = "QEScalor's QCESA (Mu et al. 2020): candidates in [W_t, W_max], dynamic programming"
    candidates = staticmethod(paper_candidates)


class ExactQCESA(_GridScaler):
    """QCESA's dynamic programme over every count vector that covers the epoch: the exact optimum of the
    cost model (not in the paper).

    Parameters
    ----------
    max_states : int, default=50000000
        Most count vectors times epochs the dynamic programme may hold; a larger problem is refused.
    """

    name = "qcesa-exact"
    summary = "QCESA's DP over every covering count vector: the cost model's exact optimum (not in the paper)"
    candidates = staticmethod(covering)
