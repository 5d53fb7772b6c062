"""The threaded Thrift server the Nimbus plugin calls, around any handler of ``PlannerService``.

Framed transport and binary protocol, as Storm's own Thrift services use (Cython-built: see
contract.wire_factories), served under the limits of :mod:`storm_planner.service.transport.caller_limits`
(frame size, executors and structs per request, connections, read timeout, an optional shared token) by
:mod:`storm_planner.service.transport.wire`.
Listens on loopback by default: without a token the planner trusts every caller that reaches it. After each
reply has been sent, the handler's ``after_answer()`` runs (work such as a
rebalance request, which must not happen while Nimbus waits for the answer). The planner service itself
(this server around a :class:`~storm_planner.service.planning.handler.PlannerHandler`) is
:mod:`storm_planner.service.serve`.
"""
from __future__ import annotations

import contextlib
import gc
import logging
import signal
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol, cast

from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import TTransportException

from storm_planner.service.transport.caller_limits import RequestTooLarge, ServiceLimits, count_request_structs
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.contract import wire_factories
from storm_planner.service.transport.counters import ServiceCounters
from storm_planner.service.transport.wire import LimitedThriftServer

log = logging.getLogger("storm_planner.service")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7627


class Served(Protocol):
    """What the server needs of the handler it serves (besides the service's calls): its limits and counters."""

    limits: ServiceLimits
    counters: ServiceCounters


class AnswerFirstProcessor(TProcessor):
    """Thrift's processor, then the handler's ``after_answer()`` once the reply is flushed
    (also when it could not be sent: what was decided still stands).

    Python's cyclic garbage collector is paused from the moment a call has arrived until it is
    answered: a production-sized request is some 100,000 objects, which the collector would
    otherwise walk again and again while they are all alive (15-20 % of the round). Reference
    counting still frees what a call leaves; the collector is on while a connection waits. The pause
    is process-wide and lasts the whole call, writing the reply included (at most the client timeout if
    the caller stops reading). A connection that ends while waiting for a call runs no ``after_answer``:
    nothing was decided on it.
    """

    def process(self, iprot: Any, oprot: Any) -> None:
        header = iprot.read_message_begin()  # waits for the next call on this connection
        received, _answer.outcome = time.monotonic(), None
        try:
            with collector_paused():
                try:
                    # _HeaderRead stands in for the input protocol (duck-typed; thriftpy2 declares TProtocolBase).
                    super().process(cast(Any, _HeaderRead(iprot, header)), oprot)
                except RequestTooLarge as refused:
                    self._refuse(oprot, header, str(refused), refused.limit)
                except (TTransportException, OSError):
                    raise  # the connection is gone: nothing can be answered on it
                except Exception as error:  # noqa: BLE001 - a bug answers this call, not the next ones
                    self._failed(oprot, header, error)
        finally:
            self._count_call(header[0], received)
            after = getattr(self._handler, "after_answer", None)
            if after is not None:
                try:
                    after()
                except Exception:  # noqa: BLE001 - never cost the connection its next call
                    log.exception("after_answer failed")

    def send_result(self, oprot: Any, api: str, result: Any, seqid: int) -> None:
        super().send_result(oprot, api, result, seqid)
        error = getattr(result, "error", None)
        _answer.outcome = "ok" if error is None else T.ErrorKind._VALUES_TO_NAMES.get(error.kind, "error").lower()

    def send_exception(self, oprot: Any, api: str, exc: Any, seqid: int) -> None:
        super().send_exception(oprot, api, exc, seqid)
        _answer.outcome = _EXCEPTION_OUTCOMES.get(exc.type, "bad_request")

    def _count_call(self, api: str, received: float) -> None:
        """The call by outcome (``unanswered``: no reply could be sent) and, when answered, its round trip:
        from its frame read to its reply sent (for ``/metrics``)."""
        counters = getattr(self._handler, "counters", None)
        if counters is None:
            return
        api = api if api in self._service.thrift_services else "unknown"   # a caller cannot mint labels
        outcome = _answer.outcome or "unanswered"
        counters.count("calls", api, outcome)
        if outcome != "unanswered":
            counters.observe("round_trip", time.monotonic() - received, api)

    def _refuse(self, oprot: Any, header: Any, message: str, limit: str) -> None:
        """Answer a call refused while decoding: ``PlannerError(BAD_REQUEST)`` where the call declares it."""
        api, _, seqid = header
        counters = getattr(self._handler, "counters", None)
        if counters is not None:
            counters.note("requests_refused", log, "refused a %s call: %s", api, message)
            counters.add(f"requests_refused.{limit}")
        result = getattr(self._service, f"{api}_result")()
        if "error" in {spec[1] for spec in result.thrift_spec.values()}:
            result.error = T.PlannerError(kind=T.ErrorKind.BAD_REQUEST, message=message)
            self.send_result(oprot, api, result, seqid)
        else:
            self.send_exception(oprot, api, TApplicationException(TApplicationException.PROTOCOL_ERROR, message),
                                seqid)


    def _failed(self, oprot: Any, header: Any, error: Exception) -> None:
        """Answer a call the handler failed on with ``TApplicationException(INTERNAL_ERROR)`` (the plugin falls
        back, naming it) instead of closing the connection without a word."""
        api, _, seqid = header
        log.exception("%s call failed", api)
        message = f"{type(error).__name__}: {error}"
        self.send_exception(oprot, api, TApplicationException(TApplicationException.INTERNAL_ERROR,
                                                              message[:ERROR_MESSAGE_CHARS]), seqid)


# What a call answered with a TApplicationException counts as (``calls`` by outcome; anything else:
# bad_request).
_EXCEPTION_OUTCOMES = {TApplicationException.INTERNAL_ERROR: "internal",
                       TApplicationException.UNKNOWN_METHOD: "unknown_method"}
# The outcome of the call this thread is answering (set once its reply is sent).
_answer = threading.local()

# An internal error's message sent to the plugin is cut to this many characters (the plugin cuts it again).
ERROR_MESSAGE_CHARS = 1024

# The decoders count the structs of every call they build (limits.DecodeBudget): the request side only.
count_request_structs(T.PlannerService, (T.PlanRequest, T.Node, T.TopologySpec, T.Component, T.Stream,
                                         T.Executor, T.WorkerSlot))


class _HeaderRead:
    """A protocol whose next message header was already read (``header``); the rest is ``protocol``'s."""

    def __init__(self, protocol: Any, header: Any) -> None:
        self._protocol = protocol
        self._header = header

    def read_message_begin(self) -> Any:
        return self._header

    def __getattr__(self, name: str) -> Any:
        return getattr(self._protocol, name)


_paused_calls = 0
_resume_collector = True
_paused_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while any call (of any connection's thread) is inside;
    back as it was once the last one ends."""
    global _paused_calls, _resume_collector
    with _paused_lock:
        if _paused_calls == 0:
            _resume_collector = gc.isenabled()
            gc.disable()
        _paused_calls += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused_calls -= 1
            if _paused_calls == 0 and _resume_collector:
                gc.enable()


def build_server(handler: Served, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> LimitedThriftServer:
    """The server, bound to ``host:port``, under the handler's limits."""
    proto_factory, trans_factory = wire_factories()
    return LimitedThriftServer(AnswerFirstProcessor(T.PlannerService, handler), host, port, handler.limits,
                               handler.counters, proto_factory, trans_factory)


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def hold_stop_signals() -> None:
    """Block SIGINT/SIGTERM in this thread and every thread started after:
    :func:`~storm_planner.service.serve.serve` waits for them."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def free_port(host: str = DEFAULT_HOST) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
