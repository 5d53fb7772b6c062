"""Madsen et al.'s claims in ``bench albic-real``'s report: settled periods, verdicts, the section."""
from __future__ import annotations

import pytest

from storm_planner_bench.albic_real import experiment as albic_real
from storm_planner_bench.albic_real.claims import claims_section, settled, verdict


def _row(scheduler: str, repetition: int, period: int, **figures: float) -> dict:
    return {"scheduler": scheduler, "repetition": repetition, "period": period, "status": "ran", **figures}


def test_settled_periods_are_the_second_half_of_each_run():
    rows = ([_row("planner:albic", 1, p) for p in range(1, 9)] + [_row("default", 1, p) for p in range(1, 4)]
            + [_row("default", 2, p) for p in range(1, 5)] + [_row("ras", 1, 1)])
    kept = {(r["scheduler"], r["repetition"], r["period"]) for r in settled(rows)}
    assert kept == ({("planner:albic", 1, p) for p in (5, 6, 7, 8)} | {("default", 1, 2), ("default", 1, 3)}
                    | {("default", 2, 3), ("default", 2, 4)})


@pytest.mark.parametrize(("mine", "higher", "expected"), [
    ([0.30, 0.35], True, "✓ beats default and ras beyond the spread"),
    ([0.22, 0.40], True, "better by the median, inside the spread"),   # median 0.31 above both, 0.22 not
    ([0.10, 0.30], True, "not better than default and ras (median)"),   # median 0.20, theirs 0.225
    ([0.10, 0.30], False, "better by the median, inside the spread"),   # lower is better: 0.20 is
    ([0.30], True, "fewer than two settled periods"),
])
def test_a_verdict_names_how_far_the_planner_beat_the_baselines(mine, higher, expected):
    theirs = {"default": [0.20, 0.25], "ras": [0.21, 0.24]}
    assert verdict(mine, theirs, higher) == expected


def test_lower_is_better_for_load_distance():
    assert verdict([3.0, 4.0], {"default": [5.0, 9.0], "potc": [4.5, 7.0]}, higher=False) == (
        "✓ beats default and potc beyond the spread")
    assert verdict([3.0, 4.0], {"default": [5.0, 9.0], "potc": [3.5, 7.0]}, higher=False) == (
        "better by the median, inside the spread")


def test_a_baseline_that_never_ran_is_left_out_and_one_period_says_too_few():
    assert verdict([1.0, 2.0], {"default": [5.0, 6.0], "ras": []}, higher=False) == (
        "✓ beats default beyond the spread")
    assert verdict([1.0, 2.0], {"default": [5.0]}, higher=False) == "fewer than two settled periods"


def test_the_section_compares_settled_periods_only():
    """ALBIC starts far apart (load distance 30 in its first half) and settles at 4-5; default stays at 10-12:
    on the settled periods ALBIC beats it beyond the spread, though over all periods it would not."""
    rows = ([_row("planner:albic", 1, p, load_distance=30.0 if p <= 4 else 4.0 + p % 2, collocation_factor=0.3,
                  latency_p99_ms=900.0, migrations=2) for p in range(1, 9)]
            + [_row("default", 1, p, load_distance=10.0 + p % 3, collocation_factor=0.25, latency_p99_ms=80.0,
                    migrations=p % 2) for p in range(1, 9)])   # not a Storm scheduler's way: proves the count
    section = claims_section(rows, ["planner:albic"])
    lines = {line.split(" | ")[1]: line for line in section.splitlines() if line.startswith("| planner:albic |")}
    assert lines["load distance, % points (Fig. 12b)"].endswith("| ✓ beats default beyond the spread |")
    assert "| 4.5 [4.0–5.0] |" in lines["load distance, % points (Fig. 12b)"]
    assert lines["collocation factor (Fig. 12a)"].endswith("✓ beats default beyond the spread |")
    assert lines["p99 complete latency, ms"].endswith("not better than default (median) |")
    assert lines["migrations per settled period"].split(" | ")[2:4] == ["2.0", "0.5"]   # counted, both
    assert claims_section(rows, []) == "" and claims_section(rows[:8], ["planner:albic"]) == ""


def test_the_report_carries_the_section(tmp_path):
    from storm_planner_bench.albic_real.report import write_report
    from storm_planner_bench.common.report import append_csv

    header = albic_real.columns(["a", "b"])
    for scheduler, distance in (("planner:albic", 4.0), ("ras", 20.0)):
        for period in (1, 2, 3, 4):
            append_csv(tmp_path / "periods.csv", header,
                       {"job": 3, "scheduler": scheduler, "repetition": 1, "period": period, "status": "ran",
                        "load_distance": distance + period, "collocation_factor": 0.3, "migrations": 1,
                        "latency_p99_ms": 50})
    (report,) = write_report(tmp_path, "storm-planner bench albic-real")
    text = report.read_text()
    assert "## Madsen et al.'s metrics against Storm's schedulers and PoTC" in text
    assert "| planner:albic | load distance, % points (Fig. 12b) | 7.5 [7.0–8.0] | 23.5 [23.0–24.0] | ✓ beats ras" in text
