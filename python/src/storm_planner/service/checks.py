"""The numbers of a request, checked: finite and within range, or ``BAD_REQUEST`` naming the field.

A NaN capacity or load would pass every comparison a planner makes (``nan > x`` is false) and come out
as a NaN figure in the plan and the plan log; an infinite one wins every comparison. Either way the plan
would be nonsense. So every number the request carries is checked where it is read (the node's, the
executor's, the topology options'), and the message names its owner (node, topology or executor id)
and the field. Zero and negative capacities keep their meaning of "not given" (Storm sends them so for
supervisors without a declared capacity); loads, memory and use may not be negative.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import finite  # noqa: F401 - the request's numbers are checked with it

# The longest deadline a request may give (the plugin's planner.service.timeout.ms); Nimbus waits that long.
MAX_DEADLINE_MS = 3_600_000


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


def check_executors(spec: Any) -> None:
    """Every executor's declared ``cpu`` and ``memory_mb``: finite, not negative (one pass over the sums
    first; the executors are looked at one by one only when a sum is not a finite number)."""
    for field in ("cpu", "memory_mb"):
        values = [value for value in map(attrgetter(field), spec.executors) if value is not None]
        if values and (not _all_numbers(values) or not math.isfinite(sum(values)) or min(values) < 0):
            for executor in spec.executors:
                finite(getattr(executor, field), f"executor {executor.id}: {field}", minimum=0.0)


def check_request(request: Any) -> None:
    """What the whole request needs before any topology is planned: the lists of nodes and topologies,
    each node's id and ports, each topology's id and lists (a field the wire did not carry is None)."""
    check_deadline(request.deadline_ms)
    _list(request.nodes, "nodes")
    _list(request.topologies, "topologies")
    for k, node in enumerate(request.nodes):
        node_id = _text(getattr(node, "id", None), f"nodes[{k}].id")
        for field in ("free_ports", "used_ports"):
            ports = _list(getattr(node, field), f"node {node_id}: {field}")
            bad = next((port for port in ports if type(port) is not int or not 0 <= port < 65536), None)
            if bad is not None or None in ports:
                raise ProblemError(f"node {node_id}: {field} holds {bad!r}, not a port number (0 to 65535)")
        if node.meta is not None and not isinstance(node.meta, dict):
            raise ProblemError(f"node {node_id}: meta is not a map")
    for k, spec in enumerate(request.topologies):
        topology_id = _text(getattr(spec, "id", None), f"topologies[{k}].id")
        for field in ("components", "streams", "executors"):
            _list(getattr(spec, field), f"topology {topology_id}: {field}")


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ProblemError(f"{what} is {'missing' if value is None else 'not a list'}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ProblemError(f"{what} is {'missing' if value is None else f'{value!r}, not a name'}")
    return value


def check_topology(spec: Any) -> None:
    """The topology's own fields: ``worker_max_heap_mb`` (positive or unset), ``num_workers`` and each
    component's ``parallelism`` (not negative), the ids of its components, streams, executors and current
    slots, and its executors' numbers."""
    if spec.worker_max_heap_mb is not None and spec.worker_max_heap_mb != 0:
        finite(spec.worker_max_heap_mb, "worker_max_heap_mb", positive=True)
    finite(spec.num_workers, "num_workers", minimum=0)
    for k, component in enumerate(spec.components):
        name = _text(component.id, f"components[{k}].id")
        if type(component.parallelism) is not int or component.parallelism < 0:
            raise ProblemError(f"component {name}: parallelism={component.parallelism!r} is not a count")
    for k, stream in enumerate(spec.streams):
        _text(stream.from_component, f"streams[{k}].from_component")
        _text(stream.to_component, f"streams[{k}].to_component")
    _check_executor_ids(spec.executors)
    for executor, slot in (spec.current or {}).items():
        if not isinstance(executor, str) or not isinstance(getattr(slot, "node_id", None), str) \
                or type(slot.port) is not int:
            raise ProblemError(f"current: {executor!r} -> {slot!r} is not an executor and a slot")
    check_executors(spec)


def _check_executor_ids(executors: list[Any]) -> None:
    """Every executor has an id and a component (one pass in C over each; a loop only to name the culprit)."""
    for field in ("id", "component"):
        if not set(map(type, map(attrgetter(field), executors))) <= {str}:
            for executor in executors:
                _text(getattr(executor, field), f"executor {executor.id!r}: {field}")


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


def check_deadline(deadline_ms: Any) -> None:
    """The request's ``deadline_ms``: 0 or unset (the service's default) or 1 ms to ``MAX_DEADLINE_MS``."""
    if deadline_ms and not 0 < deadline_ms <= MAX_DEADLINE_MS:
        raise ProblemError(f"deadline_ms={deadline_ms} must be between 1 and {MAX_DEADLINE_MS} "
                           f"(0: the service's default)")


def _all_numbers(values: Iterable[Any]) -> bool:
    return all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values)
