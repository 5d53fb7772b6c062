"""The topology page's figures from metrics windows, without a cluster: rates over steps that windows
straddle, Storm UI's capacity, complete-latency percentiles from the hook's buckets, tuples between
workers and nodes, the before/after of a plan, and the timeline kept as windows arrive (and while
ZooKeeper is away)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from storm_planner.dashboard.aggregate import before_after, percentile, step
from storm_planner.dashboard.timeline import GRACE_STEPS, TopologyTimeline, plan_markers, with_before_after
from storm_planner.metrics.windows import CorruptWindow, parse_window

BOUNDS = [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100]


def window(component: str, task: int, start_ms: int, end_ms: int, *, seq: int = 1, executed: int = 0,
           emitted: int = 0, latency=(0, 0), acked: int = 0, complete=None, sent=(), node: str = "a",
           port: int = 6700, pid: int | None = None, threads=((1, 0.0),), total: int | None = None):
    """A window as the hook writes it, parsed; ``sent`` is ((to_task, tuples), ...); ``complete`` is
    {upper bound ms: count} of the spout's complete latencies (all samples also summed at the bound)."""
    complete = complete or {}
    counts = [complete.get(b, 0) for b in BOUNDS] + [complete.get(None, 0)]
    doc = {
        "version": 1, "topology": "t", "component": component, "task": task,
        "worker": {"host": "127.0.0.1", "port": port, "node": node, "pid": pid or port},
        "window": {"seq": seq, "start_ms": start_ms, "end_ms": end_ms, "period_s": 10},
        "cpu": {"threads": [{"id": i, "name": f"t{i}", "ms": ms} for i, ms in threads],
                "thread_cpu_supported": True, "subprocess_ms": 0, "subprocesses": 0},
        "emitted": {"tuples": emitted, "total": emitted if total is None else total},
        "executed": {"tuples": executed, "total": executed if total is None else total,
                     "latency_ms_sum": latency[0], "latency_samples": latency[1]},
        "acked": {"tuples": acked, "total": acked,
                  "complete_latency_ms_sum": sum((b or 200) * n for b, n in complete.items()),
                  "complete_latency_samples": sum(complete.values()),
                  **({"complete_latency_buckets": {"le_ms": BOUNDS, "counts": counts}} if complete else {})},
        "failed": {"tuples": 0, "total": 0},
        "sent": [{"stream": "default", "to": to, "tuples": n, "bytes": 0, "total": n, "bytes_total": 0}
                 for to, n in sent],
        "received": [],
    }
    return parse_window(json.dumps(doc))


def test_rates_from_windows_that_straddle_the_step():
    # Worker 6700's windows line up with the step, worker 6701's are 5 s off: half of each counts.
    windows = {
        1: [window("words", 1, 10_000, 20_000, emitted=100, acked=100)],
        2: [window("count", 2, 5_000, 15_000, executed=100, port=6701),
            window("count", 2, 15_000, 25_000, executed=300, port=6701, seq=2)],
    }
    s = step(windows, 10_000, 20_000)
    assert s.emitted_per_s == pytest.approx(10.0)
    assert s.executed_per_s == pytest.approx((50 + 150) / 10)
    assert s.acked_per_s == pytest.approx(10.0)   # 'words' never executes: a spout
    assert {c.component: c.spout for c in s.components} == {"count": False, "words": True}
    assert s.tasks == 2



def test_emitted_leaves_out_storms_own_streams_as_storm_ui_does():
    """With acking on, every tuple a bolt acks is an emit on __ack_ack: 100 data tuples, not 200."""
    doc = window("count", 2, 10_000, 20_000, executed=100, emitted=200, sent=((5, 100),))
    with_acks = dataclasses.replace(doc, sent=doc.sent + (dataclasses.replace(doc.sent[0], stream="__ack_ack",
                                                                              task=1),))
    s = step({2: [with_acks]}, 10_000, 20_000)
    assert s.emitted_per_s == pytest.approx(10.0)

def test_capacity_is_storm_uis_busy_fraction_and_the_busiest_leaves_out_storms_own():
    windows = {
        1: [window("count", 1, 0, 10_000, executed=100, latency=(50 * 20, 20))],       # 100 x 50 ms / 10 s
        2: [window("count", 2, 0, 10_000, executed=100, latency=(10 * 5, 5), port=6701)],  # 100 x 10 ms
        3: [window("__acker", 3, 0, 10_000, executed=1000, latency=(95 * 10, 10))],     # 9.5: not a user's
        4: [window("words", 4, 0, 10_000, emitted=200)],
    }
    s = step(windows, 0, 10_000, executor_of={1: "[1-1]", 2: "[2-2]", 3: "[3-3]", 4: "[4-4]"})
    count = next(c for c in s.components if c.component == "count")
    assert count.capacity == pytest.approx(0.5) and count.executors == 2
    assert count.execute_latency_ms == pytest.approx((1000 + 50) / 25)
    assert s.busiest.component == "count"
    assert s.executed_per_s == pytest.approx(20.0)   # the user bolts': __acker's executions left out
    assert s.to_dict()["busiest_capacity"] == pytest.approx(0.5)


def test_tasks_of_one_executor_add_up_to_its_capacity():
    windows = {1: [window("count", 1, 0, 10_000, executed=100, latency=(40 * 10, 10))],
               2: [window("count", 2, 0, 10_000, executed=100, latency=(40 * 10, 10))]}
    shared = step(windows, 0, 10_000, executor_of={1: "[1-2]", 2: "[1-2]"})
    apart = step(windows, 0, 10_000)
    assert shared.components[0].capacity == pytest.approx(0.8) and shared.components[0].executors == 1
    assert apart.components[0].capacity == pytest.approx(0.4) and apart.components[0].executors == 2


def test_complete_latency_percentiles_from_the_hooks_buckets():
    assert percentile({10.0: 0, 15.0: 100, None: 0}, 0.5) == pytest.approx(12.5)
    assert percentile({5.0: 99, 100.0: 1}, 0.99) == pytest.approx(5.0)
    assert percentile({5.0: 98, 100.0: 2}, 0.99) == pytest.approx(52.5)
    assert percentile({100.0: 1, None: 99}, 0.5) == 100.0   # past the last bound: that bound
    assert percentile({}, 0.5) is None
    windows = {1: [window("words", 1, 0, 10_000, emitted=100, acked=100, complete={15: 90, 70: 10})],
               2: [window("words", 2, 0, 10_000, emitted=100, acked=100, complete={15: 90, 70: 10}, port=6701)]}
    s = step(windows, 0, 10_000)
    assert 10 < s.complete_p50_ms <= 15
    assert 50 < s.complete_p99_ms <= 70
    assert s.complete_latency_ms == pytest.approx((15 * 90 + 70 * 10) / 100)


def test_tuples_between_workers_and_between_nodes():
    windows = {
        1: [window("words", 1, 0, 10_000, emitted=30, sent=((1, 5), (2, 10), (3, 20)), node="a", port=6700)],
        2: [window("count", 2, 0, 10_000, node="a", port=6701)],
        3: [window("count", 3, 0, 10_000, node="b", port=6700)],
    }
    s = step(windows, 0, 10_000)
    assert s.transferred_per_s == pytest.approx(3.5)
    assert s.inter_worker_per_s == pytest.approx(3.0)
    assert s.inter_node_per_s == pytest.approx(2.0)


def test_before_after_means_leave_out_the_settling_steps():
    steps = [{"start_ms": t, "end_ms": t + 10_000, "acked_per_s": rate, "executed_per_s": None,
              "complete_p99_ms": 10.0, "inter_node_per_s": 1.0, "busiest_capacity": 0.5}
             for t, rate in [(0, 10), (10_000, 12), (20_000, 0), (30_000, 1), (40_000, 30), (50_000, 32)]]
    result = before_after(steps, 20_000, settle_ms=20_000)
    assert result["before"]["acked_per_s"] == 11 and result["before_steps"] == 2
    assert result["after"]["acked_per_s"] == 31 and result["after_steps"] == 2   # 20-40 s: settling
    assert result["after"]["executed_per_s"] is None and result["settled"]
    pending = before_after(steps, 50_000, settle_ms=20_000)
    assert not pending["settled"] and pending["after"]["acked_per_s"] is None


def test_timeline_computes_a_step_only_when_every_task_reached_its_end():
    timeline = TopologyTimeline(history=100)
    a1 = window("words", 1, 0, 10_000, emitted=100, acked=100)
    b1 = window("count", 2, 3_000, 13_000, executed=100, port=6701)
    assert timeline.feed({1: [a1], 2: [b1]}) == 0          # steps start at 10 s: where both have windows
    a2 = window("words", 1, 10_000, 20_000, emitted=100, acked=100, seq=2)
    assert timeline.feed({1: [a1, a2], 2: [b1]}) == 0      # task 2 has not reached 20 s yet
    b2 = window("count", 2, 13_000, 23_000, executed=200, port=6701, seq=2)
    assert timeline.feed({1: [a2], 2: [b1, b2]}) == 1
    only = timeline.steps[0]
    assert (only["start_ms"], only["end_ms"]) == (10_000, 20_000)
    assert only["executed_per_s"] == pytest.approx((30 + 140) / 10)


def test_timeline_waits_out_a_zookeeper_outage_and_spreads_the_long_window_over_it():
    timeline = TopologyTimeline(history=100)
    assert timeline.feed({1: [window("count", 1, 0, 10_000, executed=100)]}) == 1
    for _ in range(5):   # ZooKeeper away: the store shows the same windows, nothing new is computed
        assert timeline.feed({1: [window("count", 1, 0, 10_000, executed=100)]}) == 0
    # Back: the hook's next window covers the outage, 40 s at the same 10 tuples/s.
    assert timeline.feed({1: [window("count", 1, 10_000, 50_000, executed=400, seq=2)]}) == 4
    assert [s["executed_per_s"] for s in timeline.steps] == pytest.approx([10.0] * 5)


def test_after_an_outage_the_first_task_back_is_not_computed_alone():
    timeline = TopologyTimeline(history=100)
    assert timeline.feed({1: [window("count", 1, 0, 10_000, executed=100)],
                          2: [window("count", 2, 0, 10_000, executed=100, port=6701)]}) == 1
    # Back after 60 s: task 1's long window is read before task 2's.
    assert timeline.feed({1: [window("count", 1, 10_000, 70_000, executed=600, seq=2)]}) == 0
    assert timeline.feed({2: [window("count", 2, 10_000, 70_000, executed=600, seq=2, port=6701)]}) == 6
    assert [s["executed_per_s"] for s in timeline.steps] == pytest.approx([20.0] * 7)


def test_a_window_read_too_late_is_rebuilt_from_the_totals():
    timeline = TopologyTimeline(history=100)
    timeline.feed({1: [window("count", 1, 0, 10_000, executed=100, total=100, latency=(400, 100))]})
    # The window 10-20 s was overwritten before it was read: the totals say it executed 300.
    timeline.feed({1: [window("count", 1, 20_000, 30_000, executed=100, total=500, seq=3, latency=(400, 100))]})
    assert [s["executed_per_s"] for s in timeline.steps] == pytest.approx([10.0, 30.0, 10.0])
    # A worker that restarted (another pid) starts its totals again: the gap is downtime, no step.
    timeline.feed({1: [window("count", 1, 40_000, 50_000, executed=100, total=100, seq=1, pid=99,
                              latency=(400, 100))]})
    assert [(s["start_ms"], s["executed_per_s"]) for s in timeline.steps][3:] == [(40_000, pytest.approx(10.0))]


def test_windows_from_the_future_are_ignored_and_a_huge_gap_computes_only_the_history():
    timeline = TopologyTimeline(history=5)
    year_3000 = 32_503_680_000_000
    assert timeline.feed({1: [window("count", 1, year_3000 - 10_000, year_3000, executed=10)]}, now_ms=50_000) == 0
    assert timeline.ignored == 1 and not timeline.steps
    timeline.feed({1: [window("count", 1, 0, 10_000, executed=100)]}, now_ms=50_000)
    # A window covering a year: only the last 5 steps are computed, not millions.
    year = 365 * 24 * 3600 * 1000
    assert timeline.feed({1: [window("count", 1, 10_000, year, executed=10, seq=2)]}, now_ms=year) == 5
    assert timeline.steps[-1]["end_ms"] == year // 10_000 * 10_000


def test_a_task_that_stopped_publishing_is_not_waited_for_and_history_is_bounded():
    timeline = TopologyTimeline(history=3)
    timeline.feed({1: [window("count", 1, 0, 10_000, executed=10)],
                   2: [window("count", 2, 0, 10_000, executed=10, port=6701)]})
    assert len(timeline.steps) == 1
    # Task 2 publishes no more: it is waited for while it is less than GRACE_STEPS steps behind.
    for k in range(1, 8):
        added = timeline.feed({1: [window("count", 1, 10_000 * k, 10_000 * (k + 1), executed=10, seq=k + 1)]})
        assert added == (0 if k < GRACE_STEPS else (GRACE_STEPS if k == GRACE_STEPS else 1))
    assert len(timeline.steps) == 3 and timeline.steps[-1]["end_ms"] == 80_000   # bounded: the newest 3
    assert timeline.steps[-1]["tasks"] == 1 and timeline.steps[-1]["executed_per_s"] == pytest.approx(1.0)


def test_markers_classify_the_plan_log_and_carry_before_after():
    records = [
        {"event": "plan", "time": 10.0, "topology": "t", "algorithm": "even", "notes": ["first"],
         "assignments": {"[1-1]": "a:6700"}},
        {"event": "plan", "time": 20.0, "topology": "t", "algorithm": "topdown", "figures": {"moves": 0.0},
         "notes": ["metrics changed 3% (threshold 25%); current placement kept"], "assignments": {"[1-1]": "a:6700"}},
        {"event": "plan", "time": 22.0, "topology": "t", "algorithm": "topdown", "figures": {"moves": 0.0},
         "notes": ["re-planning off for this topology (planner.replan: false)"], "assignments": {"[1-1]": "a:6700"}},
        {"event": "plan", "time": 25.0, "topology": "other", "algorithm": "even"},
        {"event": "plan", "time": 30.0, "topology": "t", "algorithm": "topdown", "figures": {"moves": 2.0},
         "notes": ["re-planned (60 s since the last re-plan): 2 executor(s) move"]},
        {"event": "rebalance", "time": 40.0, "topology": "t", "executors": {"count": 4}, "outcome": "applied"},
        {"event": "plan", "time": 50.0, "topology": "t", "error": {"kind": "TIMEOUT", "message": "too slow"}},
    ]
    markers = plan_markers(records, "t", limit=10)
    assert [m["kind"] for m in markers] == ["plan", "re-plan", "rebalance", "fallback"]
    assert markers[1]["kept_rounds"] == 2 and "2 executor(s) move" in markers[1]["reason"]
    assert markers[3]["reason"] == "TIMEOUT: too slow"
    assert [m["kind"] for m in plan_markers(records, "t", limit=2)] == ["rebalance", "fallback"]
    steps = [{"start_ms": t * 1000, "end_ms": (t + 5) * 1000, "acked_per_s": float(t), "executed_per_s": 1.0,
              "complete_p99_ms": None, "inter_node_per_s": 0.0, "busiest_capacity": 0.1} for t in range(10, 60, 5)]
    shown = with_before_after(markers, steps, settle_s=5)
    replan = shown[1]
    assert replan["before"]["acked_per_s"] == pytest.approx((15 + 20 + 25) / 3)   # after the first plan settled
    assert replan["after"]["acked_per_s"] == pytest.approx(35.0)             # 35-40 s: before the rebalance


@pytest.mark.parametrize("buckets, field", [
    ({"le_ms": [1, 2], "counts": [1, 2]}, "acked.complete_latency_buckets"),
    ({"le_ms": [2, 1], "counts": [1, 2, 3]}, "acked.complete_latency_buckets.le_ms[1]"),
    ({"le_ms": [1, 2], "counts": [1, -2, 3]}, "acked.complete_latency_buckets.counts[1]"),
    ({"le_ms": [1, 2], "counts": [1, 2.5, 3]}, "acked.complete_latency_buckets.counts[1]"),
    ([1, 2], "acked.complete_latency_buckets"),
])
def test_bad_latency_buckets_make_the_window_corrupt_naming_the_field(buckets, field):
    doc = json.loads(json.dumps({"version": 1, "topology": "t", "component": "c", "task": 1,
                                 "window": {"seq": 1, "start_ms": 0, "end_ms": 10, "period_s": 1},
                                 "acked": {"tuples": 1, "complete_latency_buckets": buckets}}))
    with pytest.raises(CorruptWindow, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_window(json.dumps(doc))


def test_each_phase_of_a_drain_is_a_marker_with_its_duration():
    """A drain before a move: its answers while it waits are kept rounds, each phase a marker at its end
    (orange on the page), the move itself the re-plan."""
    from storm_planner.dashboard.planlog_reader import parse_record

    assign = {"[1-1]": "a:6700", "[2-2]": "a:6701"}
    moved = {"[1-1]": "a:6700", "[2-2]": "b:6700"}
    records = [
        {"event": "plan", "time": 10.0, "topology": "t", "algorithm": "even", "assignments": assign},
        {"event": "plan", "time": 20.0, "topology": "t", "algorithm": "topdown", "figures": {"moves": 0.0},
         "notes": ["drain: the spouts pause (Nimbus deactivate) before 1 executor(s) move"], "assignments": assign},
        {"event": "drain", "time": 20.4, "topology": "t", "phase": "pause", "seconds": 0.4,
         "note": "spouts paused (Nimbus deactivate)", "outcome": "ok", "in_flight": None},
        {"event": "drain", "time": 23.5, "topology": "t", "phase": "drain", "seconds": 3.1,
         "note": "0 tuples in flight after 3.1 s", "outcome": "ok", "in_flight": 0},
        {"event": "plan", "time": 24.0, "topology": "t", "algorithm": "topdown", "figures": {"moves": 1.0},
         "notes": ["drained: 1 executor(s) move with 0 tuple(s) in flight"], "assignments": moved},
        {"event": "drain", "time": 24.0, "topology": "t", "phase": "move", "seconds": 0.5, "note": "answered"},
        {"event": "drain", "time": 33.0, "topology": "t", "phase": "start", "seconds": 9.0,
         "note": "1 of 1 restarted worker(s) up (b:6700 in 6.2 s)"},
        {"event": "drain", "time": 33.1, "topology": "t", "phase": "resume", "seconds": 0.1,
         "note": "spouts resumed (Nimbus activate)"},
    ]
    assert all(parse_record(json.dumps(r)) == r for r in records)
    markers = plan_markers(records, "t", limit=20)
    assert [(m["kind"], m.get("phase")) for m in markers] == [
        ("plan", None), ("drain", "pause"), ("drain", "drain"), ("re-plan", None), ("drain", "move"),
        ("drain", "start"), ("drain", "resume")]
    assert markers[1]["kept_rounds"] == 1
    assert markers[2]["reason"] == "drain 3.1 s: 0 tuples in flight after 3.1 s" and markers[2]["seconds"] == 3.1
    assert markers[5]["reason"] == "start 9.0 s: 1 of 1 restarted worker(s) up (b:6700 in 6.2 s)"
    with pytest.raises(Exception, match="field seconds"):
        parse_record(json.dumps({**records[3], "seconds": "long"}))
