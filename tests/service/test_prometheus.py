"""``/metrics``: the planner service scraped over HTTP, parsed with ``prometheus_client``'s parser; every
metric docs/monitoring.md lists is there with its type and moves when its event happens."""
from __future__ import annotations

import socket
import struct
import subprocess
import sys
import time
import urllib.request

import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_service import _SleepyPlanner, request, topology
from wire_attacks import closed_by_peer

from storm_planner.adaptation.replan import Replanner
from storm_planner.cli import main
from storm_planner.core.plan import ParallelismAdvice, Plan
from storm_planner.core.problem import Problem, Slot
from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import MetricsStore
from storm_planner.planners.base import _REGISTRY
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.rebalance import AutoRebalancer
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.caller_limits import ServiceLimits
from storm_planner.service.transport.client import connect, health
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.server import free_port

# Every metric of the service (docs/monitoring.md), by family name as the parser gives it -> its type.
SERVICE_METRICS = {
    "storm_planner_build_info": "gauge",
    "storm_planner_start_time_seconds": "gauge",
    "storm_planner_plans": "counter",
    "storm_planner_plan_solve_seconds": "histogram",
    "storm_planner_fallbacks": "counter",
    "storm_planner_calls": "counter",
    "storm_planner_call_round_trip_seconds": "histogram",
    "storm_planner_limit_hits": "counter",
    "storm_planner_connections_refused": "counter",
    "storm_planner_frames_refused": "counter",
    "storm_planner_calls_failed": "counter",
    "storm_planner_plan_log_failures": "counter",
    "storm_planner_plan_log_lines_truncated": "counter",
    "storm_planner_replans": "counter",
    "storm_planner_migrations": "counter",
    "storm_planner_rebalances": "counter",
    "storm_planner_metrics_corrupt_windows": "counter",
}


class Scrape:
    """One scrape of ``/metrics``: its families by name, and the value of one sample."""

    def __init__(self, url: str) -> None:
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.headers["Content-Type"].startswith("text/plain")
            self.text = answer.read().decode()
        self.families = {family.name: family for family in text_string_to_metric_families(self.text)}

    def value(self, sample: str, **labels: str) -> float:
        """The sample's value (0 when absent: a labelled series appears with its first event)."""
        family = self.families[_family_of(sample)]
        found = [s.value for s in family.samples if s.name == sample and s.labels == labels]
        assert len(found) <= 1, (sample, labels, found)
        return found[0] if found else 0.0


def _family_of(sample: str) -> str:
    for suffix in ("_total", "_bucket", "_count", "_sum"):
        if sample.endswith(suffix):
            return sample[: -len(suffix)]
    return sample


@pytest.fixture
def service():
    with BackgroundServer(metrics_port=0) as server:
        yield server


def scrape(server: BackgroundServer) -> Scrape:
    return Scrape(server.metrics.url)


def test_every_metric_is_served_with_its_type_on_loopback(service):
    assert service.metrics.url == f"http://127.0.0.1:{service.metrics.port}/metrics"
    families = scrape(service).families
    assert {name: families[name].type for name in SERVICE_METRICS if name in families} == SERVICE_METRICS
    assert families["storm_planner_build_info"].samples[0].labels["version"]
    assert "process_resident_memory_bytes" in families and "python_info" in families
    limits = {s.labels["limit"] for s in families["storm_planner_limit_hits"].samples}
    assert limits == {"frame_size", "frame_room", "executors", "structs", "connections", "read_timeout", "token"}


def test_a_plan_counts_by_algorithm_and_outcome_with_its_solve_time_and_round_trip(service):
    with connect(service.host, service.port) as client:
        good, bad = client.plan(request(topology("t1"), topology("t2", algorithm="no-such"))).plans
    assert good.error is None and bad.error.kind == T.ErrorKind.UNKNOWN_ALGORITHM
    metrics = _until_scraped(service, "storm_planner_calls_total", call="plan", outcome="ok")
    assert metrics.value("storm_planner_plans_total", algorithm="even", outcome="ok") == 1
    # An algorithm the service does not know is "unknown": a caller cannot mint label values.
    assert metrics.value("storm_planner_plans_total", algorithm="unknown", outcome="unknown_algorithm") == 1
    assert metrics.value("storm_planner_fallbacks_total", cause="unknown_algorithm") == 1
    assert metrics.value("storm_planner_plan_solve_seconds_count", algorithm="even") == 1
    assert metrics.value("storm_planner_plan_solve_seconds_bucket", algorithm="even", le="+Inf") == 1
    assert 0 <= metrics.value("storm_planner_plan_solve_seconds_sum", algorithm="even") <= good.solve_ms / 1000
    assert metrics.value("storm_planner_calls_total", call="plan", outcome="ok") == 1
    assert metrics.value("storm_planner_call_round_trip_seconds_count", call="plan") == 1
    assert metrics.value("storm_planner_call_round_trip_seconds_sum", call="plan") > 0


def test_a_timeout_is_a_plan_outcome_and_a_fallback_but_not_for_a_running_topology(service):
    placed = {f"[{i}-{i}]": T.WorkerSlot(node_id="a", port=6700) for i in range(1, 7)}
    _REGISTRY[_SleepyPlanner.name] = _SleepyPlanner
    try:
        with connect(service.host, service.port) as client:
            client.plan(request(topology("new", algorithm="test-sleepy"), deadline_ms=300))
            client.plan(request(topology("running", algorithm="test-sleepy", current=placed), deadline_ms=300))
    finally:
        del _REGISTRY[_SleepyPlanner.name]
    metrics = scrape(service)
    assert metrics.value("storm_planner_plans_total", algorithm="test-sleepy", outcome="timeout") == 2
    # The plugin keeps a re-plan offer that fails where it runs: only the new topology falls back.
    assert metrics.value("storm_planner_fallbacks_total", cause="timeout") == 1


def test_an_infeasible_topology_falls_back_only_when_it_asks_to():
    handler = PlannerHandler(isolate=False)
    with BackgroundServer(handler, metrics_port=0) as server, connect(server.host, server.port) as client:
        for fallback in ("false", "true"):
            spec = topology(f"t-{fallback}", algorithm="topdown")
            spec.options = {"planner.infeasible.fallback": fallback}
            spec.executors[0].cpu = 10_000.0   # more than any node has
            (plan,) = client.plan(request(spec)).plans
            assert plan.error.kind == T.ErrorKind.INFEASIBLE
        metrics = scrape(server)
    assert metrics.value("storm_planner_plans_total", algorithm="topdown", outcome="infeasible") == 2
    assert metrics.value("storm_planner_fallbacks_total", cause="infeasible") == 1


def test_a_bad_request_counts_as_a_call_outcome_and_its_topologies_fall_back():
    with BackgroundServer(limits=ServiceLimits(token="s3cret"), metrics_port=0) as server, \
            connect(server.host, server.port) as client:
        call = request(topology("t1"), topology("t2"))
        call.token = "guess"
        with pytest.raises(T.PlannerError):
            client.plan(call)
        metrics = _until_scraped(server, "storm_planner_calls_total", call="plan", outcome="bad_request")
    assert metrics.value("storm_planner_limit_hits_total", limit="token") == 1
    assert metrics.value("storm_planner_fallbacks_total", cause="bad_request") == 2
    assert metrics.value("storm_planner_plans_total", algorithm="even", outcome="ok") == 0


def test_a_request_over_the_executor_limit_is_a_limit_hit():
    with BackgroundServer(limits=ServiceLimits(max_executors=5), metrics_port=0) as server, \
            connect(server.host, server.port) as client:
        with pytest.raises(T.PlannerError):
            client.plan(request(topology("t1")))              # 6 executors
        metrics = _until_scraped(server, "storm_planner_calls_total", call="plan", outcome="bad_request")
    assert metrics.value("storm_planner_limit_hits_total", limit="executors") == 1


def test_an_over_size_frame_is_a_limit_hit():
    with BackgroundServer(limits=ServiceLimits(max_frame_mb=1), metrics_port=0) as server, \
            socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", 1 << 30))             # claims 1 GB
        assert closed_by_peer(sock)
        metrics = _until_scraped(server, "storm_planner_limit_hits_total", limit="frame_size")
    assert metrics.value("storm_planner_frames_refused_total", reason="frame_size") == 1
    assert metrics.value("storm_planner_frames_refused_total", reason="malformed") == 0
    with BackgroundServer(metrics_port=0) as server, \
            socket.create_connection((server.host, server.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", -5))                    # a length that is no length
        assert closed_by_peer(sock)
        metrics = _until_scraped(server, "storm_planner_frames_refused_total", reason="malformed")
    assert metrics.value("storm_planner_limit_hits_total", limit="frame_size") == 0


def test_a_refused_connection_and_a_stalled_one_are_counted():
    with BackgroundServer(limits=ServiceLimits(max_connections=1, read_timeout_s=1.0), metrics_port=0) as server:
        stalled = socket.create_connection((server.host, server.port), timeout=10)
        time.sleep(0.2)                                        # taken by the one worker
        extra = socket.create_connection((server.host, server.port), timeout=10)
        assert closed_by_peer(extra)
        assert closed_by_peer(stalled)                         # after the read timeout
        extra.close()
        stalled.close()
        metrics = _until_scraped(server, "storm_planner_limit_hits_total", limit="read_timeout")
    assert metrics.value("storm_planner_connections_refused_total") == 1
    assert metrics.value("storm_planner_limit_hits_total", limit="connections") == 1


def _until_scraped(server: BackgroundServer | str, sample: str, expected: float = 1, **labels: str) -> Scrape:
    """A scrape (of ``server`` or a URL) once ``sample`` is ``expected``: the service counts a call once its
    reply is sent, and a closed connection as it closes it, so a client may see either a moment before."""
    deadline = time.monotonic() + 10
    while True:
        metrics = Scrape(server) if isinstance(server, str) else scrape(server)
        if metrics.value(sample, **labels) == expected or time.monotonic() > deadline:
            assert metrics.value(sample, **labels) == expected, (sample, labels)
            return metrics
        time.sleep(0.02)


# -- the re-planner, the rebalancer and the metrics store -----------------------------------------------

def running(loads: dict[str, float]) -> Problem:
    """A spout on sup-a:6701, bolts b1 and b2 in sup-a:6700; sup-a (100) is short of CPU, sup-b (100) idle."""
    return Problem.from_dict({
        "nodes": [{"id": "sup-a", "capacity": 100, "slots": [6700, 6701]},
                  {"id": "sup-b", "capacity": 100, "slots": [6700, 6701]}],
        "topology": {"id": "t-1", "components": [{"id": "s", "type": "spout", "executors": 1},
                                                 {"id": "b", "executors": 2}],
                     "streams": [{"from": "s", "to": "b"}]},
        "executors": [{"id": e, "component": e[0], "load": load} for e, load in loads.items()],
        "current": {"s1": "sup-a:6701", "b1": "sup-a:6700", "b2": "sup-a:6700"},
    }).replace(measured=True)


def test_replans_and_migrations_are_counted_as_the_replanner_decides():
    pressed = running({"s1": 1.0, "b1": 60.0, "b2": 60.0})
    moved = {**pressed.current, "b2": Slot("sup-b", 6700)}
    handler = PlannerHandler(isolate=False, replanner=Replanner(runner=lambda p, a: Plan(a, moved)))
    with BackgroundServer(handler, metrics_port=0) as server:
        assert handler.replanner.plan(pressed, "even").assignments == moved
        metrics = scrape(server)
        assert metrics.value("storm_planner_replans_total", outcome="moved") == 1
        assert metrics.value("storm_planner_migrations_total") == 1
        handler.replanner = Replanner(runner=lambda p, a: Plan(a, dict(p.current)))
        assert handler.replanner.plan(pressed, "even").assignments == pressed.current
        metrics = scrape(server)
    assert metrics.value("storm_planner_replans_total", outcome="kept") == 1
    assert metrics.value("storm_planner_replans_total", outcome="moved") == 0   # a new re-planner


def test_rebalances_are_counted_by_outcome():
    advice = ParallelismAdvice(parallelism={"count": 4}, current={"count": 1}, tasks={"count": 4},
                               max_input_rate=200.0, current_max_input_rate=100.0)
    handler = PlannerHandler(isolate=False)
    answers = iter(["applied", RuntimeError("Nimbus is away")])

    def nimbus(*_):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    handler.rebalancer = AutoRebalancer("nimbus:6627", request=nimbus)
    with BackgroundServer(handler, metrics_port=0) as server:
        for topology_id in ("t-1", "t-2"):
            assert handler.rebalancer.consider(topology_id, topology_id, {"planner.rebalance": "true"}, advice)
            handler.rebalancer.after_answer()
            assert handler.rebalancer.wait_idle()
        metrics = scrape(server)
    assert metrics.value("storm_planner_rebalances_total", outcome="applied") == 1
    assert metrics.value("storm_planner_rebalances_total", outcome="failed") == 1


def test_corrupt_metrics_windows_are_counted(zookeeper, request):
    from kazoo.client import KazooClient

    root = f"/{request.node.name}/metrics"
    with MetricsStore(zookeeper.hosts, root, storm_root=None, resync_s=1.0, timeout_s=5.0) as store, \
            BackgroundServer(PlannerHandler(metrics=StoreMetricsSource(store), isolate=False),
                             metrics_port=0) as server:
        assert scrape(server).value("storm_planner_metrics_corrupt_windows_total") == 0
        writer = KazooClient(hosts=zookeeper.hosts, timeout=5)
        writer.start(timeout=15)
        try:
            writer.create(f"{root}/words-1-1/1", b"\x00garbage{", makepath=True)
            metrics = _until_scraped(server, "storm_planner_metrics_corrupt_windows_total")
        finally:
            writer.stop()
            writer.close()
    assert metrics.value("storm_planner_metrics_store_connected") == 1


# -- one registry per service; the command line ---------------------------------------------------------

def test_each_service_has_a_registry_of_its_own():
    with BackgroundServer(metrics_port=0) as first, BackgroundServer(metrics_port=0) as second:
        health(first.host, first.port)
        _until_scraped(first, "storm_planner_calls_total", call="health", outcome="ok")
        assert scrape(second).value("storm_planner_calls_total", call="health", outcome="ok") == 0
    assert not any(name.startswith("storm_planner") for name in prometheus_client.REGISTRY._names_to_collectors)


def test_serve_metrics_port_serves_metrics_on_loopback(tmp_path):
    port, metrics_port = free_port(), free_port()
    with open(tmp_path / "serve.log", "w") as log:
        service = subprocess.Popen([sys.executable, "-m", "storm_planner", "serve", "--port", str(port),
                                    "--metrics-port", str(metrics_port)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        deadline = time.monotonic() + 30
        while True:
            try:
                health(port=port)
                break
            except Exception:
                assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
        metrics = _until_scraped(url, "storm_planner_calls_total", call="health", outcome="ok")
        assert {name for name in SERVICE_METRICS} <= set(metrics.families)
        assert f"metrics for Prometheus at {url}" in (tmp_path / "serve.log").read_text()
    finally:
        service.terminate()
        service.wait(timeout=20)


def test_serve_refuses_a_metrics_port_that_is_no_port(capsys):
    assert main(["serve", "--metrics-port", "70000"]) != 0
    assert "--metrics-port must be a port number" in capsys.readouterr().err
