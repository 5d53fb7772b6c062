"""Numbers a request carries: NaN, Infinity and out-of-range values get BAD_REQUEST naming the field, over
real Thrift; the plan log stays strict JSON. A topology's options are checked once, before its metrics."""
from __future__ import annotations

import json

import pytest
from test_service import node, request, topology

from storm_planner.core import settings
from storm_planner.core.settings import SettingError
from storm_planner.service.planning.convert import RequestState, problem_from_thrift, problem_of
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.planlog import read_plan_log
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect
from storm_planner.service.transport.contract import planner_thrift as T

NAN, INF = float("nan"), float("inf")


@pytest.fixture
def served(tmp_path):
    log = tmp_path / "plans.jsonl"
    with BackgroundServer(PlannerHandler(plan_log=log)) as server, connect(server.host, server.port) as client:
        yield client, log


def only_plan(client, call):
    (plan,) = client.plan(call).plans
    return plan


def with_node_field(field: str, value: float):
    bad = node("b")
    setattr(bad, field, value)
    return request(topology("t1"), nodes=[node("a"), bad])


@pytest.mark.parametrize("field", ["cpu_capacity", "memory_mb", "used_cpu", "used_memory_mb", "bandwidth_mbit",
                                   "used_bandwidth_mbit"])
@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_a_node_number_that_is_not_finite_is_refused_naming_node_and_field(served, field, value):
    client, _ = served
    plan = only_plan(client, with_node_field(field, value))
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert f"node b: {field}=" in plan.error.message and "not a finite number" in plan.error.message


@pytest.mark.parametrize("field", ["used_cpu", "used_memory_mb", "used_bandwidth_mbit"])
def test_negative_use_on_a_node_is_refused(served, field):
    client, _ = served
    plan = only_plan(client, with_node_field(field, -5.0))
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert f"node b: {field}=-5.0 must not be below 0" in plan.error.message


@pytest.mark.parametrize("meta", [{"speed": "nan"}, {"speed": "inf"}, {"network.bandwidth.mbit": "NaN"}])
def test_scheduler_meta_numbers_must_be_finite(served, meta):
    client, _ = served
    (key, value), = meta.items()
    plan = only_plan(client, request(topology("t1"), nodes=[node("a"), node("b", meta=meta)]))
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert f"node b: scheduler meta {key}={value!r} is not a finite number" in plan.error.message


@pytest.mark.parametrize("field,value", [("cpu", NAN), ("cpu", -1.0), ("memory_mb", INF)])
def test_an_executor_number_is_refused_naming_the_executor(served, field, value):
    client, _ = served
    spec = topology("t1")
    setattr(spec.executors[3], field, value)
    plan = only_plan(client, request(spec))
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert f"executor {spec.executors[3].id}: {field}=" in plan.error.message


@pytest.mark.parametrize("key,value,says", [
    ("planner.time.limit.secs", "nan", "is not a finite number"),
    ("planner.time.limit.secs", "-1", "must be positive"),
    ("planner.time.limit.secs", "0", "must be positive"),
    ("planner.executor.cost", "abc", "is not a number"),
    ("planner.executor.cost", "inf", "is not a finite number"),
    ("planner.tuple.bytes", "nan", "is not a finite number"),
    ("planner.max.migrations", "-3", "must not be below 0"),
    ("planner.max.cpu.utilisation", "nan", "is not a finite number"),
    ("planner.topdown.time_limit_s", "nan", "is not a finite number"),
    # read by the metrics source, the re-planner and the rebalancer: the same policy (core.settings)
    ("planner.metrics.windows", "0", "must be positive"),
    ("planner.metrics.traffic.unit", "bits", "is not one of tuples, bytes"),
    ("planner.replan.threshold", "-0.5", "must not be below 0"),
    ("planner.replan", "maybe", "is not true or false"),
    ("planner.rebalance.cooldown.secs", "soon", "is not a number"),
    ("planner.system.streams", "sometimes", "is not true or false"),
])
def test_a_bad_option_gets_bad_request_not_internal(served, key, value, says):
    client, _ = served
    spec = topology("t1", algorithm="topdown")
    spec.options = {key: value}
    plan = only_plan(client, request(spec))
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST, plan.error.message
    assert f"topology option {key}={value!r} {says}" in plan.error.message


def test_a_misspelt_setting_is_planned_without_and_noted(served):
    client, _ = served
    spec = topology("t1", algorithm="topdown")
    spec.options = {"planner.max.migration": "3", "planner.topdown.imc_unit": "bytes"}
    plan = only_plan(client, request(spec))
    assert plan.error is None and plan.assignments
    assert [note for note in plan.notes if "not a storm-planner setting" in note] == [
        "topology option planner.max.migration is not a storm-planner setting: ignored (did you mean "
        "planner.max.migrations?)"], "a planner's own parameters are its to check"


@pytest.mark.parametrize("deadline", [-1, 3_600_001])
def test_a_deadline_out_of_range_refuses_the_request(served, deadline):
    client, _ = served
    with pytest.raises(T.PlannerError) as refused:
        client.plan(request(topology("t1"), deadline_ms=deadline))
    assert refused.value.kind == T.ErrorKind.BAD_REQUEST
    assert f"deadline_ms={deadline} must be between 1 and 3600000" in refused.value.message


def test_other_topologies_of_the_request_are_planned_and_the_log_is_strict_json(served):
    client, log = served
    bad = topology("bad")
    bad.executors[0].cpu = NAN
    plans = {p.topology_id: p for p in client.plan(request(bad, topology("good"))).plans}
    assert plans["bad"].error.kind == T.ErrorKind.BAD_REQUEST
    assert plans["good"].error is None and plans["good"].assignments

    def refuse(constant):
        raise AssertionError(f"{constant} in the plan log")

    for line in log.read_text().splitlines():
        json.loads(line, parse_constant=refuse)
    assert {r["topology"] for r in read_plan_log(log)} == {"bad", "good"}


def test_each_topology_s_options_are_checked_once_before_its_metrics_are_read(monkeypatch):
    """The service checks every ``planner.*`` key it reads once per topology (admission), and before it asks
    the metrics source about the topology: a bad option never costs a metrics read, a good one is not read
    twice."""
    checked, measured = [], []
    original = settings.check_service_options

    def counted(options):
        checked.append(dict(options))
        original(options)

    monkeypatch.setattr(settings, "check_service_options", counted)
    bad, good = topology("bad"), topology("good")
    bad.options = {"planner.rebalance.min.gain": "lots"}
    good.options = {"planner.rebalance.min.gain": "0.2"}
    handler = PlannerHandler(metrics=lambda topology_id: measured.append(topology_id), isolate=False)
    plans = {p.topology_id: p for p in handler.plan(request(bad, good)).plans}
    assert plans["bad"].error.kind == T.ErrorKind.BAD_REQUEST
    assert plans["bad"].error.message == "topology option planner.rebalance.min.gain='lots' is not a number"
    assert plans["good"].error is None and plans["good"].assignments
    assert checked == [bad.options, good.options], "each topology's options checked once, in request order"
    assert measured == ["good"], "a topology refused for its options is not measured"


def test_the_service_s_conversion_takes_the_topology_as_admitted():
    """``problem_of`` (the conversion the handler uses once admission passed) checks no option again, and
    ``problem_from_thrift`` (for callers that skip admission) checks them all first."""
    spec = topology("t1")
    spec.options = {"planner.rebalance.min.gain": "lots"}   # read by the rebalancer alone, never by conversion
    state = RequestState([node("a"), node("b")], [spec])
    assert problem_of(spec, state).topology_id == "t1"
    with pytest.raises(SettingError, match="planner.rebalance.min.gain='lots' is not a number"):
        problem_from_thrift(spec, [node("a"), node("b")])
