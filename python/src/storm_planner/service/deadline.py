"""The plugin's deadline, shared among a request's topologies, and the time limits held within it.

The service answers within ``DEADLINE_SHARE`` of the deadline the plugin sends (the rest is transport);
each topology gets a share of what is left in proportion to its size (:func:`topology_share`), and a
planner with a solver time limit is told to stop well inside that share (:func:`within_share`).
"""
from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

from storm_planner.core.fields import finite
from storm_planner.core.problem import Problem

# Share of the plugin's deadline the service allows itself: the rest is transport.
DEADLINE_SHARE = 0.8
# Least time a topology is given when the deadline allows it, however small its share by size.
MIN_TOPOLOGY_S = 0.2
DEFAULT_DEADLINE_MS = 5000
# A solver stops at this share of its topology's time: converting, checking and answering take the rest.
SOLVER_SHARE = 0.9


def request_budget_s(deadline_ms: int | None) -> float:
    """Seconds the service allows itself for a request with this ``deadline_ms`` (0 or unset: the default)."""
    return max(0.05, (deadline_ms or DEFAULT_DEADLINE_MS) / 1000.0 * DEADLINE_SHARE)


def topology_share(remaining_s: float, executors: int, executors_left: int) -> float:
    """A topology's time: what is left of the deadline in proportion to its size among those left.

    The handler sizes a topology as its executors plus the cluster's nodes.

    Time a topology does not use passes to the next ones; a slow planner cannot starve them. Every
    topology gets at least ``MIN_TOPOLOGY_S`` while that much is left.
    """
    if remaining_s <= 0:
        return remaining_s
    return min(remaining_s, max(remaining_s * executors / max(1, executors_left), MIN_TOPOLOGY_S))


def within_share(problem: Problem, remaining_s: float) -> Problem:
    """``problem`` with every solver time limit within the topology's share, whatever the topology asks
    (``planner.time.limit.secs``, ``planner.<algorithm>.time_limit_s``). Narrowed with ``dataclasses.replace``:
    every other option stays."""
    limit = min(problem.options.time_limit_s, max(0.05, remaining_s * SOLVER_SHARE))
    extra = {key: _capped(key, value, limit) if key.split(".")[-1] == "time_limit_s" else value
             for key, value in problem.options.extra.items()}
    return problem.replace(options=dataclasses.replace(
        problem.options, time_limit_s=limit, extra=MappingProxyType(extra)))


def _capped(key: str, value: Any, limit: float) -> Any:
    """A time limit no longer than ``limit``; a value that is not a number is left for the planner to refuse,
    one that is not finite or negative is refused here (``min`` would keep a NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    checked = finite(number, f"topology option {key}", minimum=0.0, given=repr(value))
    assert checked is not None  # finite() passes None through; number is a float
    return min(checked, limit)
