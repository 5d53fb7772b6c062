"""The report of an hour of faults: its tables from the run's files (:mod:`.analysis`), stored as
``OUT/cells.csv`` and shown as sections of ``OUT.md`` with two figures.

What a run leaves under ``OUT`` (:mod:`.experiment` writes it as it goes, so a run stopped in the middle
is reported as far as it went): ``run.json`` (its settings, schedule, timetable, when it started and ended,
how it ended), ``faults.csv``, ``rates.csv``, ``service.csv``, ``nimbus.csv``, the spout's time logs
(``topology/times``) and the cluster's state and logs (``cluster/``, with the plan log). ``--report-only``
analyses them again; without them (a published report keeps only ``cells.csv``, the figures and the
markdown) it rewrites the markdown from ``cells.csv``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner_bench.common.report import pyplot, read_csv, save_figure
from storm_planner_bench.common.results import (
    Renderer,
    Tables,
    folded,
    markdown_table,
    read_tables,
    regenerate,
    report_path,
    store,
    write_section,
)
from storm_planner_bench.soak import analysis
from storm_planner_bench.soak.schedule import KINDS

RUN = "run.json"
FAULTS, RATES, SERVICE, NIMBUS = "faults.csv", "rates.csv", "service.csv", "nimbus.csv"
TIMES = Path("topology") / "times"
PLAN_LOG = Path("cluster") / "logs" / "plans.jsonl"
LOG_DIR = Path("cluster") / "logs"
COLOURS = dict(zip((*KINDS, "crash"), ("tab:red", "tab:orange", "tab:olive", "tab:purple", "tab:brown",
                                       "tab:cyan", "black")))


def read_run(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / RUN).read_text())
    except (OSError, ValueError):
        return {}


def save_run(out: Path, run: Mapping[str, Any]) -> None:
    fresh = out / (RUN + ".new")
    fresh.write_text(json.dumps(run, indent=1) + "\n")
    fresh.replace(out / RUN)


def _rows(out: Path, name: str) -> list[dict[str, str]]:
    path = out / name
    return read_csv(path)[1] if path.exists() else []


# -- the analysis ----------------------------------------------------------------------------------------
def analyse(out: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The report's tables, and what its figures draw, from the run's files under ``out``."""
    from storm_planner.streaming.timelog import read_times

    run = read_run(out)
    start = float(run["start"])
    end = float(run.get("end") or run.get("stopped") or start)
    drained = float(run.get("drained") or end)
    topology = str(run.get("topology", ""))
    times = read_times(out / TIMES) if (out / TIMES).is_dir() else None
    faults = [{k: v for k, v in row.items() if k is not None} for row in _rows(out, FAULTS)]
    service, probes = _rows(out, SERVICE), _rows(out, NIMBUS)
    records = analysis.read_log_records(out / PLAN_LOG)
    move_rows, drain_rows = analysis.moves(records, topology), analysis.drains(records, topology)
    events = analysis.plugin_events(analysis.nimbus_log_lines(out / LOG_DIR), start, drained)
    causes = (analysis.fault_causes(faults, run.get("aftermath_s", analysis.AFTERMATH_S))
              + analysis.plan_causes(move_rows, drain_rows, run.get("aftermath_s", analysis.AFTERMATH_S))
              + analysis.status_causes(probes))
    seconds = analysis.per_second(times, start, drained) if times is not None and times.emitted else None
    stall_rows = _stall_rows(seconds, causes, start)
    tables = {
        "summary": summary_rows(run, times, stall_rows, faults, service, probes, start, end),
        "faults": _fault_rows(faults, times, run),
        "stalls": stall_rows,
        "throughput": _step_rows(seconds, _rows(out, RATES), run, start, end),
        "service": analysis.memory_rows(service, start, end) if service else [],
        "processes": analysis.process_rows(service, start) if service else [],
        "logs": analysis.log_rows(service),
        "nimbus": analysis.outage_rows(probes, faults, start) if probes else [],
        "moves": [{"time_s": round(m["time"] - start, 1), **{k: v for k, v in m.items() if k != "time"}}
                  for m in move_rows],
        "drains": [_drain_row(d, start) for d in drain_rows],
        "fallbacks": [{"time_s": round(e["time"] - start, 1), "kind": e["kind"], "text": e["text"]} for e in events]
                     + [{"time_s": round(e["time"] - start, 1), "kind": f"service answered {e['kind']}",
                         "text": e["message"]} for e in analysis.answer_errors(records, topology)],
    }
    figures = {"seconds": seconds, "start": start, "faults": faults, "drains": drain_rows, "stalls": stall_rows,
               "rates": _rows(out, RATES), "service": service}
    return tables, figures


def _stall_rows(seconds, causes: Sequence[analysis.Cause], start: float) -> list[dict[str, Any]]:
    if seconds is None:
        return []
    rows = []
    for began, ended, owed in analysis.stalls(seconds):
        found = analysis.explain(began, causes)
        rows.append({"start_s": round(began - start, 1), "seconds": round(ended - began, 1), "tuples_due": owed,
                     "causes": "; ".join(f"{c.label} (began {began - c.start:.0f} s after it)" for c in found)
                     or "unexplained"})
    return rows


def _fault_rows(faults: Sequence[Mapping[str, Any]], times, run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """faults.csv's rows for the report, with the tuples failed and replayed from each fault's injection to
    ``aftermath_s`` after its cluster was healthy again (windows of close faults overlap)."""
    rows = []
    after = float(run.get("aftermath_s", analysis.AFTERMATH_S))
    for fault in faults:
        row = {key: fault.get(key, "") for key in ("index", "kind", "target", "planned_s", "injected_at_s", "down_s",
                                                   "recover_s", "healthy_s", "outcome", "detail")}
        injected, healthy = _number(fault.get("injected")), _number(fault.get("healthy"))
        if times is not None and not math.isnan(injected):
            until = (healthy if not math.isnan(healthy) else _number(fault.get("undone"))) + after
            row["failed"] = times.failed_between(injected, until)
            row["replayed"] = times.replayed_between(injected, until)
        rows.append(row)
    return rows


def _step_rows(seconds, rates: Sequence[Mapping[str, Any]], run: Mapping[str, Any], start: float, end: float
               ) -> list[dict[str, Any]]:
    """Per rate step: the rate offered, tuples emitted and acked per second in it, its stalled seconds."""
    if seconds is None or not rates:
        return []
    rows = []
    bounds = [float(r["time"]) for r in rates[1:]] + [end]
    for rate, until in zip(rates, bounds):
        began = float(rate["time"])
        a, b = max(0, int(began) - seconds.begin), max(0, int(until) - seconds.begin)
        span = max(1, b - a)
        stalled = int(((seconds.acks[a:b] == 0) & (seconds.outstanding[a:b] > 0)).sum())
        rows.append({"start_s": round(began - start, 1), "seconds": round(until - began, 1),
                     "offered_tps": float(rate["rate"]), "emitted_tps": round(float(seconds.emits[a:b].sum()) / span, 1),
                     "acked_tps": round(float(seconds.acks[a:b].sum()) / span, 1), "stalled_s": stalled})
    return rows


def _drain_row(drain: Mapping[str, Any], start: float) -> dict[str, Any]:
    row = {"start_s": round(drain["start"] - start, 1), "seconds": round(drain["end"] - drain["start"], 1)}
    row.update({k: drain.get(k, "") for k in ("phases", *(f"{p}_phase_s" for p in analysis.DRAIN_PHASES),
                                               "in_flight", "outcome", "note")})
    return row


def summary_rows(run: Mapping[str, Any], times, stall_rows, faults, service, probes, start: float, end: float
                 ) -> list[dict[str, Any]]:
    """The checks of the report: figure, criterion and verdict each."""
    rows: list[dict[str, Any]] = [{"check": "run", "value": f"{(end - start) / 60:.1f} min of "
                                   f"{float(run.get('duration_s', 0)) / 60:.0f}; {run.get('status', '')}",
                                   "criterion": "ran to its end", "verdict": _ok(run.get("status") == "finished")}]
    if times is not None:
        drained = run.get("drained") is not None
        lost = times.never_acked()
        rows += [{"check": "tuples", "value": f"{len(times.emitted):,} emitted, {len(times.acked):,} acked, "
                  f"{times.failed:,} failed, {times.replayed:,} replayed", "criterion": "", "verdict": ""},
                 {"check": "lost", "value": f"{lost:,}" + ("" if drained else " (not drained: tuples in flight count)"),
                  "criterion": "0 emitted and never acked after the final drain", "verdict": _ok(lost == 0 and drained)}]
    unexplained = sum(1 for s in stall_rows if s["causes"] == "unexplained")
    rows.append({"check": "stalls", "value": f"{len(stall_rows)} over {analysis.STALL_S:g} s, {unexplained} unexplained",
                 "criterion": "none unexplained", "verdict": _ok(unexplained == 0)})
    rows += _service_checks(faults, service, start, end)
    rows.append(_nimbus_check(faults, probes, start))
    rows.append(_cluster_check(faults))
    final = next((p.get("topology_status") for p in reversed(probes) if p.get("topology_status")), "")
    rows.append({"check": "topology at the end", "value": final or "unknown", "criterion": "ACTIVE",
                 "verdict": _ok(final == "ACTIVE" or run.get("final_status") == "ACTIVE")})
    return rows


def _service_checks(faults, service, start: float, end: float) -> list[dict[str, Any]]:
    rows = []
    hit = [f for f in faults if f.get("kind") in ("service-kill", "service-hang")
           or (f.get("kind") == "crash" and f.get("target") == "planner")]
    back = [f for f in hit if _answered(f)]
    rows.append({"check": "service back after its faults", "value": f"{len(back)} of {len(hit)}",
                 "criterion": "answers again after every one", "verdict": _ok(len(back) == len(hit))})
    if service:
        for scope in analysis.memory_rows(service, start, end):
            rows.append({"check": f"service RSS, {scope['scope']}",
                         "value": f"{scope['rss_q2_mb']} -> {scope['rss_q4_mb']} MB; open files {scope['files_q2']} -> "
                                  f"{scope['files_q4']}",
                         "criterion": f"last quarter's median <= {1 + analysis.FLAT_SHARE:g} x the second quarter's "
                                      f"(files: or +{analysis.FLAT_FILES})",
                         "verdict": _ok(bool(scope["rss_flat"]) and bool(scope["files_flat"]))})
        for log in analysis.log_rows(service):
            rows.append({"check": log["log"], "value": f"{log['last_mb']} MB, {log['growth_mb_per_hour']} MB/h",
                         "criterion": f"rotates at {log['rotates_at_mb']:g} MB: at most {log['bound_mb']:g} MB",
                         "verdict": "bounded"})
    return rows


def _nimbus_check(faults, probes, start: float) -> dict[str, Any]:
    rows = analysis.outage_rows(probes, faults, start) if probes else []
    bad = [r for r in rows if not r["allowed"]]
    leaderless = [r for r in rows if r["allowed"] and not r["injected_restart"]]
    restarts = [f for f in faults if f.get("kind") == "nimbus-restart"]
    back = [f for f in restarts if _answered(f)]
    return {"check": "Nimbus", "value": f"{len(rows)} outage(s): {len(rows) - len(bad) - len(leaderless)} in its "
                                        f"injected restarts, {len(leaderless)} leaderless in a ZooKeeper restart, "
                                        f"{len(bad)} other; {len(back)} of {len(restarts)} restarts back",
            "criterion": "down only in its injected restarts (leaderless only while ZooKeeper is), back after each",
            "verdict": _ok(bool(probes) and not bad and len(back) == len(restarts))}


def _cluster_check(faults) -> dict[str, Any]:
    """Whether the whole cluster (Nimbus leading and listing every supervisor, the service answering) was
    healthy again after every fault and crash."""
    done = [f for f in faults if f.get("outcome") != "not run"]
    healthy = [f for f in done if not math.isnan(_number(f.get("healthy")))]
    return {"check": "cluster healthy after each fault", "value": f"{len(healthy)} of {len(done)}",
            "criterion": "every one, within the recovery timeout", "verdict": _ok(len(healthy) == len(done))}


def _answered(fault) -> bool:
    """The part the fault hit answered again (its own recovery, whatever the rest of the cluster did)."""
    return not math.isnan(_number(fault.get("recovered")))


def _ok(good: bool) -> str:
    return "ok" if good else "NOT OK"


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


# -- the sections ----------------------------------------------------------------------------------------
EMPTY = {"rows": "none"}   # what an empty table is stored as (cells.csv cannot hold a table without rows)


def _table(name: str, columns: Sequence[str] | None = None) -> Renderer:
    def render(tables: Tables) -> str | None:
        rows = tables.get(name)
        if rows is None:
            return None
        if not rows or dict(rows[0]) == EMPTY:
            return "None.\n"
        shown = list(columns or rows[0])
        body = markdown_table(shown, ([_cell(row.get(c, "")) for c in shown] for row in rows))
        return folded(body, len(rows))

    return render


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else ""
    return str(value).replace("|", "/").replace("\n", " ")


# The columns each table shows, in order (cells.csv keeps one header for all of them).
COLUMNS = {
    "summary": ("check", "value", "criterion", "verdict"),
    "faults": ("index", "kind", "target", "planned_s", "injected_at_s", "down_s", "recover_s", "healthy_s", "failed",
               "replayed", "outcome", "detail"),
    "stalls": ("start_s", "seconds", "tuples_due", "causes"),
    "throughput": ("start_s", "seconds", "offered_tps", "emitted_tps", "acked_tps", "stalled_s"),
    "service": ("scope", "minutes", "rss_q2_mb", "rss_q4_mb", "rss_flat", "files_q2", "files_q4", "files_flat",
                "children_q2", "children_q4"),
    "processes": ("pid", "first_s", "last_s", "rss_first_mb", "rss_last_mb", "files_first", "files_last",
                  "children_last"),
    "logs": ("log", "first_mb", "last_mb", "growth_mb_per_hour", "rotates_at_mb", "bound_mb", "hours_to_rotation"),
    "nimbus": ("start_s", "seconds", "probes", "port_refused", "injected_restart", "during", "allowed"),
    "moves": ("time_s", "moved", "executors", "algorithm", "notes"),
    "drains": ("start_s", "seconds", "phases", *(f"{p}_phase_s" for p in analysis.DRAIN_PHASES), "in_flight",
               "outcome", "note"),
    "fallbacks": ("time_s", "kind", "text"),
}


def _tables(*names: str) -> Renderer:
    renderers = [_table(name, COLUMNS[name]) for name in names]

    def render(tables: Tables) -> str | None:
        parts = [(name, r(tables)) for name, r in zip(names, renderers)]
        shown = [f"**{name}**\n\n{body}" for name, body in parts if body is not None]
        return "\n".join(shown) if shown else None

    return render


# Each section's tables (stored in cells.csv under these names), the first giving the section its name.
SECTION_TABLES = {"summary": ("summary",), "faults": ("faults",), "stalls": ("stalls",),
                  "throughput": ("throughput",), "service": ("service", "processes", "logs"),
                  "nimbus": ("nimbus",), "replans": ("moves", "drains", "fallbacks")}
SECTIONS = {section: _table(names[0], COLUMNS[names[0]]) if len(names) == 1 else _tables(*names)
            for section, names in SECTION_TABLES.items()}
TITLES = {"summary": "Summary", "faults": "Faults", "stalls": "Stalls over 5 s, with their causes",
          "throughput": "Offered and acked per rate step", "service": "The planner service: memory, open files, logs",
          "nimbus": "Nimbus outages", "replans": "Moves, drains and fallbacks"}


def write_report(out: Path, command: str) -> Path:
    """Analyse the run under ``out`` and write ``cells.csv``, the figures and ``OUT.md``; without the run's
    files, rewrite ``OUT.md`` from ``cells.csv``. Returns the report's path."""
    if not (out / RUN).exists() or not read_run(out).get("start"):
        regenerate(out, SECTIONS, command)
        return report_path(out)
    tables, figures = analyse(out)
    for names in SECTION_TABLES.values():
        for name in names:
            store(out, name, tables[name] or [EMPTY])
    stored = read_tables(out)
    plots = {"throughput": plot_throughput, "service": plot_service}
    for section in SECTION_TABLES:
        if section in plots:
            plots[section](out / f"{section}.png", figures)
        body = SECTIONS[section](stored)
        write_section(out, section, f"## {TITLES[section]}", f"Reproduce: `{command}`", body or "None.")
    return report_path(out)


# -- the figures -----------------------------------------------------------------------------------------
def _fault_spans(axis, figures: Mapping[str, Any], labels: bool = True) -> None:
    """Each fault shaded from its injection until its part answered again, its number at the top."""
    start, seen = figures["start"], set()
    for fault in figures["faults"]:
        injected = _number(fault.get("injected"))
        if math.isnan(injected):
            continue
        back = max([t for t in (_number(fault.get("undone")), _number(fault.get("recovered"))) if math.isfinite(t)],
                   default=injected)
        kind = fault.get("kind", "")
        axis.axvspan(injected - start, max(back, injected + 1) - start, color=COLOURS.get(kind, "grey"), alpha=0.25,
                     label=kind if labels and kind not in seen else None)
        if labels:
            axis.annotate(str(fault.get("index", "")) if kind != "crash" else "crash", (injected - start, 1.0),
                          xycoords=("data", "axes fraction"), fontsize=7, va="bottom")
        seen.add(kind)


def plot_throughput(path: Path, figures: Mapping[str, Any]) -> None:
    """Acked and emitted tuples per second, the offered rate, the faults (shaded by kind), the drains
    (hatched) and the stalls over 5 s (red bars)."""
    seconds = figures["seconds"]
    if seconds is None:
        return
    plt = pyplot()
    start = figures["start"]
    figure, axis = plt.subplots(figsize=(13, 4.5))
    x = np.arange(len(seconds.acks)) + seconds.begin - start
    axis.plot(x, seconds.acks, lw=0.6, color="tab:blue", label="acked per second")
    rates = figures["rates"]
    if rates:
        axis.step([float(r["time"]) - start for r in rates] + [x[-1]],
                  [float(r["rate"]) for r in rates] + [float(rates[-1]["rate"])], where="post", color="tab:green",
                  lw=1.2, label="offered rate")
    _fault_spans(axis, figures)
    for drain in figures["drains"]:
        axis.axvspan(drain["start"] - start, drain["end"] - start, fill=False, hatch="//", edgecolor="tab:gray",
                     label="drain" if drain is figures["drains"][0] else None)
    offered = [float(r["rate"]) for r in rates]
    top = max(1.0, 2 * max(offered)) if offered else max(1.0, float(seconds.acks.max()))
    axis.set_ylim(-0.06 * top, top)   # a catch-up after a stall may go higher: clipped
    for stall in figures["stalls"]:
        axis.plot([stall["start_s"], stall["start_s"] + stall["seconds"]], [-0.03 * top] * 2, color="red", lw=4,
                  label="stall > 5 s" if stall is figures["stalls"][0] else None)
    axis.set_xlabel("seconds since the soak began (numbers: the faults of the table)")
    axis.set_ylabel("tuples per second")
    axis.legend(fontsize=7, ncol=4, loc="upper right")
    save_figure(figure, path, "Throughput with the faults")


def plot_service(path: Path, figures: Mapping[str, Any]) -> None:
    """The planner service's RSS and open files over time, its faults shaded, each new process marked."""
    rows = [r for r in figures["service"] if r.get("rss_kb")]
    if not rows:
        return
    plt = pyplot()
    start = figures["start"]
    figure, (memory, files) = plt.subplots(2, 1, figsize=(13, 5.5), sharex=True)
    x = [float(r["time"]) - start for r in rows]
    memory.plot(x, [float(r["rss_kb"]) / 1024 for r in rows], color="tab:blue", lw=1, label="service RSS (MB)")
    memory.plot(x, [float(r.get("children_rss_kb") or 0) / 1024 for r in rows], color="tab:gray", lw=0.8,
                label="its child processes' RSS (MB)")
    files.plot(x, [float(r["open_files"]) for r in rows], color="tab:purple", lw=1, label="open files")
    for axis in (memory, files):
        _fault_spans(axis, {**figures, "faults": [f for f in figures["faults"]
                                                 if f.get("kind") in ("service-kill", "service-hang", "crash")]},
                     labels=axis is memory)
        for before, after in zip(rows, rows[1:]):
            if before["pid"] != after["pid"]:
                axis.axvline(float(after["time"]) - start, color="black", lw=0.6, ls=":")
    memory.set_ylabel("MB")
    files.set_ylabel("open files")
    files.set_xlabel("seconds since the soak began (dotted: a new service process)")
    memory.legend(fontsize=7, loc="upper left")
    files.legend(fontsize=7, loc="upper left")
    save_figure(figure, path, "The planner service over the run")
