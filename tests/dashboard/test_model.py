"""The dashboard's data model: plan-log records → what the page shows; garbled lines are skipped
with a warning naming the line, never a crash."""
from __future__ import annotations

import logging

from storm_planner.dashboard.model import component_of, snapshot, split_slot
from storm_planner.dashboard.planlog_reader import PlanLogReader

from .conftest import DATA


def test_garbled_line_is_skipped_with_a_warning_naming_it(caplog):
    with caplog.at_level(logging.WARNING):
        records = PlanLogReader(DATA / "plan-log.jsonl").records()
    assert [r["event"] for r in records] == ["plan", "plan", "plan", "rebalance", "plan"]
    assert "plan-log.jsonl line 3 skipped: not JSON" in caplog.text


def test_reader_reads_only_complete_appended_lines(tmp_path):
    log = tmp_path / "plans.jsonl"
    reader = PlanLogReader(log)
    assert reader.records() == []  # missing file: nothing yet
    log.write_text('{"event": "plan", "topology": "t"}\n{"event": "pl')
    assert [r["topology"] for r in reader.records()] == ["t"]
    with log.open("a") as out:
        out.write('an", "topology": "u"}\n[1, 2]\n')
    assert [r["topology"] for r in reader.records()] == ["t", "u"]  # a JSON array is no record


def test_snapshot_keeps_last_good_placement_and_lists_fallback_and_rebalance():
    snap = snapshot(PlanLogReader(DATA / "plan-log.jsonl").records())
    topologies = {t["id"]: t for t in snap["topologies"]}
    bargains = topologies["bargains-2-1763949995"]
    assert bargains["last_round_fallback"] and bargains["last_error"]["kind"] == "TIMEOUT"
    assert {s["slot"] for n in bargains["nodes"] for s in n["slots"]} == {"sup-b:6700", "sup-c:6702"}
    assert [c["id"] for c in bargains["components"]] == ["detect", "quotes"]
    assert [f["error"]["message"] for f in snap["fallbacks"]] == ["milp ran past its 5 s time limit"]
    assert snap["rebalances"][0]["outcome"] == "applied"
    assert topologies["trends-1-1763949990"]["rounds"] == 2


def test_live_cluster_names_components_and_traffic_between_nodes():
    records = [{"event": "plan", "topology": "t", "algorithm": "even",
                "assignments": {"[1-1]": "a:1", "[2-2]": "b:2"}}]
    cluster = {"topologies": {"t": {"name": "wc", "executor_components": {"[1-1]": "words", "[2-2]": "count"},
                                    "streams": [{"from": "words", "to": "count", "rate": 2.0}]}},
               "supervisors": [{"id": "a", "machine_type": "i5", "slots": ["a:1", "a:3"]}]}
    snap = snapshot(records, cluster)
    topo = snap["topologies"][0]
    assert topo["name"] == "wc" and [c["id"] for c in topo["components"]] == ["count", "words"]
    assert topo["node_traffic"] == [{"from": "a", "to": "b", "rate": 2.0}]
    sups = {s["id"]: s for s in snap["supervisors"]}
    assert sups["a"]["machine_type"] == "i5" and sups["a"]["slots"] == ["a:1", "a:3"]
    assert sups["b"]["machine_type"] == "unknown"


def test_names():
    assert component_of("count/3") == "count"
    assert component_of("[4-4]") == "[4-4]"
    assert split_slot("sup-a:6700") == ("sup-a", 6700)
    assert split_slot("odd") == ("odd", None)


def test_measured_cpu_and_traffic_add_up_per_supervisor():
    records = [{"event": "plan", "topology": "t", "algorithm": "even",
                "assignments": {"[1-1]": "a:1", "[2-2]": "b:2", "[3-3]": "b:2"}}]
    cluster = {"topologies": {"t": {"executor_components": {"[1-1]": "w", "[2-2]": "c", "[3-3]": "c"},
                                    "streams": [{"from": "w", "to": "c"}],
                                    "executor_cpu": {"[1-1]": 12.5, "[2-2]": 5.0, "[3-3]": 2.5},
                                    "executor_declared_cpu": {"[1-1]": 10.0, "[2-2]": 20.0, "[3-3]": 10.0},
                                    "executor_traffic": [{"from": "[1-1]", "to": "[2-2]", "rate": 30.0},
                                                         {"from": "[2-2]", "to": "[3-3]", "rate": 9.0}]}}}
    snap = snapshot(records, cluster)
    sups = {s["id"]: s for s in snap["supervisors"]}
    assert sups["a"]["measured_cpu"] == 12.5 and sups["b"]["measured_cpu"] == 7.5
    assert sups["a"]["declared_cpu"] == 10.0 and sups["b"]["declared_cpu"] == 30.0
    topo = snap["topologies"][0]
    assert topo["traffic_source"] == "measured"
    assert topo["node_traffic"] == [{"from": "a", "to": "b", "rate": 30.0}]  # same-node pairs stay off


def test_with_nimbus_read_only_the_topologies_it_runs_are_shown():
    records = [{"event": "plan", "topology": old, "algorithm": "even", "assignments": {"[1-1]": "a:1"}}
               for old in ("trends-1-100", "trends-1-200")]
    cluster = {"connected": True, "topologies": {"trends-1-200": {"executor_components": {"[1-1]": "words"}}}}
    snap = snapshot(records, cluster)
    assert [t["id"] for t in snap["topologies"]] == ["trends-1-200"]
    assert snap["finished_topologies"] == ["trends-1-100"] and len(snap["plans"]) == 2
    # Nimbus not reachable: nothing is known to have finished, every topology stays.
    unreachable = snapshot(records, {"connected": False, "error": "Nimbus: refused"})
    assert len(unreachable["topologies"]) == 2 and unreachable["finished_topologies"] == []


def test_with_nimbus_briefly_away_supervisors_count_what_ran_at_its_last_answer():
    records = [{"event": "plan", "topology": topo, "algorithm": "even",
                "assignments": {"[1-1]": "a:6700", "[2-2]": "a:6700"}} for topo in ("killed-1-100", "live-1-200")]
    supervisors = [{"id": "a", "host": "h", "slots": ["a:6700"]}]
    # The cluster source keeps the topologies of Nimbus' last answer when a read fails.
    away = {"connected": False, "error": "Nimbus: refused", "supervisors": supervisors,
            "topologies": {"live-1-200": {"placement": {"[1-1]": "h:6700", "[2-2]": "h:6700"}}}}
    snap = snapshot(records, away)
    assert [s["planned_executors"] for s in snap["supervisors"]] == [2]   # not the killed topology's too
    assert [t["id"] for t in snap["topologies"]] == ["live-1-200"]
    never_read = snapshot(records, {"connected": False, "error": "Nimbus: refused", "supervisors": supervisors})
    assert [s["planned_executors"] for s in never_read["supervisors"]] == [4]   # only the plans are known
