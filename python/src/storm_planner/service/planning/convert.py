"""Thrift structs <-> planner core objects.

A request carries several topologies; each becomes one :class:`Problem`. The
nodes a topology sees (its free slots, what the request's other topologies hold)
come from :class:`~storm_planner.service.planning.request_state.RequestState`.

Loads: when the metrics store has nothing for a topology, each executor gets its component's load as
last measured under the topology's name when the request passes one (``planner.loads.remembered``,
:mod:`storm_planner.service.planning.memory`), else its
declared CPU (or ``planner.executor.cost``, default 10 % of a core) and each
stream a prior rate (one tuple per spout output, selectivity 1 over data inputs,
watermark streams as the kit sends them: ``planner.watermark.streams``), so that
planners still see the graph's shape. The acker's streams (and metrics consumers') are
added to the declared ones: :mod:`storm_planner.core.system_streams`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from itertools import repeat
from types import MappingProxyType
from typing import Any

from storm_planner.core import settings
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
    with_system_streams,
)
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.service.planning.admission import admit_topology, option
from storm_planner.service.planning.memory import RememberedLoads, with_remembered_rates
from storm_planner.service.planning.request_state import RequestState
from storm_planner.service.transport.contract import planner_thrift as T

DEFAULT_EXECUTOR_COST = settings.EXECUTOR_COST.default
_NO_PRIORS: Mapping[str, float] = MappingProxyType({})
DEFAULT_STREAM_RATE = 1.0   # before core.system_streams.prior_rates propagates it from the spouts


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
    return problem_of(spec, state, measured, remembered)


def problem_of(spec: Any, state: RequestState, measured: MeasuredTopology | None = None,
                  remembered: RememberedLoads | None = None) -> Problem:
    """:func:`problem_from_thrift` of a topology admitted already (its options and fields checked)."""
    options = dict(spec.options or {})
    current = {
        executor: Slot(slot.node_id, slot.port) for executor, slot in (spec.current or {}).items()
    }
    problem_nodes = _problem_nodes(state, spec, measured)
    node_ids = {n.id for n in problem_nodes}
    cost = settings.EXECUTOR_COST.read(options)
    components = _components(spec, cost)
    measured = measured if measured is not None and measured.measured else None
    remembered = None if measured else remembered
    sizes = measured.tuple_bytes if measured else remembered.tuple_bytes if remembered else {}
    streams = _streams(spec, components, options, sizes, remembered.rates if remembered else {})
    executors, traffic = _executors_and_traffic(spec, measured, options, cost,
                                                remembered.cpu if remembered else _NO_PRIORS)
    return Problem(
        nodes=tuple(problem_nodes),
        topology_id=spec.id,
        components=components,
        streams=streams,
        executors=executors,
        traffic=traffic,
        current=MappingProxyType({e: s for e, s in current.items() if s.node in node_ids}),
        options=_options(spec, options),
        measured=measured is not None,
        loads_remembered=remembered is not None and any(c.id in remembered.loads for c in components),
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
