"""The planner service's metrics source: a request's topology -> measured executors and traffic.

:class:`StoreMetricsSource` answers ``measure(spec, nodes)`` for
:class:`~storm_planner.service.planning.handler.PlannerHandler` from a
:class:`~storm_planner.metrics.store.MetricsStore`: a
:class:`~storm_planner.metrics.measured.MeasuredTopology`. With nothing usable it has no executors
(the service then uses its estimates) and its notes say why: no windows yet, all stale, corrupt
znodes, ZooKeeper unreachable.

Topology options read here (types, defaults and ranges: :mod:`storm_planner.core.settings`, the table
in ``docs/settings.md``): ``planner.metrics.enabled``, ``planner.metrics.windows``,
``planner.metrics.stale.secs``, ``planner.metrics.traffic.unit``, ``planner.metrics.min.coverage`` (the
share of executors that must have a usable window before measured figures replace the estimates; fewer
means workers are still starting), ``planner.executor.cost`` (load of an executor nothing is known about),
``planner.network.tuple.overhead.bytes`` and ``planner.metrics.worker.cpu``.

``tuple_bytes`` gives, per measured component pair, the bytes one tuple costs on the wire (the hook's
payload estimate plus that overhead): the streams' ``tuple_bytes``, from which planners and the
evaluator compute link use.

Besides the topology's own figures the answer carries ``node_bandwidth``: per node, the Mbit/s
already used on its link besides this topology's own flows — the host's measured link use less
them, else the other topologies' measured flows (``network_use.py``) — which the service adds to
the node's ``used.bandwidth`` so bandwidth-aware planners (``gma``) see links as busy as they are.
The flows of every topology the store knows are summed at most once a second (once per round).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

from storm_planner.core import settings
from storm_planner.core.problem import Executor, Traffic
from storm_planner.metrics.loads_and_traffic import (
    DEFAULT_STALE_PERIODS,
    DEFAULT_STATE_MB,
    MIN_STALE_S,
    Measurement,
    measure,
)
from storm_planner.metrics.measured import MeasuredTopology
from storm_planner.metrics.network_use import (
    DEFAULT_TUPLE_OVERHEAD_BYTES,
    NodeTraffic,
    host_link_use,
    link_use_besides,
    summed,
    topology_network_use,
)
from storm_planner.metrics.store import MetricsStore, StoreView

log = logging.getLogger("storm_planner.metrics")

DEFAULT_MIN_COVERAGE = settings.METRICS_MIN_COVERAGE.default
NETWORK_USE_TTL_S = 1.0   # one scheduling round plans many topologies: sum the links once per round


def node_speeds(nodes: Iterable[Any]) -> dict[str, float]:
    """Node id -> speed from the request's nodes (scheduler meta ``speed``; 1 when absent or bad)."""
    speeds = {}
    for node in nodes or ():
        try:
            speed = float((node.meta or {}).get("speed", 1.0))
        except (TypeError, ValueError):
            speed = 1.0
        speeds[node.id] = speed if speed > 0 else 1.0
    return speeds


class StoreMetricsSource:
    """``measure(spec, nodes)`` for the planner service, backed by a metrics store."""

    def __init__(self, store: MetricsStore, clock=time.time) -> None:
        self.store = store
        self.clock = clock
        self._network: tuple | None = None   # (when, overhead, flows per topology, all flows, host links)

    def measure(self, spec: Any, nodes: Iterable[Any] = ()) -> MeasuredTopology:
        try:
            return self._measure(spec, nodes)
        except Exception as error:  # noqa: BLE001 - metrics trouble must never cost a plan
            log.exception("metrics for %s failed", spec.id)
            return MeasuredTopology.estimates(
                f"metrics unavailable ({type(error).__name__}: {error}): loads and rates are estimates")

    def _measure(self, spec: Any, nodes: Iterable[Any]) -> MeasuredTopology:
        answer = self._own_figures(spec, nodes)
        overhead = settings.TUPLE_OVERHEAD_BYTES.read(dict(spec.options or {}))
        # On the wire a tuple costs its payload and Storm's envelope.
        return dataclasses.replace(
            answer, node_bandwidth=MappingProxyType(self.others_network_use(spec.id, overhead)),
            tuple_bytes=MappingProxyType({pair: size + overhead for pair, size in answer.tuple_bytes.items()}))

    def others_network_use(self, topology_id: str,
                           tuple_overhead_bytes: float = DEFAULT_TUPLE_OVERHEAD_BYTES) -> dict[str, float]:
        """Node -> Mbit/s (both directions) already used on its link besides this topology's own flows:
        the host's measured total less them, else the other topologies' measured flows; fresh windows only."""
        now = self.clock()
        if (self._network is None or now - self._network[0] > NETWORK_USE_TTL_S
                or self._network[1] != tuple_overhead_bytes):
            views = {other: self.store.view(other) for other in self.store.topologies()}
            flows = {other: topology_network_use(_fresh_latest(view, now * 1000),
                                                 tuple_overhead_bytes=tuple_overhead_bytes)
                     for other, view in views.items()}
            hosts = host_link_use(_fresh(view, now * 1000) for view in views.values())
            self._network = (now, tuple_overhead_bytes, flows, summed(flows.values()), hosts)
        _, _, flows, everyone, hosts = self._network
        own = flows.get(topology_id, {})
        # Everyone's flows less this topology's: O(nodes with traffic) per topology, not O(topologies).
        others = {node: NodeTraffic(total.sent_mbit - (own[node].sent_mbit if node in own else 0.0),
                                    total.received_mbit - (own[node].received_mbit if node in own else 0.0))
                  for node, total in everyone.items()}
        return link_use_besides(own, others, hosts)

    def _own_figures(self, spec: Any, nodes: Iterable[Any]) -> MeasuredTopology:
        options = dict(spec.options or {})
        if not settings.METRICS_ENABLED.read(options):
            return MeasuredTopology.estimates("metrics off for this topology (planner.metrics.enabled: false)")
        view = self.store.view(spec.id)
        measurement = self.measurement(spec, nodes, view)
        notes = list(self._connection_notes(view, measurement))
        notes.extend(f"skipped corrupt metrics znode, {problem}" for problem in view.problems)
        if view.corrupt_windows:
            notes.append(f"{view.corrupt_windows} corrupt metrics windows skipped so far")
        notes.extend(f"metrics: {event}" for event in view.events)
        if measurement is None or not measurement.any_measured:
            if not view.windows and view.connected and not view.problems:
                notes.append("no metrics in ZooKeeper for this topology yet (is the metrics hook on?)")
            elif measurement is not None:
                notes.extend(measurement.notes)
            return MeasuredTopology.estimates(*notes)
        coverage = measurement.measured_count / max(1, len(spec.executors))
        min_coverage = settings.METRICS_MIN_COVERAGE.read(options)
        if coverage < min_coverage:
            notes.append(f"metrics for only {measurement.measured_count} of {len(spec.executors)} executors "
                         f"(below planner.metrics.min.coverage {min_coverage:g}): not used yet")
            return MeasuredTopology.estimates(*notes)
        notes.extend(measurement.notes)
        return MeasuredTopology(
            executors=tuple(
                Executor(id=f.executor, component=f.component, load=round(f.load, 3),
                         state_size=f.state_mb if f.state_mb is not None else DEFAULT_STATE_MB)
                for f in (measurement.executors[e.id] for e in spec.executors)),
            traffic=tuple(Traffic(a, b, round(rate, 6)) for (a, b), rate in sorted(measurement.traffic.items())
                          if rate > 0),
            tuple_bytes=MappingProxyType(dict(measurement.tuple_bytes)),
            notes=tuple(notes),
            measurement=measurement,
        )

    def measurement(self, spec: Any, nodes: Iterable[Any], view: StoreView | None = None) -> Measurement | None:
        view = view or self.store.view(spec.id)
        if not view.windows:
            return None
        options = dict(spec.options or {})
        return measure(
            spec.id,
            view.windows,
            [(e.id, e.component) for e in spec.executors],
            node_speed=node_speeds(nodes),
            last=settings.METRICS_WINDOWS.read(options),
            stale_after_s=settings.METRICS_STALE_SECS.read(options),
            use_stale=not view.connected,
            unit=settings.METRICS_TRAFFIC_UNIT.read(options),
            fallback_load=settings.EXECUTOR_COST.read(options),
            now_ms=self.clock() * 1000,
            worker_cpu=settings.METRICS_WORKER_CPU.read(options),
        )

    def _connection_notes(self, view: StoreView, measurement: Measurement | None) -> list[str]:
        if view.connected:
            return []
        since = view.disconnected_since or self.clock()
        when = time.strftime("%H:%M:%S", time.localtime(since))
        down = f"ZooKeeper {view.zookeeper} unreachable since {when} ({self.clock() - since:.0f} s)"
        if measurement is not None and measurement.any_measured:
            age = f"; newest window {measurement.newest_age_s:.0f} s old" if measurement.newest_age_s is not None else ""
            return [f"{down}: planning on the last metrics received{age}"]
        return [f"{down}: no metrics cached for this topology, loads and rates are estimates"]


def _fresh(view: StoreView, now_ms: float) -> dict[int, list]:
    """Each task's windows, for the tasks whose latest window ended recently enough to describe the present."""
    fresh = {}
    for task, windows in view.windows.items():
        if windows:
            stale_s = max(MIN_STALE_S, DEFAULT_STALE_PERIODS * (windows[-1].period_s or 10.0))
            if now_ms - windows[-1].end_ms <= stale_s * 1000:
                fresh[task] = windows
    return fresh


def _fresh_latest(view: StoreView, now_ms: float) -> dict[int, Any]:
    return {task: windows[-1] for task, windows in _fresh(view, now_ms).items()}
