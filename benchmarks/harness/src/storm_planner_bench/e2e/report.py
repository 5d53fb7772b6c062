"""The report of ``storm-planner bench e2e``, from ``cells.csv`` alone: ``<out>.md`` and a plot per
workload and rate under ``<out>`` (throughput and p99 per scheduler, every repetition a point; the
complete-latency CDF of every cell).

Per scheduler: the median over repetitions and the spread (min–max) of throughput and latency; the
ratios of the medians to DefaultScheduler's and to the ResourceAwareScheduler's (throughput: higher is
better; p99: lower is better); tuples lost and failed summed over repetitions. ``<out>/notes.md``, if
there, is copied in as the report's notes.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from storm_planner_bench.common.cellfile import cell_part
from storm_planner_bench.common.report import markdown_table, notes_section, pyplot, read_csv, save_figure
from storm_planner_bench.e2e.figures import BASELINES, beats_both, cluster_cpu, fmt, median, numbers, ran, spread, total
from storm_planner_bench.e2e.papers import DERIVED, Capacities, papers_section
from storm_planner_bench.e2e.workloads import offered_rate, rate_heading


def write_report(out: Path, command: str, capacities: Capacities | None = None) -> Path | None:
    """``<out>.md`` and the plots from ``<out>/cells.csv`` (nothing there yet: nothing written);
    ``capacities``, the supervisors' as run (the CPU their quotas held them to), for the Elastic
    Allocator's utilisation deviation."""
    path = out / "cells.csv"
    if not path.exists():
        return None
    _, rows = read_csv(path)
    rows = [{k: v for k, v in row.items() if k is not None} for row in rows]   # a malformed row's extra fields
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["workload"], row["rate"]), []).append(row)
    sections = [_overview(groups), papers_section(groups, capacities)]
    sections += [_section(out, workload, rate, cells) for (workload, rate), cells in groups.items()]
    sections += [_ramp(out, workload, rows) for workload in dict.fromkeys(r["workload"] for r in rows)
                 if len({r["rate"] for r in rows if r["workload"] == workload}) > 1]
    sections.append(_startup(out, rows))
    report = out.parent / f"{out.name}.md"
    report.write_text(
        "# End to end on real Storm: the planners against Storm's own schedulers (issue #27)\n\n"
        f"Reproduce (root, from the repository root, one cluster at a time):\n\n"
        f"    flock /tmp/storm-cluster.lock .venv/bin/{command} --out {out}\n\n"
        "The cluster is the command's `--cluster` (default `benchmarks/e2e/cluster.yaml`); what each figure means is in "
        "`benchmarks/harness/src/storm_planner_bench/e2e/cells.py`. Medians over repetitions, spread min–max in brackets. "
        "Throughput = tuples acked per second in the measured window; latency = the replay spout's first emit to "
        "ack of the tuples emitted in it; lost = emitted and never acked after the drain; re-plans = plans the "
        "service answered after the first (one may keep the placement), migrations = executors they moved, both "
        "summed over repetitions; CPU sd and link sd = the standard deviation over the supervisors of their CPU (% "
        "of a core) and their links' Mbit/s, the Elastic Allocator's balance measure; ratios are of medians (× "
        f"default and × ras).\n\n{''.join(sections)}{notes_section(out, report)}"
        f"Every cell: [{out.name}/cells.csv]({out.name}/cells.csv).\n")
    return report


def _overview(groups: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    """The whole run in two tables, a row per scheduler and a column per workload and rate: its median
    throughput and p99 as ratios to DefaultScheduler's and RAS's (``× default / × ras``). ✓ marks a planner
    that beat both beyond the repetitions' spread: every one of its cells better than every cell of both,
    at least two repetitions each, nothing lost."""
    order = list(dict.fromkeys(c["scheduler"] for cells in groups.values() for c in cells))
    schedulers = [b for b in BASELINES if b in order] + [s for s in order if s not in BASELINES]
    header = ["scheduler", *(f"{workload} at {rate_heading(workload, rate)} t/s" for workload, rate in groups)]
    tables = []
    for column, title, higher in (("processed_tps", "Throughput", True), ("latency_p99_ms", "p99 latency", False)):
        rows = [[s, *(_overview_cell(s, cells, column, higher) for cells in groups.values())] for s in schedulers]
        tables.append(f"**{title}** (× default / × ras; {'higher' if higher else 'lower'} is better)\n\n"
                      + markdown_table(header, rows, right=range(1, len(header))))
    return ("## Every scheduler on every workload\n\nMedians over repetitions as ratios to Storm's two schedulers; "
            "✓: better than both in every repetition (at least two each), nothing lost; no throughput ✓ at a rate "
            "one of Storm's schedulers keeps up with (more than that rate is noise). Only cells that ran as "
            "asked count (a cell the plugin fell back in ran DefaultScheduler's placement). Each workload's own "
            "section below has the figures.\n\n" + "\n".join(tables) + "\n")


def _overview_cell(scheduler: str, cells: list[dict[str, Any]], column: str, higher: bool) -> str:
    mine = [c for c in cells if c["scheduler"] == scheduler and ran(c)]
    if not numbers(mine, column):
        return "–"
    value = median(mine, column)
    ratios = " / ".join(_ratio(value, median([c for c in cells if c["scheduler"] == b and ran(c)], column))
                        for b in BASELINES)
    if column == "processed_tps" and _a_baseline_kept_up(cells):
        return ratios   # more than a rate a baseline keeps up with is noise, not throughput
    every = [c for c in cells if c["scheduler"] == scheduler]   # a ✓ needs every repetition run as asked
    return ratios + (" ✓" if scheduler not in BASELINES and beats_both(every, cells, column, higher) else "")


def _a_baseline_kept_up(cells: list[dict[str, Any]]) -> bool:
    """Whether DefaultScheduler or RAS kept up with the offered rate in every cell of its that ran as asked."""
    for baseline in BASELINES:
        theirs = [c for c in cells if c["scheduler"] == baseline and ran(c)]
        if theirs and all(kept_up(c, float(c["rate"])) for c in theirs):
            return True
    return False


def _section(out: Path, workload: str, rate: str, cells: list[dict[str, Any]]) -> str:
    first_seen = list(dict.fromkeys(c["scheduler"] for c in cells))
    # Storm's schedulers first, then the planners as the run met them (a cell measured again comes last).
    schedulers = sorted(first_seen, key=lambda s: (s not in BASELINES, BASELINES.index(s) if s in BASELINES else 0,
                                                   first_seen.index(s)))
    by = {s: [c for c in cells if c["scheduler"] == s] for s in schedulers}
    # Medians over the cells that ran as asked: another status's figures are not its scheduler's (a plugin
    # fallback ran DefaultScheduler's placement); the table's rows still list every cell, the notes why.
    ran_by = {s: [c for c in by[s] if ran(c)] for s in schedulers}
    medians = {s: (median(ran_by[s], "processed_tps"), median(ran_by[s], "latency_p99_ms")) for s in schedulers}
    rows = [_summary_row(s, by[s], ran_by[s], medians) for s in schedulers]
    header = ["scheduler", "cells", "processed t/s", "× default", "× ras", "p50 ms", "p99 ms", "p99 × default",
              "p99 × ras", "mean ms", "lost", "failed", "first ack s", "link B/tuple", "CPU sd %", "link sd Mbit/s",
              "supervisors", "workers", "re-plans", "migrations", "placement (last cell)"]
    plot = _plot(out, workload, rate, schedulers, ran_by)
    notes = [f"- {c['scheduler']} repetition {c['repetition']}: {c['status']}" for c in cells if c["status"] != "ran"]
    return (f"## {workload} at {rate_heading(workload, rate)} tuples/s\n\n"
            + markdown_table(header, rows, right=range(1, 20))
            + ("\n" + "\n".join(notes) + "\n" if notes else "")
            + _hook_overhead(medians, {s: _median_node_cpu(ran_by[s]) for s in schedulers})
            + f"\n![{workload} at {rate} t/s]({out.name}/{plot.name})\n\n")


# A cell keeps up with its rate when it processes 99 % of it, loses nothing, and keeps its p99 complete
# latency within this bound (a backlog grows the latency without bound); a rate is sustained when most
# of a scheduler's cells at it kept up. A step a stepped ramp did not run (it stopped below) did not.
SUSTAINED_SHARE, SUSTAINED_P99_MS = 0.99, 1_000.0


def kept_up(cell: dict[str, Any], rate: float) -> bool:
    """Whether one cell ran as asked and kept up with ``rate`` (see SUSTAINED_SHARE and SUSTAINED_P99_MS):
    what its topology was offered at that rate (bargains' two spouts replay at it each)."""
    processed, p99, lost = (median([cell], column) for column in ("processed_tps", "latency_p99_ms", "lost"))
    return (ran(cell) and processed >= SUSTAINED_SHARE * offered_rate(cell["workload"], rate)
            and p99 <= SUSTAINED_P99_MS and lost == 0)


def sustained(cells: list[dict[str, Any]], rate: float) -> bool:
    """Whether more than half of a scheduler's cells at ``rate`` kept up with it."""
    return 2 * sum(kept_up(cell, rate) for cell in cells) > len(cells)


def _ramp(out: Path, workload: str, rows: list[dict[str, Any]]) -> str:
    """The highest rate each scheduler sustained, of the rates the run offered."""
    cells = [r for r in rows if r["workload"] == workload]
    rates = sorted({float(r["rate"]) for r in cells})
    offered = [offered_rate(workload, rate) for rate in rates]
    schedulers = list(dict.fromkeys(r["scheduler"] for r in cells))
    best: dict[str, float] = {}
    table = []
    for scheduler in schedulers:
        kept = [rate for rate in rates if (at := [c for c in cells if c["scheduler"] == scheduler
                                                  and float(c["rate"]) == rate]) and sustained(at, rate)]
        best[scheduler] = max(kept, default=math.nan)
        table.append([scheduler, fmt(best[scheduler]), " ".join(fmt(r) for r in kept) or "–"])
    for row, scheduler in zip(table, schedulers):
        row[2:2] = [_ratio(best[scheduler], best.get(b, math.nan)) for b in BASELINES]
    header = ["scheduler", "highest sustained t/s", "× default", "× ras", "rates sustained"]
    plot = _ramp_plot(out, workload, rates, offered, schedulers, [c for c in cells if ran(c)])
    each = f" (per spout: {rate_heading(workload, 'the rate')} offered)" if offered != rates else ""
    return (f"## {workload}: highest sustainable rate of {', '.join(fmt(r) for r in rates)} t/s{each}\n\n"
            f"Sustained: most of the scheduler's cells at the rate ran as asked, processed at least "
            f"{SUSTAINED_SHARE:.0%} of what the topology was offered at it, lost nothing, and kept p99 complete "
            f"latency within {SUSTAINED_P99_MS:,.0f} ms.\n\n"
            + markdown_table(header, table, right=range(1, 4))
            + f"\n![{workload}: the ramp]({out.name}/{plot.name})\n\n")


def _ramp_plot(out: Path, workload: str, rates: list[float], offered: list[float], schedulers: list[str],
               cells: list[dict[str, Any]]) -> Path:
    """Processed rate and p99 against the rate, a line per scheduler through its medians, every cell a point
    (a step a ramp did not run has none); ``offered``: what the topology was offered at each rate."""
    plt = pyplot()
    figure, (throughput, p99) = plt.subplots(1, 2, figsize=(11, 3.8))
    throughput.plot(rates, offered, ":", color="grey", label="offered")
    for k, scheduler in enumerate(schedulers):
        for axis, column in ((throughput, "processed_tps"), (p99, "latency_p99_ms")):
            at = [[c for c in cells if c["scheduler"] == scheduler and float(c["rate"]) == rate] for rate in rates]
            shown = [(rate, median(mine, column)) for rate, mine in zip(rates, at) if numbers(mine, column)]
            axis.plot([r for r, _ in shown], [m for _, m in shown], "-", color=f"C{k}",
                      label=scheduler if axis is throughput else None)
            for rate, mine in zip(rates, at):
                values = numbers(mine, column)
                axis.plot([rate] * len(values), values, "o", color=f"C{k}", markersize=3, alpha=0.6)
    p99.axhline(SUSTAINED_P99_MS, color="grey", linestyle=":")
    p99.set_yscale("log")
    throughput.set_title("processed tuples/s", fontsize=10)
    p99.set_title("p99 complete latency (ms)", fontsize=10)
    for axis in (throughput, p99):
        axis.set_xlabel("offered tuples/s")
    throughput.legend(fontsize=8)
    return save_figure(figure, out / f"{workload}-ramp.png", f"{workload}: the rate ramp")


def _hook_overhead(medians: dict[str, tuple[float, float]], node_cpu: dict[str, float]) -> str:
    """The metrics hook's cost: each scheduler with the hook against itself without (``+nohook``).

    At a fixed offered rate both keep up, so throughput barely moves and p99 is as noisy as the run; the
    CPU all nodes used together (cgroup cpuacct, median over repetitions) is what the hook's work adds."""
    from storm_planner_bench.e2e.workloads import NO_HOOK

    rows = []
    for without in (s for s in medians if s.endswith(NO_HOOK)):
        with_hook = without.removesuffix(NO_HOOK)
        if with_hook in medians:
            (t_on, p_on), (t_off, p_off) = medians[with_hook], medians[without]
            rows.append([with_hook, fmt(t_on), fmt(t_off), _change(t_on, t_off), fmt(p_on), fmt(p_off),
                         _change(p_on, p_off), fmt(node_cpu[with_hook]), fmt(node_cpu[without]),
                         _change(node_cpu[with_hook], node_cpu[without])])
    if not rows:
        return ""
    header = ["scheduler", "t/s hook on", "t/s hook off", "throughput change", "p99 ms on", "p99 ms off",
              "p99 change", "nodes' CPU % on", "nodes' CPU % off", "CPU change"]
    return ("\nThe metrics hook's cost (medians, hook on against off; CPU: all supervisors together, % of a "
            "core):\n\n" + markdown_table(header, rows, right=range(1, 10)))


def _median_node_cpu(cells: list[dict[str, Any]]) -> float:
    """Median over cells of the CPU every supervisor used together (the ``cpu_<node>_pct`` columns); a cell
    without a CPU figure (it did not run) is left out, not counted as idle."""
    totals = [cpu for cell in cells if not math.isnan(cpu := cluster_cpu(cell))]
    return statistics.median(totals) if totals else math.nan


def _change(on: float, off: float) -> str:
    if math.isnan(on) or math.isnan(off) or off == 0:
        return "–"
    return f"{100.0 * (on - off) / off:+.1f} %"


def _summary_row(scheduler: str, every: list[dict[str, Any]], cells: list[dict[str, Any]],
                 medians: dict[str, tuple[float, float]]) -> list:
    """One scheduler's row: figures over its ``cells`` that ran as asked, of ``every`` cell it had."""
    processed, p99 = medians[scheduler]
    count = len(every) if len(cells) == len(every) else f"{len(cells)} of {len(every)}"
    return [scheduler, count, spread(cells, "processed_tps"),
            *(_ratio(processed, medians[b][0]) if b in medians else "–" for b in BASELINES),
            spread(cells, "latency_p50_ms"), spread(cells, "latency_p99_ms"),
            *(_ratio(p99, medians[b][1]) if b in medians else "–" for b in BASELINES),
            spread(cells, "latency_mean_ms"), total(cells, "lost"), total(cells, "failed"),
            fmt(median(cells, "submit_to_first_ack_s")), fmt(median(cells, "link_bytes_per_tuple")),
            *(fmt(statistics.median(d)) if (d := [x for x in map(DERIVED[kind], cells) if not math.isnan(x)])
              else "–" for kind in ("cpu_sd", "link_sd")),
            fmt(median(cells, "supervisors_used")), fmt(median(cells, "workers_used")),
            total(cells, "replans"), total(cells, "migrations"), (cells or every)[-1].get("placement") or "–"]


def _startup(out: Path, rows: list[dict[str, Any]]) -> str:
    """Per scheduler, the median seconds of each phase from submission to the first ack
    (:mod:`~storm_planner_bench.common.startup`), from the cells' records (``startup``); empty when none exist."""
    from storm_planner_bench.common.startup import PHASES
    from storm_planner_bench.e2e.cells import cell_name

    by: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        phases = cell_part(out, cell_name(row["workload"], row["rate"], row["scheduler"], row["repetition"]), "startup")
        if isinstance(phases, dict):
            by.setdefault(row["scheduler"], []).append(phases)
    if not by:
        return ""
    table = markdown_table(
        ["scheduler", "cells", *(f"{phase} s" for phase in PHASES), "submit to first ack s"],
        [[scheduler, len(cells), *(fmt(median(cells, phase)) for phase in PHASES),
          fmt(sum(v for v in (median(cells, phase) for phase in PHASES) if not math.isnan(v)))]
         for scheduler, cells in by.items()], right=range(1, len(PHASES) + 3))
    return ("## Where the time to the first ack goes\n\nMedian seconds per phase, from the workers' logs: "
            "submission until the first worker JVM starts (Nimbus' round, the plan, the jar's download, the "
            "JVM), until the last worker has loaded, until the last spout is active (the shell components' "
            f"Python processes), until the first emit, until its ack.\n\n{table}\n")


def _ratio(value: float, baseline: float) -> str:
    if math.isnan(value) or math.isnan(baseline) or baseline == 0:
        return "–"
    return f"{value / baseline:.2f}"


def _plot(out: Path, workload: str, rate: str, schedulers: list[str], by: dict[str, list[dict[str, Any]]]) -> Path:
    plt = pyplot()
    figure, (throughput, p99, cdf) = plt.subplots(1, 3, figsize=(14, 3.8))
    for k, scheduler in enumerate(schedulers):
        colour = f"C{k}"
        for axis, column in ((throughput, "processed_tps"), (p99, "latency_p99_ms")):
            values = numbers(by[scheduler], column)
            if values:
                axis.bar(k, statistics.median(values), color=colour, alpha=0.5)
                axis.plot([k] * len(values), values, "o", color=colour, markersize=4)
        for n, cell in enumerate(by[scheduler]):
            quantiles = _quantiles(out, cell)
            if quantiles:
                cdf.plot(quantiles, [i / (len(quantiles) - 1) for i in range(len(quantiles))], color=colour,
                         alpha=0.8, label=scheduler if n == 0 else None)
    offered = rate_heading(workload, rate)
    for axis, title in ((throughput, f"processed tuples/s (offered {offered})"), (p99, "p99 complete latency (ms)")):
        axis.set_xticks(range(len(schedulers)))
        axis.set_xticklabels(schedulers, rotation=20, fontsize=8)
        axis.set_title(title, fontsize=10)
    p99.set_yscale("log")
    cdf.set_xscale("log")
    cdf.set_xlabel("complete latency (ms)")
    cdf.set_title("latency CDF, every cell", fontsize=10)
    if cdf.get_legend_handles_labels()[0]:
        cdf.legend(fontsize=8)
    return save_figure(figure, out / f"{workload}-{rate}.png", f"{workload} at {offered} tuples/s")


def _quantiles(out: Path, cell: dict[str, Any]) -> list[float]:
    from storm_planner_bench.e2e.cells import cell_name

    values = cell_part(out, cell_name(cell["workload"], cell["rate"], cell["scheduler"], cell["repetition"]), "latency")
    return [max(v, 0.1) for v in values or []]   # a log axis: sub-0.1 ms latencies drawn at 0.1
