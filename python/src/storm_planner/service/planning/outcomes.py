"""What the service's answers mean, counted for ``/metrics`` (:mod:`storm_planner.service.prometheus`).

* Every topology answered: ``plans`` by algorithm and outcome (``ok`` or the error kind in lower case:
  ``timeout``, ``bad_request``, ``unknown_algorithm``, ``infeasible``, ``internal``), and for a plan its
  solve time (``solve``, seconds, by algorithm).
* The fallbacks the service causes (``fallbacks`` by cause): the plugin hands a topology to Storm's
  DefaultScheduler when the service answers it with an error while it is being placed (not fully placed:
  a re-plan offer that fails keeps its placement), except an ``infeasible`` one, which the plugin leaves
  unscheduled unless the topology sets ``planner.infeasible.fallback: true``; and every topology being placed
  when the whole call is refused (``bad_request``). The plugin's own fallbacks (service unreachable, too slow,
  an invalid plan) are counted by the plugin's meters (``PlannerMetrics``).

An algorithm the service does not know is labelled ``unknown``: callers cannot mint label values.
"""
from __future__ import annotations

import logging
from typing import Any

from storm_planner.core import settings
from storm_planner.planners import available
from storm_planner.service.transport.counters import ServiceCounters

log = logging.getLogger("storm_planner.service")

UNKNOWN = "unknown"


def count_plan(counters: ServiceCounters, spec: Any, algorithm: str, outcome: str, result: Any) -> None:
    """One topology answered with ``result`` (its Thrift plan), ``outcome`` as the handler logs it."""
    label = algorithm if algorithm in available() else UNKNOWN
    cause = fallback_cause(spec, outcome)
    counters.count("plans", label, outcome)
    if outcome == "ok" and result.solve_ms is not None:
        counters.observe("solve", result.solve_ms / 1000.0, label)
    if cause is not None:
        counters.count("fallbacks", cause)


def count_refused_call(counters: ServiceCounters, request: Any, cause: str = "bad_request", *,
                       limit: str | None = None) -> None:
    """A whole plan call refused: each topology of it being placed falls back (a malformed list: none); and
    the limit it broke, in ``Health.counters``: ``token`` (``token_refused``, logged at most every minute) or
    ``executors`` (``requests_refused``, ``requests_refused.executors``)."""
    topologies = getattr(request, "topologies", None)
    for spec in topologies if isinstance(topologies, list) else ():
        if not fully_placed(spec):
            counters.count("fallbacks", cause)
    if limit == "executors":
        counters.add("requests_refused")
        counters.add("requests_refused.executors")
    elif limit == "token":
        counters.note("token_refused", log, "refused a plan call (request %r): %s token", request.request_id,
                      "wrong" if request.token else "no")


def fallback_cause(spec: Any, outcome: str) -> str | None:
    """Why the plugin falls back for this topology after this answer, or None when it does not."""
    if outcome == "ok" or fully_placed(spec):
        return None
    if outcome == "infeasible" and not _infeasible_fallback(spec):
        return None   # left unscheduled, as Storm's ResourceAwareScheduler does
    return outcome


def fully_placed(spec: Any) -> bool:
    """A re-plan offer: every executor has a slot already (as the plugin selects them)."""
    try:
        current = spec.current or {}
        return bool(current) and all(executor.id in current for executor in spec.executors)
    except (AttributeError, TypeError):   # a malformed topology: it was not being re-planned
        return False


def _infeasible_fallback(spec: Any) -> bool:
    """``planner.infeasible.fallback`` as the plugin reads it: on only for an explicit true."""
    options = getattr(spec, "options", None)
    value = options.get(settings.INFEASIBLE_FALLBACK.key) if isinstance(options, dict) else None
    return str(value).strip().lower() == "true"
