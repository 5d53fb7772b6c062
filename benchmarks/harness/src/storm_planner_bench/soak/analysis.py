"""An hour of faults, read back: every figure of the report from what the run left (pure functions).

* **Tuples** (the replay spout's time logs, :mod:`storm_planner.streaming.timelog`, merged over its
  incarnations by id): emitted, acked, failed, replayed, and *lost*: emitted and never acked once the spout
  stopped and its tuples in flight drained.
* **Stalls**: a second is stalled when no tuple was acked in it while some were due and not yet acked (due:
  the replay schedule's time for a tuple, so a spout paused by a drain or held back by ``max.spout.pending``
  still has tuples due); a stall is a run of such seconds longer than ``STALL_S``. Its *causes* are the
  faults, crashes, drains and moves whose window holds the second it began: a fault's window runs from its
  injection until ``AFTERMATH_S`` after it was undone or its part answered again (a tuple lost with a
  worker times out after ``topology.message.timeout.secs``, 30 s, and a restarted worker takes up to a
  minute to run again); a drain's from its pause to ``AFTERMATH_S`` after it resumed; a move's (an answer
  that changed executors' slots) from the answer to ``AFTERMATH_S`` after. A stall with none is
  *unexplained*.
* **The service's memory and open files** (``service.csv``) are *flat* when the median of the run's last
  quarter is at most ``FLAT_SHARE`` (10 %) above the median of its second quarter (open files: or at most
  ``FLAT_FILES`` more), over the whole run and over the service's longest-lived process alone (a restart
  starts a process afresh, which would hide a leak in the whole run's quarters).
* **Logs**: the plan log's and the problem log's growth per hour from their first to their last sample, and
  their bound: each rotates at ``ROTATE_MB`` (``plans.jsonl.1``), so at most twice that on disk.
* **Nimbus** (``nimbus.csv``): an *outage* is a run of probes in which its Thrift port refused a connection
  or no Nimbus answered as leader. An injected Nimbus restart may cause one, and so may a ZooKeeper restart
  as long as Nimbus' port stays open throughout: Nimbus holds its leadership in ZooKeeper, so with ZooKeeper
  gone it runs on without a leader until it is back (Storm's design, not Nimbus down). Any other outage
  (one that begins outside every such fault's window: injection to its recovery, ``OUTAGE_SLACK_S`` either
  side) is a violation.
* **Re-plans, drains and fallbacks**: the plan log's answers for the topology (a *move* is an answer after
  the first that changed executors' slots: a re-plan's, or a placement of executors a dead worker left),
  its ``drain`` records grouped from each ``pause`` to its ``resume``, the answers that were errors, and
  the plugin's fallbacks as Nimbus' log states them (``storm-planner: ...`` lines).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.common.startup import log4j_epoch

STALL_S = 5.0
AFTERMATH_S = 90.0
FLAT_SHARE = 0.10
FLAT_FILES = 2
ROTATE_MB = 256.0
OUTAGE_SLACK_S = 5.0
DRAIN_PHASES = ("pause", "drain", "move", "start", "resume")


@dataclass(frozen=True)
class Cause:
    start: float     # Unix seconds
    end: float
    label: str


@dataclass(frozen=True)
class Seconds:
    """Per second from ``begin`` (Unix seconds, whole): acks, first emits, tuples due and not acked."""

    begin: int
    acks: np.ndarray
    emits: np.ndarray
    outstanding: np.ndarray


def per_second(times: TupleTimes, begin: float, end: float) -> Seconds:
    """Each second of [begin, end): tuples acked in it, first emitted in it, and due before its end but not
    acked before its start (the tuples the topology owed during it)."""
    first, last = int(math.floor(begin)), int(math.ceil(end))
    edges = np.arange(first, max(last, first + 1) + 1, dtype=float)
    ids = list(times.emitted)
    due = np.sort(np.array([times.due_of(m) for m in ids], dtype=float))
    acked = np.sort(np.array([times.acked[m] for m in ids if m in times.acked], dtype=float))
    emits = np.histogram(np.array([times.emitted[m] for m in ids], dtype=float), edges)[0]
    acks = np.histogram(acked, edges)[0]
    owed = np.searchsorted(due, edges[1:], side="left") - np.searchsorted(acked, edges[:-1], side="left")
    return Seconds(first, acks, emits, np.maximum(owed, 0))


def stalls(seconds: Seconds, longer_than_s: float = STALL_S) -> list[tuple[float, float, int]]:
    """(start, end, tuples owed at its start) of every run of stalled seconds longer than ``longer_than_s``."""
    stalled = (seconds.acks == 0) & (seconds.outstanding > 0)
    found, k = [], 0
    while k < len(stalled):
        if not stalled[k]:
            k += 1
            continue
        j = k
        while j < len(stalled) and stalled[j]:
            j += 1
        if j - k > longer_than_s:
            found.append((float(seconds.begin + k), float(seconds.begin + j), int(seconds.outstanding[k])))
        k = j
    return found


def explain(stall_start: float, causes: Iterable[Cause]) -> list[Cause]:
    """The causes whose window holds the second the stall began (a second's slack before it)."""
    return [c for c in causes if c.start - 1.0 <= stall_start <= c.end]


def fault_causes(faults: Sequence[Mapping[str, Any]], aftermath_s: float = AFTERMATH_S) -> list[Cause]:
    """Each fault's (and crash's) window: injection until ``aftermath_s`` after it was undone or answered."""
    causes = []
    for fault in faults:
        injected = _number(fault.get("injected"))
        if math.isnan(injected):
            continue
        back = max((_number(fault.get(k)) for k in ("undone", "recovered")
                    if not math.isnan(_number(fault.get(k)))), default=injected)
        label = f"fault {fault['index']} {fault['kind']}" if int(float(fault["index"])) > 0 else f"crash of {fault['target']}"
        if fault.get("target") and int(float(fault["index"])) > 0:
            label += f" ({fault['target']})"
        causes.append(Cause(injected, back + aftermath_s, label))
    return causes


# -- the plan log ----------------------------------------------------------------------------------------
def read_log_records(path: Path) -> list[dict[str, Any]]:
    """Every record of a plan log and its rotated ``.1`` (older first), oldest first; a line that is not JSON
    (cut by a kill mid-write) is skipped."""
    import json

    records = []
    for one in (path.with_name(path.name + ".1"), path):
        try:
            lines = one.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return sorted(records, key=lambda r: float(r.get("time") or 0.0))


def moves(records: Sequence[Mapping[str, Any]], topology: str) -> list[dict[str, Any]]:
    """Every answer for ``topology`` after its first that changed executors' slots: when, how many moved,
    by which algorithm, its first notes."""
    plans = [r for r in records if r.get("event", "plan") == "plan" and r.get("topology") == topology
             and not r.get("error") and r.get("assignments")]
    found = []
    for before, after in zip(plans, plans[1:]):
        moved = sorted(e for e, slot in after["assignments"].items() if before["assignments"].get(e) not in (None, slot))
        if moved:
            found.append({"time": float(after["time"]), "moved": len(moved), "executors": " ".join(moved[:8]),
                          "algorithm": after.get("algorithm", ""),
                          "notes": " | ".join(str(n) for n in (after.get("notes") or [])[:2])[:300]})
    return found


def answer_errors(records: Sequence[Mapping[str, Any]], topology: str) -> list[dict[str, Any]]:
    """The service's answers for ``topology`` that were errors (a placement the plugin then fell back for)."""
    return [{"time": float(r["time"]), "kind": (r.get("error") or {}).get("kind", ""),
             "message": str((r.get("error") or {}).get("message", ""))[:200]}
            for r in records if r.get("event", "plan") == "plan" and r.get("topology") == topology and r.get("error")]


def drains(records: Sequence[Mapping[str, Any]], topology: str) -> list[dict[str, Any]]:
    """The drains of ``topology``: its ``drain`` records grouped from each ``pause``, each phase's seconds,
    the tuples in flight the drain phase ended with, how the last phase ended."""
    found: list[dict[str, Any]] = []
    for record in records:
        if record.get("event") != "drain" or record.get("topology") != topology:
            continue
        phase, seconds = str(record.get("phase")), float(record.get("seconds") or 0.0)
        if phase == "pause" or not found:
            found.append({"start": float(record["time"]) - seconds, "end": float(record["time"]), "phases": []})
        drain = found[-1]
        drain["end"] = float(record["time"])
        drain["phases"].append(phase)
        drain[f"{phase}_phase_s"] = round(seconds, 1)
        if phase == "drain":
            drain["in_flight"] = record.get("in_flight")
        drain["outcome"] = f"{phase}: {record.get('outcome', '')}"
        drain["note"] = str(record.get("note", ""))[:200]
    for drain in found:
        drain["resumed"] = drain["phases"][-1] == "resume"
        drain["phases"] = " ".join(drain["phases"])
    return found


def plan_causes(move_rows: Sequence[Mapping[str, Any]], drain_rows: Sequence[Mapping[str, Any]],
                aftermath_s: float = AFTERMATH_S) -> list[Cause]:
    causes = [Cause(m["time"], m["time"] + aftermath_s, f"move of {m['moved']} executor(s)") for m in move_rows]
    causes += [Cause(d["start"], d["end"] + aftermath_s, f"drain ({d['phases']})") for d in drain_rows]
    return causes


# -- Nimbus' log: the plugin's fallbacks -----------------------------------------------------------------
_PLUGIN_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) .*? \[(?:INFO|WARN|ERROR)\] storm-planner: (.*)$")
PLUGIN_EVENTS = (("fell back to DefaultScheduler", "fallback"),
                 ("logged once until the cause changes", "service failed"),
                 ("answers", "service answers"),
                 ("re-planning", "re-plan failed"),
                 ("left unscheduled", "left unscheduled"))


def plugin_events(lines: Iterable[str], begin: float, end: float) -> list[dict[str, Any]]:
    """The plugin's fallback-related lines of Nimbus' log between ``begin`` and ``end``: time, kind, text."""
    found = []
    for line in lines:
        match = _PLUGIN_LINE.match(line)
        if not match:
            continue
        at = log4j_epoch(match.group(1), match.group(2))
        text = match.group(3)
        kind = next((k for marker, k in PLUGIN_EVENTS if marker in text), None)
        if kind is not None and begin <= at <= end:
            found.append({"time": at, "kind": kind, "text": text[:240]})
    return found


def nimbus_log_lines(log_dir: Path, max_bytes: int = 64 * 1024 * 1024) -> list[str]:
    """The plugin's lines of ``nimbus.log`` (and its rotated ``.N.gz`` files are left aside), at most
    ``max_bytes`` read."""
    try:
        with (log_dir / "nimbus.log").open("rb") as handle:
            text = handle.read(max_bytes).decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if "storm-planner: " in line]


# -- Nimbus' availability --------------------------------------------------------------------------------
def outages(probes: Sequence[Mapping[str, Any]]) -> list[tuple[float, float, int, int]]:
    """(first failed probe, first good probe after, probes failed, of them with the port refused) of each
    run of probes in which Nimbus' port refused or no leader answered; an outage still going at the last
    probe ends there."""
    found, began, count, refused = [], None, 0, 0
    for probe in probes:
        port_open = int(float(probe.get("port_open") or 0))
        down = not (port_open and int(float(probe.get("leader") or 0)))
        at = float(probe["time"])
        if down:
            began, count, refused = (at if began is None else began), count + 1, refused + (not port_open)
        elif began is not None:
            found.append((began, at, count, refused))
            began, count, refused = None, 0, 0
    if began is not None:
        found.append((began, float(probes[-1]["time"]), count, refused))
    return found


def outage_rows(probes: Sequence[Mapping[str, Any]], faults: Sequence[Mapping[str, Any]], start: float
                ) -> list[dict[str, Any]]:
    """Each Nimbus outage with the injected Nimbus restart it falls in, or what else was happening; allowed
    in a Nimbus restart, or in a ZooKeeper restart with the port open throughout (leaderless, not down)."""
    restarts: list[tuple[float, float, str]] = []
    others: list[tuple[float, float, str]] = []
    zookeeper: list[tuple[float, float, str]] = []   # to ZooKeeper back and Nimbus leading again
    for fault in faults:
        injected = _number(fault.get("injected"))
        if math.isnan(injected):
            continue
        back = _number(fault.get("recovered"))
        back = _number(fault.get("undone")) if math.isnan(back) else back
        window = (injected - OUTAGE_SLACK_S, back + OUTAGE_SLACK_S, f"fault {fault['index']} {fault['kind']}")
        (restarts if fault["kind"] == "nimbus-restart" else others).append(window)
        if fault["kind"] == "zookeeper-restart":
            healthy = _number(fault.get("healthy"))
            leading = back if math.isnan(healthy) else max(back, healthy)
            zookeeper.append((window[0], leading + OUTAGE_SLACK_S, window[2]))
    rows = []
    for began, ended, count, refused in outages(probes):
        restart = next((label for a, b, label in restarts if a <= began <= b), "")
        during = next((label for a, b, label in others if a <= began <= b), "")
        # the whole outage inside a ZooKeeper restart, Nimbus' port open throughout
        leaderless = not refused and any(a <= began and ended <= b for a, b, _ in zookeeper)
        rows.append({"start_s": round(began - start, 1), "seconds": round(ended - began, 1), "probes": count,
                     "port_refused": refused, "injected_restart": restart, "during": during,
                     "allowed": bool(restart) or leaderless})
    return rows


def status_causes(probes: Sequence[Mapping[str, Any]]) -> list[Cause]:
    """Runs of probes that saw the topology in another state than ACTIVE (a drain's pause, a rebalance)."""
    causes: list[Cause] = []
    began: float | None = None
    status = ""
    for probe in probes:
        now = str(probe.get("topology_status") or "")
        at = float(probe["time"])
        if now and now != "ACTIVE" and began is None:
            began, status = at, now
        elif began is not None and now == "ACTIVE":
            causes.append(Cause(began, at, f"topology {status}"))
            began = None
    if began is not None:
        causes.append(Cause(began, float(probes[-1]["time"]), f"topology {status}"))
    return causes


# -- the service's memory and open files -----------------------------------------------------------------
def quarter_medians(samples: Sequence[tuple[float, float]], begin: float, end: float) -> tuple[float, float]:
    """(median of the second quarter of [begin, end], median of the last quarter) of (time, value) samples."""
    span = end - begin

    def median(a: float, b: float) -> float:
        values = [v for t, v in samples if begin + a * span <= t <= begin + b * span and math.isfinite(v)]
        return float(np.median(values)) if values else math.nan

    return median(0.25, 0.5), median(0.75, 1.0)


def flat(second: float, last: float, slack: float = 0.0) -> bool:
    """The last quarter's median at most ``FLAT_SHARE`` above the second quarter's (or ``slack`` more)."""
    if math.isnan(second) or math.isnan(last):
        return False
    return last <= second * (1 + FLAT_SHARE) or last <= second + slack


def incarnations(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The service's samples by process (pid), for those it was alive in."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get("rss_kb") not in (None, ""):
            found.setdefault(str(row["pid"]), []).append(row)
    return found


def memory_rows(rows: Sequence[Mapping[str, Any]], begin: float, end: float) -> list[dict[str, Any]]:
    """For the whole run and the longest-lived service process: RSS (MB) and open files, the second and last
    quarters' medians and whether they are flat; per process its first and last sample."""
    table = []
    by_pid = incarnations(rows)
    scopes: list[tuple[str, Sequence[Mapping[str, Any]], float, float]] = [("whole run", rows, begin, end)]
    if by_pid:
        pid, longest = max(by_pid.items(), key=lambda item: float(item[1][-1]["time"]) - float(item[1][0]["time"]))
        scopes.append((f"longest-lived process (pid {pid})", longest, float(longest[0]["time"]),
                       float(longest[-1]["time"])))
    for scope, samples, a, b in scopes:
        rss = [(float(r["time"]), _number(r.get("rss_kb")) / 1024) for r in samples]
        files = [(float(r["time"]), _number(r.get("open_files"))) for r in samples]
        children = [(float(r["time"]), _number(r.get("children"))) for r in samples]
        (rss2, rss4), (files2, files4), (kids2, kids4) = (quarter_medians(s, a, b) for s in (rss, files, children))
        table.append({"scope": scope, "minutes": round((b - a) / 60, 1),
                      "rss_q2_mb": _round(rss2), "rss_q4_mb": _round(rss4), "rss_flat": flat(rss2, rss4),
                      "files_q2": _round(files2), "files_q4": _round(files4),
                      "files_flat": flat(files2, files4, FLAT_FILES),
                      "children_q2": _round(kids2), "children_q4": _round(kids4)})
    return table


def process_rows(rows: Sequence[Mapping[str, Any]], start: float) -> list[dict[str, Any]]:
    """Each service process: when it was first and last sampled, its RSS and open files then."""
    table = []
    for pid, samples in incarnations(rows).items():
        first, last = samples[0], samples[-1]
        table.append({"pid": pid, "first_s": round(float(first["time"]) - start, 1),
                      "last_s": round(float(last["time"]) - start, 1),
                      "rss_first_mb": _round(_number(first.get("rss_kb")) / 1024),
                      "rss_last_mb": _round(_number(last.get("rss_kb")) / 1024),
                      "files_first": first.get("open_files"), "files_last": last.get("open_files"),
                      "children_last": last.get("children")})
    return table


# -- the logs' sizes -------------------------------------------------------------------------------------
def log_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per log: its size at the first and last sample, growth per hour, the bound, hours to its first rotation."""
    table: list[dict[str, Any]] = []
    sized = [r for r in rows if r.get("plan_log_bytes") not in (None, "")]
    if len(sized) < 2:
        return table
    first, last = sized[0], sized[-1]
    hours = (float(last["time"]) - float(first["time"])) / 3600
    for name, column in (("plan log", "plan_log_bytes"), ("problem log", "problem_log_bytes")):
        a, b = _number(first.get(column)), _number(last.get(column))
        growth = (b - a) / hours if hours > 0 else math.nan
        table.append({"log": name, "first_mb": _round(a / 2**20, 2), "last_mb": _round(b / 2**20, 2),
                      "growth_mb_per_hour": _round(growth / 2**20, 2), "rotates_at_mb": ROTATE_MB,
                      "bound_mb": 2 * ROTATE_MB,
                      "hours_to_rotation": _round((ROTATE_MB * 2**20 - b) / growth, 1) if growth > 0 else ""})
    return table


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _round(value: float, digits: int = 1) -> float | str:
    return round(value, digits) if math.isfinite(value) else ""
