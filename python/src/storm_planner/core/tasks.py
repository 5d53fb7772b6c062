"""Tasks per component: how many executors a rebalance could give each.

Storm creates a component's tasks at submission (``topology.tasks``, by default its parallelism hint) and
names each executor by the range of tasks it runs (``[3-4]`` holds tasks 3 and 4). A rebalance
(``rebalance -e component=N``) spreads a component's tasks over at most that many executors.
"""
from __future__ import annotations

import re

from storm_planner.core.problem import Problem

TASK_RANGE = re.compile(r"^\[(\d+)-(\d+)\]$")  # Storm's executor ids: "[start-end]" task ranges


def task_counts(problem: Problem) -> dict[str, int]:
    """Tasks per component, from executors named by task range. Components with executors named otherwise
    (problem files: ``<component>/<i>``) have no known task count and are left out."""
    counts: dict[str, int] = {}
    unknown: set[str] = set()
    for executor in problem.executors:
        match = TASK_RANGE.match(executor.id)
        if match is None:
            unknown.add(executor.component)
            continue
        first, last = int(match.group(1)), int(match.group(2))
        counts[executor.component] = counts.get(executor.component, 0) + last - first + 1
    return {c: n for c, n in counts.items() if c not in unknown}
