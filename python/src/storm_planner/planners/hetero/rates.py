"""Rate propagation: the input rate of every task from the topology input rate (eq. 8).

Nasiri et al. §5.2, eq. 8. *Reconstruction* (the symbols were lost in the
extracted text): task *i* emits ``OR_i = α_i · IR_i`` and divides it over the
``n_i`` downstream tasks it feeds, so a downstream task *j* receives

    IR_j = Σ_{i feeding j} α_i · IR_i / n_i .

With Storm's semantics applied per stream (every subscribing component gets
the whole stream, each according to its own grouping), a component ``c`` with
``n_c`` instances receives on a ``split`` stream from ``s`` the rate
``α_s · R_s`` in total, ``α_s · R_s / n_c`` per instance (``R_s`` is ``s``'s
total input rate); on an ``all`` stream every instance receives ``α_s · R_s``;
on a ``global`` stream only the first instance does. Spouts receive the
topology input rate times their ``input_share``, split over their instances.
A component splitting its output between targets is written with per-target
α (``{"a": 0.5, "b": 0.5}``).

Every rate is proportional to the topology input rate, so :func:`propagate`
works per unit of input rate by default. Complexity O(C + S) for C components
and S streams.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from storm_planner.planners.hetero.model import ALL, GLOBAL, Flow, HeteroModel


@dataclass(frozen=True)
class ComponentRates:
    """Per component, its input in three parts (tuples/s), for a given parallelism."""

    split: np.ndarray   # divided evenly over the instances
    every: np.ndarray   # received in full by every instance
    first: np.ndarray   # received by the first instance only
    parallelism: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """Total input rate of each component (all its instances together)."""
        total: np.ndarray = self.split + self.parallelism * self.every + self.first
        return total

    @property
    def per_instance(self) -> np.ndarray:
        """Input rate of each instance but the first (the first adds ``first``)."""
        rate: np.ndarray = self.split / self.parallelism + self.every
        return rate

    def instance_rate(self, component: int, instance: int) -> float:
        rate = self.per_instance[component]
        return float(rate + (self.first[component] if instance == 0 else 0.0))

    @property
    def throughput(self) -> float:
        """Eq. 2's objective: the tuples/s all tasks process together."""
        return float(self.total.sum())


def propagate(model: HeteroModel, parallelism: Sequence[int] | np.ndarray,
              input_rate: float = 1.0) -> ComponentRates:
    """Eq. 8 over the whole topology, in topological order."""
    n = np.asarray(parallelism, dtype=float)
    if n.shape != (model.n_components,) or (n < 1).any():
        raise ValueError(f"parallelism: one count >= 1 per component, got {list(parallelism)}")
    split = model.input_share * input_rate
    every = np.zeros(model.n_components)
    first = np.zeros(model.n_components)
    incoming: list[list[Flow]] = [[] for _ in model.components]
    for flow in model.flows:
        incoming[flow.target].append(flow)
    total = np.zeros(model.n_components)
    for c in model.order:
        for flow in incoming[c]:
            emitted = flow.alpha * total[flow.source]
            if flow.kind == ALL:
                every[c] += emitted
            elif flow.kind == GLOBAL:
                first[c] += emitted
            else:
                split[c] += emitted
        total[c] = split[c] + n[c] * every[c] + first[c]
    return ComponentRates(split=split, every=every, first=first, parallelism=n)
