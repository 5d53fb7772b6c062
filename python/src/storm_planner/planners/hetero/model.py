"""The CPU model of Nasiri et al. (§5.2, eq. 7) over one problem.

Eq. 7 predicts the CPU a task uses on a machine from its input rate alone:

    TCU = IR · (ET + MET)

with ET and MET the per-tuple execute and miscellaneous times of the task's
component on the machine's type (:mod:`storm_planner.planners.hetero.profiles`).
*Reconstruction* (the extracted text lost the symbols): IR in tuples/s and the
times in milliseconds give milliseconds of CPU per second, so in percent of one
core ``TCU = IR · (ET + MET) / 10``. A machine's budget (MAC, 100 in the paper
for each machine) is the node's ``capacity`` — 100 per core, as Storm's
``supervisor.cpu.capacity`` — times ``mac / 100``. ``Node.speed`` is not used:
the profile is measured per machine type and already contains its speed.

**Base** (issue #18; not in the paper): a Storm executor is never free (the
idle wait strategy, heartbeats, metrics), so a profile may give, per
(component, machine type), the CPU percent one instance uses at zero input,
``base``: ``TCU = base + IR · (ET + MET) / 10``. The paper's eq. 7 is the case
``base = 0``, the default. The authors' published simulator models the same
with ``U = U0 + (r − r0) / Y`` per instance. A machine's load is then
``Σ instances · base + IR · coef`` — a fixed part that grows with the number
of instances on it, and a part proportional to the input rate.

Because TCU is affine in IR and every rate in the topology is proportional to
the topology input rate (eq. 8, :mod:`storm_planner.planners.hetero.rates`), the model
keeps two numbers per (component, machine): ``cost[c, m]``, the CPU percent one
tuple/s of input of component ``c`` takes on machine ``m``, and ``base[c, m]``,
the CPU percent one instance of ``c`` takes on ``m`` at zero input.

Groupings reduce to three kinds: ``split`` (shuffle, fields, local-or-shuffle,
none, custom, direct: the stream divided evenly over the target's instances —
uniform fields grouping, as the paper assumes), ``all`` (every instance
receives the whole stream) and ``global`` (the first instance receives all).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import SPOUT, Problem
from storm_planner.planners.hetero.profiles import Profile, profile_for_problem

SPLIT, ALL, GLOBAL = "split", "all", "global"
GROUPING_KINDS: Mapping[str, str] = {
    "shuffle": SPLIT, "fields": SPLIT, "local_or_shuffle": SPLIT, "none": SPLIT,
    "custom": SPLIT, "direct": SPLIT, "all": ALL, "global": GLOBAL,
}


def tcu(input_rate: float, et_ms: float, met_ms: float, base: float = 0.0) -> float:
    """Eq. 7 with the fixed part: CPU percent (of one core) used by a task receiving
    ``input_rate`` tuples/s, ``base + IR · (ET + MET) / 10`` (``base`` 0: the paper's)."""
    return base + input_rate * (et_ms + met_ms) / 10.0


@dataclass(frozen=True)
class Flow:
    """A stream between components: ``alpha`` output tuples per input tuple of the source."""

    source: int
    target: int
    kind: str
    alpha: float


@dataclass(frozen=True, eq=False)
class HeteroModel:
    """A problem seen through eq. 7–8: indices, costs, capacities. Immutable."""

    components: tuple[str, ...]
    is_spout: tuple[bool, ...]
    is_system: tuple[bool, ...]
    component_types: tuple[str, ...]     # the "type" eq. 10 counts
    flows: tuple[Flow, ...]
    order: tuple[int, ...]               # components in topological order
    input_share: np.ndarray              # (C,) share of the input rate each spout emits
    machines: tuple[str, ...]            # node ids (draining nodes excluded)
    machine_types: tuple[str, ...]
    capacity: np.ndarray                 # (M,) budget in CPU percent
    cost: np.ndarray                     # (C, M) CPU percent per tuple/s of input
    base: np.ndarray                     # (C, M) CPU percent of one instance at zero input
    executor_cap: float | None           # CPU percent one executor thread may use
    input_rate: float                    # IR0, the initial topology input rate

    @property
    def n_components(self) -> int:
        return len(self.components)

    @property
    def n_machines(self) -> int:
        return len(self.machines)

    def component_index(self, component: str) -> int:
        return self.components.index(component)

    @property
    def has_base(self) -> bool:
        """Does any instance cost CPU at zero input (a profile with bases)?"""
        return bool((self.base > 0).any())

    @property
    def has_only_split_groupings(self) -> bool:
        return all(flow.kind == SPLIT for flow in self.flows)


def build_model(
    problem: Problem,
    profile: Profile | None = None,
    *,
    mac: float = 100.0,
    input_rate: float | None = None,
) -> HeteroModel:
    """The model of ``problem`` under ``profile`` (default: the problem's own profiles)."""
    profile = profile if profile is not None else profile_for_problem(problem)
    if not mac > 0:
        raise ProblemError(f"mac: a positive percent of each node's capacity, got {mac!r}")
    nodes = [n for n in problem.nodes if not n.draining]
    if not nodes:
        raise ProblemError("every node is draining: nothing to place on")
    components = problem.components
    names = tuple(c.id for c in components)
    index = {name: i for i, name in enumerate(names)}

    cost = np.zeros((len(components), len(nodes)))
    base = np.zeros((len(components), len(nodes)))
    for i, component in enumerate(components):
        if component.system and profile.entry(component.id) is None:
            continue  # acker & co: not profiled, negligible in this model
        for j, node in enumerate(nodes):
            times = profile.times(component.id, node.machine_type)
            cost[i, j] = times.per_tuple_ms / 10.0
            base[i, j] = times.base

    # A system component's output (the acker's completions to the spouts) feeds no operator's input:
    # left out, rates flow from the spouts down, and the acker's streams never close a cycle.
    system = {c.id for c in components if c.system}
    flows = tuple(
        Flow(index[s.source], index[s.target], _kind(s.grouping), profile.alpha(s.source, s.target))
        for s in problem.streams if s.source not in system
    )
    rate = input_rate if input_rate is not None else (profile.input_rate or 1.0)
    if not rate > 0:
        raise ProblemError(f"input_rate: must be positive, got {rate!r}")
    return HeteroModel(
        components=names,
        is_spout=tuple(c.type == SPOUT for c in components),
        is_system=tuple(c.system for c in components),
        component_types=tuple(profile.component_type(c.id) for c in components),
        flows=flows,
        order=_topological_order(names, flows),
        input_share=np.array([profile.input_share(c.id) if c.type == SPOUT else 0.0 for c in components]),
        machines=tuple(n.id for n in nodes),
        machine_types=tuple(n.machine_type for n in nodes),
        capacity=np.array([n.capacity * mac / 100.0 for n in nodes]),
        cost=cost,
        base=base,
        executor_cap=profile.executor_cap,
        input_rate=float(rate),
    )


def _kind(grouping: str) -> str:
    return GROUPING_KINDS.get(grouping, SPLIT)


def _topological_order(names: tuple[str, ...], flows: tuple[Flow, ...]) -> tuple[int, ...]:
    """Kahn's algorithm; rates are only defined on a DAG, so a cycle is an error."""
    indegree = [0] * len(names)
    downstream: list[list[int]] = [[] for _ in names]
    for flow in flows:
        indegree[flow.target] += 1
        downstream[flow.source].append(flow.target)
    ready = [i for i, d in enumerate(indegree) if d == 0]
    order = []
    while ready:
        current = ready.pop(0)
        order.append(current)
        for target in downstream[current]:
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    if len(order) != len(names):
        stuck = sorted(names[i] for i, d in enumerate(indegree) if d > 0)
        raise ProblemError(f"the topology has a cycle through {', '.join(stuck)}: input rates are undefined")
    return tuple(order)
