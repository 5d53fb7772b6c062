"""The parts of a planning problem: nodes and their slots, components, streams, executors,
measured traffic, options.

Plain immutable values with no behaviour beyond their own fields; :class:`Problem`
(:mod:`storm_planner.core.problem`) puts them together, :mod:`storm_planner.core.codec`
reads and writes them as JSON. Loads and capacities are CPU percent of one reference
core (100 = one core).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby
from operator import attrgetter
from types import MappingProxyType
from typing import Any, NamedTuple

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
    def parse(cls, text: str) -> Slot:
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

    @cached_property
    def baseline(self) -> NodeBaseline:
        """The node holding nothing of this topology (see :mod:`storm_planner.core.baseline`)."""
        return NodeBaseline.of(self)


class NodeBaseline(NamedTuple):
    """A node holding nothing of this topology, in reference-core percent."""

    capacity: float   # its whole CPU
    held: float       # what other work holds there (``used_cpu``)
    share: float      # ``held`` in percent of ``capacity``: its utilisation

    @classmethod
    def of(cls, node: Node) -> NodeBaseline:
        capacity = node.capacity * node.speed
        held = node.used_cpu * node.speed
        return cls(capacity, held, 100.0 * held / capacity)

    def with_load(self, load: float) -> float:
        """The node's utilisation (percent of its whole capacity) with ``load`` of this topology added."""
        return 100.0 * (load + self.held) / self.capacity


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


# An executor's fields for C-level passes (``map``) over many executors: planning reads them all per plan.
EXECUTOR_ID, EXECUTOR_LOAD, EXECUTOR_COMPONENT = attrgetter("id"), attrgetter("load"), attrgetter("component")


def executors_by_component(executors: Iterable[Executor]) -> dict[str, list[Executor]]:
    """Component -> its executors in their order, components in order of first appearance.

    One C-level step per run of a component's executors (Storm lists them by component); executors
    listed otherwise are grouped all the same.
    """
    grouped: dict[str, list[Executor]] = {}
    for component, run in groupby(executors, EXECUTOR_COMPONENT):
        grouped.setdefault(component, []).extend(run)
    return grouped


class ComponentExecutors(NamedTuple):
    """One component's executors as columns: their ids and loads (``load``: the one they share, if they do)."""

    component: str
    ids: tuple[str, ...]
    loads: tuple[float, ...]
    load: float | None

    @classmethod
    def of(cls, component: str, executors: list[Executor]) -> ComponentExecutors:
        loads = tuple(map(EXECUTOR_LOAD, executors))
        shared = loads[0] if loads and loads.count(loads[0]) == len(loads) and loads[0] == loads[0] else None
        return cls(component, tuple(map(EXECUTOR_ID, executors)), loads, shared)


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
