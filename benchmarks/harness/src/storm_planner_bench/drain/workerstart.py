"""What a restarted worker's start is made of, read from the supervisor's and the worker's own logs.

A move restarts the workers whose executors change. From the move (the plugin applied the new assignment,
``t = 0``), per restarted slot (``node:port``), the first time each of these marks is logged after it:

* ``seen``: the slot's first state change in its supervisor's log (``supervisor-<node>.log``: ``Slot
  SLOT_<port> ... STATE a -> b``): the supervisor read the new assignment (Nimbus wrote it; the supervisor
  syncs every ``supervisor.monitor.frequency.secs`` or when ZooKeeper tells it);
* ``old gone``: the slot leaves its ``kill`` state: the old worker process is gone (Storm asks it to stop,
  and kills it ``supervisor.worker.shutdown.sleep.secs`` later if it has not);
* ``launched``: the supervisor logs ``Launching worker with command`` (blobs localized, the JVM exec'd);
* ``jvm up``: the worker logs ``Launching worker for`` (``workers-artifacts/<topology>/<port>/worker.log``):
  the JVM started and read its configuration;
* ``loaded``: ``has finished loading``: its executors built (ZooKeeper, Netty, the metrics hook);
* ``connected``: ``All connections are ready``: its Netty clients reach the other workers;
* ``components``: the last ``Launched subprocess with pid``, ``Prepared bolt`` or ``Opened spout``: the
  multilang components' Python processes started and their tasks ready;
* ``heartbeat``: the slot's ``waiting-for-worker-start -> running``: the supervisor read the worker's first
  local heartbeat.

The service sees the worker up later still, when its first metrics window comes (``planner.metrics.period.secs``
after the worker's tasks start, then written to ZooKeeper and read): the drain's ``start`` phase.

The logs are read as untrusted text: lines that start with a log4j time stamp and carry one of the markers
above, at most :data:`MAX_LOG_BYTES` of each file from its end.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner_bench.common.startup import log4j_epoch

MAX_LOG_BYTES = 64 * 1024 * 1024
MAX_KEPT_LINES = 400
HORIZON_S = 180.0           # marks later than this after the move are another start's
_SKEW_S = 1.0               # log4j stamps are of the same clock, to the millisecond; the move's is the service's
MARKS = ("seen", "old gone", "launched", "jvm up", "loaded", "connected", "components", "heartbeat")
_STAMP = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) "
_STATE = re.compile(_STAMP + r"[\w.$]+ SLOT_(\d+) \[INFO\] STATE ([\w-]+) msInState: \d+.*? -> ([\w-]+) msInState")
_LAUNCH = re.compile(_STAMP + r"[\w.$]+ SLOT_(\d+) \[INFO\] Launching worker with command")
_WORKER = re.compile(_STAMP + r"[\w.$]+ [\w.$\[\], -]+ \[INFO\] (Launching worker for |Worker \S+ for storm \S+ on \S+ +has "
                     r"finished loading|All connections are ready|Launched subprocess with pid|Prepared bolt |"
                     r"Opened spout )")
_WORKER_MARK = {"Launching worker for ": "jvm up", "All connections are ready": "connected",
                "Launched subprocess with pid": "components", "Prepared bolt ": "components",
                "Opened spout ": "components"}


def slot_marks(log_dir: Path, topology_id: str, slots: Iterable[str], moved_at: float) -> dict[str, dict[str, float]]:
    """Per restarted slot (``node:port``), each mark's seconds after ``moved_at`` (module docstring; NaN where
    the log has none)."""
    found: dict[str, dict[str, float]] = {}
    for slot in slots:
        node, _, port = slot.rpartition(":")
        marks = dict.fromkeys(MARKS, math.nan)
        marks.update(supervisor_marks(_lines(log_dir / f"supervisor-{node}.log"), port, moved_at))
        launched = marks["launched"]
        worker_from = moved_at + (launched if math.isfinite(launched) else 0.0)
        marks.update(worker_log_marks(_lines(log_dir / "workers-artifacts" / topology_id / port / "worker.log"),
                                      worker_from, moved_at))
        found[slot] = marks
    return found


def supervisor_marks(lines: Iterable[str], port: str, moved_at: float) -> dict[str, float]:
    """``seen``, ``old gone``, ``launched`` and ``heartbeat`` of slot ``port`` after ``moved_at`` (seconds)."""
    marks: dict[str, float] = {}
    for line in lines:
        state = _STATE.match(line)
        launch = None if state else _LAUNCH.match(line)
        match = state or launch
        if match is None or match.group(3) != port:
            continue
        at = log4j_epoch(match.group(1), match.group(2)) - moved_at
        if at < -_SKEW_S:          # before the move (allowing the stamps' skew)
            continue
        if at > HORIZON_S:
            break
        if state is None:
            marks.setdefault("launched", at)
            continue
        before, after = state.group(4), state.group(5)
        marks.setdefault("seen", at)
        if before.startswith("kill") and not after.startswith("kill"):
            marks.setdefault("old gone", at)
        if before == "waiting-for-worker-start" and after == "running":
            marks.setdefault("heartbeat", at)
    return marks


def worker_log_marks(lines: Iterable[str], since: float, moved_at: float) -> dict[str, float]:
    """``jvm up``, ``loaded``, ``connected`` (first after ``since``) and ``components`` (the last of the
    start's component marks, before the next ``Launching worker for``) in seconds after ``moved_at``."""
    marks: dict[str, float] = {}
    started = False
    for line in lines:
        match = _WORKER.match(line)
        if match is None:
            continue
        at = log4j_epoch(match.group(1), match.group(2))
        if at < since - _SKEW_S:
            continue
        text = match.group(3)
        kind = "loaded" if "has finished loading" in text else _WORKER_MARK[text]
        if kind == "jvm up":
            if started:
                break   # a later start of the same slot
            started = True
        if not started or at - moved_at > HORIZON_S:
            continue
        if kind == "components":
            marks["components"] = at - moved_at
        else:
            marks.setdefault(kind, at - moved_at)
    return marks


def kept_lines(log_dir: Path, topology_id: str, slots: Iterable[str], moved_at: float) -> list[str]:
    """The marker lines behind :func:`slot_marks` (at most :data:`MAX_KEPT_LINES`), to keep with the run."""
    kept: list[str] = []
    for slot in slots:
        node, _, port = slot.rpartition(":")
        for label, path, pattern in ((f"supervisor-{node}", log_dir / f"supervisor-{node}.log", None),
                                     (f"{slot} worker", log_dir / "workers-artifacts" / topology_id / port / "worker.log",
                                      _WORKER)):
            for line in _lines(path):
                match = pattern.match(line) if pattern else (_STATE.match(line) or _LAUNCH.match(line))
                if match is None or (pattern is None and match.group(3) != port):
                    continue
                at = log4j_epoch(match.group(1), match.group(2)) - moved_at
                if -_SKEW_S <= at <= HORIZON_S and len(kept) < MAX_KEPT_LINES:
                    kept.append(f"[{label}] {line[:400]}")
    return kept


def summary(marks: Sequence[Mapping[str, float]]) -> list[dict[str, Any]]:
    """Per mark: how many slots logged it, and the median, least and most seconds after the move."""
    rows = []
    for mark in MARKS:
        values = sorted(m[mark] for m in marks if math.isfinite(m.get(mark, math.nan)))
        rows.append({"mark": mark, "slots": len(values),
                     "median_s": round(_median(values), 2) if values else math.nan,
                     "min_s": round(values[0], 2) if values else math.nan,
                     "max_s": round(values[-1], 2) if values else math.nan})
    return rows


def _median(values: Sequence[float]) -> float:
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _lines(path: Path) -> Iterable[str]:
    if not path.is_file():
        return
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - MAX_LOG_BYTES))
        for raw in handle:
            yield raw.decode("utf-8", errors="replace").rstrip("\n")
