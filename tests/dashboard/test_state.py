"""The dashboard's data: what it reads from a plan log, and what it does with a bad line."""
from __future__ import annotations

import json
import logging
from pathlib import Path

from storm_planner.dashboard.state import Supervisor, dashboard_state, read_records

PLAN_LOG = Path(__file__).parent / "data" / "plan-log.jsonl"


def test_the_latest_usable_plan_of_every_topology_with_its_slots():
    state = dashboard_state(PLAN_LOG)
    topologies = {t["topology"]: t for t in state["topologies"]}
    assert sorted(topologies) == ["airline-1-1795299999", "trends-1-1795299990"]  # bargains fell back
    trends = topologies["trends-1-1795299990"]
    assert trends["algorithm"] == "topdown" and trends["executors"] == 3
    assert [(s["slot"], s["executors"]) for s in trends["slots"]] == [("sup-a:6700", ["[1-1]", "[2-2]"]),
                                                                      ("sup-b:6701", ["[3-3]"])]
    assert trends["figures"]["imc"] == 1200.5 and trends["notes"] == ["collocated the heaviest stream"]


def test_a_fallback_keeps_its_cause_and_history_is_newest_first():
    state = dashboard_state(PLAN_LOG)
    assert [f["fallback"] for f in state["fallbacks"]] == [
        "INFEASIBLE: no placement fits: sup-b has 1 free slot, 3 needed"]
    assert [h["algorithm"] for h in state["history"]] == ["hetero", "milp", "topdown"]
    assert state["rebalances"][0]["outcome"] == "applied"


def test_a_torn_line_is_skipped_with_a_warning_that_names_it(caplog):
    with caplog.at_level(logging.WARNING):
        reading = read_records(PLAN_LOG)
    assert len(reading.records) == 4
    assert reading.skipped == [f"{PLAN_LOG}:3: skipped, not JSON (Expecting value)"]
    assert "plan-log.jsonl:3" in caplog.text


def test_supervisors_come_from_the_plans_and_the_cluster_adds_what_it_knows():
    seen = {s["id"]: s for s in dashboard_state(PLAN_LOG)["supervisors"]}
    assert seen["sup-a"]["slots"] == [6700] and seen["sup-a"]["executors"] == 2
    cluster = {"sup-a": Supervisor("sup-a", "host-a", "i5", 400.0, 8192.0, (6700, 6701))}
    known = {s["id"]: s for s in dashboard_state(PLAN_LOG, lambda: cluster)["supervisors"]}
    assert known["sup-a"]["machine_type"] == "i5" and known["sup-a"]["cpu"] == 400.0


def test_a_cluster_that_cannot_be_read_is_reported_not_fatal():
    def broken():
        raise ConnectionRefusedError("zookeeper 127.0.0.1:2181")
    state = dashboard_state(PLAN_LOG, broken)
    assert "ConnectionRefusedError" in state["cluster_error"] and state["topologies"]


def test_a_missing_plan_log_is_an_empty_dashboard(tmp_path):
    state = dashboard_state(tmp_path / "not-yet.jsonl")
    assert state["topologies"] == [] and state["history"] == []
    json.dumps(state)   # the API's answer is JSON
