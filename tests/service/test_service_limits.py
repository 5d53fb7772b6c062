"""The service's limits, attacked over real sockets: frames, structs, executors, connections, slow clients, token."""
from __future__ import annotations

import socket
import struct
import threading
import time

import pytest
from test_service import request, topology
from thriftpy2.thrift import TApplicationException
from wire_attacks import PeakRss, closed_by_peer, frame, plan_call_of_empty_executors, read_plan_reply

from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.caller_limits import LimitError, ServiceLimits, limits_from
from storm_planner.service.transport.client import connect, health
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.server import DEFAULT_HOST


def dial(server: BackgroundServer, timeout_s: float = 10.0) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=timeout_s)


def counters(server: BackgroundServer) -> dict[str, int]:
    return dict(health(server.host, server.port).counters or {})


def test_the_service_listens_on_loopback_unless_told_otherwise():
    assert DEFAULT_HOST == "127.0.0.1"


def test_a_frame_over_the_cap_is_refused_before_its_body_is_read():
    with BackgroundServer(limits=ServiceLimits(max_frame_mb=1)) as server, dial(server) as sock:
        with PeakRss() as peak:
            sock.sendall(struct.pack(">i", 1 << 30) + b"\0" * 4096)   # claims 1 GB
            assert closed_by_peer(sock), "the service kept a connection whose frame is over the cap"
        assert peak.grown_mb < 50
        assert counters(server)["frames_refused"] == 1
        assert health(server.host, server.port).status == "ok"


def test_a_flood_of_empty_structs_is_refused_while_decoding_without_the_memory_it_would_take():
    # 4 MB of empty Executor structs: 476 MB of Python objects at the peak when decoded whole (measured
    # before the limits); refused at the 100,001st executor, the peak is some 20 MB.
    with BackgroundServer() as server, dial(server, timeout_s=60) as sock, PeakRss() as peak:
        sock.sendall(frame(plan_call_of_empty_executors(4_000_000)))
        result = read_plan_reply(sock)
    assert result.error.kind == T.ErrorKind.BAD_REQUEST
    assert "more than 100000 executors" in result.error.message and "--max-executors" in result.error.message
    assert peak.grown_mb < 150, f"decoding grew the service by {peak.grown_mb:.0f} MB"


def test_a_request_over_the_executor_cap_gets_bad_request_and_the_connection_goes_on():
    with BackgroundServer(limits=ServiceLimits(max_executors=5)) as server, \
            connect(server.host, server.port) as client:
        with pytest.raises(T.PlannerError) as refused:
            client.plan(request(topology("t1")))          # 6 executors
        assert refused.value.kind == T.ErrorKind.BAD_REQUEST
        assert "more than 5 executors (serve --max-executors)" in refused.value.message
        assert client.health().counters["requests_refused"] == 1


def test_a_call_that_runs_past_its_frame_is_refused_and_the_service_answers_on():
    truncated = plan_call_of_empty_executors(10)[:-8]     # the list claims more than the frame holds
    with BackgroundServer() as server, dial(server) as sock:
        sock.sendall(frame(truncated))
        assert closed_by_peer(sock)
        assert counters(server)["calls_failed"] == 1
        assert health(server.host, server.port).status == "ok"


def test_connections_beyond_the_pool_are_refused_and_stalled_ones_time_out():
    limits = ServiceLimits(max_connections=2, read_timeout_s=1.0)
    with BackgroundServer(limits=limits) as server:
        stalled = [dial(server), dial(server)]            # connect, then send nothing
        extra = dial(server)
        started = time.monotonic()
        assert closed_by_peer(extra), "a connection beyond the pool was kept"
        assert time.monotonic() - started < 5
        extra.close()
        for sock in stalled:                              # each is closed once the read timeout is over
            assert closed_by_peer(sock)
            sock.close()
        status = health(server.host, server.port)          # the pool is free again
        assert status.counters["connections_refused"] == 1
        assert status.counters["connections_timed_out"] == 2


def test_a_client_dripping_its_frame_is_cut_off_at_the_read_timeout():
    payload = plan_call_of_empty_executors(100)
    with BackgroundServer(limits=ServiceLimits(read_timeout_s=1.0)) as server, dial(server) as sock:
        sock.sendall(struct.pack(">i", len(payload)))
        stop = threading.Event()

        def drip():  # one byte every 100 ms: each read alone would be quick
            for byte in payload:
                if stop.wait(0.1):
                    return
                try:
                    sock.send(bytes([byte]))
                except OSError:
                    return

        dripper = threading.Thread(target=drip, daemon=True)
        started = time.monotonic()
        dripper.start()
        try:
            assert closed_by_peer(sock)
            held = time.monotonic() - started
        finally:
            stop.set()
            dripper.join()
        assert held < 5, f"a dripping client held a worker {held:.1f} s, read timeout 1 s"
        assert counters(server)["connections_timed_out"] == 1


def test_with_a_token_plan_calls_must_carry_it_and_health_stays_open():
    with BackgroundServer(limits=ServiceLimits(token="s3cret")) as server, \
            connect(server.host, server.port) as client:
        for token in (None, "guess"):
            call = request(topology("t1"))
            call.token = token
            with pytest.raises(T.PlannerError) as refused:
                client.plan(call)
            assert refused.value.kind == T.ErrorKind.BAD_REQUEST
            assert "planner.service.token" in refused.value.message
        call = request(topology("t1"))
        call.token = "s3cret"
        (plan,) = client.plan(call).plans
        assert plan.error is None and plan.assignments
        assert client.health().counters["token_refused"] == 2


def test_limits_come_from_options_then_the_environment_then_defaults(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    environ = {"STORM_PLANNER_MAX_FRAME_MB": "16", "STORM_PLANNER_MAX_CONNECTIONS": "3",
               "STORM_PLANNER_TOKEN": "from-env"}
    limits = limits_from({"max_connections": 5, "token_file": str(token_file)}, environ)
    assert (limits.max_frame_mb, limits.max_connections, limits.token) == (16.0, 5, "from-file")
    assert limits.read_timeout_s == 60.0 and limits.max_executors == 100_000
    assert limits_from({}, environ).token == "from-env"
    assert "from" not in repr(limits_from({}, environ))       # a token is never printed
    with pytest.raises(LimitError, match=r"--max-frame-mb \(\$STORM_PLANNER_MAX_FRAME_MB\) must be a positive"):
        limits_from({"max_frame_mb": float("nan")}, {})


@pytest.mark.parametrize("variable,text,says", [
    ("STORM_PLANNER_MAX_FRAME_MB", "nan", "a positive number (default 64)"),
    ("STORM_PLANNER_MAX_FRAME_MB", "-1", "a positive number (default 64)"),
    ("STORM_PLANNER_MAX_CONNECTIONS", "2.5", "a whole number >= 1 (default 8)"),
    ("STORM_PLANNER_READ_TIMEOUT_SECS", "soon", "a positive number (default 60.0)"),
])
def test_an_unusable_environment_limit_is_refused_naming_the_variable(variable, text, says):
    """Every numeric environment setting goes through one reader (core.fields.env_number)."""
    with pytest.raises(LimitError) as refused:
        limits_from({}, {variable: text})
    assert str(refused.value) == f"{variable}={text!r}: {says}"


class _FailingHandler(PlannerHandler):
    def plan(self, request):
        raise RuntimeError("a bug outside any topology")


def test_a_handler_bug_is_answered_as_an_internal_error_and_the_connection_goes_on():
    with BackgroundServer(_FailingHandler()) as server, connect(server.host, server.port) as client:
        with pytest.raises(TApplicationException) as failed:
            client.plan(request(topology("t1")))
        assert failed.value.type == TApplicationException.INTERNAL_ERROR
        assert "RuntimeError: a bug outside any topology" in failed.value.message
        assert client.health().status == "ok"
