"""The report of ``storm-planner bench albic-real``, from ``periods.csv`` alone: per airline job,
``job<N>.md`` (the command, a summary per scheduler, then every period) and
``job<N>.png``: Madsen et al.'s Fig. 12-14 panels (collocation factor, load distance, load index,
migrations per period) with what the cluster did beside them (link Mbit/s, tuples acked per second, p99
complete latency, CPU per tuple), one line per scheduler, each period the mean over repetitions.
``<out>/notes.md``, if there, is copied into every job's report as its notes.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from storm_planner_bench.albic_real.claims import BASELINES, claims_section
from storm_planner_bench.common.report import markdown_table, notes_section, plot_by_planner, read_csv
from storm_planner_bench.e2e.figures import median, numbers

PANELS = (("collocation_factor", "collocation factor (operator tuples kept on a node)"),
          ("load_distance", "load distance (% points, cgroup CPU over quota)"),
          ("load_index", "load index (cluster CPU / first period's)"),
          ("migrations", "migrations (executors moved)"),
          ("link_mbit", "link traffic (Mbit/s, all links)"),
          ("processed_tps", "tuples acked per second"),
          ("latency_p99_ms", "p99 complete latency (ms)"),
          ("latency_due_p99_ms", "p99 from the due time (ms)"),
          ("cpu_ms_per_tuple", "CPU ms per acked tuple"))


def write_report(out: Path, command: str) -> list[Path]:
    """``job<N>.md`` and ``job<N>.png`` under ``out`` for every job in ``out/periods.csv``; the reports written."""
    path = out / "periods.csv"
    if not path.exists():
        return []
    _, rows = read_csv(path)
    written = []
    for job in sorted({row["job"] for row in rows}):
        # A row without a period number is the wreck of a line a kill cut short: no row of any run.
        mine = [r for r in (_typed(row) for row in rows if row["job"] == job) if not math.isnan(r["period"])]
        # A run that never ran has a status row alone; one that did not run as asked (no ack in time, the
        # plugin's fallback to DefaultScheduler) keeps its period rows in the table, out of the figures.
        measured = [row for row in mine if row["period"] >= 1 and row.get("status") == "ran"]
        name = f"job{job}"
        (out / f"{name}.md").write_text(
            f"# ALBIC's Real Job {job} on real Storm under a drifting key skew (Madsen et al. §5.4)\n\n"
            f"Reproduce: `flock /tmp/storm-cluster.lock .venv/bin/{command} --out {out}`\n\n{_text(out, name, mine)}")
        _plot(out / f"{name}.png", rows=measured, job=job)
        written.append(out / f"{name}.md")
    return written


COUNTS = ("job", "repetition", "period", "migrations", "replans", "operator_tuples", "failed", "replayed")


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row with its figures as numbers (NaN where empty; counts whole) and its labels as text."""
    typed: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("scheduler", "status"):
            typed[key] = value
            continue
        try:
            number = float(value) if value not in ("", None) else math.nan
        except (TypeError, ValueError):   # a line cut short by a kill mid-write, then the next row's fields
            # A count that is not a number makes the row no period of any run, not a crash.
            typed[key] = math.nan if key in COUNTS else value
            continue
        typed[key] = int(number) if key in COUNTS and math.isfinite(number) else number
    return typed


def schedulers_of(rows: list[dict[str, Any]]) -> list[str]:
    """Storm's schedulers and PoTC first, then the planners in the order the run met them."""
    seen = list(dict.fromkeys(r["scheduler"] for r in rows))
    return [b for b in BASELINES if b in seen] + [s for s in seen if s not in BASELINES]


def summary(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """Per scheduler: runs, collocation in the first and last period, median load distance, last load
    index, migrations per period, medians of link Mbit/s, throughput and p99."""
    table = []
    for scheduler in schedulers_of(rows):
        mine = [r for r in rows if r["scheduler"] == scheduler and r.get("period", 0) >= 1 and r.get("status") == "ran"]
        first = [r for r in mine if r["period"] == 1]
        last_period = max((r["period"] for r in mine), default=0)
        last = [r for r in mine if r["period"] == last_period]
        periods = len({(r["repetition"], r["period"]) for r in mine})
        measured = len({r["repetition"] for r in mine})
        runs = len({r["repetition"] for r in rows if r["scheduler"] == scheduler})
        per_period = _total(mine, "migrations") / periods if periods else math.nan
        table.append([scheduler, runs if measured == runs else f"{measured} of {runs}",
                      _fmt(median(first, "collocation_factor"), 2),
                      _fmt(median(last, "collocation_factor"), 2), _fmt(median(mine, "load_distance"), 1),
                      _fmt(median(last, "load_index"), 2), _fmt(per_period, 1),
                      _fmt(median(mine, "link_mbit"), 2), _fmt(median(mine, "processed_tps"), 0),
                      _fmt(median(mine, "latency_p99_ms"), 0), _fmt(median(mine, "latency_due_p99_ms"), 0),
                      _fmt(_mean(mine, "replayed"), 0)])
    return table


def periods_with_moves(rows: list[dict[str, Any]]) -> str:
    """Per scheduler that moved anything: its periods with moves against those without, p99 from the emit
    and from the due time (the median and the highest of the periods' p99s). A drained re-plan holds its
    spouts while the restarted workers start: the emit hides that wait, the due time does not."""
    table = []
    for scheduler in schedulers_of(rows):
        mine = [r for r in rows if r["scheduler"] == scheduler]
        moved = [r for r in mine if r.get("migrations", 0) > 0]
        if not moved:
            continue
        still = [r for r in mine if r.get("migrations", 0) == 0]
        for label, group in (("with moves", moved), ("without", still)):
            if group:
                table.append([scheduler, label, len(group), _fmt(median(group, "latency_p99_ms"), 0),
                              _fmt(_highest(group, "latency_p99_ms"), 0),
                              _fmt(median(group, "latency_due_p99_ms"), 0),
                              _fmt(_highest(group, "latency_due_p99_ms"), 0),
                              _fmt(_mean(group, "failed"), 0)])   # blank before the column existed
    if not table:
        return ""
    header = ["scheduler", "periods", "n", "p99 from emit, median ms", "highest ms", "p99 from due, median ms",
              "highest ms", "failed / period"]
    return ("## Latency in the periods with moves\n\nEach period's p99 over the tuples first emitted in it (from "
            "the emit) and over those due in it (from the due time), median and highest over the periods "
            "with a move and those without.\n\n" + markdown_table(header, table, right=range(2, len(header)))
            + "\n")


def _text(out: Path, name: str, rows: list[dict[str, Any]]) -> str:
    header = ["scheduler", "runs", "collocation first", "collocation last", "load distance (median)",
              "load index (last)", "migrations / period", "link Mbit/s", "acked t/s", "p99 ms",
              "p99 from due ms", "replays / period"]
    notes = [f"- {r['scheduler']} repetition {r['repetition']:g}: {r['status']}" for r in rows
             if r.get("status") not in ("ran", None, "") and r.get("period", 0) <= 1]
    periods = ["scheduler", "rep.", "period", "collocation", "load distance", "load index", "migrations",
               "link Mbit/s", "acked t/s", "p99 ms", "p99 from due ms", "replays", "CPU ms/tuple", "status"]
    every = [[r["scheduler"], _fmt(r["repetition"], 0), _fmt(r["period"], 0), _fmt(r["collocation_factor"], 2),
              _fmt(r["load_distance"], 1), _fmt(r["load_index"], 2), _fmt(r["migrations"], 0),
              _fmt(r["link_mbit"], 2), _fmt(r["processed_tps"], 0), _fmt(r["latency_p99_ms"], 0),
              _fmt(r.get("latency_due_p99_ms", math.nan), 0), _fmt(r.get("replayed", math.nan), 0),
              _fmt(r["cpu_ms_per_tuple"], 1), r.get("status") or "–"] for r in rows if r.get("period", 0) >= 1]
    measured = [r for r in rows if r.get("period", 0) >= 1 and r.get("status") == "ran"]
    return ("Runs: those with measured periods (\"n of m\": m - n did not run as asked; the notes say why). "
            "Per adaptation period, from the running cluster: collocation factor = the share of the tuples the "
            "bolts sent each other that stayed on one node (the metrics hook's windows, Nimbus' placement); "
            "load distance = the largest gap between a supervisor's CPU over its quota and the cluster's "
            "(percent points, §4.3.1); load index = the cluster's CPU over the first measured period's (§5); "
            "migrations = executors moved by the service's plans in the period (the plan log); replays = the "
            "spouts' emits of tuples emitted before (a timed-out tuple sent again; blank in periods measured "
            "before the column existed); p99 from due = over the tuples due in the period, from when the "
            "feed's schedule meant them to go out (blank before the column existed). What each "
            "figure is exactly: `benchmarks/harness/src/storm_planner_bench/albic_real/series.py`.\n\n"
            + markdown_table(header, summary(rows), right=range(1, len(header)))
            + ("\n" + "\n".join(notes) + "\n" if notes else "")
            + f"\n![Job panels]({name}.png)\n\n"
            + claims_section(measured, [s for s in schedulers_of(measured) if s not in BASELINES])
            + periods_with_moves(measured)
            + notes_section(out, out / f"{name}.md")
            + "## Every period\n\n" + markdown_table(periods, every, right=range(1, len(periods) - 1)))


def _plot(path: Path, *, rows: list[dict[str, Any]], job: str) -> None:
    """Fig. 12's panels and the cluster's, one line per scheduler, each period's mean over repetitions."""
    schedulers = schedulers_of(rows)
    means = []
    for scheduler in schedulers:
        for period in sorted({r["period"] for r in rows if r["scheduler"] == scheduler and r["period"] >= 1}):
            at = [r for r in rows if r["scheduler"] == scheduler and r["period"] == period]
            means.append({"planner": scheduler, "period": period,
                          **{metric: _mean(at, metric) for metric, _ in PANELS}})
    plot_by_planner(path, means, schedulers, PANELS, x="period", xlabel="adaptation period",
                    suptitle=f"Real Job {job}: per adaptation period (Madsen et al. Figs. 12-14 and the cluster)")


def _mean(rows: list[dict[str, Any]], column: str) -> float:
    values = numbers(rows, column)
    return statistics.fmean(values) if values else math.nan


def _highest(rows: list[dict[str, Any]], column: str) -> float:
    return max(numbers(rows, column), default=math.nan)


def _total(rows: list[dict[str, Any]], column: str) -> float:
    return sum(numbers(rows, column))


def _fmt(value: float, digits: int) -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return "–"
    return f"{value:,.{digits}f}"
