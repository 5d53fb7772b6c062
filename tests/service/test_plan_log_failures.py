"""The plan log never costs a plan: a full disk, an id JSON cannot hold, a NaN figure, an oversized line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_service import request, topology

from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.planlog import PlanLog, read_plan_log
from storm_planner.service.serve import BackgroundServer
from storm_planner.service.transport.client import connect
from storm_planner.service.transport.contract import planner_thrift as T


def plans_of(handler: PlannerHandler, call) -> tuple[dict, dict]:
    """(topology id -> plan, the service's counters afterwards)."""
    with BackgroundServer(handler) as server, connect(server.host, server.port) as client:
        response = client.plan(call)
        counters = client.health().counters
    return {plan.topology_id: plan for plan in response.plans}, counters


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_plans_come_back_when_every_plan_log_write_fails():
    handler = PlannerHandler(plan_log=Path("/dev/full"))    # every write: ENOSPC, as on a full disk
    plans, counters = plans_of(handler, request(topology("t1"), topology("t2")))
    assert len(plans) == 2 and all(plan.error is None and plan.assignments for plan in plans.values())
    assert counters["plan_log_failures"] == 2
    assert counters["plan_log_failures.ENOSPC"] == 2


def test_an_id_that_is_not_text_is_refused_naming_it_and_would_be_logged_as_text(tmp_path):
    spec = topology("t1")
    spec.id = b"t\xff1"                                       # not UTF-8: thriftpy2 hands it over as bytes
    handler = PlannerHandler(plan_log=tmp_path / "plans.jsonl")
    with (BackgroundServer(handler) as server, connect(server.host, server.port) as client,
          pytest.raises(T.PlannerError) as refused):
        client.plan(request(spec))
    assert refused.value.kind == T.ErrorKind.BAD_REQUEST
    assert "topologies[0].id is b't\\xff1', not a name" in refused.value.message

    log = PlanLog(tmp_path / "direct.jsonl")                  # the log itself copes with such an id
    log.write("r1", T.TopologyPlan(topology_id=b"t\xff1", algorithm="even", assignments={}))
    (record,) = read_plan_log(tmp_path / "direct.jsonl")
    assert record["topology"] == "t\\xff1"
    assert record["sanitised"] == [".topology: bytes written as text"]


def test_a_figure_that_is_not_finite_is_written_as_null_with_a_note(tmp_path):
    log = PlanLog(tmp_path / "plans.jsonl")
    plan = T.TopologyPlan(topology_id="t1", algorithm="even", assignments={}, figures={"gain": float("nan"),
                                                                                      "cost": 2.0})
    log.write("r1", plan)
    line = (tmp_path / "plans.jsonl").read_text()
    assert "NaN" not in line
    record = json.loads(line)
    assert record["figures"] == {"gain": None, "cost": 2.0}
    assert record["sanitised"] == [".figures.gain: nan written as null"]


def test_an_oversized_line_becomes_a_summary(tmp_path):
    log = PlanLog(tmp_path / "plans.jsonl", max_line_mb=2000 / 2**20)   # 2,000 bytes
    slots = {f"[{i}-{i}]": T.WorkerSlot(node_id="a", port=6700) for i in range(500)}
    log.write("r1", T.TopologyPlan(topology_id="big", algorithm="even", assignments=slots,
                                   notes=["x" * 5000], figures={}))
    (record,) = read_plan_log(tmp_path / "plans.jsonl")
    assert "assignments" not in record
    assert record["truncated"]["assignments"] == 500 and record["truncated"]["max_line_bytes"] == 2000
    assert record["truncated"]["line_bytes"] > 2000
    assert record["notes"][0].endswith("... (5000 characters)")
    assert log.counters.snapshot()["plan_log_lines_truncated"] == 1


def test_a_full_log_rotates_to_one_older_file_and_keeps_every_new_line(tmp_path):
    """A service that runs for months keeps at most two files' worth of log."""
    log = PlanLog(tmp_path / "plans.jsonl", max_line_mb=0.001, max_file_mb=0.004)   # ~1 KB lines, ~4 KB files
    for i in range(40):
        log.event({"event": "rebalance", "n": i, "pad": "x" * 200})
    current, older = tmp_path / "plans.jsonl", tmp_path / "plans.jsonl.1"
    assert current.stat().st_size <= 0.004 * 1024 * 1024 and older.stat().st_size <= 0.004 * 1024 * 1024
    assert not (tmp_path / "plans.jsonl.2").exists()
    numbers = [json.loads(line)["n"] for path in (older, current) for line in path.read_text().splitlines()]
    assert numbers == list(range(numbers[0], 40))   # the newest lines, in order, none lost since the rotation
