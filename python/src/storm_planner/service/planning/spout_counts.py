"""What a drain asks outside the service (Nimbus' activate and deactivate) and counts of the spouts' tasks.

The drain (:mod:`.drain`) pauses a topology through Nimbus (:class:`ThriftNimbus`, behind the narrow
:class:`NimbusControl` a test fakes) and weighs a move against the spouts' pending room: Storm's
``topology.max.spout.pending`` applies per spout task, so the room is that bound times the spouts' tasks
(:func:`pending_room`). O(executors) per count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from storm_planner.core.elements import SPOUT
from storm_planner.core.problem import Problem
from storm_planner.metrics.loads_and_traffic import executor_tasks
from storm_planner.submit.operations import set_active


class NimbusControl(Protocol):
    """Activates and deactivates topologies by name; raises TopologyGone when Nimbus runs no such one."""

    def deactivate(self, name: str) -> None: ...

    def activate(self, name: str) -> None: ...


@dataclass(frozen=True)
class ThriftNimbus:
    """Nimbus at ``address`` (HOST:PORT), over Thrift."""

    address: str

    def deactivate(self, name: str) -> None:
        set_active(self.address, name, False)

    def activate(self, name: str) -> None:
        set_active(self.address, name, True)


def spouts_of(problem: Problem) -> frozenset[str]:
    """The topology's spout components."""
    return frozenset(c.id for c in problem.components if c.type == SPOUT)


def pending_room(spec: Any, problem: Problem) -> float | None:
    """The spouts' pending places: ``topology.max.spout.pending`` (per spout task; 0, unset: unbounded) times
    the spouts' tasks; None when the plugin did not say (an older one): unknown, so a move is drained."""
    pending = getattr(spec, "max_spout_pending", None)
    if pending is None:
        return None
    if pending == 0:
        return float("inf")
    return float(pending * spout_tasks(problem))


def spout_tasks(problem: Problem) -> int:
    """How many tasks the spouts' executors run (an executor ``[first-last]`` runs last - first + 1)."""
    spouts = spouts_of(problem)
    return sum(len(tasks_of(e.id)) for e in problem.executors if e.component in spouts)


def tasks_of(executor_id: str) -> range:
    """The tasks of executor ``[first-last]``; none for an id of another form."""
    try:
        return executor_tasks(executor_id)
    except ValueError:
        return range(0)


__all__ = ["NimbusControl", "ThriftNimbus", "pending_room", "spout_tasks", "spouts_of", "tasks_of"]
