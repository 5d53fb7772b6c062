"""When each tuple of a replay spout was emitted, acked and failed: the complete latency per tuple.

Storm reports only a mean complete latency; a benchmark wants percentiles and the tuples lost, so a
:class:`~storm_planner.streaming.spout.ReplaySpout` given ``P.times_dir`` writes one line per event
to ``<times_dir>/<component>-<task>-<pid>.times`` (one file per incarnation of the task: a spout that a
re-plan moves to another worker starts its message ids over, and its predecessor's tuples in flight are
lost)::

    e <message id> <unix time>     emitted (again on every replay)
    a <message id> <unix time>     acked
    f <message id> <unix time>     failed (timed out or failed by a bolt)

Lines are buffered and written at most ``FLUSH_S`` apart (and when the spout closes), so the log
costs the spout little. :func:`read_times` reads a directory of such files back.

A spout given ``P.stop_file`` stops emitting new records once that file exists (checked at most
``STOP_CHECK_S`` apart); it still re-emits failed tuples and takes acks, so the tuples in flight
drain: how a benchmark ends a measurement and counts what was lost.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

FLUSH_S = 1.0
STOP_CHECK_S = 1.0
SUFFIX = ".times"


class TimeLog:
    """One spout task's event log (``path`` None: records nothing)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._lines: list[str] = []
        self._flushed = time.monotonic()
        if path:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)

    def record(self, kind: str, message_id: str) -> None:
        if self.path:
            self._lines.append(f"{kind} {message_id} {time.time():.4f}\n")

    def maybe_flush(self) -> None:
        if self._lines and time.monotonic() - self._flushed >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        self._flushed = time.monotonic()
        if not self._lines or not self.path:
            return
        with open(self.path, "a", encoding="utf-8") as out:
            out.writelines(self._lines)
        self._lines.clear()


class StopSignal:
    """Whether ``path`` exists, looked at no more often than every ``STOP_CHECK_S``; once seen, stays set."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._seen = False
        self._checked = 0.0

    def is_set(self) -> bool:
        if self._seen or not self.path:
            return self._seen
        now = time.monotonic()
        if now - self._checked >= STOP_CHECK_S:
            self._checked = now
            self._seen = os.path.exists(self.path)
        return self._seen


@dataclass
class TupleTimes:
    """Every tuple's first emit and first ack time (unix seconds), and how many fail events there were."""

    emitted: dict[str, float] = field(default_factory=dict)
    acked: dict[str, float] = field(default_factory=dict)
    failed: int = 0
    replayed: int = 0   # emits of an id already emitted

    def latencies_s(self, begin: float, end: float) -> list[float]:
        """Complete latency (first emit to ack) of the acked tuples first emitted in [begin, end)."""
        return [self.acked[m] - at for m, at in self.emitted.items() if begin <= at < end and m in self.acked]

    def acked_between(self, begin: float, end: float) -> int:
        return sum(1 for at in self.acked.values() if begin <= at < end)

    def emitted_between(self, begin: float, end: float) -> int:
        return sum(1 for at in self.emitted.values() if begin <= at < end)

    def never_acked(self) -> int:
        return sum(1 for m in self.emitted if m not in self.acked)


def read_times(directory: str | os.PathLike, prefix: str = "") -> TupleTimes:
    """Every ``<prefix>*.times`` file under ``directory`` merged (ids are unique within one incarnation of a
    spout task only, so each is qualified by its file)."""
    times = TupleTimes()
    for path in sorted(Path(directory).glob(f"{prefix}*{SUFFIX}")):
        _read_one(path, times)
    return times


def _read_one(path: Path, times: TupleTimes) -> None:
    task = path.stem
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue   # a line cut short by a worker killed mid-write
        kind, message_id, at = parts
        key = f"{task}/{message_id}"
        if kind == "e":
            if key in times.emitted:
                times.replayed += 1
            else:
                times.emitted[key] = float(at)
        elif kind == "a":
            times.acked.setdefault(key, float(at))
        elif kind == "f":
            times.failed += 1
