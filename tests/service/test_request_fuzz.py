"""Fuzzing the handler with random PlanRequest structs: every topology gets a plan or a clean error
(BAD_REQUEST, UNKNOWN_ALGORITHM, INFEASIBLE, TIMEOUT), never INTERNAL, and nothing escapes but a
``PlannerError(BAD_REQUEST)`` for the whole request. Bounded: a few seconds in all."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from storm_planner.core.errors import PlanningError
from storm_planner.service.planning.admission import check_request
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.transport.contract import planner_thrift as T

NODE_IDS = ["n1", "n2", "n3"]
COMPONENTS = ["spout", "bolt", "__acker"]
ODD_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
NUMBERS = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -1.0, 1.0, 100.0, 400.0, 4096.0, 1e308, 5e-324]),
)
OPTION_VALUES = st.one_of(st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1", "2.5", "abc", "", "true", "1e999"]),
                          ODD_TEXT)
OPTION_KEYS = st.sampled_from([
    "planner.time.limit.secs", "planner.executor.cost", "planner.tuple.bytes", "planner.max.migrations",
    "planner.max.migration.cost", "planner.seed", "planner.max.cpu.utilisation",
    "planner.max.bandwidth.utilisation", "planner.topdown.time_limit_s", "planner.topdown.priority",
    "planner.rebalance", "planner.even.nothing",
])
PORTS = st.lists(st.integers(min_value=-5, max_value=70_000), max_size=3)


def maybe(strategy):
    """``strategy``, or one time in twenty None (a required field the wire did not carry)."""
    return st.integers(min_value=0, max_value=19).flatmap(lambda k: st.none() if k == 0 else strategy)


nodes = st.builds(
    T.Node,
    id=maybe(st.one_of(st.sampled_from(NODE_IDS), ODD_TEXT)),
    host=maybe(ODD_TEXT),
    cpu_capacity=NUMBERS, memory_mb=NUMBERS,
    meta=maybe(st.dictionaries(st.sampled_from(["speed", "machine.type", "network.bandwidth.mbit"]),
                               OPTION_VALUES, max_size=3)),
    free_ports=maybe(PORTS), used_ports=maybe(PORTS),
    used_cpu=NUMBERS, used_memory_mb=NUMBERS, bandwidth_mbit=NUMBERS, used_bandwidth_mbit=NUMBERS,
)
components = st.builds(T.Component, id=maybe(st.sampled_from(COMPONENTS)),
                       type=maybe(st.sampled_from(["spout", "bolt", "sink", ""])),
                       parallelism=maybe(st.integers(min_value=-2, max_value=4)), system=st.booleans())
executors = st.builds(T.Executor, id=maybe(st.one_of(st.sampled_from([f"[{i}-{i}]" for i in range(1, 7)]),
                                                      ODD_TEXT)),
                      component=maybe(st.one_of(st.sampled_from(COMPONENTS), ODD_TEXT)),
                      cpu=NUMBERS, memory_mb=NUMBERS)
streams = st.builds(T.Stream, from_component=maybe(st.sampled_from(COMPONENTS)),
                    to_component=maybe(st.sampled_from(COMPONENTS)),
                    grouping=st.sampled_from(["shuffle", "fields", "all", "global", "odd"]))
slots = st.builds(T.WorkerSlot, node_id=maybe(st.sampled_from(NODE_IDS)),
                  port=maybe(st.integers(min_value=-1, max_value=6703)))
topologies = st.builds(
    T.TopologySpec,
    id=maybe(st.one_of(st.sampled_from(["t1", "t2"]), ODD_TEXT)), name=maybe(ODD_TEXT),
    components=maybe(st.lists(components, max_size=3)), streams=maybe(st.lists(streams, max_size=3)),
    executors=maybe(st.lists(executors, max_size=6)),
    current=maybe(st.dictionaries(st.sampled_from([f"[{i}-{i}]" for i in range(1, 7)]), slots, max_size=3)),
    algorithm=st.sampled_from([None, "", "even", "topdown", "storm-default", "random", "nope"]),
    num_workers=maybe(st.integers(min_value=-2, max_value=5)),
    options=maybe(st.dictionaries(OPTION_KEYS, OPTION_VALUES, max_size=3)),
    worker_max_heap_mb=NUMBERS,
    message_timeout_secs=maybe(st.integers(min_value=-2, max_value=2**31 - 1)),
    max_spout_pending=maybe(st.integers(min_value=-2, max_value=2**31 - 1)),
)
requests = st.builds(
    T.PlanRequest, request_id=maybe(ODD_TEXT), nodes=maybe(st.lists(nodes, max_size=3)),
    topologies=maybe(st.lists(topologies, max_size=2)),
    deadline_ms=maybe(st.sampled_from([-1, 0, 1, 200, 2000, 10**12])),
    default_algorithm=st.sampled_from([None, "even", "nope"]), token=st.none(),
)

CLEAN = {T.ErrorKind.BAD_REQUEST, T.ErrorKind.UNKNOWN_ALGORITHM, T.ErrorKind.INFEASIBLE, T.ErrorKind.TIMEOUT}
FUZZ = settings(max_examples=50, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def handler(tmp_path_factory):
    log = tmp_path_factory.mktemp("fuzz") / "plans.jsonl"
    planner = PlannerHandler(plan_log=log)
    yield planner
    planner.close()

    def refuse(constant):
        raise AssertionError(f"{constant} in the plan log")

    lines = log.read_text().splitlines() if log.exists() else []
    for line in lines:                      # every record the fuzzing left is strict JSON
        json.loads(line, parse_constant=refuse)


@FUZZ
@given(call=requests)
def test_every_topology_gets_a_plan_or_a_clean_error(handler, call):
    try:
        response = handler.plan(call)
    except T.PlannerError as refused:
        assert refused.kind == T.ErrorKind.BAD_REQUEST, refused.message
        event("request refused")
        return
    assert len(response.plans) == len(call.topologies)
    for plan in response.plans:
        if plan.error is not None:
            assert plan.error.kind in CLEAN, plan.error.message
            assert plan.error.message
        event("topology planned" if plan.error is None else T.ErrorKind._VALUES_TO_NAMES[plan.error.kind])


@FUZZ
@given(spec=topologies, request_nodes=st.lists(nodes, max_size=3))
def test_the_converter_gives_a_problem_or_a_planning_error(spec, request_nodes):
    try:
        check_request(T.PlanRequest(request_id="r", nodes=request_nodes, topologies=[spec], deadline_ms=0))
        problem_from_thrift(spec, request_nodes)
    except PlanningError as error:
        assert error.kind == "BAD_REQUEST", str(error)
