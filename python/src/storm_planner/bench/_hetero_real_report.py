"""``bench hetero-real``'s outputs: per-shape summaries, the markdown report, CSV tables and the plot.

``runs`` are the :class:`storm_planner.bench._hetero_real_driver.Run` records of one benchmark.
"""
from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner.bench._hetero_real_search import PLACEMENTS, pair_ratios, spouts_of
from storm_planner.bench.report import markdown_table, pyplot, write_csv

PAPER_REAL = (7, 44)            # §6.3, Fig. 8: measured gains over Storm's default (Linear +44 %)
PAPER_LINEAR = 44


def summaries(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """Per topology: measured and predicted gain, per-pair ratios and their spread."""
    found = []
    for shape in dict.fromkeys(r.shape for r in runs):
        hetero = [r for r in runs if r.shape == shape and r.placement == "hetero"]
        default = [r for r in runs if r.shape == shape and r.placement == "storm-default"]
        if not hetero or not default:
            continue
        pairs = pair_ratios([r.measured_throughput for r in hetero], [r.measured_throughput for r in default])
        predicted = hetero[0].predicted["input_rate"] / default[0].predicted["input_rate"]
        found.append({
            "topology": shape, "pairs": len(pairs.ratios),
            "ratios": [round(x, 3) for x in pairs.ratios],
            "gain_mean": round(100 * (pairs.mean - 1), 1),
            "gain_min": round(100 * (pairs.spread[0] - 1), 1), "gain_max": round(100 * (pairs.spread[1] - 1), 1),
            "ratio_stdev": round(pairs.stdev, 3),
            "predicted_gain": round(100 * (predicted - 1), 1),
            "hetero_predicted_input": round(hetero[0].predicted["input_rate"], 1),
            "default_predicted_input": round(default[0].predicted["input_rate"], 1),
            "hetero_measured_input": [round(r.measured_input, 1) for r in hetero],
            "default_measured_input": [round(r.measured_input, 1) for r in default],
        })
    return found


def markdown(runs: Sequence[Any], report: Mapping[str, Any]) -> str:
    shuffle = ("Storm 2's load- and locality-aware shuffle" if report["settings"].get("load_aware")
               else "uniform shuffle (`topology.disable.loadaware.messaging: true`, as the paper's Storm 0.9.5)")
    lines = ["# hetero vs Storm's default placement on the real local cluster", "",
             f"Command: `{report['command']}`", "", f"Grouping: {shuffle}.", ""]
    for shape, plan in report.get("plans", {}).items():
        search = " ".join(f"{k}={v}" for k, v in plan["search_placement"].items())
        applied = {" ".join(f"{k}={v}" for k, v in r.counts.items()) for r in runs
                   if r.shape == shape and r.placement == "hetero"}
        same = "the same" if applied == {search} else f"different: {'; '.join(sorted(applied))}"
        lines.append(f"* {shape}: `hetero` (search mode) chose {plan['parallelism']}, simulator "
                     f"{plan['figures']['max_input_rate']:.1f} tuples/s, placement {search}; the service's "
                     f"placement of the submitted graph: {same}.")
    table = []
    for r in runs:
        row = r.row()
        table.append([r.name, r.placement, row["parallelism"], row["placement_counts"], f"{r.sustained_offered:g}",
                      f"{r.measured_input:.1f}", f"{r.measured_throughput:.1f}", row["predicted_input"],
                      f"{row['load_avg_mean']} / {row['load_avg_max']}", len(r.steps), row["seconds"]])
    lines += ["", markdown_table(["run", "placement", "parallelism", "executors per machine",
                                  "highest sustained offered per spout (tuples/s)",
                                  "measured input (tuples/s, all spouts)", "measured throughput (tuples/s, all tasks)",
                                  "simulator input per spout (tuples/s)", "load avg mean / max", "steps", "s"],
                                 table, right=(4, 5, 6, 7, 9, 10)).rstrip("\n")]
    lines += ["", "At each run's highest sustained step: CPU of each machine (its cpuacct group: worker JVM, "
              "Python subprocesses, supervisor) and, in brackets, the part the metrics hook attributes to the "
              "machine's tasks (what eq. 7 models); share of CFS periods throttled.", ""]
    machines = _machines(runs)
    cpu = [[r.name, *(f"{r.top_step.machine_cpu.get(m, 0):.0f} ({r.top_step.task_cpu.get(m, 0):.0f}) / "
                      f"{100 * r.top_step.throttled.get(m, 0):.0f}" for m in machines)]
           for r in runs if r.top_step is not None]
    lines += [markdown_table(["run", *(f"{m} CPU % (tasks) / throttled %" for m in machines)], cpu)]
    gains = []
    for s in summaries(runs):
        paper = f"+{PAPER_LINEAR} %" if s["topology"] == "linear" else f"+{PAPER_REAL[0]}–{PAPER_REAL[1]} %"
        gains.append([s["topology"], s["pairs"], ", ".join(f"{x:.3f}" for x in s["ratios"]),
                      f"{s['gain_mean']:+.1f} ({s['gain_min']:+.1f} to {s['gain_max']:+.1f})",
                      f"{s['predicted_gain']:+.1f}", paper])
    lines.append(markdown_table(["topology", "pairs", "hetero/default per pair", "measured gain % mean (min–max)",
                                 "simulator gain %", "paper (Fig. 8, real)"], gains))
    return "\n".join(lines)


def _machines(runs: Sequence[Any]) -> list[str]:
    return list(dict.fromkeys(m for r in runs for s in r.steps for m in s.throttled))


def write_outputs(out: Path, runs: Sequence[Any], report: dict[str, Any], started: float) -> None:
    report["seconds"] = round(time.monotonic() - started, 1)
    report["runs"] = [{**r.row(), "applied": r.applied, "predicted": r.predicted, "notes": r.notes,
                       "sustained_rates": r.sustained_rates, "load_avg": r.load_avg,
                       "steps": [s.row() for s in r.steps]} for r in runs]
    report["summary"] = summaries(runs)
    (out / "run.json").write_text(json.dumps(jsonable(report), indent=2) + "\n")
    if not runs:
        return
    write_csv(out / "runs.csv", [r.row() for r in runs])
    write_csv(out / "steps.csv", [s.row() for r in runs for s in r.steps])
    if report["summary"]:
        write_csv(out / "pairs.csv", [{k: (" ".join(map(str, v)) if isinstance(v, list) else v)
                                        for k, v in s.items()} for s in report["summary"]])
    (out / "results.md").write_text(markdown(runs, report))
    plot(out / "throughput.png", [r.row() for r in runs], report["summary"])


def plot(path: Path, rows: Sequence[Mapping[str, Any]], summary: Sequence[Mapping[str, Any]]) -> None:
    """Left: each run's highest sustained input rate per spout, measured and simulated; right: the gain
    per pair against the simulator's and the paper's. ``rows`` are :meth:`Run.row` dicts (also in
    ``run.json``), ``summary`` is :func:`summaries`."""
    plt = pyplot()

    shapes = list(dict.fromkeys(r["topology"] for r in rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for i, shape in enumerate(shapes):
        for j, placement in enumerate(PLACEMENTS):
            own = [r for r in rows if r["topology"] == shape and r["placement"] == placement]
            x = i + (j - 0.5) * 0.35
            colour = "tab:blue" if placement == "hetero" else "tab:orange"
            per_spout = [r["measured_input"] / len(spouts_of(shape)) for r in own]
            left.scatter([x] * len(own), per_spout, color=colour, zorder=3,
                         label=f"{placement} measured" if i == 0 else None)
            if own:
                left.scatter([x + 0.08], [own[0]["predicted_input"]], marker="_", s=400, color=colour,
                             label=f"{placement} simulator" if i == 0 else None)
    left.set_xticks(range(len(shapes)), shapes)
    left.set_ylabel("highest sustained input rate per spout (tuples/s)")
    left.legend(fontsize=8)
    for i, s in enumerate(summary):
        gains = [100 * (x - 1) for x in s["ratios"]]
        right.scatter([i] * len(gains), gains, color="tab:blue", zorder=3, label="measured, per pair" if i == 0 else None)
        right.scatter([i + 0.15], [s["predicted_gain"]], marker="x", color="black",
                      label="simulator" if i == 0 else None)
    right.axhspan(*PAPER_REAL, color="grey", alpha=0.25, label="paper, real cluster (+7–44 %)")
    right.axhline(0, color="black", linewidth=0.5)
    right.set_xticks(range(len(summary)), [s["topology"] for s in summary])
    right.set_ylabel("throughput gain of hetero over storm-default (%)")
    right.legend(fontsize=8)
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
