"""A scaling schedule and its cost under QEScalor's cost model (Mu et al. 2020, §2.4, *Cost Model*).

A schedule holds, for every epoch t and provision r, the number of instances ``n[t, r]``. Its total
cost, reconstructed from the paper's definitions (the extracted text lost the formulas):

    W = Σ_t Σ_r price_r · n[t, r]  +  p_u · Σ_t C_u(t)  +  p_d · Σ_t C_d(t)
    C_u(t) = Σ_r max(0, n[t, r] − n[t−1, r]),   C_d(t) = Σ_r max(0, n[t−1, r] − n[t, r])

with n[−1] the instances running now. Changing an instance's provision is stopping one and starting
another. The constraint: Σ_r n[t, r] · perf_r ≥ workload_t in every epoch t.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from storm_planner.scaling.scaling_problem import ScalingInstance

# Capacity may fall short of the workload by this much (relative) and still count as covering it:
# rates are floats, and a schedule exactly at the workload must not fail on rounding.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Schedule:
    counts: np.ndarray   # (T, R) instances per epoch and provision

    def running_cost(self, instance: ScalingInstance) -> float:
        return float((self.counts @ instance.price).sum())

    def changes(self, instance: ScalingInstance) -> tuple[int, int]:
        """(startups, shutdowns) over the horizon, from the instances running now."""
        steps = np.diff(np.vstack([instance.current, self.counts]), axis=0)
        return int(np.clip(steps, 0, None).sum()), int(np.clip(-steps, 0, None).sum())

    def capacity(self, instance: ScalingInstance) -> np.ndarray:
        capacity: np.ndarray = self.counts @ instance.performance
        return capacity

    def epoch_costs(self, instance: ScalingInstance) -> np.ndarray:
        """(T,) each epoch's running cost plus the startups and shutdowns that lead into it."""
        steps = np.diff(np.vstack([instance.current, self.counts]), axis=0)
        costs: np.ndarray = (self.counts @ instance.price + instance.startup_cost * np.clip(steps, 0, None).sum(axis=1)
                             + instance.shutdown_cost * np.clip(-steps, 0, None).sum(axis=1))
        return costs

    def cost(self, instance: ScalingInstance) -> float:
        return float(self.epoch_costs(instance).sum())

    def short_epochs(self, instance: ScalingInstance) -> list[int]:
        """Epochs whose capacity is below their workload (none in a valid schedule)."""
        capacity = self.capacity(instance)
        return [int(t) for t in np.flatnonzero(capacity < instance.workload * (1 - TOLERANCE))]

    def to_dict(self, instance: ScalingInstance) -> dict[str, Any]:
        startups, shutdowns = self.changes(instance)
        return {
            "epochs": [{rid: int(n) for rid, n in zip(instance.resource_ids, row) if n}
                       for row in self.counts],
            "cost": round(self.cost(instance), 9),
            "running_cost": round(self.running_cost(instance), 9),
            "startups": startups,
            "shutdowns": shutdowns,
            "capacity": [round(float(c), 9) for c in self.capacity(instance)],
            "workload": [float(w) for w in instance.workload],
            "performance": {rid: float(p) for rid, p in zip(instance.resource_ids, instance.performance)},
        }
