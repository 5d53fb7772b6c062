"""CBA, the cost-balance algorithm (BGElasor, ref. [11] of Mu et al. 2020): QEScalor's baseline.

Every instance gets the same provision; per epoch, the number of instances is chosen to cover the
workload while balancing running cost against startup and shutdown costs. Reconstructed as the
QCESA dynamic program (:mod:`.qcesa`, :mod:`._grid`) restricted to one provision, with the same
candidates (``ceil(W_t / perf)`` to ``ceil(W_max / perf)`` instances); instances of other provisions
running now are stopped in the first epoch. ``resource`` names the provision (the paper runs r1..r4);
left unset, the cheapest of the single-provision schedules is taken.

Complexity: O(T · cap) per provision, cap = ceil(W_max / perf).
"""
from __future__ import annotations

import numpy as np

from storm_planner.core.errors import InvalidParameterError
from storm_planner.planners._parameters import checked, to_text, to_whole
from storm_planner.scaling import _grid
from storm_planner.scaling.base import Scaler
from storm_planner.scaling.qcesa import DEFAULT_MAX_STATES, paper_candidates
from storm_planner.scaling.scaling_problem import ScalingInstance
from storm_planner.scaling.schedule import Schedule


class CBA(Scaler):
    """CBA, QEScalor's baseline: every instance with the same provision, the count per epoch by dynamic
    programming.

    Parameters
    ----------
    resource : str or None, default=None
        The provision's id; None takes the cheapest of the single-provision schedules.
    max_states : int, default=50000000
        Most count vectors times epochs the dynamic programme may hold; a larger problem is refused.
    """

    name = "cba"
    summary = "cost-balance baseline (BGElasor): one provision for every instance, DP over its count"
    baseline = True

    def __init__(self, *, resource: str | None = None, max_states: int = DEFAULT_MAX_STATES):
        self.resource = checked(self.name, "resource", resource, to_text, optional=True)
        self.max_states = checked(self.name, "max_states", max_states, to_whole, minimum=1)

    def schedule(self, instance: ScalingInstance) -> Schedule:
        if self.resource is None:
            schedules = [self.with_provision(instance, r) for r in range(instance.n_resources)]
            return min(schedules, key=lambda s: s.cost(instance))
        if self.resource not in instance.resource_ids:
            raise InvalidParameterError(f"cba: parameter resource must be one of "
                                        f"{', '.join(instance.resource_ids)}, got {self.resource!r}")
        return self.with_provision(instance, instance.resource_ids.index(self.resource))

    def with_provision(self, instance: ScalingInstance, resource: int) -> Schedule:
        alone = _grid.solve(instance.restricted(resource), paper_candidates, self.max_states)
        counts = np.zeros((instance.n_epochs, instance.n_resources), dtype=int)
        counts[:, resource] = alone.counts[:, 0]
        return Schedule(counts)
