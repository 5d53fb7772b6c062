"""``storm-planner bench e2e-wire``: what each stream costs on Storm's wire, and the topDown family on it.

Where the end-to-end grid (``bench e2e``) measured topDown sending more bytes over the links than Storm's
RAS, was it the search or what the search was told? This study reads a grid's ``cells.csv`` (no cluster),
fits each stream's wire bytes per input tuple from the per-link bytes every cell measured
(:mod:`~storm_planner_bench.e2e.wire_fit`), checks the fit against every cell, and then asks, by the
fitted weights:

* how many bytes RAS's placement, each scheduler's, and each planner's first plan (made on the prior, as
  the grid's were) send between nodes;
* what each planner places when it weighs the fitted weights instead of the prior (what the service's
  ``planner.loads.remembered`` traffic gives a resubmitted topology), and the exact optimum (``optimal``,
  the count-vector dynamic programme of Chatzistergiou & Viglas §7.3's baseline) within the declared CPU.

Run from the repository root (the workloads' projects are read to build each first problem)::

    .venv/bin/storm-planner bench e2e-wire --cells benchmarks/harness/tests/data/e2e-grid-links.csv

That file is the third grid's cells, every column this study reads (the grid's whole ``cells.csv`` is
``benchmarks/reports/e2e-grid3/cells.csv`` at commit ``8e60c92``); it writes ``benchmarks/reports/e2e-wire.md``
again.

Writes ``<out>.md`` (with ``<out>/notes.md`` when there is one), ``<out>/weights.csv``, ``<out>/placements.csv``
and ``<out>/fit.png``. Seconds.
"""
from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.problem import Problem
from storm_planner.planners.base import run as run_planner
from storm_planner.planners.topdown._groups import imc_unknown_bytes
from storm_planner_bench.common.report import (
    Benchmark,
    argument,
    notes_section,
    pyplot,
    read_csv,
    save_figure,
    stamped_progress,
    write_csv,
)
from storm_planner_bench.e2e.submission import cluster_nodes, submission_problem
from storm_planner_bench.e2e.wire_fit import (
    REQUIRED_COLUMNS,
    Counts,
    TooFewCells,
    WireFit,
    fit_wire,
    link_figures,
    node_counts,
    stream_label,
)

DEFAULT_CELLS = Path("benchmarks/harness/tests/data/e2e-grid-links.csv")   # the third grid's, as the study reads it
DEFAULT_OUT = Path("benchmarks/results/e2e-wire")
DEFAULT_CLUSTER = Path("benchmarks/e2e/cluster.yaml")
DEFAULT_PLANNERS = "topdown,tasklevel,topdown-ls"
BASELINE = "ras"
_progress = stamped_progress("e2e-wire")


def plan_counts(problem: Problem, assignments: Mapping[str, Any]) -> Counts:
    """Component -> node -> executors of a plan's assignments."""
    component = {e.id: e.component for e in problem.executors}
    counts: dict[str, Counter[str]] = {}
    for executor, slot in assignments.items():
        counts.setdefault(component[executor], Counter())[slot.node] += 1
    return counts


def layout(counts: Counts) -> str:
    """``i7-a: __acker 2, count 1 | i7-b: ...``, nodes and components in name order."""
    nodes = sorted({node for where in counts.values() for node, n in where.items() if n})
    return " | ".join(f"{node}: " + ", ".join(f"{c} {int(where[node])}" for c, where in sorted(counts.items())
                                             if where.get(node)) for node in nodes)


def prior_weights(problem: Problem) -> dict[str, float]:
    """Bytes per input tuple each stream weighs in the first plan's model: rate x size, a user tuple of
    unknown size at the prior's weight (:func:`~storm_planner.planners.topdown._groups.imc_unknown_bytes`)."""
    unknown = imc_unknown_bytes(problem, "auto") or 0.0
    return {stream_label(s): s.rate * (s.tuple_bytes or unknown) for s in problem.streams}


def study_workload(workload: str, problem: Problem, cells: Sequence[Mapping[str, str]], nodes: Sequence[str],
                   planners: Sequence[str]) -> tuple[WireFit, list[dict[str, Any]]]:
    """The fit and one row per placement: each scheduler's (grid), each planner's on the prior and on the
    fitted weights, the optimum; bytes by the fitted weights, and as a ratio to RAS's placement."""
    fit = fit_wire(workload, problem, cells, nodes)
    rows = []
    by_scheduler: dict[str, list[tuple[Counts, float]]] = {}
    for cell in cells:   # the cells the fit could use (per-link bytes and workers known), each read once
        figures, counts = link_figures(cell, nodes), node_counts(cell.get("workers", ""))
        if figures is not None and counts:
            by_scheduler.setdefault(cell["scheduler"], []).append((counts, sum(figures.values())))
    for scheduler, runs in by_scheduler.items():
        placed = [counts for counts, _ in runs]
        # medians over its cells (a placement may change between repetitions); the layout: its last cell's
        rows.append(_row(workload, f"{scheduler} (grid)", placed[-1],
                         statistics.median(fit.streams_bytes(problem, p, nodes) for p in placed),
                         measured=statistics.median(measured for _, measured in runs),
                         predicted=statistics.median(fit.link_bytes(problem, p, nodes) for p in placed)))
    weighted = fit.weighted(problem)
    for planner in planners:
        rows.append(_planned(workload, f"{planner} on the prior", fit, problem, problem, planner, nodes))
        rows.append(_planned(workload, f"{planner} on the fitted weights", fit, problem, weighted, planner, nodes))
    rows.append(_planned(workload, "optimum on the fitted weights", fit, problem, weighted, "optimal", nodes))
    baseline = next((r["streams_bytes"] for r in rows if r["placement"] == f"{BASELINE} (grid)"), None)
    for row in rows:
        row["x_ras"] = (row["streams_bytes"] / baseline if baseline and row["streams_bytes"] is not None else None)
    return fit, rows


def _row(workload: str, placement: str, counts: Counts, streams_bytes: float, measured: float | None = None,
         predicted: float | None = None) -> dict[str, Any]:
    return {"workload": workload, "placement": placement, "measured_link_bytes": measured,
            "predicted_link_bytes": predicted, "streams_bytes": streams_bytes, "layout": layout(counts)}


def _planned(workload: str, label: str, fit: WireFit, problem: Problem, planned_on: Problem, planner: str,
             nodes: Sequence[str]) -> dict[str, Any]:
    try:
        plan = run_planner(planned_on, planner)
    except StormPlannerError as error:   # the exact optimum refuses large problems
        return {"workload": workload, "placement": label, "streams_bytes": None, "layout": f"not planned: {error}"}
    counts = plan_counts(problem, plan.assignments)
    return _row(workload, label, counts, fit.streams_bytes(problem, counts, nodes))


def run(args: argparse.Namespace) -> int:
    from storm_planner.cluster.description import load_description

    cells_path, out = Path(args.cells), Path(args.out)
    if not cells_path.exists():
        raise ValueError(f"--cells {cells_path}: no such file (run bench e2e first)")
    description = load_description(args.cluster)
    thrift_nodes = cluster_nodes(description)
    nodes = [n.id for n in thrift_nodes]
    columns, cells = read_csv(cells_path)
    if missing := [c for c in REQUIRED_COLUMNS if c not in columns]:
        raise ValueError(f"--cells {cells_path}: no {', '.join(missing)} column: not a bench e2e cells.csv")
    cells = [c for c in cells if c.get("status") == "ran" and c.get("workload") and c.get("scheduler")]
    workloads = _workloads(args.workloads, list(dict.fromkeys(c["workload"] for c in cells)), cells_path)
    planners = _planners(args.planners)
    fits, rows = [], []
    for workload in workloads:
        _progress(f"{workload}: fitting {sum(c['workload'] == workload for c in cells)} cells")
        problem = submission_problem(workload, Path.cwd(), thrift_nodes)
        try:
            fit, placed = study_workload(workload, problem, [c for c in cells if c["workload"] == workload], nodes,
                                         planners)
        except TooFewCells as error:   # the other workloads still get their study
            _progress(f"{workload}: skipped: {error}")
            continue
        fits.append((fit, prior_weights(problem)))
        rows += placed
    if not fits:
        raise ValueError(f"--cells {cells_path}: no workload has cells enough to fit")
    write_csv(out / "weights.csv", [{"workload": f.workload, "stream": s, "fitted_bytes_per_tuple": w,
                                     "prior_bytes_per_tuple": prior[s]} for f, prior in fits for s, w in
                                    zip(f.streams, f.weights)])
    write_csv(out / "placements.csv", rows)
    _plot(out / "fit.png", rows)
    report = _write_report(out, cells_path, [f for f, _ in fits], {f.workload: p for f, p in fits}, rows)
    print(json.dumps({"report": str(report), "workloads": [f.workload for f, _ in fits]}))
    return 0


def _planners(text: str) -> list[str]:
    """``--planners``: registered planner names (a typo is refused, not reported as a row never planned)."""
    from storm_planner.planners import available

    names = [p.strip() for p in text.split(",") if p.strip()]
    if unknown := [p for p in names if p not in available()]:
        raise ValueError(f"--planners: {', '.join(unknown)}: no such planner "
                         f"(registered: {', '.join(sorted(available()))})")
    return names


def _workloads(asked: str | None, found: list[str], cells: Path) -> list[str]:
    """The workloads to study: those asked (each must be a bench workload with cells), else every bench
    workload with cells (another's problem cannot be built offline: skipped, and said)."""
    from storm_planner_bench.e2e.workloads import WORKLOADS

    if asked:
        wanted = [w.strip() for w in asked.split(",") if w.strip()]
        missing = [w for w in wanted if w not in found or w not in WORKLOADS]
        if missing:
            raise ValueError(f"--workloads: {', '.join(missing)}: no cells in {cells} or not a bench workload "
                             f"(cells of: {', '.join(found) or 'none'})")
        return wanted
    for unknown in (w for w in found if w not in WORKLOADS):
        _progress(f"{unknown}: skipped: not a bench workload (its submission cannot be built)")
    return [w for w in found if w in WORKLOADS]


def _plot(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6, 5))
    grid = [r for r in rows if r.get("measured_link_bytes") is not None]
    for workload in dict.fromkeys(r["workload"] for r in grid):
        mine = [r for r in grid if r["workload"] == workload]
        axis.plot([r["measured_link_bytes"] for r in mine], [r["predicted_link_bytes"] for r in mine], "o",
                  label=workload, markersize=5)
    top = max((max(r["measured_link_bytes"], r["predicted_link_bytes"]) for r in grid), default=1.0) * 1.05
    axis.plot([0, top], [0, top], "k--", linewidth=0.8)
    axis.set_xlabel("measured link bytes per tuple (median over repetitions)")
    axis.set_ylabel("predicted by the fitted weights")
    axis.legend(fontsize=8)
    save_figure(figure, path, "Each scheduler's placement: fitted wire model against the grid")


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _write_report(out: Path, cells: Path, fits: Sequence[WireFit], priors: Mapping[str, Mapping[str, float]],
                  rows: Sequence[Mapping[str, Any]]) -> Path:
    sections = []
    for fit in fits:
        weights = "".join(f"| {s} | {w:,.1f} | {priors[fit.workload][s]:,.1f} |\n" for s, w in zip(fit.streams, fit.weights))
        placed = "".join(
            f"| {r['placement']} | {_number(r.get('measured_link_bytes'))} | {_number(r.get('predicted_link_bytes'))} "
            f"| {_number(r['streams_bytes'])} | {_number(r.get('x_ras'), 2)} | {r['layout']} |\n"
            for r in rows if r["workload"] == fit.workload)
        sections.append(
            f"## {fit.workload}\n\n{fit.cells} cells; the fit's error {fit.rms:.1f} B per tuple per link direction "
            f"(the measured figure's mean {fit.mean:.1f}); overheads per tuple (out, in; a node with a worker) "
            f"{fit.overheads[0]:.1f}, {fit.overheads[2]:.1f}.\n\n"
            "| stream | fitted B per input tuple | the prior's |\n|---|---:|---:|\n" + weights +
            "\n| placement | measured link B/tuple | predicted | streams' B/tuple by the fit | × ras | executors per node "
            "(a scheduler's last cell) |\n"
            "|---|---:|---:|---:|---:|---|\n" + placed + "\n")
    report = out.parent / f"{out.name}.md"
    report.write_text(
        "# What each stream costs on the wire, and the topDown family on it (issue #27)\n\n"
        f"Reproduce (no cluster; from the repository root):\n\n    .venv/bin/storm-planner bench e2e-wire "
        f"--cells {cells} --out {out}\n\n"
        "Each stream's wire bytes per input tuple are fitted (non-negative least squares) to the bytes every grid "
        "cell measured over each supervisor's link, in and out, by the traffic model's split of a stream over its "
        "executors (`benchmarks/harness/src/storm_planner_bench/e2e/wire_fit.py`). *measured*: the grid's median "
        "`link_bytes_per_tuple`; *predicted*: the fit's, overheads included; *streams' B/tuple*: the streams "
        "alone, by which the placements compare; *on the prior*: the planner's first plan as the grid's service "
        "made it; *on the fitted weights*: the same planner weighing the fitted bytes; *optimum*: the exact "
        "optimum of that model within the declared CPU (10 % per executor).\n\n"
        + "".join(sections) + notes_section(out, report)
        + f"Every figure: [{out.name}/placements.csv]({out.name}/placements.csv), "
        f"[{out.name}/weights.csv]({out.name}/weights.csv).\n\n![fit]({out.name}/fit.png)\n")
    return report


def _handler(args: argparse.Namespace) -> int:
    from storm_planner_bench.common.cluster import run_reporting

    return run_reporting("bench e2e-wire", lambda: run(args), _progress)


BENCHMARKS = (Benchmark("e2e-wire", "each stream's wire bytes fitted from an e2e grid's link bytes, and the topDown "
                                    "family's placements by them (no cluster)", (
    argument("--cells", default=str(DEFAULT_CELLS), help="an e2e grid's cells.csv (default: %(default)s)"),
    argument("--workloads", default=None, help="comma-separated (default: every workload in the cells)"),
    argument("--planners", default=DEFAULT_PLANNERS, help="planners to place on the prior and on the fitted "
                                                          "weights (default: %(default)s)"),
    argument("--cluster", default=str(DEFAULT_CLUSTER), help="the grid's cluster description (default: %(default)s)"),
    argument("--out", default=str(DEFAULT_OUT), help="CSVs and the plot; the report is <out>.md "
                                                     "(default: %(default)s)"),
), _handler),)
