"""Whether the service takes a plan call and each topology of it, and the time each topology is given.

* **The call** (:func:`admit`): the service's token, the request's shape (:func:`check_request`) and its size
  (``serve --max-executors``). A refused call gets ``PlannerError(BAD_REQUEST)`` naming why; no topology of
  it is planned. The limits and the token are
  :class:`~storm_planner.service.transport.caller_limits.ServiceLimits`'.
* **Each topology** (:func:`admit_topology`): its options, every ``planner.*`` key the service reads, and its
  own fields, once, before metrics are read for it; a refused topology gets a ``BAD_REQUEST`` plan error. Its
  options are read once: the notes on the ``planner.*`` keys nothing reads come from here too.
* **The numbers.** A NaN capacity or load would pass every comparison a planner makes (``nan > x`` is false)
  and come out as a NaN figure in the plan and the plan log; an infinite one wins every comparison. Either way
  the plan would be nonsense. So every number the request carries is checked where it is read (the node's,
  the executor's, the topology options'), and the message names its owner (node, topology or executor id)
  and the field. Zero and negative capacities keep their meaning of "not given" (Storm sends them so for
  supervisors without a declared capacity); loads, memory and use may not be negative.
* **The deadline.** The service answers within ``DEADLINE_SHARE`` of the deadline the plugin sends (the rest
  is transport); each topology gets a share of what is left in proportion to its size
  (:func:`topology_share`), and a planner with a solver time limit is told to stop well inside that share
  (:func:`within_share`).
"""
from __future__ import annotations

import dataclasses
import hmac
import math
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from storm_planner.core import settings
from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import finite, listed, text
from storm_planner.core.problem import Problem
from storm_planner.planners import available
from storm_planner.service.planning.outcomes import count_refused_call
from storm_planner.service.transport.caller_limits import ServiceLimits
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.counters import ServiceCounters

# The longest deadline a request may give (the plugin's planner.service.timeout.ms); Nimbus waits that long.
MAX_DEADLINE_MS = 3_600_000
# Share of the plugin's deadline the service allows itself: the rest is transport.
DEADLINE_SHARE = 0.8
# Least time a topology is given when the deadline allows it, however small its share by size.
MIN_TOPOLOGY_S = 0.2
DEFAULT_DEADLINE_MS = 5000
# A solver stops at this share of its topology's time: converting, checking and answering take the rest.
SOLVER_SHARE = 0.9


# -- the call ---------------------------------------------------------------------------------------------
def admit(request: Any, limits: ServiceLimits, counters: ServiceCounters) -> None:
    """Refuse (``PlannerError``) a call without the service's token, malformed, or over its executor limit
    (calls decoded from the wire were counted already; this covers calls made in process). A refused call is
    counted once, by what refused it (:func:`~storm_planner.service.planning.outcomes.count_refused_call`:
    the limit broken, and each topology of it being placed as a fallback)."""
    refused = _refusal(request, limits)
    if refused is not None:
        limit, message = refused
        count_refused_call(counters, request, limit=limit)
        raise T.PlannerError(kind=T.ErrorKind.BAD_REQUEST, message=message)


def _refusal(request: Any, limits: ServiceLimits) -> tuple[str | None, str] | None:
    """(the limit the call breaks: ``token``, ``executors`` or None for a malformed call; the message) or None."""
    token = limits.token
    if token and not hmac.compare_digest(_bytes(request.token), token.encode()):
        return "token", ("this planner service requires its token: PlanRequest.token (the plugin's "
                         "planner.service.token) is " + ("wrong" if request.token else "missing"))
    try:
        check_request(request)
    except ProblemError as error:
        return None, str(error)
    executors = sum(len(spec.executors) for spec in request.topologies)
    if executors > limits.max_executors:
        return "executors", (f"the request has {executors} executors, more than "
                             f"{limits.max_executors} (serve --max-executors)")
    return None


def _bytes(value: Any) -> bytes:
    """A token as bytes for a constant-time comparison (a token that is not UTF-8 arrives as bytes)."""
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def check_request(request: Any) -> None:
    """What the whole request needs before any topology is planned: the lists of nodes and topologies,
    each node's id and ports, each topology's id and lists (a field the wire did not carry is None)."""
    check_deadline(request.deadline_ms)
    listed(request.nodes, "nodes")
    listed(request.topologies, "topologies")
    for k, node in enumerate(request.nodes):
        node_id = text(getattr(node, "id", None), f"nodes[{k}].id")
        for field in ("free_ports", "used_ports"):
            ports = listed(getattr(node, field), f"node {node_id}: {field}")
            bad = next((port for port in ports if type(port) is not int or not 0 <= port < 65536), None)
            if bad is not None or None in ports:
                raise ProblemError(f"node {node_id}: {field} holds {bad!r}, not a port number (0 to 65535)")
        if node.meta is not None and not isinstance(node.meta, dict):
            raise ProblemError(f"node {node_id}: meta is not a map")
    for k, spec in enumerate(request.topologies):
        topology_id = text(getattr(spec, "id", None), f"topologies[{k}].id")
        for field in ("components", "streams", "executors"):
            listed(getattr(spec, field), f"topology {topology_id}: {field}")


def check_deadline(deadline_ms: Any) -> None:
    """The request's ``deadline_ms``: 0 or unset (the service's default) or 1 ms to ``MAX_DEADLINE_MS``."""
    if deadline_ms and not 0 < deadline_ms <= MAX_DEADLINE_MS:
        raise ProblemError(f"deadline_ms={deadline_ms} must be between 1 and {MAX_DEADLINE_MS} "
                           f"(0: the service's default)")


# -- each topology ---------------------------------------------------------------------------------------
def admit_topology(spec: Any) -> list[str]:
    """Refuse (``ProblemError``, ``SettingError``) a topology whose options the service cannot read or whose
    fields are malformed; run once per topology, before metrics are read for it. Returns the notes on its
    ``planner.*`` options nothing reads (:func:`~storm_planner.core.settings.unknown_keys`).

    Its fields: ``worker_max_heap_mb`` (positive or unset), ``num_workers`` and each component's
    ``parallelism`` (not negative), ``message_timeout_secs`` (positive) and ``max_spout_pending`` (not
    negative; 0: unbounded), whole numbers or unset, the ids of its components, streams, executors and current slots, and its
    executors' numbers."""
    options = spec.options or {}
    settings.check_service_options(options)
    notes = settings.unknown_keys(options, available())
    if spec.worker_max_heap_mb is not None and spec.worker_max_heap_mb != 0:
        finite(spec.worker_max_heap_mb, "worker_max_heap_mb", positive=True)
    finite(spec.num_workers, "num_workers", minimum=0)
    for field, least in (("message_timeout_secs", 1), ("max_spout_pending", 0)):
        value = getattr(spec, field, None)
        if value is not None and (type(value) is not int or value < least):
            raise ProblemError(f"{field}={value!r} is not a whole number of at least {least}")
    for k, component in enumerate(spec.components):
        name = text(component.id, f"components[{k}].id")
        if type(component.parallelism) is not int or component.parallelism < 0:
            raise ProblemError(f"component {name}: parallelism={component.parallelism!r} is not a count")
    for k, stream in enumerate(spec.streams):
        text(stream.from_component, f"streams[{k}].from_component")
        text(stream.to_component, f"streams[{k}].to_component")
    _check_executor_ids(spec.executors)
    for executor, slot in (spec.current or {}).items():
        if not isinstance(executor, str) or not isinstance(getattr(slot, "node_id", None), str) \
                or type(slot.port) is not int:
            raise ProblemError(f"current: {executor!r} -> {slot!r} is not an executor and a slot")
    check_executors(spec)
    return notes


def _check_executor_ids(executors: list[Any]) -> None:
    """Every executor has an id and a component (one pass in C over each; a loop only to name the culprit)."""
    for field in ("id", "component"):
        if not set(map(type, map(attrgetter(field), executors))) <= {str}:
            for executor in executors:
                text(getattr(executor, field), f"executor {executor.id!r}: {field}")


def check_executors(spec: Any) -> None:
    """Every executor's declared ``cpu`` and ``memory_mb``: finite, not negative (one pass over the sums
    first; the executors are looked at one by one only when a sum is not a finite number)."""
    for field in ("cpu", "memory_mb"):
        values = [value for value in map(attrgetter(field), spec.executors) if value is not None]
        if values and (not _all_numbers(values) or not math.isfinite(sum(values)) or min(values) < 0):
            for executor in spec.executors:
                finite(getattr(executor, field), f"executor {executor.id}: {field}", minimum=0.0)


def _all_numbers(values: Iterable[Any]) -> bool:
    return all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values)


def option(options: Mapping[str, Any], key: str, kind: Callable[[str], Any], default: Any = None, *,
           positive: bool = False) -> Any:
    """A topology option (they arrive as text) as ``kind`` (int or float): finite, not negative, above zero
    when ``positive``; unset or empty: ``default``."""
    raw = options.get(key)
    if raw is None or str(raw).strip() == "":
        return default
    what = f"topology option {key}"
    try:
        value = kind(str(raw).strip())
    except ValueError:
        raise ProblemError(f"{what}={raw!r} is not {'an integer' if kind is int else 'a number'}") from None
    finite(value, what, minimum=0, positive=positive, given=repr(raw))
    return value


# -- each node (checked where the request's state reads it) ----------------------------------------------
def check_node(node: Any) -> None:
    """A supervisor's numbers: capacities finite (zero or less: not given), use finite and not negative."""
    owner = f"node {node.id}"
    for field in ("cpu_capacity", "memory_mb", "bandwidth_mbit"):
        finite(getattr(node, field), f"{owner}: {field}")
    for field in ("used_cpu", "used_memory_mb", "used_bandwidth_mbit"):
        finite(getattr(node, field), f"{owner}: {field}", minimum=0.0)


def meta_number(node: Any, meta: Mapping[str, str], key: str) -> float | None:
    """A number of the supervisor's scheduler meta (``speed``, ``network.bandwidth.mbit``), finite."""
    return finite(meta.get(key), f"node {node.id}: scheduler meta {key}")


# -- the deadline -----------------------------------------------------------------------------------------
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
