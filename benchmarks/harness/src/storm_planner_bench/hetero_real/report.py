"""``bench hetero-real``'s outputs: the markdown report, CSV tables and the plot.

``runs`` are the :class:`storm_planner_bench.hetero_real.driver.Run` records of one benchmark; the
comparison they are reported with is :mod:`storm_planner_bench.hetero_real.compare`'s.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.common.report import markdown_table, pyplot, write_csv
from storm_planner_bench.hetero_real.compare import BASELINES, summaries, summary_rows
from storm_planner_bench.hetero_real.search import PLACEMENTS

PAPER_REAL = (7, 44)            # §6.2, Fig. 8: measured gains over Storm's default (Linear +44 %)
PAPER_LINEAR = 44
WHO = {"hetero": "the plugin, planner.algorithm hetero (fixed-graph mode on hetero's graph)",
       "hetero-optimal": "the plugin, planner.algorithm hetero-optimal (its own graph)",
       "storm-default": "the plugin, the service answering Storm's EvenScheduler order",
       "default": "Nimbus with Storm's DefaultScheduler", "ras": "Nimbus with Storm's ResourceAwareScheduler"}


def _plan_lines(runs: Sequence[Any], report: Mapping[str, Any]) -> list[str]:
    lines = []
    for shape, plan in report.get("plans", {}).items():
        search = " ".join(f"{k}={v}" for k, v in plan["search_placement"].items())
        applied = {" ".join(f"{k}={v}" for k, v in r.counts.items()) for r in runs
                   if r.shape == shape and r.placement == "hetero" and r.measured}
        same = "the same" if applied == {search} else f"different: {'; '.join(sorted(applied)) or 'none ran'}"
        lines.append(f"* {shape}: `hetero` (search mode) chose {plan['parallelism']}, simulator "
                     f"{plan['figures']['max_input_rate']:.1f} tuples/s per spout, placement {search}; the service's "
                     f"placement of the submitted graph: {same}.")
        optimal = plan.get("optimal")
        if optimal:
            search = " ".join(f"{k}={v}" for k, v in optimal["search_placement"].items())
            applied = {" ".join(f"{k}={v}" for k, v in r.counts.items()) for r in runs
                       if r.shape == shape and r.placement == "hetero-optimal" and r.measured}
            same = "the same" if applied == {search} else f"different: {'; '.join(sorted(applied)) or 'none ran'}"
            lines.append(f"  `hetero-optimal` (search mode, exhaustive) chose {optimal['parallelism']}, simulator "
                         f"{optimal['figures']['max_input_rate']:.1f} tuples/s per spout, placement {search} "
                         f"({optimal['seconds']:.1f} s); the service's placement of the submitted graph: {same}.")
        for placement, why in (plan.get("skipped") or {}).items():
            lines.append(f"  **{placement} not run**: {why}.")
        if plan.get("declared_cpu"):
            lines.append("  RAS declarations, CPU % per executor of hetero's graph at hetero's predicted rate "
                         "(share 1): " + ", ".join(f"{c} {v:.1f}" for c, v in plan["declared_cpu"].items()) + ".")
    return lines


def _run_table(runs: Sequence[Any]) -> str:
    table = []
    for r in runs:
        row = r.row()
        figures = ([f"{r.sustained_offered:g}", f"{r.measured_input:.1f}", f"{r.measured_throughput:.1f}"]
                   if r.measured else ["–"] * 3)
        table.append([r.name, r.placement, r.status, row["parallelism"], row["placement_counts"] or "–", *figures,
                      row["predicted_input"] or "–",
                      f"{row['load_avg_mean']} / {row['load_avg_max']}" if r.load_avg else "–",
                      "" if r.ras_share is None else f"{r.ras_share:g}", len(r.steps), row["seconds"]])
    return markdown_table(["run", "placement", "status", "parallelism", "executors per machine",
                           "highest sustained offered per spout (tuples/s)", "measured input (tuples/s, all spouts)",
                           "measured throughput (tuples/s, all tasks)", "simulator input per spout (tuples/s)",
                           "load avg mean / max", "RAS share", "steps", "s"],
                          table, right=(5, 6, 7, 8, 10, 11, 12)).rstrip("\n")


def _cpu_table(runs: Sequence[Any]) -> str:
    machines = _machines(runs)
    cpu = [[r.name, *(f"{r.top_step.machine_cpu.get(m, 0):.0f} ({r.top_step.task_cpu.get(m, 0):.0f}) / "
                      f"{100 * r.top_step.throttled.get(m, 0):.0f}" for m in machines)]
           for r in runs if r.top_step is not None]
    return markdown_table(["run", *(f"{m} CPU % (tasks) / throttled %" for m in machines)], cpu)


def _ratio_text(r: Mapping[str, float] | None) -> str:
    return "–" if r is None else f"{r['median']:.2f} ({r['low']:.2f}–{r['high']:.2f})"


def _summary_table(summary: Sequence[Mapping[str, Any]]) -> str:
    table = []
    for shape in summary:
        for placement, f in shape["placements"].items():
            t = f["throughput"]
            measured = f"{t.median:.1f} ({t.low:.1f}–{t.high:.1f})" if t.values else "–"
            load = ", ".join(f"{m} {v['cpu']:.0f} / {100 * v['throttled']:.0f}" for m, v in f["load"].items())
            predicted = "–" if f["predicted_throughput"] is None else f"{f['predicted_throughput']:.1f}"
            table.append([shape["topology"], placement, f"{f['runs']}" + (f" (+{len(f['not_run'])} not run)"
                                                                          if f["not_run"] else ""),
                          measured, *(_ratio_text(f["ratios"].get(b)) for b in BASELINES), predicted,
                          load or "–", " ".join(f["saturated"]) or "none"])
    return markdown_table(["topology", "placement", "runs", "throughput median (min–max), tuples/s",
                           "× default (spread)", "× ras (spread)", "simulator throughput",
                           "top step: CPU % / throttled % per machine (mean)", "saturated (throttled ≥ 50 %)"],
                          table, right=(3, 4, 5, 6))


def _verdict_table(summary: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for shape in summary:
        v = shape["verdict"]
        answer = {True: "**yes**", False: "**no**", None: "not judged"}[v["beats"]]
        paper = f"+{PAPER_LINEAR} %" if shape["topology"] == "linear" else f"+{PAPER_REAL[0]}–{PAPER_REAL[1]} %"
        rows.append([shape["topology"], answer, v["reason"], paper])
    return markdown_table(["topology", "hetero beats default and ras beyond the spread", "measured",
                           "paper (Fig. 8, real, over Storm's default)"], rows)


def markdown(runs: Sequence[Any], report: Mapping[str, Any]) -> str:
    shuffle = ("Storm 2's load- and locality-aware shuffle" if report["settings"].get("load_aware")
               else "uniform shuffle (`topology.disable.loadaware.messaging: true`, as the paper's Storm 0.9.5)")
    placements = report["settings"].get("placements") or list(dict.fromkeys(r.placement for r in runs))
    lines = ["# hetero and hetero-optimal vs Storm's schedulers on the real local cluster", "",
             f"Command: `{report['command']}`", "", f"Grouping: {shuffle}.", "",
             "Placements, in run order (every placement once, then again): "
             + "; ".join(f"`{p}`: {WHO.get(p, p)}" for p in placements) + ".", ""]
    lines += _plan_lines(runs, report)
    lines += ["", _run_table(runs)]
    lines += ["", "At each run's highest sustained step: CPU of each machine (its cpuacct group: worker JVM, "
              "Python subprocesses, supervisor) and, in brackets, the part the metrics hook attributes to the "
              "machine's tasks (what eq. 7 models); share of CFS periods throttled.", "", _cpu_table(runs)]
    summary = summaries(runs)
    lines += ["Per placement: the highest sustained throughput (eq. 2, tuples/s of all tasks) over the repetitions; "
              "ratios of medians to Storm's DefaultScheduler and ResourceAwareScheduler, in brackets the lowest "
              "over the highest and the highest over the lowest.", "", _summary_table(summary)]
    lines += ["hetero beats both beyond the spread when every hetero repetition sustained more than every "
              "default and every ras repetition.", "", _verdict_table(summary)]
    return "\n".join(lines)


def _machines(runs: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(m for r in runs for s in r.steps for m in s.throttled))


def write_outputs(out: Path, runs: Sequence[Any], report: dict[str, Any], started: float) -> None:
    report["seconds"] = round(time.monotonic() - started, 1)
    report["runs"] = [{**r.row(), "applied": r.applied, "predicted": r.predicted, "notes": r.notes,
                       "sustained_rates": r.sustained_rates, "load_avg": r.load_avg,
                       "declared_cpu": dict(r.declared_cpu), "steps": [s.row() for s in r.steps],
                       # Unrounded, for a resumed bench to report exactly what this one would.
                       "step_records": [dataclasses.asdict(s) for s in r.steps]} for r in runs]
    rows = summary_rows(summaries(runs))
    report["summary"] = rows
    # Through a renamed temporary file: run.json is what a resumed bench reads its runs back from, and a
    # kill while it is written must leave the last whole copy.
    temporary = out / f"run.json.tmp{os.getpid()}"
    temporary.write_text(json.dumps(jsonable(report), indent=2) + "\n")
    os.replace(temporary, out / "run.json")
    if not runs:
        return
    write_csv(out / "runs.csv", [r.row() for r in runs])
    write_csv(out / "steps.csv", [s.row() for r in runs for s in r.steps])
    write_csv(out / "summary.csv", rows)
    (out / "results.md").write_text(markdown(runs, report))
    plot(out / "throughput.png", [r.row() for r in runs], rows)


def plot(path: Path, rows: Sequence[Mapping[str, Any]], summary: Sequence[Mapping[str, Any]]) -> None:
    """One panel per topology: each placement's highest sustained throughput per repetition (dots), their
    median (bar) and the simulator's for the applied placements (cross). ``rows`` are :meth:`Run.row` dicts
    (also in ``run.json``), ``summary`` :func:`~storm_planner_bench.hetero_real.compare.summary_rows`."""
    plt = pyplot()

    shapes = list(dict.fromkeys(r["topology"] for r in rows))
    fig, axes = plt.subplots(1, len(shapes), figsize=(4.5 * len(shapes) + 1, 4), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        order = [p for p in PLACEMENTS if any(r["topology"] == shape and r["placement"] == p for r in rows)]
        for x, placement in enumerate(order):
            colour = "tab:blue" if placement.startswith("hetero") else "tab:orange"
            measured = [r["measured_throughput"] for r in rows
                        if r["topology"] == shape and r["placement"] == placement and r["status"] == "ran"]
            ax.scatter([x] * len(measured), measured, color=colour, zorder=3,
                       label="measured, per repetition" if x == 0 else None)
            own = next((s for s in summary if s["topology"] == shape and s["placement"] == placement), None)
            if own and own["throughput_median"] != "":
                ax.bar([x], [own["throughput_median"]], width=0.5, color=colour, alpha=0.3,
                       label="median" if x == 0 else None)
            if own and own["predicted_throughput"] != "":
                ax.scatter([x + 0.2], [own["predicted_throughput"]], marker="x", color="black",
                           label="simulator" if x == 0 else None)
        top = max([0.0, *(float(r["measured_throughput"] or 0) for r in rows if r["topology"] == shape),
                   *(float(s["predicted_throughput"] or 0) for s in summary if s["topology"] == shape)])
        ax.set_ylim(0, 1.3 * top or 1.0)   # room for the legend above the dots
        ax.set_xticks(range(len(order)), order, rotation=20)
        ax.set_title(shape)
        ax.set_ylabel("highest sustained throughput (tuples/s, all tasks)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return value
