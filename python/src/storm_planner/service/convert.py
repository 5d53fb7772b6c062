"""Thrift structs <-> planner core objects.

A request carries several topologies; each becomes one :class:`Problem`. The
slots a topology may use are the node's free ports plus the ports it already
holds; slots promised to an earlier topology of the same request are taken out
(``taken``), so two topologies never get the same slot in one round.

Loads: when the metrics store has nothing for a topology, each executor gets its
declared CPU (or ``planner.executor.cost``, default 10 % of a core) and each
stream a prior rate (one tuple per spout output, selectivity 1), so that planners
still see the graph's shape. The acker's streams (and metrics consumers') are
added to the declared ones: :mod:`storm_planner.core.system_streams`.
"""
from __future__ import annotations

import dataclasses

from itertools import repeat
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from storm_planner.core import settings
from storm_planner.core.errors import ProblemError
from storm_planner.service.checks import check_node, check_topology, meta_number, option
from storm_planner.core.plan import Plan
from storm_planner.core.problem import (
    BOLT,
    GROUPINGS,
    Component,
    Executor,
    Node,
    Options,
    Problem,
    Slot,
    Stream,
)
from storm_planner.core.system_streams import (
    ACK_PAYLOAD_BYTES,
    DEFAULT_METRICS_BUCKET_S,
    prior_rates,
    with_system_streams,
)
from storm_planner.service.contract import planner_thrift as T

DEFAULT_EXECUTOR_COST = settings.EXECUTOR_COST.default
DEFAULT_STREAM_RATE = 1.0   # before core.system_streams.prior_rates propagates it from the spouts


def node_from_thrift(node: Any, ports: Iterable[int], held: tuple[float, float] = (0.0, 0.0)) -> Node:
    """A supervisor as a problem node; ``held`` is (CPU %, MB) that other topologies of the request hold."""
    check_node(node)
    meta = dict(node.meta or {})
    speed = meta_number(node, meta, "speed")
    return Node(
        id=node.id,
        capacity=float(node.cpu_capacity) if node.cpu_capacity and node.cpu_capacity > 0 else 100.0,
        machine_type=meta.get("machine.type", "default"),
        speed=speed if speed and speed > 0 else 1.0,
        slots=tuple(sorted(set(ports))),
        memory=float(node.memory_mb) if node.memory_mb and node.memory_mb > 0 else None,
        host=node.host,
        used_cpu=float(node.used_cpu or 0.0) + held[0],
        used_memory=float(node.used_memory_mb or 0.0) + held[1],
        bandwidth=_bandwidth(node, meta),
        used_bandwidth=float(node.used_bandwidth_mbit or 0.0),
    )


def _bandwidth(node: Any, meta: Mapping[str, str]) -> float | None:
    """The node's link capacity in Mbit/s: the request's field, else scheduler meta ``network.bandwidth.mbit``."""
    bandwidth = node.bandwidth_mbit if node.bandwidth_mbit is not None else meta_number(
        node, meta, "network.bandwidth.mbit")
    return float(bandwidth) if bandwidth is not None and bandwidth > 0 else None


class RequestNodes:
    """A request's supervisors as problem nodes, converted once for all its topologies.

    Per topology only the nodes that differ from the request's view are built again: those where
    earlier plans of the request took slots, where the topology runs now, or where the request's
    other topologies hold resources. O(nodes) a topology, mostly dictionary look-ups, instead of
    converting every node and filtering every port each time.
    """

    def __init__(self, nodes: Iterable[Any]) -> None:
        self.nodes = list(nodes)
        self._position = {n.id: k for k, n in enumerate(self.nodes)}
        self._free = {n.id: frozenset(n.free_ports) for n in self.nodes}
        self._taken: dict[str, set[int]] = {}
        # Per node, the last view built and what it was built from: consecutive topologies of a
        # request see most nodes alike (a plan changes only the nodes it lands on).
        self._last: dict[str, tuple[tuple, Node | None]] = {}
        self._view: list[Node | None] | None = None   # the last answer, by node position
        self._taken_since: set[str] = set()           # nodes whose taken ports changed since it
        self._previous_own: set[str] = set()

    def take(self, node_id: str, port: int) -> None:
        """A plan of this request uses the slot: later topologies must not."""
        self._taken.setdefault(node_id, set()).add(port)
        self._taken_since.add(node_id)

    def for_topology(self, own_ports: Mapping[str, set[int]],
                     held: Mapping[str, tuple[float, float]]) -> list[Node]:
        """The nodes as this topology sees them (those with no slot for it left out), in request order.

        When ``held`` says which nodes changed since the previous call (``held.changed``, as the
        service's ledger does), only those, the nodes whose ports were taken since and the nodes of
        this and the previous topology's own slots are looked at: O(changed) instead of O(nodes).
        """
        changed = getattr(held, "changed", None)
        if self._view is None or changed is None:
            self._view = [self._node_view(node, own_ports, held) for node in self.nodes]
        else:
            for node_id in changed | self._taken_since | self._previous_own | set(own_ports):
                position = self._position.get(node_id)
                if position is not None:
                    self._view[position] = self._node_view(self.nodes[position], own_ports, held)
        self._taken_since, self._previous_own = set(), set(own_ports)
        return list(filter(None, self._view))

    def _node_view(self, node: Any, own_ports: Mapping[str, set[int]],
                   held: Mapping[str, tuple[float, float]]) -> Node | None:
        taken, own, extra = self._taken.get(node.id), own_ports.get(node.id), held.get(node.id)
        key = (len(taken) if taken else 0, frozenset(own) if own else None, extra or (0.0, 0.0))
        last = self._last.get(node.id)
        if last is None or last[0] != key:  # ports only ever get taken: their count tells
            ports = (self._free[node.id] - taken if taken else self._free[node.id]) | (own or set())
            last = self._last[node.id] = (key, node_from_thrift(node, ports, key[2]) if ports else None)
        return last[1]


def _with_link_use(nodes: list[Node], link_use: Mapping[str, float]) -> list[Node]:
    """Add what is already used on each node's link besides this topology (measured: other topologies'
    flows, the host's traffic) to its ``used_bandwidth``; only nodes with such use are copied."""
    return [dataclasses.replace(node, used_bandwidth=node.used_bandwidth + link_use[node.id])
            if link_use.get(node.id) else node for node in nodes]


def problem_from_thrift(
    spec: Any,
    nodes: RequestNodes | list[Any],
    measured: Mapping[str, Any] | None = None,
    held: Mapping[str, tuple[float, float]] | None = None,
) -> Problem:
    """One TopologySpec of a request -> Problem.

    ``nodes`` knows which slots earlier plans of the request took; ``measured`` may carry
    executors/traffic; ``held`` is, per node, the declared (CPU %, MB) that the request's other
    topologies hold there (on top of the node's ``used_*``: topologies outside the request).
    """
    if not isinstance(nodes, RequestNodes):
        nodes = RequestNodes(nodes)
    check_topology(spec)
    options = dict(spec.options or {})
    settings.check_service_options(options)  # a bad value refuses the topology before anything is built
    current = {
        executor: Slot(slot.node_id, slot.port) for executor, slot in (spec.current or {}).items()
    }
    own_ports: dict[str, set[int]] = {}
    for slot in current.values():
        own_ports.setdefault(slot.node, set()).add(slot.port)
    problem_nodes = nodes.for_topology(own_ports, held or {})
    if not problem_nodes:
        raise ProblemError("no free slot on any live supervisor")
    if measured and measured.get("node_bandwidth"):
        problem_nodes = _with_link_use(problem_nodes, measured["node_bandwidth"])
    node_ids = {n.id for n in problem_nodes}

    cost = settings.EXECUTOR_COST.read(options)
    components = tuple(
        Component(
            id=c.id,
            type=c.type if c.type in ("spout", "bolt") else BOLT,
            executors=max(1, c.parallelism),
            cost=cost * max(1, c.parallelism),
            system=bool(c.system),
        )
        for c in spec.components
    )
    known = {c.id for c in components}
    for executor in spec.executors:
        if executor.component not in known:
            raise ProblemError(f"executor {executor.id} belongs to unknown component {executor.component!r}")
    streams = _streams(spec, components, options, (measured or {}).get("tuple_bytes") or {})
    if measured and measured.get("executors"):
        declared = {e.id: _declared(e) for e in spec.executors}
        executors = tuple(e._replace(**declared.get(e.id, {})) for e in measured["executors"])
        traffic = tuple(measured.get("traffic") or ())
    else:
        # Without metrics an executor's load is what it declares (Storm's RAS accounting), unless
        # the topology sets planner.executor.cost.
        fixed_cost = settings.EXECUTOR_COST.is_set(options)
        # Positional tuples made in C (tuple.__new__): tens of thousands of executors per request.
        executors = tuple(map(tuple.__new__, repeat(Executor), (
            (e.id, e.component, cost if fixed_cost or e.cpu is None else float(e.cpu), 1.0,
             0.0 if e.memory_mb is None else float(e.memory_mb), None if e.cpu is None else float(e.cpu))
            for e in spec.executors)))
        traffic = ()  # the streams carry it, at component level (core.traffic)
    extra = settings.without_fields(options)
    if spec.num_workers:
        extra["workers"] = spec.num_workers
    if spec.name:
        extra["topology.name"] = spec.name  # as in Storm's conf; a rebalance names the topology by it
    known_options = settings.options_fields(options)
    return Problem(
        nodes=tuple(problem_nodes),
        topology_id=spec.id,
        components=components,
        streams=streams,
        executors=executors,
        traffic=traffic,
        current=MappingProxyType({e: s for e, s in current.items() if s.node in node_ids}),
        options=Options(extra=MappingProxyType(extra), **known_options,
                        worker_max_heap_mb=float(spec.worker_max_heap_mb) if spec.worker_max_heap_mb else None),
        measured=bool(measured and measured.get("executors")),
    )


def _streams(spec: Any, components: tuple[Component, ...], options: Mapping[str, str],
             sizes: Mapping[tuple[str, str], float]) -> tuple[Stream, ...]:
    """The topology's declared streams with prior rates, plus the traffic Storm adds by itself (the acker's,
    the metrics consumers'), unless ``planner.system.streams`` is false (:mod:`storm_planner.core.system_streams`)."""
    known = {c.id for c in components}
    default_size = settings.TUPLE_BYTES.read(options)
    declared = tuple(
        Stream(
            source=s.from_component,
            target=s.to_component,
            grouping=s.grouping if s.grouping in GROUPINGS else "custom",
            rate=DEFAULT_STREAM_RATE,
            stream_id=s.stream_id or "default",
            tuple_bytes=sizes.get((s.from_component, s.to_component), default_size),
        )
        for s in spec.streams
        if s.from_component in known and s.to_component in known
    )
    declared = prior_rates(components, declared)
    if not settings.SYSTEM_STREAMS.read(options):
        return declared
    overhead = settings.TUPLE_OVERHEAD_BYTES.read(options)
    bucket = option(options, "topology.builtin.metrics.bucket.size.secs", float, DEFAULT_METRICS_BUCKET_S)
    return with_system_streams(components, declared, ack_bytes=ACK_PAYLOAD_BYTES + overhead, sizes=sizes,
                               metrics_bucket_s=bucket)


def _declared(executor: Any) -> dict[str, float]:
    """The executor's declared resources as Executor fields (none when the plugin sent none)."""
    out = {}
    if executor.cpu is not None:
        out["cpu"] = float(executor.cpu)
    if executor.memory_mb is not None:
        out["memory"] = float(executor.memory_mb)
    return out


def declared_use(spec: Any, assignments: Mapping[str, Any]) -> dict[str, list[float]]:
    """Per node, the declared [CPU %, MB] of ``spec``'s executors placed by ``assignments`` (id → Thrift slot)."""
    per_node: dict[str, list[float]] = {}
    for executor in spec.executors:
        slot = assignments.get(executor.id)
        if slot is None:
            continue
        use = per_node.setdefault(slot.node_id, [0.0, 0.0])
        use[0] += float(executor.cpu or 0.0)
        use[1] += float(executor.memory_mb or 0.0)
    return per_node


def plan_to_thrift(topology_id: str, plan: Plan) -> Any:
    return T.TopologyPlan(
        topology_id=topology_id,
        algorithm=plan.algorithm,
        assignments=_thrift_slots(plan.assignments),
        parallelism=dict(plan.parallelism),
        drain=list(plan.drain),
        figures={k: float(v) for k, v in plan.figures.items()},
        solve_ms=float(plan.solve_ms),
        notes=list(plan.notes),
    )


def _thrift_slots(assignments: Mapping[str, Slot]) -> dict[str, Any]:
    """Executor -> Thrift WorkerSlot, one object per slot (a plan has many executors, few slots)."""
    thrift = {slot: T.WorkerSlot(node_id=slot.node, port=slot.port) for slot in set(assignments.values())}
    return {executor: thrift[slot] for executor, slot in assignments.items()}


def error_to_thrift(topology_id: str, algorithm: str, kind: str, message: str) -> Any:
    return T.TopologyPlan(
        topology_id=topology_id,
        algorithm=algorithm,
        assignments={},
        error=T.PlanError(kind=getattr(T.ErrorKind, kind, T.ErrorKind.INTERNAL), message=message),
    )
