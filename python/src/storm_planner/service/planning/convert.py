"""Thrift structs <-> planner core objects: one request's topologies become one :class:`Problem` each.

A request carries several topologies; each becomes one :class:`Problem`. The
nodes a topology sees (its free slots, what the request's other topologies hold)
come from :class:`RequestState` (below).

Loads: when the metrics store has nothing for a topology, each executor gets its component's load as
last measured under the topology's name when the request passes one (``planner.loads.remembered``,
:mod:`storm_planner.service.planning.memory`), else its
declared CPU (or ``planner.executor.cost``, default 10 % of a core) and each
stream a prior rate (one tuple per spout output, selectivity 1 over data inputs,
watermark streams as the kit sends them: ``planner.watermark.streams``), so that
planners still see the graph's shape. The acker's streams (and metrics consumers') are
added to the declared ones: :mod:`storm_planner.core.system_streams`.

**The request's state**: what the topologies of one request hold while the service plans them one by one.
Each topology of a request is planned on its own, in request order. :class:`RequestState` keeps what the
earlier plans of the request took, so that later topologies see it:

* **slots**: a slot promised to an earlier topology is taken out of the nodes later ones see, so two
  topologies never get the same slot in one round; a topology always sees the slots it holds now;
* **declared CPU and memory**: the plugin reports, per node, what topologies *outside* the request hold
  (``Node.used_cpu``/``used_memory_mb``). The request's own topologies share the rest: while topology k is
  planned, each other one holds either its new plan (planned before k) or its current placement (still to
  be planned, or left where it is when its planning failed), so two plans of one request never count the
  same capacity twice.

:meth:`RequestState.view_for` gives a topology the nodes as it sees them; :meth:`RequestState.commit`
records what its plan took. Per topology only the nodes that can differ from the previous view are built
again (where slots were taken or held resources changed since, where this or the previous topology runs):
O(nodes it touches), mostly dictionary look-ups, instead of converting every node and filtering every
port each time.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from itertools import repeat
from types import MappingProxyType
from typing import Any

from storm_planner.core import settings
from storm_planner.core.costs import RateCosts
from storm_planner.core.errors import ProblemError
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
    with_remembered_rates,
    with_system_streams,
)
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.service.planning.admission import admit_topology, check_node, meta_number, option
from storm_planner.service.planning.memory import Recalled, RememberedLoads, recalled_for
from storm_planner.service.transport.contract import planner_thrift as T

DEFAULT_EXECUTOR_COST = settings.EXECUTOR_COST.default
_NO_PRIORS: Mapping[str, float] = MappingProxyType({})
DEFAULT_STREAM_RATE = 1.0   # before core.system_streams.prior_rates propagates it from the spouts


# -- the request's state ------------------------------------------------------------------------------------
class RequestState:
    """One request's supervisors and what its topologies hold on them, for planning them one by one."""

    def __init__(self, nodes: Iterable[Any], topologies: Iterable[Any] = ()) -> None:
        self.nodes = list(nodes)
        self._position = {n.id: k for k, n in enumerate(self.nodes)}
        self._free = {n.id: frozenset(n.free_ports) for n in self.nodes}
        self._taken: dict[str, set[int]] = {}
        # Per topology and node, its declared [CPU %, MB]; per node the sum over the request's topologies.
        self._held: dict[str, dict[str, list[float]]] = {
            spec.id: declared_use(spec, spec.current or {}) for spec in topologies}
        self._total: dict[str, list[float]] = {}
        self._changed: set[str] = set()               # nodes whose taken ports or totals changed since the
        self._previous_own: set[str] = set()          # last view; the nodes the previous topology ran on or held
        for per_node in self._held.values():
            self._add(per_node, 1.0)
        # Per node, the last view built and what it was built from: consecutive topologies of a request
        # see most nodes alike (a plan changes only the nodes it lands on).
        self._last: dict[str, tuple[tuple[Any, ...], Node | None]] = {}
        self._view: list[Node | None] | None = None   # the last answer, by node position

    def view_for(self, spec: Any) -> list[Node]:
        """The nodes as ``spec``'s topology sees them, in request order: the slots earlier plans took left
        out, its own slots kept, and what the request's other topologies hold added to each node's use
        (nodes with no slot for it left out)."""
        own_ports: dict[str, set[int]] = {}
        for slot in (spec.current or {}).values():
            own_ports.setdefault(slot.node_id, set()).add(slot.port)
        own_use = self._held.get(spec.id, {})
        own = set(own_ports) | set(own_use)
        if self._view is None:
            self._view = [self._node_view(node, own_ports, own_use) for node in self.nodes]
        else:
            for node_id in self._changed | self._previous_own | own:
                position = self._position.get(node_id)
                if position is not None:
                    self._view[position] = self._node_view(self.nodes[position], own_ports, own_use)
        self._changed, self._previous_own = set(), own
        return list(filter(None, self._view))

    def commit(self, spec: Any, assignments: Mapping[str, Any]) -> None:
        """``spec``'s plan (executor -> Thrift slot) takes its slots and holds what it places; a failed plan
        (no assignments) leaves the topology where it is."""
        if not assignments:
            return
        for slot in assignments.values():
            self._taken.setdefault(slot.node_id, set()).add(slot.port)
            self._changed.add(slot.node_id)
        self._add(self._held.get(spec.id, {}), -1.0)
        self._held[spec.id] = declared_use(spec, assignments)
        self._add(self._held[spec.id], 1.0)

    def _held_by_others(self, node_id: str, own_use: Mapping[str, list[float]]) -> tuple[float, float]:
        total = self._total.get(node_id)
        if total is None:
            return (0.0, 0.0)
        own = own_use.get(node_id)
        return (total[0], total[1]) if own is None else (total[0] - own[0], total[1] - own[1])

    def _node_view(self, node: Any, own_ports: Mapping[str, set[int]],
                   own_use: Mapping[str, list[float]]) -> Node | None:
        taken, own = self._taken.get(node.id), own_ports.get(node.id)
        held = self._held_by_others(node.id, own_use)
        key = (len(taken) if taken else 0, frozenset(own) if own else None, held)
        last = self._last.get(node.id)
        if last is None or last[0] != key:  # ports only ever get taken: their count tells
            ports = (self._free[node.id] - taken if taken else self._free[node.id]) | (own or set())
            last = self._last[node.id] = (key, node_from_thrift(node, ports, held) if ports else None)
        return last[1]

    def _add(self, per_node: Mapping[str, list[float]], sign: float) -> None:
        for node, (cpu, memory) in per_node.items():
            sums = self._total.setdefault(node, [0.0, 0.0])
            sums[0] += sign * cpu
            sums[1] += sign * memory
        self._changed.update(per_node)


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


# -- one topology -> Problem ---------------------------------------------------------------------------------
def _with_link_use(nodes: list[Node], link_use: Mapping[str, float]) -> list[Node]:
    """Add what is already used on each node's link besides this topology (measured: other topologies'
    flows, the host's traffic) to its ``used_bandwidth``; only nodes with such use are copied."""
    return [dataclasses.replace(node, used_bandwidth=node.used_bandwidth + link_use[node.id])
            if link_use.get(node.id) else node for node in nodes]


def problem_from_thrift(
    spec: Any,
    nodes: RequestState | list[Any],
    measured: MeasuredTopology | None = None,
    remembered: RememberedLoads | None = None,
) -> Problem:
    """One TopologySpec of a request -> Problem.

    ``nodes`` is the request's state (:class:`RequestState`: which slots earlier plans of the request took,
    what its other topologies hold on each node), or the request's nodes alone; ``measured`` may carry
    measured executors and traffic (:class:`~storm_planner.metrics.measured.MeasuredTopology`);
    ``remembered``, used only when nothing is measured, the loads a topology of the same name was last
    measured at (:mod:`storm_planner.service.planning.memory`): each component's load per executor and each
    component pair's tuple size and rate replace the estimates where it has them.

    The topology is checked first (:func:`~storm_planner.service.planning.admission.admit_topology`: a bad
    option or field refuses it before anything is built); the service checks it before it reads the
    topology's metrics and builds it with :func:`problem_of`.
    """
    state = nodes if isinstance(nodes, RequestState) else RequestState(nodes)
    admit_topology(spec)
    return problem_of(spec, state, measured, recalled_for(remembered, spec) if remembered is not None else None)


def problem_of(spec: Any, state: RequestState, measured: MeasuredTopology | None = None,
               recalled: Recalled | None = None, costs: RateCosts | None = None) -> Problem:
    """:func:`problem_from_thrift` of a topology admitted already (its options and fields checked);
    ``recalled``: what it takes from the load memory, as plain mappings; ``costs``: how its loads grow with
    the rate (``core.costs``; both from :func:`~.memory.recall_and_costs`)."""
    options = dict(spec.options or {})
    current = {
        executor: Slot(slot.node_id, slot.port) for executor, slot in (spec.current or {}).items()
    }
    problem_nodes = _problem_nodes(state, spec, measured)
    node_ids = {n.id for n in problem_nodes}
    cost = settings.EXECUTOR_COST.read(options)
    components = _components(spec, cost)
    measured = measured if measured is not None and measured.measured else None
    recalled = None if measured else recalled
    executors, traffic = _executors_and_traffic(spec, measured, options, cost,
                                                recalled.cpu if recalled else _NO_PRIORS)
    known_options = _options(spec, options)
    sizes = measured.tuple_bytes if measured else recalled.tuple_bytes if recalled else {}
    streams = _streams(spec, components, options, sizes, recalled.rates if recalled else {})
    return Problem(
        nodes=tuple(problem_nodes),
        topology_id=spec.id,
        components=components,
        streams=streams,
        executors=executors,
        traffic=traffic,
        current=MappingProxyType({e: s for e, s in current.items() if s.node in node_ids}),
        options=known_options,
        measured=measured is not None,
        loads_remembered=recalled is not None and recalled.loads_remembered,
        costs=costs or RateCosts(),
    )


def _problem_nodes(state: RequestState, spec: Any, measured: MeasuredTopology | None) -> list[Node]:
    """The nodes this topology may use (what the request's earlier topologies left), with measured link use."""
    problem_nodes = state.view_for(spec)
    if not problem_nodes:
        raise ProblemError("no free slot on any live supervisor")
    if measured is not None and measured.node_bandwidth:
        problem_nodes = _with_link_use(problem_nodes, measured.node_bandwidth)
    return problem_nodes


def _components(spec: Any, cost: float) -> tuple[Component, ...]:
    """The spec's components; every executor must belong to one of them."""
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
    return components


def _executors_and_traffic(spec: Any, measured: MeasuredTopology | None, options: Mapping[str, str],
                           cost: float, priors: Mapping[str, float]) -> tuple[tuple[Executor, ...], Any]:
    """Executors with their loads, and executor-pair traffic: measured where metrics are, else the
    component's remembered load per executor (``priors``) or else declared."""
    if measured:
        declared: dict[str, dict[str, Any]] = {e.id: _declared(e) for e in spec.executors}
        executors = tuple(e._replace(**declared.get(e.id, {})) for e in measured.executors)
        return executors, measured.traffic
    # Without metrics an executor's load is what it declares (Storm's RAS accounting), unless
    # the topology sets planner.executor.cost.
    fixed_cost = settings.EXECUTOR_COST.is_set(options)
    # Positional tuples made in C (tuple.__new__): tens of thousands of executors per request.
    executors = tuple(map(tuple.__new__, repeat(Executor), (
        (e.id, e.component,
         priors[e.component] if e.component in priors else cost if fixed_cost or e.cpu is None else float(e.cpu), 1.0,
         0.0 if e.memory_mb is None else float(e.memory_mb), None if e.cpu is None else float(e.cpu))
        for e in spec.executors)))
    return executors, ()  # the streams carry the traffic, at component level (core.traffic)


def _options(spec: Any, options: Mapping[str, str]) -> Options:
    """The planner's options: the known settings typed, the rest kept as text in ``extra``."""
    extra = settings.without_fields(options)
    if spec.num_workers:
        extra["workers"] = spec.num_workers
    if spec.name:
        extra["topology.name"] = spec.name  # as in Storm's conf; a rebalance names the topology by it
    known_options = settings.options_fields(options)
    return Options(extra=MappingProxyType(extra), **known_options,
                   worker_max_heap_mb=float(spec.worker_max_heap_mb) if spec.worker_max_heap_mb else None)


def _streams(spec: Any, components: tuple[Component, ...], options: Mapping[str, str],
             sizes: Mapping[tuple[str, str], float], rates: Mapping[tuple[str, str], float]) -> tuple[Stream, ...]:
    """The topology's declared streams with prior rates (remembered ones where ``rates`` has them:
    :mod:`storm_planner.service.planning.memory`), plus the traffic Storm adds by itself (the acker's, the
    metrics consumers'), unless ``planner.system.streams`` is false (:mod:`storm_planner.core.system_streams`)."""
    known = {c.id for c in components}
    default_size = settings.TUPLE_BYTES.read(options)
    marks = settings.WATERMARK_STREAMS.read(options)
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
    declared = prior_rates(components, declared, watermark_streams=marks)
    if rates:
        declared = with_remembered_rates(components, declared, rates)
    if not settings.SYSTEM_STREAMS.read(options):
        return declared
    overhead = settings.TUPLE_OVERHEAD_BYTES.read(options)
    bucket = option(options, "topology.builtin.metrics.bucket.size.secs", float, DEFAULT_METRICS_BUCKET_S)
    streams = with_system_streams(components, declared, ack_bytes=ACK_PAYLOAD_BYTES + overhead, sizes=sizes,
                                  metrics_bucket_s=bucket, watermark_streams=marks)
    if not rates:
        return streams
    system = {c.id for c in components if c.system}
    # The acker's streams follow the user streams' remembered rates; those the run measured take theirs.
    return with_remembered_rates(components, streams, rates, scale_unmatched=False,
                                 only=lambda s: s.source in system or s.target in system)


def _declared(executor: Any) -> dict[str, float]:
    """The executor's declared resources as Executor fields (none when the plugin sent none)."""
    out = {}
    if executor.cpu is not None:
        out["cpu"] = float(executor.cpu)
    if executor.memory_mb is not None:
        out["memory"] = float(executor.memory_mb)
    return out


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


def timeout_message(request: Any, algorithm: str, remaining: float) -> str:
    """The message of a topology's ``TIMEOUT`` plan error: no time left, or its planner overran its share."""
    if remaining <= 0:
        return (f"not planned: the topologies before it in this request used up the deadline "
                f"({request.deadline_ms} ms)")
    return (f"{algorithm} did not finish within its {remaining * 1000:.0f} ms share of the deadline "
            f"({request.deadline_ms} ms for {len(request.topologies)} topologies, shared by size: "
            f"executors + nodes)")
