"""The planner service: the planning handler behind the Thrift transport, until a stop signal or in a thread.

``storm-planner serve`` runs :func:`serve`; tests, benchmarks and notebooks run :class:`BackgroundServer`.
Either serves ``/metrics`` for Prometheus too when given a metrics port
(:class:`~storm_planner.service.prometheus.MetricsEndpoint`).
The handler is :class:`~storm_planner.service.planning.handler.PlannerHandler`, the server
:func:`~storm_planner.service.transport.server.build_server`.
"""
from __future__ import annotations

import gc
import logging
import signal
import threading
from pathlib import Path
from typing import Any

from storm_planner.adaptation.replan import Replanner
from storm_planner.adaptation.state import StateStore
from storm_planner.metrics.measured import MetricsSource
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.runner import PlannerRunner
from storm_planner.service.prometheus import DEFAULT_METRICS_HOST, MetricsEndpoint
from storm_planner.service.transport.caller_limits import ServiceLimits
from storm_planner.service.transport.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    STOP_SIGNALS,
    build_server,
    hold_stop_signals,
)

log = logging.getLogger("storm_planner.service")


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, default_algorithm: str = "auto",
          metrics: MetricsSource | None = None, plan_log: Path | None = None, replanner: Replanner | None = None,
          nimbus: str | None = None, limits: ServiceLimits | None = None,
          plan_log_max_line_mb: float | None = None, runner: PlannerRunner | None = None,
          problem_log: Path | None = None, metrics_port: int | None = None,
          metrics_host: str = DEFAULT_METRICS_HOST, drain_markers: StateStore | None = None,
          load_memory_store: StateStore | None = None) -> None:
    """Serve until SIGTERM/SIGINT. ``nimbus`` (HOST:PORT) lets the service rebalance topologies and drain
    a re-plan's move; ``drain_markers``: where it marks the topologies a drain paused; ``load_memory_store``:
    where it keeps each topology name's measured loads (both default to files beside the plan log); ``metrics_port``
    (0: a free one) serves ``/metrics`` on ``metrics_host``.

    Call :func:`hold_stop_signals` before starting any thread (the metrics store's, say): the
    signals are then taken here by ``sigwait``, whichever thread the kernel would have given them
    to. (A Python handler runs only in the main thread, and only once the thread the signal went
    to wakes it; the main thread blocked in ``accept()`` was never woken, and the service lived on.)
    """
    hold_stop_signals()
    optional: dict[str, Any] = {"plan_log_max_line_mb": plan_log_max_line_mb} if plan_log_max_line_mb else {}
    handler = PlannerHandler(default_algorithm, metrics, plan_log, replanner, nimbus=nimbus, limits=limits,
                             runner=runner, problem_log=problem_log, drain_markers=drain_markers,
                             load_memory_store=load_memory_store, **optional)
    endpoint = MetricsEndpoint(handler, metrics_host, metrics_port) if metrics_port is not None else None
    server = build_server(handler, host, port)
    # What start-up made (modules, the contract) is never garbage: the collector need not walk it again.
    # (Cyclic garbage among it would never be freed: a bounded, one-off amount.)
    gc.freeze()
    # The solver planners' worker process takes a second or two to start (it imports the solvers):
    # started now, in the background, so that the first such plan does not spend its share on it.
    threading.Thread(target=handler.runner.worker.start, name="worker-start", daemon=True).start()
    threading.Thread(target=server.serve, name="thrift-server", daemon=True).start()
    log.info("planner service listening on %s:%d (default algorithm %s%s; %r)", host, port, default_algorithm,
             f"; rebalances through Nimbus {nimbus}" if nimbus else "", handler.limits)
    if endpoint is not None:
        log.info("metrics for Prometheus at %s", endpoint.url)
    try:
        received = signal.sigwait(STOP_SIGNALS)
        log.info("planner service stopping (%s)", signal.Signals(received).name)
    finally:
        if endpoint is not None:
            endpoint.close()
        server.close()
        handler.close()


class BackgroundServer:
    """A service in a daemon thread, for tests and notebooks: ``with BackgroundServer() as s: s.port``;
    with ``metrics_port`` (0: a free one) it serves ``/metrics`` too, at ``s.metrics.url``."""

    def __init__(self, handler: PlannerHandler | None = None, host: str = DEFAULT_HOST, port: int = 0,
                 limits: ServiceLimits | None = None, metrics_port: int | None = None):
        self.handler = handler or PlannerHandler()
        if limits is not None:
            self.handler.limits = limits
        self.host = host
        self.server = build_server(self.handler, host, port)
        self.port = self.server.port
        self.metrics = MetricsEndpoint(self.handler, host, metrics_port) if metrics_port is not None else None
        self._thread = threading.Thread(target=self._serve, daemon=True, name="planner-service")

    def _serve(self) -> None:
        try:
            self.server.serve()
        except Exception:  # closed under us at shutdown
            pass

    def __enter__(self) -> BackgroundServer:
        self._thread.start()  # bound and listening already: connections wait in the backlog until it accepts
        return self

    def __exit__(self, *exc: object) -> None:
        if self.metrics is not None:
            self.metrics.close()
        self.server.close()
        self.handler.close()
