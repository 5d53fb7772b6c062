"""``/metrics``: the planner service's figures in Prometheus' text format (``storm-planner serve --metrics-port``).

Nothing is counted here: at each scrape :class:`ServiceCollector` reads what the service counts already —
its :class:`~storm_planner.service.transport.counters.ServiceCounters` (the ``Health.counters`` of
``storm-planner health``, plus plans, calls and fallbacks by label and the solve and round-trip durations),
the re-planner's counts (:class:`~storm_planner.adaptation.replan.Replanner`), the rebalancer's
(:class:`~storm_planner.service.planning.rebalance.AutoRebalancer`) and the metrics store's
(:class:`~storm_planner.metrics.store.MetricsStore`) — and writes them as Prometheus metrics. Every metric,
its type, labels and meaning: ``docs/monitoring.md``.

The endpoint (:class:`MetricsEndpoint`) serves a registry of the service's own, not
``prometheus_client``'s global one, so several services in one process (tests, notebooks) do not collide;
the registry also holds ``prometheus_client``'s process and platform collectors (``process_*``,
``python_info``). It listens on loopback unless told otherwise, like the service.
"""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.registry import Collector

from storm_planner import __version__

PREFIX = "storm_planner_"
DEFAULT_METRICS_HOST = "127.0.0.1"

# limit label -> the Health.counters name that counts it (a call or connection refused by that limit).
LIMIT_HITS = {
    "frame_size": "frames_refused.frame_size",
    "frame_room": "frames_refused.frame_room",
    "executors": "requests_refused.executors",
    "structs": "requests_refused.structs",
    "connections": "connections_refused",
    "read_timeout": "connections_timed_out",
    "token": "token_refused",
}
# Label values shown (at 0) before anything happened, so that dashboards and rates find them.
FALLBACK_CAUSES = ("timeout", "bad_request", "unknown_algorithm", "infeasible", "internal")
REPLAN_OUTCOMES = ("moved", "kept")
REBALANCE_OUTCOMES = ("applied", "failed")
FRAME_REASONS = ("frame_size", "frame_room", "malformed")


class ServiceCollector(Collector):
    """The service's figures, read from ``handler`` (a
    :class:`~storm_planner.service.planning.handler.PlannerHandler`) at each scrape."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.started = time.time() - (time.monotonic() - getattr(handler, "started", time.monotonic()))

    def collect(self) -> Iterator[Metric]:
        counters = self.handler.counters
        counts = counters.snapshot()
        yield _gauge("build_info", "The planner service's version (the value is 1)", {(__version__,): 1.0},
                     ("version",))
        yield _gauge("start_time_seconds", "When the planner service started (Unix time, seconds)",
                     {(): self.started})
        yield from self._planning(counters)
        yield from self._transport(counts)
        yield from self._adaptation(counts)

    def _planning(self, counters: Any) -> Iterator[Metric]:
        yield _counter("plans", "Topologies answered, by algorithm and outcome (ok or the error kind)",
                       counters.labelled("plans"), ("algorithm", "outcome"))
        yield _histogram("plan_solve_seconds", "Solve time of the plans answered (the planner's own time), "
                         "by algorithm", counters.durations("solve"), ("algorithm",))
        yield _counter("fallbacks", "Topologies the service's answers send to Storm's DefaultScheduler, by "
                       "cause (the plugin counts its own: planner.fallbacks.*)",
                       _with_zeros(counters.labelled("fallbacks"), FALLBACK_CAUSES), ("cause",))
        yield _counter("calls", "Calls answered, by call (plan, health) and outcome (ok, bad_request, internal, "
                       "...; unanswered: the reply could not be sent)", counters.labelled("calls"),
                       ("call", "outcome"))
        yield _histogram("call_round_trip_seconds", "From a call's frame read to its reply sent, by call",
                         counters.durations("round_trip"), ("call",))

    def _transport(self, counts: Mapping[str, int]) -> Iterator[Metric]:
        yield _counter("limit_hits", "Calls or connections refused by a caller limit, by limit",
                       {(limit,): counts.get(name, 0) for limit, name in LIMIT_HITS.items()}, ("limit",))
        yield _counter("connections_refused", "Connections closed at once: every worker busy "
                       "(serve --max-connections)", {(): counts.get("connections_refused", 0)})
        yield _counter("frames_refused", "Frames not read, by reason (the connection is closed)",
                       {(reason,): counts.get(f"frames_refused.{reason}", 0) for reason in FRAME_REASONS},
                       ("reason",))
        yield _counter("calls_failed", "Connections ended by a call that failed outside the handler",
                       {(): counts.get("calls_failed", 0)})
        yield _counter("plan_log_failures", "Plan-log records that could not be written",
                       {(): counts.get("plan_log_failures", 0)})
        yield _counter("plan_log_lines_truncated", "Plan-log lines over the line limit, written as a summary",
                       {(): counts.get("plan_log_lines_truncated", 0)})

    def _adaptation(self, counts: Mapping[str, int]) -> Iterator[Metric]:
        replanner = getattr(self.handler, "replanner", None)
        replans = dict(getattr(replanner, "counts", {}))
        yield _counter("replans", "Re-plans of running topologies (the planner ran on measured metrics), by "
                       "outcome: moved (executors move) or kept (the current placement stays)",
                       {(outcome,): replans.get(outcome, 0) for outcome in REPLAN_OUTCOMES}, ("outcome",))
        yield _counter("migrations", "Executors moved by the re-plans answered",
                       {(): replans.get("migrations", 0)})
        outcomes = dict(getattr(getattr(self.handler, "rebalancer", None), "outcomes", {}))
        yield _counter("rebalances", "Rebalances the service asked Nimbus for, by outcome",
                       {(outcome,): outcomes.get(outcome, 0) for outcome in REBALANCE_OUTCOMES}, ("outcome",))
        store = getattr(getattr(self.handler, "metrics", None), "store", None)
        yield _counter("metrics_corrupt_windows", "Metrics windows skipped as corrupt by the metrics store",
                       {(): getattr(store, "corrupt_windows", 0)})
        if store is not None:
            yield _gauge("metrics_store_connected", "1 while the metrics store is connected to ZooKeeper",
                         {(): 1.0 if store.connected else 0.0})


def _counter(name: str, documentation: str, values: Mapping[tuple[str, ...], float],
             label_names: Iterable[str] = ()) -> Metric:
    return _family(CounterMetricFamily, name, documentation, values, label_names)


def _gauge(name: str, documentation: str, values: Mapping[tuple[str, ...], float],
           label_names: Iterable[str] = ()) -> Metric:
    return _family(GaugeMetricFamily, name, documentation, values, label_names)


def _family(kind: Any, name: str, documentation: str, values: Mapping[tuple[str, ...], float],
            label_names: Iterable[str]) -> Metric:
    family = kind(PREFIX + name, documentation, labels=list(label_names))
    for labels, value in sorted(values.items()):
        family.add_metric(list(labels), value)
    return family  # type: ignore[no-any-return]


def _histogram(name: str, documentation: str, series: Mapping[tuple[str, ...], Any],
               label_names: Iterable[str]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(PREFIX + name, documentation, labels=list(label_names))
    for labels, (buckets, _count, total) in sorted(series.items()):
        family.add_metric(list(labels), [(_bound(bound), count) for bound, count in buckets], total)
    return family


def _bound(seconds: float) -> str:
    """A bucket's ``le`` as Prometheus writes it (``+Inf`` for the last)."""
    return "+Inf" if seconds == float("inf") else repr(float(seconds))


def _with_zeros(values: Mapping[tuple[str, ...], int], known: Iterable[str]) -> dict[tuple[str, ...], int]:
    return {**{(value,): 0 for value in known}, **values}


def service_registry(handler: Any) -> CollectorRegistry:
    """A registry of the service's own: its collector, the process's and the platform's."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ServiceCollector(handler))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    return registry


class MetricsEndpoint:
    """``/metrics`` over HTTP on ``host:port`` (port 0: a free one), in a daemon thread, until :meth:`close`.

    ``prometheus_client``'s WSGI app and threading server, as its ``start_http_server`` builds them, but
    served in a thread of ours that notices :meth:`close` within ``POLL_S``.
    """

    POLL_S = 0.05

    def __init__(self, handler: Any, host: str = DEFAULT_METRICS_HOST, port: int = 0) -> None:
        self.host = host
        self.registry = service_registry(handler)
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
        server_class = type("MetricsServer", (ThreadingWSGIServer,), {"address_family": family})
        self._server: WSGIServer = make_server(host, port, make_wsgi_app(self.registry), server_class,
                                               handler_class=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": self.POLL_S},
                                        name="metrics-endpoint", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _QuietHandler(WSGIRequestHandler):
    """No access log: Prometheus scrapes every few seconds."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the overridden signature
        pass
