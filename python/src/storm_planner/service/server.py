"""``storm-planner serve``: the threaded Thrift server the Nimbus plugin calls.

Framed transport and binary protocol, as Storm's own Thrift services use (Cython-built: see
contract.wire_factories).
Listens on loopback by default: the planner trusts its callers. After each
reply has been sent, the handler's ``after_answer()`` runs (work such as a
rebalance request, which must not happen while Nimbus waits for the answer).
"""
from __future__ import annotations

import logging
import signal
import socket
import threading
import time
from pathlib import Path

from thriftpy2.rpc import make_server
from thriftpy2.thrift import TProcessor

from storm_planner.service.contract import planner_thrift as T
from storm_planner.service.contract import wire_factories
from storm_planner.service.handler import MetricsSource, PlannerHandler

log = logging.getLogger("storm_planner.service")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7627


class AnswerFirstProcessor(TProcessor):
    """Thrift's processor, then the handler's ``after_answer()`` once the reply is flushed
    (also when it could not be sent: what was decided still stands)."""

    def process(self, iprot, oprot) -> None:
        try:
            super().process(iprot, oprot)
        finally:
            after = getattr(self._handler, "after_answer", None)
            if after is not None:
                try:
                    after()
                except Exception:  # noqa: BLE001 - never cost the connection its next call
                    log.exception("after_answer failed")


def build_server(handler: PlannerHandler, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
    proto_factory, trans_factory = wire_factories()
    server = make_server(
        T.PlannerService, handler, host=host, port=port,
        proto_factory=proto_factory, trans_factory=trans_factory,
        client_timeout=60_000,
    )
    server.processor = AnswerFirstProcessor(T.PlannerService, handler)
    return server


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, default_algorithm: str = "even",
          metrics: MetricsSource | None = None, plan_log: Path | None = None, replanner=None,
          nimbus: str | None = None) -> None:
    """Serve until SIGTERM/SIGINT. ``nimbus`` (HOST:PORT) lets the service rebalance topologies."""
    handler = PlannerHandler(default_algorithm, metrics, plan_log, replanner, nimbus=nimbus)
    server = build_server(handler, host, port)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    log.info("planner service listening on %s:%d (default algorithm %s%s)", host, port, default_algorithm,
             f"; rebalances through Nimbus {nimbus}" if nimbus else "")
    try:
        server.serve()
    except KeyboardInterrupt:
        log.info("planner service stopping")
    finally:
        server.close()
        handler.close()


def free_port(host: str = DEFAULT_HOST) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class BackgroundServer:
    """A service in a daemon thread, for tests and notebooks: ``with BackgroundServer() as s: s.port``."""

    def __init__(self, handler: PlannerHandler | None = None, host: str = DEFAULT_HOST, port: int = 0):
        self.handler = handler or PlannerHandler()
        self.host = host
        self.port = port or free_port(host)
        self.server = build_server(self.handler, host, self.port)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="planner-service")

    def _serve(self) -> None:
        try:
            self.server.serve()
        except Exception:  # closed under us at shutdown
            pass

    def __enter__(self) -> "BackgroundServer":
        self._thread.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # serve() binds in the thread: wait for it
            try:
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"planner service did not start on {self.host}:{self.port}")

    def __exit__(self, *exc) -> None:
        self.server.close()
        self.handler.close()
