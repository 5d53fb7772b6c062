"""When each tuple of a replay spout was emitted, acked and failed: the complete latency per tuple.

Storm reports only a mean complete latency; a benchmark wants percentiles and the tuples lost, so a
:class:`~storm_planner.streaming.spout.ReplaySpout` given ``P.times_dir`` writes one line per event
to ``<times_dir>/<component>-<task>-<pid>.times``, one file per incarnation of the task::

    e <message id> <unix time> [<due time>]   emitted (again on every replay)
    a <message id> <unix time>                acked
    f <message id> <unix time>                failed (timed out or failed by a bolt)

A record's first emit carries its *due time* (unix seconds): when the replay schedule meant it to go out
(:mod:`.pacing`). Latency from the due time to the ack counts the time a tuple waited to be emitted
behind a spout that fell behind; from the emit it does not. A replay keeps its first emit's due time;
a line without one (an unpaced spout, an older log) is due when emitted.

Lines are buffered and written at most ``FLUSH_S`` apart (and when the spout closes), so the log
costs the spout little. A worker killed in the middle of a write leaves its last line cut: a line without
its newline, or a time without its fraction, is no event (a cut time read as a number would be taken for
the earliest ack). :func:`read_times` reads a directory of such files back.

Message ids across incarnations. A spout without a checkpoint that a re-plan restarts (its worker's
executors changed) starts its message ids over: "0:0:0" of one incarnation is not "0:0:0" of the next, so
each file's ids stand alone and the predecessor's tuples in flight count as lost. A spout that resumes
from a checkpoint (``P.checkpoint_dir``, :mod:`.spout`) gives a record the same ids in every incarnation;
its files begin with the line ``# ids stable <component>-<task>`` (``STABLE_HEADER``), and
:func:`read_times` merges the files that name the same task by id: a tuple emitted by one incarnation and
acked by the next counts as acked, its latency from its first emit (in any incarnation) to its first ack,
and every later emit of it (a replay after a fail, or the re-emit of an uncommitted record after a
restart) as ``replayed``. Files without that line are keyed by file, as before.

A spout given ``P.stop_file`` stops emitting new records once that file exists (checked at most
``STOP_CHECK_S`` apart); it still re-emits failed tuples and takes acks, so the tuples in flight
drain: how a benchmark ends a measurement and counts what was lost.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

FLUSH_S = 1.0
STOP_CHECK_S = 1.0
SUFFIX = ".times"
# First line of a file whose ids are the same in every incarnation of its task, followed by the task's key.
STABLE_HEADER = "# ids stable"
_TIME = re.compile(r"[0-9]+\.[0-9]+")


class TimeLog:
    """One spout task's event log (``path`` None: records nothing). ``stable_key`` (``<component>-<task>``):
    the task's message ids are the same in every incarnation; the file's first line says so."""

    def __init__(self, path: str | None, stable_key: str | None = None) -> None:
        if stable_key is not None and (not stable_key.strip() or any(c.isspace() for c in stable_key)):
            raise ValueError(f"a time log's stable key must be one word, not {stable_key!r}")
        self.path = path
        self.stable_key = stable_key
        self._lines: list[str] = []
        self._flushed = time.monotonic()
        self._end_checked = False   # whether the file's end was checked for a predecessor's cut line
        if path:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)

    def record(self, kind: str, message_id: str, due: float | None = None) -> None:
        """One event now; ``due``: an emit's due time (unix seconds), when it has one."""
        if self.path:
            if due is None:
                self._lines.append(f"{kind} {message_id} {time.time():.4f}\n")
            else:
                self._lines.append(f"{kind} {message_id} {time.time():.4f} {due:.4f}\n")

    def maybe_flush(self) -> None:
        if self._lines and time.monotonic() - self._flushed >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        self._flushed = time.monotonic()
        if not self._lines or not self.path:
            return
        with open(self.path, "a", encoding="utf-8") as out:
            if self.stable_key and out.tell() == 0:
                out.write(f"{STABLE_HEADER} {self.stable_key}\n")
            elif not self._end_checked and out.tell() and not _ends_with_newline(self.path):
                out.write("\n")   # a predecessor of the same pid was cut mid-line: its line stays cut
            self._end_checked = True
            out.writelines(self._lines)
        self._lines.clear()


def _ends_with_newline(path: str) -> bool:
    """Whether the (non-empty) file at ``path`` ends with a newline."""
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


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
    due: dict[str, float] = field(default_factory=dict)     # the first emit's due time, where it had one
    emits_at: list[float] = field(default_factory=list)    # every emit event, replays included
    failed_at: list[float] = field(default_factory=list)   # every fail event

    @property
    def failed(self) -> int:
        return len(self.failed_at)

    @property
    def replayed(self) -> int:
        """Emits of an id already emitted."""
        return len(self.emits_at) - len(self.emitted)

    def latencies_s(self, begin: float, end: float) -> list[float]:
        """Complete latency (first emit to ack) of the acked tuples first emitted in [begin, end)."""
        return [self.acked[m] - at for m, at in self.emitted.items() if begin <= at < end and m in self.acked]

    def latencies_from_due_s(self, begin: float, end: float) -> list[float]:
        """Due time to ack of the acked tuples due in [begin, end): with the time a tuple waited to be
        emitted (a spout behind schedule, or paused while a re-plan drains), which the emit hides."""
        return [self.acked[m] - due for m in self.emitted if begin <= (due := self.due_of(m)) < end
                and m in self.acked]

    def due_of(self, message_id: str) -> float:
        """When the schedule meant the tuple to go out (its first emit where no due time was logged)."""
        return self.due.get(message_id, self.emitted[message_id])

    def lag_s(self, message_id: str) -> float:
        """How late its first emit was against the schedule (0 for an unpaced spout's tuple)."""
        return max(0.0, self.emitted[message_id] - self.due_of(message_id))

    def acked_between(self, begin: float, end: float) -> int:
        return sum(1 for at in self.acked.values() if begin <= at < end)

    def emitted_between(self, begin: float, end: float) -> int:
        return sum(1 for at in self.emitted.values() if begin <= at < end)

    def failed_between(self, begin: float, end: float) -> int:
        return sum(1 for at in self.failed_at if begin <= at < end)

    def replayed_between(self, begin: float, end: float) -> int:
        """Emits in [begin, end) of an id first emitted earlier (or again in it): a replay after a fail, or
        the re-emit of an uncommitted record by a restarted task."""
        return sum(1 for at in self.emits_at if begin <= at < end) - self.emitted_between(begin, end)

    def never_acked(self) -> int:
        return sum(1 for m in self.emitted if m not in self.acked)


def read_times(directory: str | os.PathLike, prefix: str = "") -> TupleTimes:
    """Every ``<prefix>*.times`` file under ``directory`` merged. Ids are qualified by their file, or, in a
    file that begins with ``STABLE_HEADER``, by the task it names: the incarnations of one task are then
    merged by id (module docstring). The order the files are read in does not matter: the earliest emit
    and the earliest ack of an id count."""
    times = TupleTimes()
    for path in sorted(Path(directory).glob(f"{prefix}*{SUFFIX}")):
        _read_one(path, times)
    return times


def stable_key_of(first_line: str) -> str | None:
    """The task a file's ids belong to when ``first_line`` is ``STABLE_HEADER <key>``, else None."""
    if not first_line.startswith(STABLE_HEADER + " "):
        return None
    key = first_line[len(STABLE_HEADER) + 1:].strip()
    return key if key and not any(c.isspace() for c in key) else None


def _read_one(path: Path, times: TupleTimes) -> None:
    # A last line without its newline was cut (a kill mid-flush, or a flush read half done): not an event.
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    _merge_lines(lines, file_task(path, lines[0] if lines else ""), times)


def file_task(path: Path, first_line: str) -> str:
    """The task a file's ids are qualified by: the one its ``STABLE_HEADER`` names, else the file itself.
    "@" cannot begin a file-keyed task (the spout names its files after the component, an identifier)."""
    stable = stable_key_of(first_line)
    return f"@{stable}" if stable else path.stem


def _merge_lines(lines: list[str], task: str, times: TupleTimes) -> None:
    """Merge complete event lines of one file (its ids qualified by ``task``) into ``times``."""
    for line in lines:
        parts = line.split()
        if len(parts) not in (3, 4) or line.startswith("#") or (len(parts) == 4 and parts[0] != "e"):
            continue   # a header, or a line cut short by a worker killed mid-write
        kind, message_id, text = parts[:3]
        if not _TIME.fullmatch(text) or (len(parts) == 4 and not _TIME.fullmatch(parts[3])):
            continue   # a time cut short (no fraction left): not the time it was
        at = float(text)
        key = f"{task}/{message_id}"
        if kind == "e":
            times.emits_at.append(at)
            first = times.emitted.get(key)
            if first is None or at < first:   # another incarnation's file, read later, may have emitted it first
                times.emitted[key] = at
                if len(parts) == 4:
                    times.due[key] = float(parts[3])
                else:
                    times.due.pop(key, None)
        elif kind == "a":
            first = times.acked.get(key)
            if first is None or at < first:
                times.acked[key] = at
        elif kind == "f":
            times.failed_at.append(at)


class TimesFollower:
    """:func:`read_times` of a directory that is still being written, read incrementally: each
    :meth:`update` parses only the complete lines added since the last (a line still being written waits
    for its newline), so a benchmark that reads a long run's log after every window pays for the new
    events alone. The merged times are the same as one :func:`read_times` of the files at that moment."""

    def __init__(self, directory: str | os.PathLike, prefix: str = "") -> None:
        self.directory = Path(directory)
        self.prefix = prefix
        self.times = TupleTimes()
        self._offsets: dict[Path, int] = {}
        self._tasks: dict[Path, str] = {}

    def update(self) -> TupleTimes:
        """Merge what the files gained since the last call (new files included); returns the times."""
        if not self.directory.is_dir():
            return self.times
        for path in sorted(self.directory.glob(f"{self.prefix}*{SUFFIX}")):
            offset = self._offsets.get(path, 0)
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read()
            except OSError:
                continue
            end = chunk.rfind(b"\n")
            if end < 0:
                continue   # nothing complete yet
            lines = chunk[:end].decode("utf-8", errors="replace").split("\n")
            if path not in self._tasks:
                self._tasks[path] = file_task(path, lines[0] if offset == 0 else "")
            _merge_lines(lines, self._tasks[path], self.times)
            self._offsets[path] = offset + end + 1
        return self.times
