"""The report of ``storm-planner bench topdown-real`` (``<out>.md`` and its plots under ``<out>``), from
``<out>/capacity/cpu-<scale>/cells.csv`` and ``<out>/rates/steps.csv`` alone.

IMC gain of a scheduler against Storm's default, at one scale (or one step of the rate schedule):
``1 − B / B_default``, ``B`` a cell's ``link_bytes_per_tuple`` (bytes over every emulated link in the
measured window per tuple acked in it: measured on the real daemons, not the planners' modelled IMC) and
``B_default`` the median of DefaultScheduler's cells there. Each figure is the median over repetitions
with the spread (min–max) in brackets; a gain's spread is that of its own cells against default's median.
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

from storm_planner_bench.common.report import markdown_table, notes_section, pyplot, read_csv, save_figure
from storm_planner_bench.e2e.figures import BASELINES, fmt, median, numbers, ran, spread, total
from storm_planner_bench.e2e.ramp import WINDOW_MOVES
from storm_planner_bench.e2e.report import kept_up
from storm_planner_bench.e2e.workloads import rate_heading

DEFAULT = "default"
BYTES = "link_bytes_per_tuple"


def report_path(out: Path) -> Path:
    return out.parent / f"{out.name}.md"


def imc_gain(value: float, default: float) -> float:
    """``1 − value / default``: the share of DefaultScheduler's link bytes per tuple kept off the links
    (NaN when either is unknown or default sent nothing)."""
    if math.isnan(value) or math.isnan(default) or default <= 0:
        return math.nan
    return 1.0 - value / default


def gain_of(cells: list[dict[str, Any]], default_cells: list[dict[str, Any]]) -> tuple[float, float, float]:
    """(median, min, max) IMC gain of ``cells`` against the median of ``default_cells``; NaN if unknown."""
    default = median(default_cells, BYTES)
    gains = [imc_gain(b, default) for b in numbers(cells, BYTES)]
    gains = [g for g in gains if not math.isnan(g)]
    if not gains:
        return math.nan, math.nan, math.nan
    return statistics.median(gains), min(gains), max(gains)


def _gain_text(gain: tuple[float, float, float]) -> str:
    median, low, high = gain
    if math.isnan(median):
        return "–"
    return f"{100 * median:+.0f} %" + (f" [{100 * low:+.0f} – {100 * high:+.0f}]" if high > low else "")


def _ordered(schedulers: list[str]) -> list[str]:
    """Storm's schedulers first, then the others as met."""
    return [b for b in BASELINES if b in schedulers] + [s for s in schedulers if s not in BASELINES]


def write_report(out: Path, command: str) -> Path | None:
    """``<out>.md`` from whatever parts have data (none: nothing written)."""
    sections = [_capacity(out), _rates(out)]
    if not any(sections):
        return None
    path = report_path(out)
    path.write_text(
        "# topDown §7.4 on real Storm: IMC gain as node capacity grows and as the rate varies (issue #27)\n\n"
        "Chatzistergiou & Viglas, *Fast Heuristics for Near-Optimal Task Allocation in Data Stream Processing over "
        "Clusters*, §7.4 (Figs. 6, 7 and 9), on the local cluster of `bench e2e`. Reproduce (root, from the "
        "repository root, one cluster at a time):\n\n"
        f"    flock /tmp/storm-cluster.lock .venv/bin/{command} --out {out}\n\n"
        "**IMC gain** of a scheduler = 1 − B / B_default, B = bytes sent and received over every supervisor's "
        "emulated link in the measured window per tuple acked in it (measured on the real daemons, not the "
        "planners' model; heartbeats and acker traffic included), B_default = the median of Storm's "
        "DefaultScheduler's cells at the same scale or step: the share of default's network bytes per tuple the "
        "scheduler keeps inside nodes (default's own row shows its repetitions' spread around 0). The paper's "
        "gain is the absolute IMC kept inside nodes, against which Storm's default also gains; here default "
        "is the reference. Medians over repetitions, spread min–max in brackets.\n\n"
        + "".join(sections) + notes_section(out, path))
    return path


def _scales(out: Path) -> list[tuple[float, Path]]:
    """(scale, folder) of every ``<out>/capacity/cpu-<scale>`` holding a cells.csv, by scale."""
    found = []
    for folder in (out / "capacity").glob("cpu-*"):
        try:
            scale = float(folder.name.removeprefix("cpu-"))
        except ValueError:
            continue
        if (folder / "cells.csv").is_file():
            found.append((scale, folder))
    return sorted(found)


def _node_cpu(folder: Path) -> str:
    """The supervisors' declared CPU as run (``nodes.json``), ``35–45`` (% of a core), and what their quotas
    held them to when that differs: ``79–101 (held to 35–45)``."""
    try:
        declared, held = saved_nodes(folder)
        return _cpu_range(declared) + ("" if held == declared else f" (held to {_cpu_range(held)})")
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return "–"


def saved_nodes(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(declared, held) CPU per supervisor from a run's ``nodes.json``; older runs saved the declared
    figures alone, flat (held to them)."""
    saved = json.loads((folder / "nodes.json").read_text())
    declared = saved.get("declared", saved)
    return declared, saved.get("held", declared)


def _cpu_range(cpus: dict[str, Any]) -> str:
    values = [float(v) for v in cpus.values()]
    low, high = min(values), max(values)
    return fmt(low) if low == high else f"{fmt(low)}–{fmt(high)}"


def _capacity(out: Path) -> str:
    scales = _scales(out)
    if not scales:
        return ""
    cells: list[dict[str, Any]] = [{**row, "scale": scale, "node_cpu": _node_cpu(folder)}
             for scale, folder in scales for row in read_csv(folder / "cells.csv")[1]]
    sections = ["## Node capacity (Figs. 6 and 7)\n\nEach scale multiplies every supervisor's declared CPU, the "
                "capacity the schedulers place by (node CPU: % of a core, as run; \"held to\": the cgroup quotas, "
                "when they did not scale with it). Kept up: the cells that processed 99 % of the offered rate, "
                "lost nothing and kept p99 within a second; a cell behind measures a backlog's bytes per tuple. "
                "Each scale's e2e report: "
                + ", ".join(f"[{f.name}]({out.name}/capacity/{f.name}.md)" for _, f in scales) + ".\n\n"]
    # One section per workload and offered rate: a --quick run into the same --out leaves cells at its own rate.
    for workload, rate in dict.fromkeys((c["workload"], c["rate"]) for c in cells):
        mine = [c for c in cells if c["workload"] == workload and c["rate"] == rate]
        sections.append(_capacity_workload(out, workload, mine, [s for s, _ in scales]))
    return "".join(sections)


def _capacity_workload(out: Path, workload: str, cells: list[dict[str, Any]], scales: list[float]) -> str:
    schedulers = _ordered(list(dict.fromkeys(c["scheduler"] for c in cells)))
    rows, gains = [], {}
    for scale in scales:
        # Figures and gains over the cells that ran as asked (a plugin fallback ran DefaultScheduler's placement).
        at = [c for c in cells if c["scale"] == scale]
        default = [c for c in at if c["scheduler"] == DEFAULT and ran(c)]
        for scheduler in schedulers:
            every = [c for c in at if c["scheduler"] == scheduler]
            if not every:
                continue
            mine = [c for c in every if ran(c)]
            gains[scheduler, scale] = gain_of(mine, default)
            rows.append([f"{scale:g}", every[0]["node_cpu"], scheduler, _count(mine, every), _kept(mine),
                         spread(mine, BYTES),
                         _gain_text(gains[scheduler, scale]), spread(mine, "processed_tps"),
                         spread(mine, "latency_p99_ms"), total(mine, "lost"), fmt(median(mine, "supervisors_used")),
                         total(mine, "replans"), total(mine, "migrations")])
    header = ["CPU scale", "node CPU %", "scheduler", "cells", "kept up", "link B/tuple", "IMC gain vs default",
              "processed t/s", "p99 ms", "lost", "supervisors", "re-plans", "migrations"]
    notes = [f"- scale {c['scale']:g}, {c['scheduler']} repetition {c['repetition']}: {c['status']}"
             for c in cells if c.get("status") != "ran"]
    notes += [_behind_reference(f"scale {scale:g}", [c for c in cells if c["scale"] == scale]) for scale in scales]
    notes = [note for note in notes if note]
    rate = cells[0].get("rate", "")
    plot = _capacity_plot(out, workload, rate, scales, schedulers, gains, [c for c in cells if ran(c)])
    return (f"### {workload} at {rate_heading(workload, rate)} t/s\n\n"
            + markdown_table(header, rows, right=[0, 1, *range(3, 13)])
            + ("\n" + "\n".join(notes) + "\n" if notes else "")
            + f"\n![{workload}: IMC gain against node capacity]({out.name}/{plot.name})\n\n")


def _errorbar(axis, xs, gains, colour: str, label: str, style: str = "o-") -> None:
    """Medians joined by a line, the spread as error bars (gains in %)."""
    shown = [(x, g) for x, g in zip(xs, gains) if not math.isnan(g[0])]
    if not shown:
        return
    x = [s[0] for s in shown]
    medians = [100 * s[1][0] for s in shown]
    low = [100 * (s[1][0] - s[1][1]) for s in shown]
    high = [100 * (s[1][2] - s[1][0]) for s in shown]
    axis.errorbar(x, medians, yerr=[low, high], fmt=style, color=colour, label=label, capsize=3, markersize=4)


def _kept(ran_cells: list[dict[str, Any]]) -> str:
    """How many of a row's cells kept up with their offered rate (``kept_up``: 99 % processed, nothing lost,
    p99 within a second): a cell behind measures bytes per tuple of a backlog, not of the rate asked."""
    if not ran_cells:
        return "–"
    kept = sum(kept_up(c, float(c["rate"])) for c in ran_cells)
    return "all" if kept == len(ran_cells) else f"{kept} of {len(ran_cells)}"


def _behind_reference(where: str, cells: list[dict[str, Any]]) -> str:
    """A note when Storm's default, the gains' reference, fell behind somewhere (its B is then a backlog's)."""
    default = [c for c in cells if c["scheduler"] == DEFAULT and ran(c)]
    behind = [c for c in default if not kept_up(c, float(c["rate"]))]
    if not behind:
        return ""
    return (f"- {where}: Storm's default, the reference, fell behind in {len(behind)} of {len(default)} cells: "
            "the gains there are against a backlog's bytes per tuple")


def _count(ran_cells: list[dict[str, Any]], every: list[dict[str, Any]]) -> int | str:
    """How many cells a row has: ``n of m`` when only n of them ran as asked."""
    return len(every) if len(ran_cells) == len(every) else f"{len(ran_cells)} of {len(every)}"


def _capacity_plot(out: Path, workload: str, rate: str, scales: list[float], schedulers: list[str],
                   gains: dict[tuple[str, float], tuple[float, float, float]], cells: list[dict[str, Any]]) -> Path:
    plt = pyplot()
    figure, (gain, traffic) = plt.subplots(1, 2, figsize=(11, 3.8))
    nan = (math.nan, math.nan, math.nan)
    for k, scheduler in enumerate(schedulers):
        _errorbar(gain, scales, [gains.get((scheduler, s), nan) for s in scales], f"C{k}", scheduler)
        spreads = []
        for scale in scales:
            values = numbers([c for c in cells if c["scale"] == scale and c["scheduler"] == scheduler], BYTES)
            spreads.append((statistics.median(values), min(values), max(values)) if values else nan)
        shown = [(s, v) for s, v in zip(scales, spreads) if not math.isnan(v[0])]
        if shown:
            traffic.errorbar([s for s, _ in shown], [v[0] for _, v in shown],
                             yerr=[[v[0] - v[1] for _, v in shown], [v[2] - v[0] for _, v in shown]],
                             fmt="o-", color=f"C{k}", capsize=3, markersize=4)
    gain.axhline(0, color="grey", linestyle=":")
    gain.set_title("IMC gain against Storm's default (%)", fontsize=10)
    traffic.set_title("link bytes per tuple", fontsize=10)
    for axis in (gain, traffic):
        axis.set_xlabel("node capacity (× the described CPU)")
        axis.set_xticks(scales)
    if gain.get_legend_handles_labels()[0]:
        gain.legend(fontsize=8)
    return save_figure(figure, out / f"{workload}-{rate}-capacity.png",
                       f"{workload} at {rate} t/s: IMC gain as node capacity grows")


def _rates(out: Path) -> str:
    path = out / "rates" / "steps.csv"
    if not path.is_file():
        return ""
    rows = read_csv(path)[1]
    sections = ["## A varying input rate (Fig. 9)\n\nOne submission per scheduler and repetition, the replay spout's "
                "rate changed step by step; each step measured after its settle. TD (`+noreplan`) is placed once at "
                "submission, on the estimates (no metrics exist yet), and never re-planned; TD-RC (`planner:topdown`) "
                "re-plans on the measured loads when they change. Time: the start of each step's window after the "
                f"first step's (median over runs). Node CPU %: {_node_cpu(out / 'rates')}.\n\n"]
    for workload in dict.fromkeys(r["workload"] for r in rows):
        sections.append(_rates_workload(out, workload, [r for r in rows if r["workload"] == workload]))
    return "".join(sections)


def _rates_workload(out: Path, workload: str, rows: list[dict[str, Any]]) -> str:
    schedulers = _ordered(list(dict.fromkeys(r["scheduler"] for r in rows)))
    steps = sorted({int(r["step"]) for r in rows})
    offered = {int(r["step"]): float(r["rate"]) for r in rows}
    starts = {s: median([r for r in rows if int(r["step"]) == s], "window_start_s") for s in steps}
    table, gains = [], {}
    for step in steps:
        at = [r for r in rows if int(r["step"]) == step]
        default = [r for r in at if r["scheduler"] == DEFAULT and ran(r)]
        for scheduler in schedulers:
            every = [r for r in at if r["scheduler"] == scheduler]
            mine = [r for r in every if ran(r)]
            gains[scheduler, step] = gain_of(mine, default)
            table.append([step, fmt(offered[step]), fmt(starts[step]), scheduler, _count(mine, every), _kept(mine),
                          spread(mine, BYTES),
                          _gain_text(gains[scheduler, step]), spread(mine, "processed_tps"),
                          spread(mine, "latency_p99_ms"), total(mine, "lost"), total(mine, "replans"),
                          total(mine, WINDOW_MOVES), total(mine, "migrations"),
                          (mine[-1].get("placement") or "–") if mine else "–"])
    header = ["step", "offered t/s", "window at s", "scheduler", "runs", "kept up", "link B/tuple",
              "IMC gain vs default", "processed t/s", "p99 ms", "lost", "re-plans", "moves near window",
              "migrations", "placement (last run)"]
    notes = [f"- {r['scheduler']} repetition {r['repetition']}, step {r['step']}: {r['status']}"
             for r in rows if r.get("status") != "ran"]
    notes += [_behind_reference(f"step {step}", [r for r in rows if int(r["step"]) == step]) for step in steps]
    notes = [note for note in notes if note]
    plot = _rates_plot(out, workload, steps, offered, starts, schedulers, gains, [r for r in rows if ran(r)])
    return (f"### {workload}\n\n" + markdown_table(header, table, right=[0, 1, 2, *range(4, 14)])
            + ("\n" + "\n".join(notes) + "\n" if notes else "")
            + f"\n![{workload}: IMC gain under a varying rate]({out.name}/{plot.name})\n\n")


def _rates_plot(out: Path, workload: str, steps: list[int], offered: dict[int, float], starts: dict[int, float],
                schedulers: list[str], gains: dict[tuple[str, int], tuple[float, float, float]],
                rows: list[dict[str, Any]]) -> Path:
    plt = pyplot()
    figure, (gain, rate) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    # A step's x: its window's start in minutes (its number when no time was recorded).
    x = {s: (starts[s] / 60.0 if not math.isnan(starts[s]) else float(s)) for s in steps}
    xs = [x[s] for s in steps]
    for k, scheduler in enumerate(schedulers):
        _errorbar(gain, xs, [gains[scheduler, s] for s in steps], f"C{k}", scheduler)
        processed = [(x[s], median([r for r in rows if r["scheduler"] == scheduler and int(r["step"]) == s],
                                    "processed_tps")) for s in steps]
        rate.plot([p for p, v in processed if not math.isnan(v)], [v for _, v in processed if not math.isnan(v)],
                  "o", color=f"C{k}", markersize=4, alpha=0.7)
    # Each offered rate held from its window's start to the next one's (the last for as long as the one before).
    end = xs[-1] + (xs[-1] - xs[-2] if len(xs) > 1 else 1.0)
    rate.step([*xs, end], [*(offered[s] for s in steps), offered[steps[-1]]], where="post", color="black",
              label="offered")
    gain.axhline(0, color="grey", linestyle=":")
    gain.set_ylabel("IMC gain vs default (%)")
    rate.set_ylabel("tuples/s (points: processed)")
    rate.set_xlabel("minutes (each step's window start)" if any(not math.isnan(v) for v in starts.values())
                    else "step")
    if gain.get_legend_handles_labels()[0]:
        gain.legend(fontsize=8)
    rate.legend(fontsize=8)
    return save_figure(figure, out / f"{workload}-rates.png", f"{workload}: IMC gain as the input rate varies")
