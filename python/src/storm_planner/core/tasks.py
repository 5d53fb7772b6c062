"""Tasks per component: how many executors a rebalance could give each.

Storm creates a component's tasks at submission (``topology.tasks``, by default its parallelism hint) and
names each executor by the range of tasks it runs (``[3-4]`` holds tasks 3 and 4). A rebalance
(``rebalance -e component=N``) spreads a component's tasks over at most that many executors.
"""
from __future__ import annotations

import re

from storm_planner.core.problem import Problem

TASK_RANGE = re.compile(r"^\[(\d+)-(\d+)\]$")  # Storm's executor ids: "[start-end]" task ranges


def tasks_of(executor_id: str) -> int | None:
    """How many tasks an executor named by its task range runs (``[3-4]``: 2); None for another name."""
    match = TASK_RANGE.match(executor_id)
    if match is None:
        return None
    return max(0, int(match.group(2)) - int(match.group(1)) + 1)


def task_counts(problem: Problem) -> dict[str, int]:
    """Tasks per component, from executors named by task range. Components with executors named otherwise
    (problem files: ``<component>/<i>``) have no known task count and are left out."""
    counts: dict[str, int] = {}
    unknown: set[str] = set()
    for executor in problem.executors:
        tasks = tasks_of(executor.id)
        if tasks is None:
            unknown.add(executor.component)
            continue
        counts[executor.component] = counts.get(executor.component, 0) + tasks
    return {c: n for c, n in counts.items() if c not in unknown}


def storm_split(tasks: int, executors: int) -> list[int]:
    """Tasks per executor when Storm spreads ``tasks`` over ``executors`` (its ``Utils.partitionFixed``:
    contiguous ranges, the first ``tasks mod executors`` executors one task more than the rest). Under a
    fields or shuffle grouping an executor's share of the component's tuples is its tasks over ``tasks``:
    four tasks over three executors give one of them half the tuples."""
    if tasks < 1 or executors < 1:
        raise ValueError(f"tasks and executors must be positive, not {tasks} and {executors}")
    executors = min(executors, tasks)
    base, more = divmod(tasks, executors)
    return [base + 1] * more + [base] * (executors - more)


def next_useful_count(tasks: int, executors: int) -> int | None:
    """The fewest executors above ``executors`` (at most ``tasks``) whose busiest executor runs fewer tasks
    than now, or None: from two executors of four tasks, three still leave one with two tasks, so four."""
    busiest = -(-tasks // max(1, executors))
    for count in range(executors + 1, tasks + 1):
        if -(-tasks // count) < busiest:
            return count
    return None
