"""The plan-log reader within bounds: a bad line (wrong-typed field, too deep, too long, out-of-range
number) is skipped, warned with its line number and counted, and costs no good line after it; the
history kept is bounded; supervisors count only what runs now."""
from __future__ import annotations

import json
import logging

from storm_planner.dashboard.model import snapshot
from storm_planner.dashboard.planlog_reader import PlanHistory, PlanLogReader, line_limits


def plan(topology: str = "t", request: str = "r", **fields) -> str:
    record = {"time": 1.0, "event": "plan", "request_id": request, "topology": topology, "algorithm": "even",
              "assignments": {"[1-1]": "a:1"}, "figures": {"migrations": 0}, "solve_ms": 1.0, "notes": [],
              "error": None, **fields}
    return json.dumps(record)


def test_a_wrong_typed_field_skips_its_line_only_and_names_it(tmp_path, caplog):
    log = tmp_path / "plans.jsonl"
    log.write_text("\n".join([
        plan(request="good-1"),
        plan(request="bad-assignments", assignments=["a:1"]),
        plan(request="bad-figure", figures={"migrations": "many"}),
        plan(request="bad-note", notes=[{"x": 1}]),
        plan(request="bad-error", error={"kind": 3, "message": "m"}),
        plan(request="bad-time", time="noon"),
        plan(request="good-2"),
    ]) + "\n")
    reader = PlanLogReader(log)
    with caplog.at_level(logging.WARNING):
        records = reader.records()
    assert [r["request_id"] for r in records] == ["good-1", "good-2"]
    assert reader.bad_lines == 5
    assert "plans.jsonl line 2 skipped: field assignments: a list where an object or null belongs" in caplog.text
    assert "line 3 skipped: field figures.migrations: text where a number or null belongs" in caplog.text
    assert reader.last_bad == "line 6: field time: text where a number or null belongs"
    snap = snapshot(reader.read())   # no exception: the page is served
    assert [p["request_id"] for p in snap["plans"]] == ["good-1", "good-2"]


def test_a_deeply_nested_line_costs_no_good_line_after_it(tmp_path):
    log = tmp_path / "plans.jsonl"
    deep = '{"event": "plan", "advice": ' + "[" * 100_000 + "]" * 100_000 + "}"
    log.write_text("\n".join([plan(request="before"), deep, plan(request="after"),
                              plan(request="big", solve_ms=int("9" * 30)), plan(request="nan").replace("1.0", "NaN", 1)]) + "\n")
    reader = PlanLogReader(log)
    records = reader.records()
    assert [r["request_id"] for r in records] == ["before", "after", "nan"]
    assert records[-1]["time"] is None, "a NaN reads as null; the plan stays"
    assert reader.bad_lines == 2
    progress = reader.progress()
    assert progress["bytes_read"] == log.stat().st_size and progress["lines"] == 5 and not progress["loading"]


def test_an_over_long_line_is_skipped_as_it_comes_and_counted_once(tmp_path):
    log = tmp_path / "plans.jsonl"
    reader = PlanLogReader(log, limits=line_limits(max_line_bytes=1000))
    log.write_text(plan(request="first") + "\n" + '{"notes": ["' + "x" * 5000)   # still being written
    assert [r["request_id"] for r in reader.records()] == ["first"]
    assert reader.bad_lines == 1 and reader.last_bad.startswith("line 2: more than 1,000 bytes")
    with log.open("a") as out:
        out.write("y" * 3000 + '"]}\n' + plan(request="next") + "\n")
    assert [r["request_id"] for r in reader.records()] == ["first", "next"]
    assert reader.bad_lines == 1 and reader.progress()["lines"] == 3


def test_an_unfinished_last_line_is_read_whole_once_finished(tmp_path):
    log = tmp_path / "plans.jsonl"
    reader = PlanLogReader(log)
    whole = plan(request="split")
    log.write_text(whole[:20])
    assert reader.records() == [] and reader.bad_lines == 0
    with log.open("a") as out:
        out.write(whole[20:] + "\n")
    assert [r["request_id"] for r in reader.records()] == ["split"] and reader.bad_lines == 0


def test_the_history_kept_is_bounded_but_every_topology_keeps_its_latest_plan_and_rounds(tmp_path):
    log = tmp_path / "plans.jsonl"
    lines = [plan(topology=f"t{i % 3}", request=f"r{i}") for i in range(20)]
    lines.append(json.dumps({"event": "rebalance", "topology": "t0", "outcome": "applied"}))
    log.write_text("\n".join(lines) + "\n")
    history = PlanLogReader(log, history=5).read()
    assert len(history.entries) == 5 and history.plans == 20
    assert history.rounds == {"t0": 7, "t1": 7, "t2": 6}
    snap = snapshot(history, page_size=3)
    assert [p["index"] for p in snap["plans"]] == [17, 18, 19] and snap["plans_total"] == 20
    assert {t["id"]: t["rounds"] for t in snap["topologies"]} == {"t0": 7, "t1": 7, "t2": 6}
    assert len(snap["rebalances"]) == 1


def test_supervisors_count_the_executors_that_run_now_not_those_of_killed_topologies():
    history = PlanHistory.of([
        json.loads(plan(topology="killed-1", assignments={"[1-1]": "sup-a:6700", "[2-2]": "sup-a:6700"})),
        json.loads(plan(topology="live-2", assignments={"[1-1]": "sup-a:6700", "[2-2]": "sup-b:6701"})),
        json.loads(plan(topology="nohost-3", assignments={"[1-1]": "sup-b:6701"})),
    ])
    supervisors = [{"id": "sup-a", "host": "10.0.0.1", "slots": ["sup-a:6700"]},
                   {"id": "sup-b", "host": "10.0.0.2", "slots": ["sup-b:6701"]}]
    cluster = {"connected": True, "supervisors": supervisors, "topologies": {
        # Nimbus moved live-2's executors since its plan: both run on sup-b now.
        "live-2": {"placement": {"[1-1]": "10.0.0.2:6701", "[2-2]": "10.0.0.2:6701"}},
        # A placement on a host no supervisor is known by: the topology's latest plan stands in.
        "nohost-3": {"placement": {"[1-1]": "elsewhere:6701"}},
    }}
    sups = {s["id"]: s for s in snapshot(history, cluster)["supervisors"]}
    assert sups["sup-a"]["planned_executors"] == 0 and sups["sup-a"]["used_slots"] == []
    assert sups["sup-b"]["planned_executors"] == 3
    # Without Nimbus nothing is known to have stopped: every topology's latest plan counts.
    offline = {s["id"]: s for s in snapshot(history)["supervisors"]}
    assert offline["sup-a"]["planned_executors"] == 3 and offline["sup-b"]["planned_executors"] == 2
