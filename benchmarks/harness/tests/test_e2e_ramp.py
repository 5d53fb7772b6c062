"""``storm-planner bench e2e --stepped`` without a cluster: the ramps planned from the cells, the options
refused, when a step stops the ramp, what a step counts as its own (lost tuples, plans), and the report's
verdict on steps a ramp did not run."""
from __future__ import annotations

import argparse
import math

import pytest

from storm_planner.streaming.timelog import TupleTimes, read_times
from storm_planner_bench.e2e import experiment as e2e
from storm_planner_bench.e2e.cells import Window
from storm_planner_bench.e2e.ramp import (
    NOT_RUN,
    clearly_behind,
    feed_tuples_needed,
    lost_between,
    plans_between,
    step_counts,
)
from storm_planner_bench.e2e.report import sustained, write_report
from storm_planner_bench.e2e.workloads import TOPK_LINK, TRENDS_LINK

SUPERVISORS = ["i7-a", "i5-a"]


def test_a_ramp_per_workload_scheduler_and_repetition_in_the_cells_order():
    cells = e2e.plan_cells([TOPK_LINK, TRENDS_LINK], ["default", "ras"], 2, [300.0, 400.0], False)
    ramps = [(w.name, rates, s, r) for w, rates, s, r in e2e.plan_ramps(cells)]
    assert ramps[:3] == [("topk-link", [300.0, 400.0], "default", 1), ("topk-link", [300.0, 400.0], "ras", 1),
                         ("trends-link", [300.0, 400.0], "default", 1)]
    assert len(ramps) == 8 and ramps[-1] == ("trends-link", [300.0, 400.0], "ras", 2)


def options(**given) -> argparse.Namespace:
    defaults = {"stepped": True, "step_settle": 20.0, "settle": 90.0, "measure": 40.0, "feed_records": None,
                "quick": False}
    return argparse.Namespace(**{**defaults, **given})


def test_stepped_needs_several_rates_a_sane_settle_and_a_feed_that_lasts():
    with pytest.raises(ValueError, match="--stepped needs several rates"):
        e2e.check_stepped(options(), [400.0])
    with pytest.raises(ValueError, match="--stepped needs several rates"):
        e2e.check_stepped(options(), None)
    with pytest.raises(ValueError, match="--step-settle"):
        e2e.check_stepped(options(step_settle=-1.0), [300.0, 400.0])
    rates = [300.0, 400.0, 500.0, 600.0]
    needed = feed_tuples_needed(rates, 90.0, 20.0, 40.0)
    assert needed == math.ceil(300 * (60 + 90 + 40) + (400 + 500 + 600) * 60)
    with pytest.raises(ValueError, match=f"--feed-records {needed:,} or more"):
        e2e.check_stepped(options(), rates)          # the default 120,000 records
    e2e.check_stepped(options(feed_records=needed), rates)
    e2e.check_stepped(options(), rates[:3])


def window(begin: float = 100.0, end: float = 110.0) -> Window:
    return Window(begin, end, {}, {}, {}, {})


def times_at(rate: float, latency_s: float, begin: float = 100.0, end: float = 110.0, unacked: int = 0) -> TupleTimes:
    """A spout that emitted at ``rate`` in [begin, end), each tuple acked ``latency_s`` later, the last
    ``unacked`` never."""
    count = int(rate * (end - begin))
    emitted = {f"m{i}": begin + i / rate for i in range(count)}
    acked = {m: at + latency_s for i, (m, at) in enumerate(emitted.items()) if i < count - unacked}
    return TupleTimes(emitted=emitted, acked=acked)


def test_a_step_stops_the_ramp_only_when_it_is_behind_beyond_doubt():
    # Acks in the window counted by their time: a short latency keeps nearly every one inside it.
    assert not clearly_behind(times_at(400.0, 0.005), window(), 400.0, now=112.0)
    assert clearly_behind(times_at(300.0, 0.005), window(), 400.0, now=112.0)      # 300 of 400 offered
    # Every tuple acked, but two seconds late: the window's acks are its own rate, its p99 is not.
    assert clearly_behind(times_at(400.0, 2.0, begin=98.0), window(), 400.0, now=112.0)
    # Two percent not yet acked, waiting since the window: counted as acked now, they make the p99.
    assert clearly_behind(times_at(420.0, 0.005, unacked=81), window(), 400.0, now=112.0)
    assert not clearly_behind(times_at(420.0, 0.005, unacked=2), window(), 400.0, now=110.2)


def test_a_step_owns_the_tuples_lost_and_the_plans_answered_in_its_time():
    times = TupleTimes(emitted={"a": 5.0, "b": 15.0, "c": 25.0, "d": 26.0}, acked={"b": 15.1})
    assert [lost_between(times, start, stop) for start, stop in ((-math.inf, 10.0), (10.0, 20.0), (20.0, math.inf))] \
        == [1, 0, 2]
    slot, other = "i7-a:6700", "i5-a:6701"
    answered = [{"time": 2.0, "assignments": {"e1": slot, "e2": slot}},
                {"time": 12.0, "assignments": {"e1": slot, "e2": slot}},
                {"time": 14.0, "assignments": {"e1": other, "e2": other}},
                {"time": 22.0, "assignments": {"e1": other, "e2": slot}}]
    assert plans_between(answered, -math.inf, 10.0) == {"plans": 1, "replans": 0, "migrations": 0}
    assert plans_between(answered, 10.0, 20.0) == {"plans": 2, "replans": 2, "migrations": 2}
    assert plans_between(answered, 20.0, math.inf) == {"plans": 1, "replans": 1, "migrations": 1}


def step(scheduler: str, repetition: int, rate: float, processed: float | None, p99: float | None = 50.0,
         lost: int = 0) -> dict:
    row = {"workload": "topk-link", "rate": f"{rate:g}", "scheduler": scheduler, "repetition": repetition}
    if processed is None:
        return {**row, "status": NOT_RUN.format(rate=rate - 100)}
    return {**row, "status": "ran", "processed_tps": processed, "latency_p50_ms": p99 / 4, "latency_p99_ms": p99,
            "latency_mean_ms": p99 / 3, "lost": lost, "failed": 0, "submit_to_first_ack_s": 20.0,
            "link_bytes_per_tuple": 400, "supervisors_used": 2, "workers_used": 2, "replans": 0,
            "migrations": 0, "placement": "i7-a:4 i7-b:4"}


def test_a_rate_is_sustained_when_most_cells_kept_up_and_a_step_not_run_did_not():
    assert sustained([step("ras", 1, 500, 500.0), step("ras", 2, 500, 499.0), step("ras", 3, 500, None)], 500)
    assert not sustained([step("ras", 1, 500, 500.0), step("ras", 2, 500, None), step("ras", 3, 500, None)], 500)
    assert not sustained([step("ras", 1, 500, 500.0), step("ras", 2, 500, 500.0, lost=1)], 500)
    assert not sustained([step("ras", 1, 500, 500.0, p99=1_500.0)], 500)


def test_the_report_reads_a_stepped_ramp_and_plots_it(tmp_path):
    out = tmp_path / "ramp"
    header = e2e.columns(SUPERVISORS)
    rows = [step("default", 1, 400, 400.0), step("default", 1, 500, 350.0, p99=4_000.0), step("default", 1, 600, None),
            step("ras", 1, 400, 400.0), step("ras", 1, 500, 500.0), step("ras", 1, 600, 596.0, p99=300.0)]
    for row in rows:
        e2e.append_cell(out / "cells.csv", header, row)
    report = write_report(out, "storm-planner bench e2e --rate 400,500,600 --stepped --step-settle 20").read_text()
    ramp = report.split("highest sustainable rate")[1]
    lines = {line.split(" | ")[0].strip("| "): line for line in ramp.splitlines() if line.startswith("| ")}
    assert lines["default"].startswith("| default | 400 | 1.00 | 0.67 |")
    assert lines["ras"].startswith("| ras | 600 | 1.50 | 1.00 |")
    assert (out / "topk-link-ramp.png").is_file() and "topk-link-ramp.png" in report
    assert "default repetition 1: not run: the ramp stopped at 500 t/s" in report


def test_a_steps_counts_are_its_own_not_the_whole_ramps(tmp_path):
    """The log covers the ramp: the last step's 3 fails and replays stay in its row."""
    (tmp_path / "spout-1-1.times").write_text(
        "e a 5.0000\na a 5.1000\n"                                       # step 1: one tuple, acked
        "e b 15.0000\ne c 16.0000\na b 15.2000\n"                        # step 2: c never acked
        "e d 25.0000\nf d 55.0000\ne d 55.0100\nf d 85.0000\ne d 85.0100\nf d 95.0000\ne d 95.0100\n"
        "a d 95.2000\n")                                                # step 3: d failed 3 times, replayed
    times = read_times(tmp_path)
    steps = [step_counts(times, start, stop) for start, stop in ((-math.inf, 10.0), (10.0, 20.0), (20.0, math.inf))]
    assert steps == [{"emitted": 1, "acked": 1, "lost": 0, "failed": 0, "replayed": 0},
                     {"emitted": 2, "acked": 1, "lost": 1, "failed": 0, "replayed": 0},
                     {"emitted": 1, "acked": 1, "lost": 0, "failed": 3, "replayed": 3}]
