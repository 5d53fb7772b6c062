"""Where the time from submission to the first acked tuple goes, read from the workers' own logs.

On the emulated cluster a topology acks its first tuple 30-90 s after ``submit``. Storm's worker log
(``logs/workers-artifacts/<topology>/<port>/worker.log``) stamps each step of a worker's start, so the
wait splits into phases:

* **scheduling and launch**: submission until the first worker JVM logs ``Launching worker`` (Nimbus'
  next scheduling round and the plugin's plan, the supervisor's download of the topology's jar and
  configuration, the JVM's start);
* **worker start**: until the last worker logs ``has finished loading`` (Storm's classes, the executors);
* **components ready**: until the last spout logs ``Activating spout`` (for streamparse topologies the
  shell components' Python processes start and import here);
* **first emit**: until the replay spout emits its first tuple (the feed opens);
* **first ack**: until that tuple's tree completes.

The logs are read as untrusted text: at most ``MAX_WORKERS`` workers, the first ``MAX_LOG_BYTES`` of each,
and only lines that start with a log4j time stamp and carry one of the three markers above.
"""
from __future__ import annotations

import math
import re
import time
from pathlib import Path

MAX_WORKERS = 64
MAX_LOG_BYTES = 512 * 1024
PHASES = ("scheduling and launch", "worker start", "components ready", "first emit", "first ack")
# Time stamp, logger, thread ("main", "Thread-16-requests-executor[7, 7]"), level, then a marker: a
# message that merely contains a marker's text (a component's log line) is not one.
_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) [\w.$]+ [\w.$-]+(?:\[-?\d+, -?\d+\])? \[INFO\] "
                   r"(Launching worker for |Worker \S+ for storm \S+ on \S+ +has finished loading|Activating spout )")


def worker_marks(topology_dir: Path) -> dict[str, list[float]]:
    """Epoch seconds of each worker log's first ``launch``, ``loaded`` and ``active`` mark (a worker that
    restarts logs them again in the same file; its first start is the one that counts here)."""
    marks: dict[str, list[float]] = {"launch": [], "loaded": [], "active": []}
    logs = sorted(topology_dir.glob("*/worker.log"))[:MAX_WORKERS] if topology_dir.is_dir() else []
    for log in logs:
        with log.open("rb") as handle:
            head = handle.read(MAX_LOG_BYTES).decode("utf-8", errors="replace")
        first: dict[str, float] = {}
        for line in head.splitlines():
            match = _LINE.match(line)
            if match:
                kind = ("launch" if match.group(3).startswith("Launching") else
                        "active" if match.group(3).startswith("Activating") else "loaded")
                first.setdefault(kind, log4j_epoch(match.group(1), match.group(2)))
        for kind, stamp in first.items():
            marks[kind].append(stamp)
    return marks


def startup_phases(topology_dir: Path, submitted: float, first_emit: float, first_ack: float) -> dict[str, float]:
    """Seconds spent in each of :data:`PHASES` (NaN where a mark is missing), in order; they add up to
    submission -> first ack when every mark is there. Workers first started after the first emit (a
    re-plan's) do not count."""
    marks = {kind: [t for t in stamps if math.isnan(first_emit) or t <= first_emit]
             for kind, stamps in worker_marks(topology_dir).items()}
    points = [submitted, min(marks["launch"], default=math.nan), max(marks["loaded"], default=math.nan),
              max(marks["active"], default=math.nan), first_emit, first_ack]
    return {phase: round(later - earlier, 1) for phase, earlier, later in zip(PHASES, points, points[1:])}


def log4j_epoch(stamp: str, millis: str) -> float:
    """A log4j local-time stamp as epoch seconds."""
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) + int(millis) / 1000
