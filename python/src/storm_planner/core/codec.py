"""Problem files (JSON) to :class:`~storm_planner.core.problem.Problem` and back, with validation.

:meth:`Problem.from_dict` builds a problem from :func:`parse_problem`'s fields and checks
it with :func:`check_fits`; :meth:`Problem.to_dict` is :func:`problem_to_dict`.

Validation errors name the offending field (``topology.streams[2].to``) so a
user can fix a hand-written file; the JSON Schema in ``problem.schema.json``
states the same shape for editors and other tools.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping  # not typing.Mapping: isinstance on it is slower
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from storm_planner.core.costs import RateCosts, parse_costs
from storm_planner.core.derive import derive_executors
from storm_planner.core.elements import (
    BOLT,
    GROUPINGS,
    SPOUT,
    Component,
    Executor,
    Node,
    Options,
    Slot,
    Stream,
    Traffic,
)
from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import non_negative as _non_negative
from storm_planner.core.fields import positive as _positive
from storm_planner.core.limits import MAX_EXECUTORS_ENV, current_limits

if TYPE_CHECKING:
    from storm_planner.core.problem import Problem

_KNOWN_OPTIONS = {"max_migrations", "max_migration_cost", "time_limit_s", "seed", "worker_max_heap_mb",
                  "max_cpu_utilisation", "max_bandwidth_utilisation"}
_USED_KEYS = ("cpu", "memory", "bandwidth")


def parse_problem(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a :class:`Problem` from its problem-file JSON, each validated."""
    if not isinstance(data, Mapping):
        raise ProblemError("a problem is a JSON object with 'nodes' and 'topology'")
    nodes = tuple(_node(raw, f"nodes[{i}]") for i, raw in enumerate(_list(data, "nodes", "")))
    if not nodes:
        raise ProblemError("nodes: a problem needs at least one node")
    _unique((n.id for n in nodes), "nodes")

    topology = _mapping(data, "topology", "")
    components = tuple(
        _component(raw, f"topology.components[{i}]")
        for i, raw in enumerate(_list(topology, "components", "topology"))
    )
    if not components:
        raise ProblemError("topology.components: a topology needs at least one component")
    _unique((c.id for c in components), "topology.components")
    component_ids = {c.id for c in components}
    streams = tuple(
        _stream(raw, f"topology.streams[{i}]", component_ids)
        for i, raw in enumerate(_optional_list(topology, "streams", "topology"))
    )

    max_executors = current_limits().max_executors
    if _optional_list(data, "executors", ""):
        _check_executor_count(len(data["executors"]), "executors", max_executors)
        executors = tuple(
            _executor(raw, f"executors[{i}]", component_ids)
            for i, raw in enumerate(_list(data, "executors", ""))
        )
        _unique((e.id for e in executors), "executors")
    else:
        _check_component_executors(components, max_executors)
        executors = derive_executors(components)
    executor_ids = {e.id for e in executors}

    # Measured executor pairs only: traffic implied by the streams stays at component level
    # (core.traffic), so a problem's size is linear in its executors.
    traffic = tuple(
        _traffic(raw, f"traffic[{i}]", executor_ids)
        for i, raw in enumerate(_optional_list(data, "traffic", ""))
    )

    current = _current(_optional_mapping(data, "current"), executor_ids, {n.id for n in nodes})
    return dict(
        nodes=nodes,
        topology_id=_string(topology.get("id", "topology"), "topology.id"),
        components=components,
        streams=streams,
        executors=executors,
        traffic=traffic,
        current=MappingProxyType(current),
        options=_options(_optional_mapping(data, "options")),
        profiles=MappingProxyType(dict(_optional_mapping(data, "profiles"))),
        measured=bool(data.get("executors")),
        costs=parse_costs(data.get("costs"), component_ids),
    )


def _check_component_executors(components: Iterable[Component], limit: int) -> None:
    """Before the executors are derived: the components' executors in all, within ``limit``."""
    total = 0
    for index, component in enumerate(components):
        total += component.executors
        _check_executor_count(total, f"topology.components[{index}].executors", limit)


def _check_executor_count(count: int, where: str, limit: int) -> None:
    if count > limit:
        raise ProblemError(f"{where}: {count} executors in the problem, more than the limit of {limit} "
                           f"({MAX_EXECUTORS_ENV})")


def problem_to_dict(problem: Problem) -> dict[str, Any]:
    options: dict[str, Any] = {
        "time_limit_s": problem.options.time_limit_s,
        "seed": problem.options.seed,
        **dict(problem.options.extra),
    }
    if problem.options.max_migrations is not None:
        options["max_migrations"] = problem.options.max_migrations
    if problem.options.max_migration_cost is not None:
        options["max_migration_cost"] = problem.options.max_migration_cost
    for key in ("worker_max_heap_mb", "max_cpu_utilisation", "max_bandwidth_utilisation"):
        if getattr(problem.options, key) is not None:
            options[key] = getattr(problem.options, key)
    result: dict[str, Any] = {
        "nodes": [_node_to_dict(n) for n in problem.nodes],
        "topology": {
            "id": problem.topology_id,
            "components": [_component_to_dict(c) for c in problem.components],
            "streams": [
                {"from": s.source, "to": s.target, "grouping": s.grouping, "rate": s.rate,
                 **({"stream": s.stream_id} if s.stream_id != "default" else {}),
                 **({"tuple_bytes": s.tuple_bytes} if s.tuple_bytes else {})}
                for s in problem.streams
            ],
        },
        "executors": [
            {"id": e.id, "component": e.component, "load": e.load, "state_size": e.state_size,
             **({"memory": e.memory} if e.memory else {}), **({"cpu": e.cpu} if e.cpu is not None else {})}
            for e in problem.executors
        ],
        "traffic": [{"from": t.source, "to": t.target, "rate": t.rate} for t in problem.traffic],
        "current": {executor: str(slot) for executor, slot in problem.current.items()},
        "options": options,
    }
    if problem.profiles:
        result["profiles"] = dict(problem.profiles)
    if problem.costs != RateCosts():
        result["costs"] = problem.costs.to_dict()
    return result


# -- fields -------------------------------------------------------------------

def _node(raw: Any, where: str) -> Node:
    raw = _require_mapping(raw, where)
    slots = raw.get("slots", [6700])
    if not isinstance(slots, list) or not slots or not all(_is_port(p) for p in slots):
        raise ProblemError(f"{where}.slots: a non-empty list of ports (1-65535)")
    if len(set(slots)) != len(slots):
        raise ProblemError(f"{where}.slots: duplicate port")
    memory = raw.get("memory")
    bandwidth = raw.get("bandwidth")
    used = _used(raw.get("used", {}), f"{where}.used")
    return Node(
        id=_id(raw, where),
        capacity=_positive(raw.get("capacity", 100.0), f"{where}.capacity"),
        machine_type=_string(raw.get("machine_type", "default"), f"{where}.machine_type"),
        speed=_positive(raw.get("speed", 1.0), f"{where}.speed"),
        slots=tuple(int(p) for p in slots),  # whole floats (6700.0) are ports too
        memory=None if memory is None else _non_negative(memory, f"{where}.memory"),
        draining=_boolean(raw.get("draining", False), f"{where}.draining"),
        host=None if raw.get("host") is None else _string(raw["host"], f"{where}.host"),
        used_cpu=used.get("cpu", 0.0),
        used_memory=used.get("memory", 0.0),
        bandwidth=None if bandwidth is None else _positive(bandwidth, f"{where}.bandwidth"),
        used_bandwidth=used.get("bandwidth", 0.0),
    )


def _used(raw: Any, where: str) -> dict[str, float]:
    """What other work already holds on a node: ``{"cpu": percent, "memory": MB, "bandwidth": Mbit/s}``."""
    raw = _require_mapping(raw, where)
    unknown = sorted(set(raw) - set(_USED_KEYS))
    if unknown:
        raise ProblemError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(_USED_KEYS)})")
    return {key: _non_negative(raw[key], f"{where}.{key}") for key in _USED_KEYS if key in raw}


def _component(raw: Any, where: str) -> Component:
    raw = _require_mapping(raw, where)
    kind = raw.get("type", BOLT)
    if kind not in (SPOUT, BOLT):
        raise ProblemError(f"{where}.type: {kind!r} is neither 'spout' nor 'bolt'")
    executors = raw.get("executors", 1)
    if not _is_whole(executors) or executors < 1:
        raise ProblemError(f"{where}.executors: a whole number >= 1, got {executors!r}")
    executors = int(executors)
    return Component(
        id=_id(raw, where),
        type=kind,
        executors=executors,
        cost=_non_negative(raw.get("cost", 0.0), f"{where}.cost"),
        system=_boolean(raw.get("system", False), f"{where}.system"),
        memory=_non_negative(raw.get("memory", 0.0), f"{where}.memory"),
    )


def _stream(raw: Any, where: str, component_ids: set[str]) -> Stream:
    raw = _require_mapping(raw, where)
    for end in ("from", "to"):
        if not isinstance(raw.get(end), str) or raw.get(end) not in component_ids:
            raise ProblemError(f"{where}.{end}: unknown component {raw.get(end)!r}")
    grouping = raw.get("grouping", "shuffle")
    if grouping not in GROUPINGS:
        raise ProblemError(f"{where}.grouping: {grouping!r} is not one of {', '.join(GROUPINGS)}")
    return Stream(
        source=raw["from"],
        target=raw["to"],
        grouping=grouping,
        rate=_non_negative(raw.get("rate", 1.0), f"{where}.rate"),
        stream_id=_string(raw.get("stream", "default"), f"{where}.stream"),
        tuple_bytes=_non_negative(raw.get("tuple_bytes", 0.0), f"{where}.tuple_bytes"),
    )


def _executor(raw: Any, where: str, component_ids: set[str]) -> Executor:
    raw = _require_mapping(raw, where)
    if not isinstance(raw.get("component"), str) or raw.get("component") not in component_ids:
        raise ProblemError(f"{where}.component: unknown component {raw.get('component')!r}")
    return Executor(
        id=_id(raw, where),
        component=raw["component"],
        load=_non_negative(raw.get("load", 0.0), f"{where}.load"),
        state_size=_non_negative(raw.get("state_size", 1.0), f"{where}.state_size"),
        memory=_non_negative(raw.get("memory", 0.0), f"{where}.memory"),
        cpu=None if raw.get("cpu") is None else _non_negative(raw["cpu"], f"{where}.cpu"),
    )


def _traffic(raw: Any, where: str, executor_ids: set[str]) -> Traffic:
    raw = _require_mapping(raw, where)
    for end in ("from", "to"):
        if not isinstance(raw.get(end), str) or raw.get(end) not in executor_ids:
            raise ProblemError(f"{where}.{end}: unknown executor {raw.get(end)!r}")
    return Traffic(raw["from"], raw["to"], _non_negative(raw.get("rate", 0.0), f"{where}.rate"))


def _current(raw: Any, executor_ids: set[str], node_ids: set[str]) -> dict[str, Slot]:
    if not isinstance(raw, Mapping):
        raise ProblemError("current: an object mapping executor ids to '<node>:<port>'")
    current = {}
    for executor, text in raw.items():
        if executor not in executor_ids:
            raise ProblemError(f"current: unknown executor {executor!r}")
        if not isinstance(text, str):
            raise ProblemError(f"current[{executor!r}]: a '<node>:<port>' string, got {text!r}")
        try:
            slot = Slot.parse(text)
        except ProblemError as error:
            raise ProblemError(f"current[{executor!r}]: {error}") from None
        if slot.node not in node_ids:
            # The node left the cluster: the executor is simply unplaced now.
            continue
        current[executor] = slot
    return current


def _options(raw: Any) -> Options:
    if not isinstance(raw, Mapping):
        raise ProblemError("options: an object")
    max_migrations = raw.get("max_migrations")
    if max_migrations is not None and (not _is_whole(max_migrations) or max_migrations < 0):
        raise ProblemError(f"options.max_migrations: a whole number >= 0, got {max_migrations!r}")
    if max_migrations is not None:
        max_migrations = int(max_migrations)
    max_cost = raw.get("max_migration_cost")
    seed = raw.get("seed", 1)
    if not _is_whole(seed):
        raise ProblemError(f"options.seed: a whole number, got {seed!r}")
    seed = int(seed)
    heap = raw.get("worker_max_heap_mb")
    max_cpu, max_bandwidth = (raw.get(key) for key in ("max_cpu_utilisation", "max_bandwidth_utilisation"))
    return Options(
        max_migrations=max_migrations,
        max_migration_cost=None if max_cost is None else _non_negative(max_cost, "options.max_migration_cost"),
        time_limit_s=_positive(raw.get("time_limit_s", 5.0), "options.time_limit_s"),
        seed=seed,
        worker_max_heap_mb=None if heap is None else _positive(heap, "options.worker_max_heap_mb"),
        max_cpu_utilisation=None if max_cpu is None else _positive(max_cpu, "options.max_cpu_utilisation"),
        max_bandwidth_utilisation=None if max_bandwidth is None else _positive(
            max_bandwidth, "options.max_bandwidth_utilisation"),
        extra=MappingProxyType({k: v for k, v in raw.items() if k not in _KNOWN_OPTIONS}),
    )


def check_fits(problem: Problem) -> None:
    """Reject executors that fit on no node at all: no planner could place them."""
    usable = [n for n in problem.nodes if not n.draining] or list(problem.nodes)
    largest = max(n.effective_capacity for n in usable)
    for executor in problem.executors:
        if executor.load > largest + 1e-9:
            raise ProblemError(
                f"executor {executor.id!r} needs {executor.load:g}% CPU but the largest node "
                f"offers {largest:g}%: it cannot fit any node"
            )


# -- output helpers -------------------------------------------------------------

def _node_to_dict(node: Node) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node.id, "capacity": node.capacity, "machine_type": node.machine_type,
                           "speed": node.speed, "slots": list(node.slots)}
    if node.memory is not None:
        out["memory"] = node.memory
    if node.draining:
        out["draining"] = True
    if node.host:
        out["host"] = node.host
    if node.bandwidth is not None:
        out["bandwidth"] = node.bandwidth
    used = {key: value for key, value in (("cpu", node.used_cpu), ("memory", node.used_memory),
                                          ("bandwidth", node.used_bandwidth)) if value}
    if used:
        out["used"] = used
    return out


def _component_to_dict(component: Component) -> dict[str, Any]:
    out: dict[str, Any] = {"id": component.id, "type": component.type,
                           "executors": component.executors, "cost": component.cost}
    if component.system:
        out["system"] = True
    if component.memory:
        out["memory"] = component.memory
    return out


# -- primitive checks -----------------------------------------------------------

def _require_mapping(raw: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ProblemError(f"{where}: expected an object, got {type(raw).__name__}")
    return raw


def _mapping(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    path = f"{where}.{key}" if where else key
    if key not in data:
        raise ProblemError(f"{path}: missing")
    return _require_mapping(data[key], path)


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    path = f"{where}.{key}" if where else key
    value = data.get(key)
    if value is None:
        raise ProblemError(f"{path}: missing")
    if not isinstance(value, list):
        raise ProblemError(f"{path}: expected a list, got {type(value).__name__}")
    return value


def _id(raw: Mapping[str, Any], where: str) -> str:
    value = raw.get("id")
    if not isinstance(value, str) or not value:
        raise ProblemError(f"{where}.id: a non-empty string")
    return value


def _is_port(value: Any) -> bool:
    return _is_whole(value) and 0 < value < 65536


def _is_whole(value: Any) -> bool:
    """A JSON integer: an int, or a float with no fraction (JSON Schema's "integer"); not a bool."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ProblemError(f"{where}: a string, got {value!r}")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ProblemError(f"{where}: true or false, got {value!r}")
    return value


def _optional_list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        path = f"{where}.{key}" if where else key
        raise ProblemError(f"{path}: expected a list, got {type(value).__name__}")
    return value


def _optional_mapping(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ProblemError(f"{key}: expected an object, got {type(value).__name__}")
    return value


def _unique(ids: Iterable[str], where: str) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise ProblemError(f"{where}: duplicate id {item!r}")
        seen.add(item)
