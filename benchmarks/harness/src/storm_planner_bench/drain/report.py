"""The report of ``storm-planner bench drain``: ``<out>.md`` beside ``<out>/`` and its plot.

It states, per arm, whether issue #49's criterion holds in every repetition (a tuple acked in every 5 s
interval from 30 s before the move to 60 s after, and nothing lost), the figures behind it, each drain
phase's duration, what the restarted workers' starts were made of (:mod:`.workerstart`), and a plot of
acks per second around the move for every repetition of both arms (``<out>/acks-per-second.png``).
"""
from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.common.report import notes_section, pyplot, read_csv, save_figure
from storm_planner_bench.common.results import markdown_table
from storm_planner_bench.drain import series
from storm_planner_bench.drain import workerstart as ws

PLOT = "acks-per-second.png"
ARM_NAMES = {"drain": "drain on (planner.replan.drain.always)", "no-drain": "drain off (planner.replan.drain: false)",
             "auto": "the service decides (defaults)"}


def report_path(out: Path) -> Path:
    return out.parent / f"{out.name}.md"


def write_report(out: Path) -> Path | None:
    """``<out>.md`` and its plot; None (nothing written) before the first run."""
    runs_file = out / "runs.csv"
    if not runs_file.exists():
        return None
    runs = read_csv(runs_file)[1]
    seconds = read_csv(out / "seconds.csv")[1] if (out / "seconds.csv").exists() else []
    starts = read_csv(out / "starts.csv")[1] if (out / "starts.csv").exists() else []
    setup = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    plot = acks_plot(out, seconds, setup)
    path = report_path(out)
    path.write_text(render(out, path, runs, starts, setup, plot))
    return path


def render(out: Path, path: Path, runs: Sequence[dict[str, str]], starts: Sequence[dict[str, str]],
           setup: dict[str, Any], plot: Path | None) -> str:
    ran = [r for r in runs if r.get("status") == "ran"]
    arms = [a for a in ARM_NAMES if any(r["arm"] == a for r in runs)]
    parts = ["# A forced move of a running topology, drained and not (issue #49)\n\n",
             _setup(setup, runs), "## Verdict\n\n", _verdicts(ran, arms), "\n",
             "## Per arm\n\n", _arm_table(ran, arms), "\n", _phase_table(ran, arms), "\n",
             "## Acks per second around the move\n\n"]
    if plot is not None:
        parts.append(f"![acks per second around the move]({out.name}/{plot.name})\n\n")
    parts += ["Second 0 is the re-planner's decision. Drain on: the spouts pause (Nimbus deactivate) at once, the "
              "move follows once the tuples in flight are acked, the spouts resume once the restarted workers "
              "report their first metrics windows. Drain off: the move is answered at once.\n\n",
              "## Every run\n\n", _run_table(runs), "\n",
              "## What a restarted worker's start is made of\n\n", _starts(starts, runs), "\n",
              notes_section(out, path)]
    return "".join(parts)


def _setup(setup: dict[str, Any], runs: Sequence[dict[str, str]]) -> str:
    if not setup:
        return ""
    options = ", ".join(f"`{k}: {v}`" for k, v in (setup.get("options") or {}).items())
    return (f"Command (as root, from the repository root; resumes where it stopped):\n\n"
            f"    flock /tmp/storm-cluster.lock .venv/bin/{setup['command']} --out <out>\n\n"
            f"- Commit {setup.get('commit')}; cluster `{setup.get('cluster_file')}` ({setup.get('cluster')}).\n"
            f"- Workload `{setup.get('workload')}` at **{setup.get('rate'):g} t/s** per spout: "
            f"{setup.get('rate_source')}.\n"
            f"- Placed by `{setup.get('scheduler')}`, re-planning on; the forced move "
            f"`planner.replan.force: \"{setup.get('force')}\"` {setup.get('force_after_s'):g} s after the first plan "
            f"(target: {setup.get('target_why')}).\n"
            + (f"- Topology options for both arms: {options}.\n" if options else "")
            + f"- Figures from {setup.get('before_s', series.BEFORE_S):g} s before the decision to "
              f"{setup.get('after_s', series.AFTER_S):g} s after; {len(runs)} run(s).\n\n")


def _verdicts(ran: Sequence[dict[str, str]], arms: Sequence[str]) -> str:
    lines = []
    for arm in arms:
        mine = [r for r in ran if r["arm"] == arm]
        if not mine:
            lines.append(f"- **{ARM_NAMES[arm]}**: no run finished.\n")
            continue
        empty = [_int(r["intervals_without_ack"]) for r in mine]
        lost = sum(_int(r["lost"]) for r in mine)
        met = all(e == 0 for e in empty) and lost == 0
        gap = [_num(r["longest_gap_s"]) for r in mine]
        text = (f"- **{ARM_NAMES[arm]}**: the criterion (a tuple acked in every 5 s interval around the move, "
                f"nothing lost) is **{'met' if met else 'not met'}**: met in {sum(1 for r in mine if _met(r))} of "
                f"{len(mine)} repetitions; 5 s intervals without an ack {', '.join(map(str, empty))} "
                f"(longest stretch without an ack {_range(gap)} s), {lost} lost, "
                f"{sum(_int(r['failed']) for r in mine)} failed, {sum(_int(r['replayed']) for r in mine)} replayed.")
        if arm == "drain" and not met:
            text += " " + _gap_text(mine)
        lines.append(text + "\n")
    return "".join(lines)


def _gap_text(mine: Sequence[dict[str, str]]) -> str:
    """Where the drained arm's stretch without acks goes: its phases, the slowest worker's start."""
    phases = {p: _median([_num(r[f"{p}_s"]) for r in mine]) for p in series.PHASES}
    stopped = _median([_num(r["stopped_s"]) for r in mine])
    return (f"From the decision to the resume the spouts stand still for {stopped:.1f} s (median): pause "
            f"{phases['pause']:.1f} s, drain {phases['drain']:.1f} s, move {phases['move']:.1f} s, the restarted "
            f"workers' start until their first metrics windows {phases['start']:.1f} s, resume {phases['resume']:.1f} s. "
            f"The start is the gap (next section).")


def _arm_table(ran: Sequence[dict[str, str]], arms: Sequence[str]) -> str:
    header = ["arm", "runs", "5 s intervals without ack", "longest gap s", "lost", "failed", "replayed",
              "acked/s before", "acked/s 40-60 s after", "p50 from due ms", "p99 from due ms", "max from due ms"]
    rows = []
    for arm in arms:
        mine = [r for r in ran if r["arm"] == arm]
        if not mine:
            continue
        rows.append([ARM_NAMES[arm], len(mine), " ".join(r["intervals_without_ack"] for r in mine),
                     _range([_num(r["longest_gap_s"]) for r in mine]),
                     *(" ".join(r[k] for r in mine) for k in ("lost", "failed", "replayed")),
                     _range([_num(r["acked_per_s_before"]) for r in mine]),
                     _range([_num(r["acked_per_s_after"]) for r in mine]),
                     *(_range([_num(r[k]) for r in mine], 0) for k in ("due_p50_ms", "due_p99_ms", "due_max_ms"))])
    return ("Per repetition where several numbers are given; otherwise the median (least–most) over the repetitions. "
            "Latency from the due time of the tuples due in the minute around the move (acked ones; a tuple never "
            "acked is lost).\n\n" + markdown_table(header, rows, right=range(1, len(header))))


def _phase_table(ran: Sequence[dict[str, str]], arms: Sequence[str]) -> str:
    header = ["arm", *(f"{p} s" for p in series.PHASES), "decision to resume s", "in flight at the decision",
              "in flight after the drain"]
    rows = []
    for arm in arms:
        mine = [r for r in ran if r["arm"] == arm]
        if mine:
            rows.append([ARM_NAMES[arm], *(_range([_num(r[f"{p}_s"]) for r in mine]) for p in series.PHASES),
                         _range([_num(r["stopped_s"]) for r in mine]),
                         " ".join(r["in_flight_before"] or "–" for r in mine),
                         " ".join(r["in_flight_after_drain"] or "–" for r in mine)])
    return ("The drain's phases as the plan log records them (`\"event\": \"drain\"`), median (least–most); drain "
            "off records the move and the restarted workers' start alone.\n\n"
            + markdown_table(header, rows, right=range(1, len(header))))


def _run_table(runs: Sequence[dict[str, str]]) -> str:
    header = ["arm", "rep", "status", "without ack", "empty at s", "longest gap s", "lost", "failed", "replayed",
              "p99 due ms", "stopped s", "moved", "workers started (service) s"]
    rows = [[r["arm"], r["repetition"], r["status"], r.get("intervals_without_ack", ""), r.get("empty_at", ""),
             r.get("longest_gap_s", ""), r.get("lost", ""), r.get("failed", ""), r.get("replayed", ""),
             r.get("due_p99_ms", ""), r.get("stopped_s", ""), r.get("moved", ""), r.get("service_starts", "")]
            for r in runs]
    return markdown_table(header, rows, right=(3, 5, 6, 7, 8, 9, 10))


def _starts(starts: Sequence[dict[str, str]], runs: Sequence[dict[str, str]]) -> str:
    if not starts:
        return "No restarted worker's marks were read.\n"
    marks = [{m: _num(s.get(m.replace(" ", "_") + "_s")) for m in ws.MARKS} for s in starts]
    rows = [[r["mark"], r["slots"], _fmt(r["median_s"]), f"{_fmt(r['min_s'])}–{_fmt(r['max_s'])}"]
            for r in ws.summary(marks)]
    service = [_num(s.get("service_s")) for s in starts]
    rows.append(["first metrics window begins (the service's start)", *_spread(service)])
    read = [_num(r.get("start_s")) for r in runs if r.get("status") == "ran"]
    rows.append(["first metrics window read: the drain's start phase ends (per run)", *_spread(read)])
    return ("Seconds after the move (the plugin applied the new assignment) at which each restarted worker's "
            "supervisor and worker logs show each mark, over every restarted worker of every run "
            "(`storm_planner_bench.drain.workerstart`; the lines are kept under `logs/`).\n\n"
            + markdown_table(["mark", "workers", "median s", "least–most s"], rows, right=(1, 2, 3)))


def acks_plot(out: Path, seconds: Sequence[dict[str, str]], setup: dict[str, Any]) -> Path | None:
    """Acks per second against seconds from the decision, one line per run, a panel per arm."""
    arms = [a for a in ARM_NAMES if any(r["arm"] == a for r in seconds)]
    if not arms:
        return None
    plt = pyplot()
    figure, axes = plt.subplots(len(arms), 1, figsize=(9, 3.4 * len(arms)), sharex=True, sharey=True, squeeze=False)
    for axis, arm in zip(axes[:, 0], arms):
        reps = sorted({r["repetition"] for r in seconds if r["arm"] == arm}, key=int)
        for k, rep in enumerate(reps):
            mine = [r for r in seconds if r["arm"] == arm and r["repetition"] == rep]
            axis.plot([int(r["second"]) for r in mine], [int(r["acked"]) for r in mine], "-", color=f"C{k}",
                      linewidth=1.2, label=f"repetition {rep}")
        axis.axvline(0, color="grey", linestyle=":", linewidth=1)
        if setup.get("rate"):
            axis.axhline(float(setup["rate"]), color="grey", linestyle="--", linewidth=0.8)
        axis.set_title(ARM_NAMES[arm], fontsize=10)
        axis.set_ylabel("acks per second")
        axis.legend(fontsize=7, loc="lower left")
    axes[-1, 0].set_xlabel("seconds from the re-planner's decision")
    return save_figure(figure, out / PLOT, f"{setup.get('workload', '')}: acks per second around a forced move "
                                           f"(dashed: the offered rate)")


def _spread(values: Sequence[float]) -> list[Any]:
    kept = [v for v in values if math.isfinite(v)]
    return [len(kept), _fmt(_median(kept)), f"{_fmt(min(kept, default=math.nan))}–{_fmt(max(kept, default=math.nan))}"]


def _met(row: dict[str, str]) -> bool:
    return _int(row["intervals_without_ack"]) == 0 and _int(row["lost"]) == 0


def _num(text: Any) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def _int(text: Any) -> int:
    value = _num(text)
    return int(value) if math.isfinite(value) else 0


def _median(values: Sequence[float]) -> float:
    kept = [v for v in values if math.isfinite(v)]
    return statistics.median(kept) if kept else math.nan


def _range(values: Sequence[float], digits: int = 1) -> str:
    kept = [v for v in values if math.isfinite(v)]
    if not kept:
        return "–"
    median = _fmt(statistics.median(kept), digits)
    return median if len(kept) == 1 else f"{median} ({_fmt(min(kept), digits)}–{_fmt(max(kept), digits)})"


def _fmt(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else "–"
