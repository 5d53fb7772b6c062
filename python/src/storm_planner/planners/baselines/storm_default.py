"""``storm-default``: Storm's default scheduler on a given execution graph (a baseline).

The comparison point of Nasiri et al. (§6.2–6.3): Storm's DefaultScheduler
(EvenScheduler) places an execution graph without looking at the machines —
executors in task order, dealt round-robin over the worker slots, the slots
interleaved across nodes. Task ids are given to components in sorted
component-id order, so the task order is (component id, instance index).
Unlike ``even``, which keeps running executors where they are, this places
the whole graph afresh, as for a new submission: the paper compares the two
schedulers on the same graph — the one ``hetero`` chose — so the parameter
``parallelism`` (``{"component": n, ...}``) grows the problem's graph to those
counts with new executors ``<component>/<i>``.

``options.workers`` is ``topology.workers`` (default: one worker per node, as
in the paper's clusters). Complexity O(E log E + S) for E executors, S slots.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from storm_planner.core.derive import executor_name
from storm_planner.core.errors import InvalidParameterError, ProblemError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners.base import Planner
from storm_planner.planners.baselines.even import interleaved_slots

_TASK_RANGE = re.compile(r"^\[(\d+)-(\d+)\]$")


def grown_graph(problem: Problem, parallelism: Mapping[str, int]) -> dict[str, list[str]]:
    """Per component, its executor ids: the problem's, then new ones up to ``parallelism``."""
    graph: dict[str, list[str]] = {c.id: [] for c in problem.components}
    for executor in problem.executors:
        graph[executor.component].append(executor.id)
    taken = {e.id for e in problem.executors}
    for component, count in parallelism.items():
        if component not in graph:
            raise ProblemError(f"parallelism: unknown component {component!r}")
        if not isinstance(count, int) or count < len(graph[component]):
            raise ProblemError(
                f"parallelism.{component}: a whole number >= its {len(graph[component])} executor(s), got {count!r}"
            )
        index = 0
        while len(graph[component]) < count:
            name = executor_name(component, index)
            if name not in taken:
                graph[component].append(name)
                taken.add(name)
            index += 1
    return graph


def task_order(graph: Mapping[str, list[str]]) -> list[str]:
    """Storm's order: by start task for "[s-e]" ids, else by (component id, instance)."""
    def key(item: tuple[str, int, str]) -> tuple[int, int, str, int]:
        component, position, executor = item
        match = _TASK_RANGE.match(executor)
        return (0, int(match.group(1)), "", 0) if match else (1, 0, component, position)

    items = [(c, i, e) for c, executors in graph.items() for i, e in enumerate(executors)]
    return [e for _, _, e in sorted(items, key=key)]


class StormDefaultPlanner(Planner):
    """Storm's DefaultScheduler placing a whole execution graph afresh, in task order over the slots.

    Parameters
    ----------
    parallelism : dict of str to int or None, default=None
        Executors per component to grow the problem's graph to, with new executors
        ``<component>/<i>`` (each count at least the component's current executors). None places the
        problem's graph as it is.
    """

    name = "storm-default"
    summary = "Storm's default scheduler placing a whole execution graph afresh (optionally grown)"
    baseline = True
    resource_aware = False  # as Storm's own scheduler is
    changes_parallelism = True

    def __init__(self, *, parallelism: Mapping[str, int] | None = None) -> None:
        if parallelism is not None and not isinstance(parallelism, Mapping):
            raise InvalidParameterError(f"{self.name}: parameter parallelism must be an object "
                                        f'{{"component": executors, ...}}, got {parallelism!r}')
        self.parallelism = parallelism  # checked against the problem's components by grown_graph

    def plan(self, problem: Problem) -> Plan:
        parallelism: dict[str, Any] = dict(self.parallelism or {})
        graph = grown_graph(problem, parallelism)
        workers = int(problem.options.get("workers", 0)) or len([n for n in problem.nodes if not n.draining])
        slots = interleaved_slots(problem)[: max(1, workers)]
        executors = task_order(graph)
        assignments = {e: slots[i % len(slots)] for i, e in enumerate(executors)}
        return Plan(
            algorithm=self.name,
            assignments=MappingProxyType(assignments),
            parallelism=MappingProxyType({c: len(e) for c, e in graph.items()}),
        )
