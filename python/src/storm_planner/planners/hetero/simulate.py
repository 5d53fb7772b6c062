"""The simulator: what a placement achieves under the CPU model (Nasiri et al. §6.3).

For an execution graph placed on machines it reports per-machine load and
utilisation, the highest topology input rate no machine is over-utilised at,
the topology throughput at that rate (eq. 2: the tuples/s all tasks process)
and the weighted utilisation of eq. 9–10. Planners are compared on these
figures, computed the same way for every plan.

The highest input rate has a closed form: every task's rate is proportional to
the input rate (eq. 8), so machine ``m`` carries ``fixed_m + IR · coef_m``
percent — ``fixed_m`` the bases of the instances on it (0 in the paper's
eq. 7; :mod:`storm_planner.planners.hetero.model`) — and the answer is
``min_m (capacity_m − fixed_m) / coef_m`` (and, with an ``executor_cap``, no
single executor above the cap: ``base + IR · rate_i · cost ≤ cap``). A
placement whose fixed parts alone exceed a machine's budget sustains no input
at all: its rate is 0. Storm with back-pressure settles at this
rate: the first machine to saturate throttles the spouts.

Eq. 9–10, *reconstructed* (symbols lost in extraction): the overall
utilisation is ``U = Σ_i w_i · U_i`` over machine types ``i``, ``U_i`` the mean
utilisation of the machines of type ``i``, and the weight of a type is its
share of the cluster's processing power, ``w_i = N_i P_i / Σ_k N_k P_k``, with
``N_i`` machines of type ``i`` and ``P_i`` the power of one, from the profile:
its capacity times the mean over the topology's T component types of
``1 / (ET + MET)`` — tuples/s per percent, averaged over the types (the
paper's T "types of components", which differs from the component count).

Complexity: O(C·M + S) per evaluation for C components, M machines, S streams.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from storm_planner.core.errors import ProblemError
from storm_planner.planners.hetero.model import HeteroModel
from storm_planner.planners.hetero.rates import ComponentRates, propagate


@dataclass(frozen=True)
class Placement:
    """An execution graph and its mapping: per component, the machine of each instance.

    ``machines_of[c][i]`` is the machine index of instance ``i`` of component
    ``c``; instance 0 is the first (the one a global grouping feeds).
    """

    machines_of: tuple[tuple[int, ...], ...]

    @property
    def parallelism(self) -> np.ndarray:
        return np.array([len(m) for m in self.machines_of])

    def counts(self, n_machines: int) -> np.ndarray:
        """(C, M) instances of each component on each machine."""
        counts = np.zeros((len(self.machines_of), n_machines), dtype=int)
        for c, machines in enumerate(self.machines_of):
            for m in machines:
                counts[c, m] += 1
        return counts

    @property
    def size(self) -> int:
        return sum(len(m) for m in self.machines_of)


def machine_coefficients(model: HeteroModel, placement: Placement,
                         rates: ComponentRates | None = None) -> np.ndarray:
    """CPU percent each machine carries per tuple/s of topology input rate."""
    rates = rates or propagate(model, placement.parallelism)
    counts = placement.counts(model.n_machines)
    coef: np.ndarray = (counts * rates.per_instance[:, None] * model.cost).sum(axis=0)
    for c, machines in enumerate(placement.machines_of):
        if rates.first[c] > 0:
            coef[machines[0]] += rates.first[c] * model.cost[c, machines[0]]
    return coef


def machine_fixed(model: HeteroModel, placement: Placement) -> np.ndarray:
    """CPU percent each machine carries at zero input: the bases of its instances."""
    fixed: np.ndarray = (placement.counts(model.n_machines) * model.base).sum(axis=0)
    return fixed


def hottest_executor_coefficient(model: HeteroModel, placement: Placement,
                                 rates: ComponentRates | None = None) -> float:
    """The largest CPU percent of one executor, per tuple/s of input rate."""
    rates = rates or propagate(model, placement.parallelism)
    hottest = 0.0
    for c, machines in enumerate(placement.machines_of):
        for i, m in enumerate(machines):
            hottest = max(hottest, rates.instance_rate(c, i) * model.cost[c, m])
    return hottest


def executor_cap_limit(model: HeteroModel, placement: Placement, rates: ComponentRates | None = None) -> float:
    """The highest input rate at which no executor is above ``executor_cap`` (inf without a cap)."""
    if model.executor_cap is None:
        return math.inf
    rates = rates or propagate(model, placement.parallelism)
    limit = math.inf
    for c, machines in enumerate(placement.machines_of):
        for i, m in enumerate(machines):
            room = model.executor_cap - model.base[c, m]
            slope = rates.instance_rate(c, i) * model.cost[c, m]
            if room < -OVER * model.executor_cap:
                return 0.0
            if slope > 0:
                limit = min(limit, max(room, 0.0) / slope)
    return limit


OVER = 1e-9  # relative tolerance: fixed parts this far over a budget still fit


def rate_limit(capacity: np.ndarray, fixed: np.ndarray, coef: np.ndarray) -> float:
    """``min_m (capacity_m − fixed_m) / coef_m`` over machines with ``coef_m > 0``; 0 if any machine's
    fixed part exceeds its capacity; inf if no machine's load grows with the rate."""
    room = capacity - fixed
    if (room < -OVER * capacity).any():
        return 0.0
    loaded = coef > 0
    if not loaded.any():
        return math.inf
    return float((np.maximum(room[loaded], 0.0) / coef[loaded]).min())


def max_input_rate(model: HeteroModel, placement: Placement) -> float:
    """The highest topology input rate at which no machine is over-utilised (0: the fixed
    parts alone exceed some machine's budget)."""
    rates = propagate(model, placement.parallelism)
    coef = machine_coefficients(model, placement, rates)
    limit = min(rate_limit(model.capacity, machine_fixed(model, placement), coef),
                executor_cap_limit(model, placement, rates))
    if math.isinf(limit):
        raise ProblemError("nothing in the topology consumes CPU: it has no spout or no profiled cost")
    return float(limit)


@dataclass(frozen=True)
class Simulation:
    input_rate: float                     # topology input rate simulated (tuples/s per spout)
    throughput: float                     # eq. 2: tuples/s processed by all tasks
    load: Mapping[str, float]             # machine -> CPU percent (bases included)
    utilisation: Mapping[str, float]      # machine -> percent of its budget
    type_utilisation: Mapping[str, float]  # machine type -> mean utilisation (U_i)
    type_weights: Mapping[str, float]     # eq. 10
    weighted_utilisation: float           # eq. 9
    parallelism: Mapping[str, int]

    @property
    def max_utilisation(self) -> float:
        return max(self.utilisation.values(), default=0.0)

    def figures(self) -> dict[str, float]:
        return {
            "max_input_rate": self.input_rate,
            "throughput": self.throughput,
            "weighted_utilisation": self.weighted_utilisation,
            "predicted_max_utilisation": self.max_utilisation,
            "instances": float(sum(self.parallelism.values())),
        }


def simulate(model: HeteroModel, placement: Placement, input_rate: float | None = None) -> Simulation:
    """Run ``placement`` at ``input_rate`` (default: the highest sustainable one)."""
    rate = max_input_rate(model, placement) if input_rate is None else float(input_rate)
    rates = propagate(model, placement.parallelism, rate)
    load = (machine_fixed(model, placement)
            + machine_coefficients(model, placement, propagate(model, placement.parallelism)) * rate)
    utilisation = 100.0 * load / model.capacity
    by_type = type_utilisation(model, utilisation)
    weights = type_weights(model)
    return Simulation(
        input_rate=rate,
        throughput=rates.throughput,
        load=dict(zip(model.machines, load.tolist())),
        utilisation=dict(zip(model.machines, utilisation.tolist())),
        type_utilisation=by_type,
        type_weights=weights,
        weighted_utilisation=sum(weights[t] * u for t, u in by_type.items()),
        parallelism=dict(zip(model.components, placement.parallelism.tolist())),
    )


def type_utilisation(model: HeteroModel, utilisation: Sequence[float]) -> dict[str, float]:
    """U_i of eq. 9: mean utilisation of the machines of each type."""
    groups: dict[str, list[float]] = {}
    for machine_type, value in zip(model.machine_types, utilisation):
        groups.setdefault(machine_type, []).append(float(value))
    return {t: sum(v) / len(v) for t, v in groups.items()}


def type_weights(model: HeteroModel) -> dict[str, float]:
    """Eq. 10 (reconstructed, see the module docstring): each type's share of processing power."""
    kinds: dict[str, int] = {}
    for c, kind in enumerate(model.component_types):
        if not model.is_system[c] and model.cost[c].max() > 0:
            kinds.setdefault(kind, c)
    power: dict[str, float] = {}
    for machine_type in dict.fromkeys(model.machine_types):
        members = [m for m, t in enumerate(model.machine_types) if t == machine_type]
        first = members[0]
        speed = np.mean([1.0 / model.cost[c, first] for c in kinds.values()]) if kinds else 1.0
        power[machine_type] = float(model.capacity[members].sum() * speed)  # N_i · P_i
    total = sum(power.values())
    return {t: p / total for t, p in power.items()} if total > 0 else {t: 0.0 for t in power}


def gain(new: float, old: float) -> float:
    """Relative improvement in percent (``new`` over ``old``)."""
    if old <= 0:
        return math.inf if new > 0 else 0.0
    return 100.0 * (new - old) / old
