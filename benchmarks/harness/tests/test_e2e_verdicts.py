"""The e2e report's verdicts count only cells that ran as asked, with every figure a verdict needs.

A cell whose plan the plugin refused ran on DefaultScheduler's placement; one that acked nothing in time
has no latency of its own: their figures are not their scheduler's, so they neither earn a ✓ nor move a
median. A blank ``lost`` is not "nothing lost".
"""
from __future__ import annotations

import math

from benchmarks.harness.tests.test_e2e_harness import SUPERVISORS, cell
from storm_planner_bench.e2e import experiment as e2e
from storm_planner_bench.e2e.figures import beats_both
from storm_planner_bench.e2e.papers import Capacities
from storm_planner_bench.e2e.report import _median_node_cpu, kept_up, write_report

FALLBACK = "ran on DefaultScheduler's placement: the planner answered infeasible"


def beaten_baselines() -> list[dict]:
    """Two repetitions each of DefaultScheduler and RAS, p99 90-110 ms: a planner at 50-60 beats both."""
    return [cell("default", 1, 400.0, 100.0), cell("default", 2, 400.0, 110.0),
            cell("ras", 1, 400.0, 90.0), cell("ras", 2, 400.0, 95.0)]


def test_a_planner_beats_both_only_on_cells_that_ran_as_asked():
    mine = [cell("planner:topdown", 1, 400.0, 50.0), cell("planner:topdown", 2, 400.0, 60.0)]
    assert beats_both(mine, beaten_baselines() + mine, "latency_p99_ms", higher=False)
    for status in (FALLBACK, "no tuple acked within 120 s"):
        fell_back = [mine[0], {**mine[1], "status": status}]
        assert not beats_both(fell_back, beaten_baselines() + fell_back, "latency_p99_ms", higher=False)


def test_a_blank_lost_is_not_nothing_lost():
    mine = [cell("planner:topdown", 1, 400.0, 50.0), cell("planner:topdown", 2, 400.0, 60.0, lost="")]
    assert not beats_both(mine, beaten_baselines() + mine, "latency_p99_ms", higher=False)


def test_a_baselines_cell_that_did_not_run_as_asked_is_not_beaten_for_it():
    """RAS's second cell acked nothing in time (its p99 blank or a leftover): RAS then has one repetition."""
    baselines = beaten_baselines()
    baselines[3] = {**baselines[3], "status": "no tuple acked within 120 s"}
    mine = [cell("planner:topdown", 1, 400.0, 50.0), cell("planner:topdown", 2, 400.0, 60.0)]
    assert not beats_both(mine, baselines + mine, "latency_p99_ms", higher=False)


def write(tmp_path, rows: list[dict]) -> str:
    out = tmp_path / "e2e"
    header = e2e.columns(SUPERVISORS)
    for row in rows:
        e2e.append_cell(out / "cells.csv", header, row)
    capacities = Capacities(cpu={"i7-a": 45.0, "i5-a": 35.0}, link_mbit={"i7-a": 2.0, "i5-a": 2.0})
    return write_report(out, "storm-planner bench e2e", capacities).read_text()


def test_the_papers_verdict_names_repetitions_that_did_not_run_and_a_planner_with_none_keeps_its_row(tmp_path):
    rows = [{**c, "workload": "trends-link"} for c in beaten_baselines()]
    rows += [cell("planner:topdown", r, 400.0, 50.0, workload="trends-link", status=FALLBACK) for r in (1, 2)]
    rows += [cell("planner:tasklevel", r, 400.0, math.nan, workload="trends-link", latency_p99_ms="",
                  link_bytes_per_tuple="") for r in (1, 2)]
    report = write(tmp_path, rows)
    verdicts = {(line.split(" | ")[1], line.split(" | ")[2]): line.split(" | ")[-1].strip(" |")
                for line in report.splitlines() if line.startswith("| Chatz")}
    assert verdicts[("planner:topdown", "p99 latency ms")].startswith("2 of 2 repetitions did not run as asked (ran on")
    assert verdicts[("planner:tasklevel", "p99 latency ms")] == "2 of 2 repetitions without a figure"


def test_the_overview_and_sections_take_medians_over_the_cells_that_ran(tmp_path):
    """topdown's fallback cell (DefaultScheduler's placement, p99 1,000 ms) would drag its median to 525."""
    rows = beaten_baselines() + [cell("planner:topdown", 1, 400.0, 50.0),
                                 cell("planner:topdown", 2, 400.0, 1000.0, status=FALLBACK)]
    report = write(tmp_path, rows)
    overview = report.split("**p99 latency**")[1].split("## ")[0]
    (topdown,) = [line for line in overview.splitlines() if line.startswith("| planner:topdown |")]
    assert topdown == "| planner:topdown | 0.48 / 0.54 |"      # 50 against 105 and 92.5
    section = report.split("## topk-link at 400 tuples/s")[1]
    (row,) = [line for line in section.splitlines() if line.startswith("| planner:topdown |")]
    assert row.split(" | ")[1] == "1 of 2"
    assert f"planner:topdown repetition 2: {FALLBACK}" in section


def test_a_cell_that_did_not_run_as_asked_did_not_keep_up():
    assert kept_up(cell("ras", 1, 400.0, 50.0), 400.0)
    assert not kept_up(cell("ras", 1, 400.0, 50.0, status=FALLBACK), 400.0)


def test_a_cell_without_cpu_figures_is_left_out_of_the_cpu_median_not_counted_idle():
    busy = cell("ras", 1, 400.0, 50.0, **{"cpu_i7-a_pct": 120.0, "cpu_i5-a_pct": 80.0})
    missing = cell("ras", 2, 400.0, 50.0, **{"cpu_i7-a_pct": "", "cpu_i5-a_pct": ""})
    assert _median_node_cpu([busy, missing]) == 200.0
    assert math.isnan(_median_node_cpu([missing]))


def test_a_workload_of_two_sources_keeps_up_with_what_both_offer():
    """bargains' trades and quotes replay at the cell's rate each: 200 t/s offers 400."""
    assert not kept_up(cell("ras", 1, 250.0, 50.0, workload="bargains-link"), 200.0)
    assert kept_up(cell("ras", 1, 398.0, 50.0, workload="bargains-link"), 200.0)
    assert kept_up(cell("ras", 1, 198.0, 50.0, workload="trends-link"), 200.0)


def test_a_scheduler_given_twice_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    """Two spellings of one scheduler would share a cell's name, and so its checkpoints and time logs."""
    from storm_planner import cli
    from storm_planner.cluster.launcher import LocalCluster

    def no_cluster(self):   # a check that regressed would start a real cluster here, beside any other
        raise AssertionError("a cluster started before the options were checked")

    monkeypatch.setattr(LocalCluster, "up", no_cluster)
    assert cli.main(["bench", "e2e", "--schedulers", "ras,default,ras", "--out", str(tmp_path / "e2e")]) == 2
    said = capsys.readouterr()
    assert "--schedulers names ras more than once" in said.err and said.out == ""
    assert not (tmp_path / "e2e").exists()


def test_the_overview_gives_no_check_mark_when_one_repetition_did_not_run_as_asked(tmp_path):
    """Two repetitions beat both; the third ran on DefaultScheduler's placement: no ✓, as in the papers' verdict."""
    rows = beaten_baselines() + [cell("planner:topdown", 1, 400.0, 50.0), cell("planner:topdown", 2, 400.0, 60.0),
                                 cell("planner:topdown", 3, 400.0, 1000.0, status=FALLBACK)]
    overview = write(tmp_path, rows).split("**p99 latency**")[1].split("## ")[0]
    (topdown,) = [line for line in overview.splitlines() if line.startswith("| planner:topdown |")]
    assert topdown == "| planner:topdown | 0.52 / 0.59 |"


def test_no_throughput_check_mark_at_a_rate_one_of_storms_schedulers_keeps_up_with(tmp_path):
    """400.3 against 399.9 t/s at an offered 400: every repetition higher, and meaningless."""
    rows = [cell("default", r, 399.9, 100.0) for r in (1, 2)] + [cell("ras", r, 399.8, 90.0) for r in (1, 2)]
    rows += [cell("planner:gma", r, 400.3, 95.0) for r in (1, 2)]
    overview = write(tmp_path, rows).split("**Throughput**")[1].split("**p99")[0]
    (gma,) = [line for line in overview.splitlines() if line.startswith("| planner:gma |")]
    assert "✓" not in gma
    def gma_row(default_tps: float, ras_tps: float, out) -> str:
        rows = [cell("default", r, default_tps, 900.0) for r in (1, 2)] + [cell("ras", r, ras_tps, 900.0) for r in (1, 2)]
        rows += [cell("planner:gma", r, 400.3, 95.0) for r in (1, 2)]
        overview = write(out, rows).split("**Throughput**")[1].split("**p99")[0]
        (gma,) = [line for line in overview.splitlines() if line.startswith("| planner:gma |")]
        return gma
    assert "✓" not in gma_row(300.0, 399.8, tmp_path / "2")   # RAS kept up: 0.5 t/s more is noise
    assert gma_row(300.0, 320.0, tmp_path / "3").endswith("✓ |")
