"""The planner service over real Thrift on loopback: plans, typed errors, deadlines."""
from __future__ import annotations

import time

import pytest

from storm_planner.core.plan import Plan
from storm_planner.planners.base import _REGISTRY, Planner
from storm_planner.service.planning.convert import RequestState
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect, health
from storm_planner.service.transport.contract import planner_thrift as T


def node(node_id: str, free=(6700, 6701), used=(), capacity=400.0, meta=None):
    return T.Node(id=node_id, host=f"host-{node_id}", cpu_capacity=capacity, memory_mb=4096.0,
                  meta=meta or {"machine.type": "i5", "speed": "1.0"},
                  free_ports=list(free), used_ports=list(used))


def topology(topology_id: str, algorithm: str = "even", current=None, workers=2):
    components = [T.Component(id="words", type="spout", parallelism=2),
                  T.Component(id="count", type="bolt", parallelism=3),
                  T.Component(id="__acker", type="bolt", parallelism=1, system=True)]
    executors = [T.Executor(id=f"[{i}-{i}]", component=c)
                 for i, c in enumerate(["words", "words", "count", "count", "count", "__acker"], start=1)]
    streams = [T.Stream(from_component="words", to_component="count", grouping="fields")]
    return T.TopologySpec(id=topology_id, name=topology_id, components=components, streams=streams,
                          executors=executors, current=current or {}, algorithm=algorithm,
                          num_workers=workers, options={})


def request(*topologies, nodes=None, deadline_ms=5000):
    return T.PlanRequest(request_id="r1", nodes=nodes or [node("a"), node("b")],
                         topologies=list(topologies), deadline_ms=deadline_ms)


@pytest.fixture
def service():
    with BackgroundServer() as server:
        yield server


def test_health_lists_registered_algorithms(service):
    status = health(service.host, service.port)
    assert status.status == "ok"
    assert "even" in status.algorithms


def test_plan_places_every_executor_in_offered_slots(service):
    with connect(service.host, service.port) as client:
        response = client.plan(request(topology("t1")))
    (plan,) = response.plans
    assert plan.error is None
    assert set(plan.assignments) == {f"[{i}-{i}]" for i in range(1, 7)}
    slots = {(s.node_id, s.port) for s in plan.assignments.values()}
    assert slots == {("a", 6700), ("b", 6700)}  # two workers, spread over both nodes
    assert plan.figures["imc_total"] > 0
    assert any("estimates" in note for note in plan.notes)


def test_two_topologies_never_share_a_slot(service):
    nodes = [node("a", free=(6700,)), node("b", free=(6700,))]
    with connect(service.host, service.port) as client:
        response = client.plan(request(topology("t1", workers=1), topology("t2", workers=1), nodes=nodes))
    first, second = (set((s.node_id, s.port) for s in p.assignments.values()) for p in response.plans)
    assert first and second and not first & second


def test_unknown_algorithm_is_a_typed_error_for_that_topology_only(service):
    with connect(service.host, service.port) as client:
        response = client.plan(request(topology("bad", algorithm="no-such"), topology("good")))
    bad, good = response.plans
    assert bad.error.kind == T.ErrorKind.UNKNOWN_ALGORITHM
    assert "no-such" in bad.error.message and not bad.assignments
    assert good.error is None and len(good.assignments) == 6


def test_no_free_slot_is_a_bad_request(service):
    nodes = [node("a", free=(), used=(6700,))]
    with connect(service.host, service.port) as client:
        (plan,) = client.plan(request(topology("t1"), nodes=nodes)).plans
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert "no free slot" in plan.error.message


def test_a_spouts_bound_that_is_no_count_is_refused_for_that_topology_only(service):
    bad, good = topology("bad"), topology("good")
    bad.max_spout_pending, good.max_spout_pending = -5, 2000
    with connect(service.host, service.port) as client:
        refused, planned = client.plan(request(bad, good)).plans
    assert refused.error.kind == T.ErrorKind.BAD_REQUEST
    assert "max_spout_pending=-5" in refused.error.message
    assert planned.error is None and len(planned.assignments) == 6


def test_current_assignment_is_kept_by_even(service):
    current = {f"[{i}-{i}]": T.WorkerSlot(node_id="b", port=6701) for i in range(1, 7)}
    nodes = [node("a"), node("b", free=(6700,), used=(6701,))]
    with connect(service.host, service.port) as client:
        (plan,) = client.plan(request(topology("t1", current=current), nodes=nodes)).plans
    assert {(s.node_id, s.port) for s in plan.assignments.values()} == {("b", 6701)}
    assert plan.figures["migrations"] == 0


class _SleepyPlanner(Planner):
    """Test stand-in for a planner that overruns: sleeps, then answers like `even`."""

    name = "test-sleepy"

    def plan(self, problem):
        time.sleep(float(self.params.get("seconds", 1.0)))
        from storm_planner.planners.baselines.even import EvenPlanner
        return Plan(algorithm=self.name, assignments=EvenPlanner().plan(problem).assignments)


def test_a_planner_over_the_deadline_gives_timeout_and_the_service_answers_in_time():
    _REGISTRY[_SleepyPlanner.name] = _SleepyPlanner
    try:
        with BackgroundServer(PlannerHandler()) as server, connect(server.host, server.port) as client:
            started = time.monotonic()
            (plan,) = client.plan(request(topology("t1", algorithm="test-sleepy"), deadline_ms=300)).plans
            elapsed = time.monotonic() - started
        assert plan.error.kind == T.ErrorKind.TIMEOUT
        assert elapsed < 0.5  # answered within the plugin's deadline, not after the planner
    finally:
        del _REGISTRY[_SleepyPlanner.name]



def test_a_slow_planner_uses_only_its_share_of_the_deadline():
    _REGISTRY[_SleepyPlanner.name] = _SleepyPlanner
    try:
        with BackgroundServer(PlannerHandler()) as server, connect(server.host, server.port) as client:
            slow, fast = client.plan(request(topology("t1", algorithm="test-sleepy"), topology("t2"),
                                             deadline_ms=1000)).plans
        assert slow.error.kind == T.ErrorKind.TIMEOUT
        assert "ms share of the deadline (1000 ms for 2 topologies, shared by size" in slow.error.message
        assert fast.error is None and len(fast.assignments) == 6  # not starved by the slow one
    finally:
        del _REGISTRY[_SleepyPlanner.name]


def test_a_topology_left_without_time_gets_a_timeout_that_says_why():
    handler = PlannerHandler()
    spec = topology("t2")
    result = handler._plan_topology(request(spec, deadline_ms=300), spec, "even", RequestState([]), remaining=-0.01)
    assert result.error.kind == T.ErrorKind.TIMEOUT
    assert result.error.message == ("not planned: the topologies before it in this request used up the "
                                    "deadline (300 ms)")


def test_shares_follow_size_and_keep_a_floor():
    from storm_planner.service.planning.admission import MIN_TOPOLOGY_S, topology_share

    assert topology_share(4.0, 100, 400) == pytest.approx(1.0)
    assert topology_share(4.0, 1, 10_000) == MIN_TOPOLOGY_S
    assert topology_share(0.1, 1, 10_000) == pytest.approx(0.1)  # never more than is left
    assert topology_share(-0.5, 10, 10) == -0.5


def test_metrics_source_replaces_estimates():
    from storm_planner.core.problem import Executor, Traffic
    from storm_planner.metrics.measured import MeasuredTopology

    measured = MeasuredTopology(
        executors=tuple(Executor(id=f"[{i}-{i}]", component=c, load=load) for i, (c, load) in
                        enumerate([("words", 5.0), ("words", 5.0), ("count", 30.0), ("count", 30.0),
                                   ("count", 30.0), ("__acker", 1.0)], start=1)),
        traffic=(Traffic("[1-1]", "[3-3]", 7.0),))
    with BackgroundServer(PlannerHandler(metrics=lambda topology_id: measured)) as server, \
            connect(server.host, server.port) as client:
        (plan,) = client.plan(request(topology("t1"))).plans
    assert plan.figures["imc_total"] == pytest.approx(7.0)
    assert not any("estimates" in note for note in plan.notes)


def test_a_planners_own_time_limit_stays_within_the_topologys_share():
    from storm_planner.planners.base import planner_for
    from storm_planner.service.planning.admission import within_share
    from storm_planner.service.planning.convert import problem_from_thrift

    spec = topology("t1", algorithm="milp")
    spec.options = {"planner.milp.time_limit_s": "60", "planner.time.limit.secs": "60"}
    problem = within_share(problem_from_thrift(spec, request(spec).nodes), remaining_s=2.0)
    assert problem.options.time_limit_s == pytest.approx(1.8)
    assert float(problem.options.extra["planner.milp.time_limit_s"]) == pytest.approx(1.8)
    assert planner_for(problem, "milp").get_params()["time_limit_s"] == pytest.approx(1.8)


class _CollectorSpy(PlannerHandler):
    """Records whether Python's cyclic collector was on while the service planned."""

    def __init__(self):
        super().__init__()
        self.collector_on_while_planning = []

    def plan(self, request):
        import gc
        self.collector_on_while_planning.append(gc.isenabled())
        return super().plan(request)


def test_the_collector_is_paused_while_a_call_is_served_and_resumes_after():
    import gc
    # An earlier test's server thread may still be leaving its call (the client has its answer first).
    deadline = time.monotonic() + 10
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not gc.isenabled():
        pytest.skip("the collector is off in this test run")
    with BackgroundServer(_CollectorSpy()) as server, connect(server.host, server.port) as client:
        for _ in range(2):
            assert client.plan(request(topology("t1"))).plans[0].error is None
            # Answered, the connection open and waiting for its next call: the collector is back on.
            # (The reply reaches the client just before the server's thread leaves the call.)
            deadline = time.monotonic() + 5
            while not gc.isenabled() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert gc.isenabled()
        assert server.handler.collector_on_while_planning == [False, False]


def test_the_collector_stays_paused_until_the_last_of_overlapping_calls_ends():
    import gc

    from storm_planner.service.transport.server import collector_paused
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer call is still inside
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed call")
    assert gc.isenabled()
    gc.disable()  # whoever turned it off before the calls keeps it off
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
