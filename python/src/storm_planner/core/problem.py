"""The planning problem: one topology to place on a set of nodes.

A :class:`Problem` is immutable and self-contained: planners read it, never the
cluster. It is built from the problem-file JSON (see ``problem.schema.json``
beside this module) with :meth:`Problem.from_dict`, or from a Thrift request by
the service.

Storm mapping: group = component, task = executor, node = supervisor. Loads and
capacities are CPU percent of one reference core (100 = one core); a node's
*effective* capacity is its capacity times its speed (§5 of Chatzistergiou &
Viglas: heterogeneous capacity).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from storm_planner.core.errors import ProblemError

SPOUT, BOLT = "spout", "bolt"
GROUPINGS = ("shuffle", "fields", "global", "all", "direct", "local_or_shuffle", "none", "custom")


class Slot(NamedTuple):
    """A worker slot: a port on a node.

    A named tuple rather than a frozen dataclass: plans map every executor to one,
    and tuple hashing and equality run in C (a dataclass' run in Python, which made
    evaluating a 400-executor plan cost more than planning it).
    """

    node: str
    port: int

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> "Slot":
        node, sep, port = str(text).rpartition(":")
        if not sep or not node or not port.isdigit():
            raise ProblemError(f"slot {text!r} is not of the form <node>:<port>")
        return cls(node, int(port))


@dataclass(frozen=True)
class Node:
    id: str
    capacity: float = 100.0
    machine_type: str = "default"
    speed: float = 1.0
    slots: tuple[int, ...] = (6700,)
    memory: float | None = None
    draining: bool = False
    host: str | None = None
    used_cpu: float = 0.0      # CPU percent other work (other topologies) already holds here
    used_memory: float = 0.0   # MB other work already holds here
    bandwidth: float | None = None  # link capacity in Mbit/s (None: unconstrained)
    used_bandwidth: float = 0.0     # Mbit/s other work already sends and receives here

    # Cached: planners and the evaluator read these once per node per pass, thousands of times a round.
    @cached_property
    def effective_capacity(self) -> float:
        """What is left for this topology, in reference-core percent (a faster node does more per percent)."""
        return max(0.0, self.capacity - self.used_cpu) * self.speed

    @cached_property
    def free_memory(self) -> float | None:
        """MB left for this topology (None: memory is not constrained)."""
        return None if self.memory is None else max(0.0, self.memory - self.used_memory)


@dataclass(frozen=True)
class Component:
    id: str
    type: str = BOLT
    executors: int = 1
    cost: float = 0.0
    system: bool = False
    memory: float = 0.0


@dataclass(frozen=True)
class Stream:
    source: str
    target: str
    grouping: str = "shuffle"
    rate: float = 1.0
    stream_id: str = "default"
    tuple_bytes: float = 0.0  # average serialised size of one tuple (0: unknown, no bandwidth counted)


class Executor(NamedTuple):
    """One executor (a Storm task group): what it costs and holds.

    A named tuple like :class:`Slot`: a problem holds one per executor, and a tuple is
    built in C, several times faster than a frozen dataclass, which dominated reading
    a problem file.
    """

    id: str
    component: str
    load: float = 0.0
    state_size: float = 1.0
    memory: float = 0.0
    cpu: float | None = None  # declared CPU percent (Storm's RAS accounting); None: its load counts


class Traffic(NamedTuple):
    """Measured rate from one executor to another (named tuple for the same reason as Executor)."""

    source: str
    target: str
    rate: float


class ComponentExecutors(NamedTuple):
    """One component's executors as columns: their ids and loads (``load``: the one they share, if they do)."""

    component: str
    ids: tuple[str, ...]
    loads: tuple[float, ...]
    load: float | None

    @classmethod
    def of(cls, component: str, executors: list[Executor]) -> "ComponentExecutors":
        loads = tuple(e.load for e in executors)
        shared = loads[0] if loads and all(load == loads[0] for load in loads) else None
        return cls(component, tuple(e.id for e in executors), loads, shared)


@dataclass(frozen=True)
class Options:
    max_migrations: int | None = None
    max_migration_cost: float | None = None
    time_limit_s: float = 5.0
    seed: int = 1
    worker_max_heap_mb: float | None = None  # topology.worker.max.heap.size.mb: memory of one worker
    # Elastic Allocator's D_CPU and D_BW: fractions of a node's CPU capacity and link bandwidth that
    # may be in use after placement (None: the whole capacity; bandwidth unconstrained without a link).
    max_cpu_utilisation: float | None = None
    max_bandwidth_utilisation: float | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, key: str, default: Any = None) -> Any:
        """Planner-specific option (anything in ``options`` besides the known keys)."""
        return self.extra.get(key, default)


@dataclass(frozen=True)
class Problem:
    """One topology and the nodes it may use.

    ``executors`` is always filled: when the problem file has none, they are
    derived from the components (see :mod:`storm_planner.core.derive`).
    ``traffic`` holds measured executor pairs only (often none); traffic implied
    by the streams is never written out as pairs: :attr:`traffic_model` computes
    every figure per component (see :mod:`storm_planner.core.traffic`).
    """

    nodes: tuple[Node, ...]
    topology_id: str
    components: tuple[Component, ...]
    streams: tuple[Stream, ...]
    executors: tuple[Executor, ...]
    traffic: tuple[Traffic, ...]
    current: Mapping[str, Slot] = field(default_factory=lambda: MappingProxyType({}))
    options: Options = field(default_factory=Options)
    profiles: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    measured: bool = False  # executors/traffic came from metrics, not from estimates

    # -- lookups -------------------------------------------------------------
    def node(self, node_id: str) -> Node:
        return self._node_index[node_id]

    def component(self, component_id: str) -> Component:
        return self._component_index[component_id]

    def executors_of(self, component_id: str) -> tuple[Executor, ...]:
        return tuple(e for e in self.executors if e.component == component_id)

    @property
    def traffic_model(self):
        """The topology's traffic: measured pairs, or the streams at component level."""
        from storm_planner.core.traffic import traffic_model

        return traffic_model(self)

    @cached_property
    def by_component(self) -> tuple["ComponentExecutors", ...]:
        """The executors grouped by component (Storm's order within each), for per-component figures."""
        grouped: dict[str, list[Executor]] = {}
        for executor in self.executors:
            grouped.setdefault(executor.component, []).append(executor)
        return tuple(ComponentExecutors.of(component, executors) for component, executors in grouped.items())

    @cached_property
    def executor_ids(self) -> frozenset[str]:
        return frozenset(e.id for e in self.executors)

    @cached_property
    def total_load(self) -> float:
        return sum(e.load for e in self.executors)

    @property
    def total_capacity(self) -> float:
        return sum(n.effective_capacity for n in self.nodes if not n.draining)

    @cached_property
    def _node_index(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def _component_index(self) -> dict[str, Component]:
        return {c.id: c for c in self.components}

    # -- JSON ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Problem":
        from storm_planner.core.codec import problem_from_dict

        return problem_from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        from storm_planner.core.codec import problem_to_dict

        return problem_to_dict(self)

    def replace(self, **changes: Any) -> "Problem":
        from dataclasses import replace

        return replace(self, **changes)
