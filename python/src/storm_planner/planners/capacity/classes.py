"""Executors that a placement cannot tell apart, as one class with a count.

Two executors of one component with the same fixed and variable CPU, the same memory, and no measured
executor pair of their own are interchangeable: any placement of one is a placement of the other. The
exact model (:mod:`.exact`) decides how many of each class go to each node instead of which executor
goes where, which removes the symmetry that makes a per-executor model slow, and its size grows with
classes × nodes rather than executors × nodes. A ``global`` stream's target executor (the one that
receives it all) and every executor named in a measured pair stand alone in a class of one.

O(executors) to build.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from storm_planner.planners.capacity.model import CapacityModel


@dataclass(frozen=True)
class ExecutorClass:
    """``members`` of ``component``, each needing ``fixed + f·variable`` CPU and ``memory`` MB."""

    component: str
    members: tuple[str, ...]
    fixed: float
    variable: float
    memory: float

    @property
    def size(self) -> int:
        return len(self.members)


def executor_classes(model: CapacityModel) -> list[ExecutorClass]:
    """The problem's executors in classes of interchangeable ones, in the order first seen."""
    alone = _stand_alone(model)
    memory = {e.id: e.memory for e in model.problem.executors}
    grouped: dict[tuple[object, ...], list[str]] = {}
    for executor in model.problem.executors:
        e = executor.id
        key: tuple[object, ...] = ((e,) if e in alone
                      else (executor.component, round(model.fixed[e], 9), round(model.variable[e], 9), memory[e]))
        grouped.setdefault(key, []).append(e)
    return [ExecutorClass(model.component[members[0]], tuple(members), model.fixed[members[0]],
                          model.variable[members[0]], memory[members[0]]) for members in grouped.values()]


def _stand_alone(model: CapacityModel) -> set[str]:
    """Executors that must be a class of their own: global targets and ends of measured pairs."""
    alone = {model.first_of[f.target] for f in model.flows if f.grouping == "global" and f.target in model.first_of}
    for (source, target), _ in model.measured_mbit:
        alone.update((source, target))
    return alone


def counts_to_nodes(classes: list[ExecutorClass], counts: Mapping[tuple[int, str], int],
                    current: Mapping[str, str]) -> dict[str, str]:
    """Executor -> node from per (class, node) counts, keeping executors where they are when the counts allow
    (fewer moves: Storm restarts every worker whose executors change)."""
    node_of: dict[str, str] = {}
    for index, klass in enumerate(classes):
        wanted = {node: n for (i, node), n in counts.items() if i == index and n > 0}
        left = []
        for executor in klass.members:
            here = current.get(executor)
            if here is not None and wanted.get(here, 0) > 0:
                node_of[executor] = here
                wanted[here] -= 1
            else:
                left.append(executor)
        for executor, node in zip(left, _slots_left(wanted)):
            node_of[executor] = node
    return node_of


def _slots_left(wanted: Mapping[str, int]) -> Iterator[str]:
    for node, n in sorted(wanted.items()):
        yield from [node] * n
