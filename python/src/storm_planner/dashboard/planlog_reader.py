"""The dashboard's reader of the planner service's plan log (JSON lines), within bounds.

The log grows for as long as the service runs (tens of MB), and any process that can write to it
decides what a line holds, so nothing in it is trusted:

* **Per line, bounded.** A line longer than ``max_line_bytes`` (default 1 MiB, ``--max-line-bytes``),
  nested deeper than ``max_depth`` (32, ``--max-line-depth``), with an integer of more than
  ``max_int_digits`` digits (20, ``--max-int-digits``), not JSON, not an object, or with a field of the
  wrong type is skipped, warned with its line number and counted (:attr:`PlanLogReader.bad_lines`, shown
  on the page and by ``/api/health``). A number that is not finite (``NaN``, which Python's ``json``
  writes for a NaN figure, ``Infinity``, ``1e999``) reads as null: the plan stays, that figure shows "–".
* **Bounded memory.** Only the last ``history`` records (default 1000, ``--history``) are kept; what each
  topology's latest plan and its number of rounds are is kept on the side, so the page's topologies and
  supervisors do not depend on how much history is kept.
* **Incremental.** Only the bytes appended since the last read are parsed, in chunks of
  :data:`READ_CHUNK_BYTES`; the offset moves past a line only once it is handled, so an unfinished last
  line (the service is appending) is read whole next time, and a bad line costs no line after it.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storm_planner.core.boundedjson import JSONLimitError, JSONLimits, loads_bounded
from storm_planner.core.errors import StormPlannerError

log = logging.getLogger("storm_planner.dashboard.model")

DEFAULT_HISTORY = 1000
DEFAULT_MAX_LINE_BYTES = 1_048_576
DEFAULT_MAX_LINE_DEPTH = 32
DEFAULT_MAX_INT_DIGITS = 20
READ_CHUNK_BYTES = 1_048_576


class BadPlanLogLine(StormPlannerError, ValueError):
    """A plan-log line the dashboard cannot use; the message says why (the caller adds the line number)."""


def line_limits(max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, max_depth: int = DEFAULT_MAX_LINE_DEPTH,
                max_int_digits: int = DEFAULT_MAX_INT_DIGITS) -> JSONLimits:
    return JSONLimits(max_line_bytes, max_depth, max_int_digits, bytes_setting="--max-line-bytes",
                      depth_setting="--max-line-depth", digits_setting="--max-int-digits",
                      non_finite_as_null=True)


DEFAULT_LIMITS = line_limits()

# Field -> the JSON types it may have (None: null). Fields not listed are passed through untouched.
_TEXT = (str, type(None))
_NUMBER = (int, float, type(None))
_FIELDS: dict[str, tuple[type, ...]] = {
    "event": (str,), "time": _NUMBER, "topology": _TEXT, "request_id": _TEXT, "algorithm": _TEXT,
    "solve_ms": _NUMBER, "assignments": (dict, type(None)), "figures": (dict, type(None)),
    "notes": (list, type(None)), "error": (dict, type(None)), "name": _TEXT, "outcome": _TEXT,
    "message": _TEXT, "phase": _TEXT, "seconds": _NUMBER, "note": _TEXT,
}


def parse_record(raw: bytes | str, limits: JSONLimits = DEFAULT_LIMITS) -> dict | None:
    """One line as a record (None when blank), or :class:`BadPlanLogLine` saying why; nothing else escapes."""
    try:
        return _parse(raw, limits)
    except BadPlanLogLine:
        raise
    except Exception as error:  # noqa: BLE001 - a line that breaks the parser is a bad line
        raise BadPlanLogLine(f"unreadable ({type(error).__name__}: {error})") from None


def _parse(raw: bytes | str, limits: JSONLimits) -> dict | None:
    if not raw.strip():
        return None
    try:
        record = loads_bounded(raw, limits)
    except JSONLimitError as error:
        raise BadPlanLogLine(str(error)) from None
    if not isinstance(record, dict):
        raise BadPlanLogLine("not a JSON object")
    record.setdefault("event", "plan")
    for name, types in _FIELDS.items():
        value = record.get(name)
        if not isinstance(value, types) or isinstance(value, bool):
            raise BadPlanLogLine(f"field {name}: {_kind(value)} where {_names(types)} belongs")
    _check_entries(record.get("assignments") or {}, "assignments", (str,))
    _check_entries(record.get("figures") or {}, "figures", _NUMBER)
    for i, note in enumerate(record.get("notes") or []):
        if not isinstance(note, str):
            raise BadPlanLogLine(f"field notes[{i}]: {_kind(note)} where text belongs")
    if record.get("error") is not None:
        _check_entries({k: record["error"].get(k) for k in ("kind", "message")}, "error", _TEXT)
    return record


def _check_entries(mapping: Mapping[str, Any], name: str, types: tuple[type, ...]) -> None:
    for key, value in mapping.items():
        if not isinstance(value, types) or isinstance(value, bool):
            raise BadPlanLogLine(f"field {name}.{key}: {_kind(value)} where {_names(types)} belongs")


_TYPE_NAMES = {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number",
               float: "a number", type(None): "null"}


def _kind(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _names(types: tuple[type, ...]) -> str:
    return " or ".join(dict.fromkeys(_TYPE_NAMES[t] for t in types))


@dataclass
class PlanHistory:
    """The last ``size`` records, numbered plans, and per topology its latest plan, latest good plan
    (one with a placement and no error) and number of rounds, over every record ever added (for at most
    ``size`` topologies: the one planned longest ago is forgotten first)."""

    size: int = DEFAULT_HISTORY
    # (plan number or None, record), oldest first; at most max(1, size) unless given with a bound of its own
    entries: deque[tuple[int | None, dict]] = field(default_factory=deque)
    latest: dict[str, dict] = field(default_factory=dict)
    latest_good: dict[str, dict] = field(default_factory=dict)
    rounds: dict[str, int] = field(default_factory=dict)
    plans: int = 0

    def __post_init__(self) -> None:
        if self.entries.maxlen is None:
            self.entries = deque(self.entries, maxlen=max(1, self.size))

    @classmethod
    def of(cls, records: Iterable[dict], size: int | None = None) -> PlanHistory:
        records = list(records)
        history = cls(size or max(1, len(records)))
        for record in records:
            history.add(record)
        return history

    def add(self, record: dict) -> None:
        if record.get("event", "plan") != "plan":
            self.entries.append((None, record))
            return
        self.entries.append((self.plans, record))
        self.plans += 1
        topology = record.get("topology")
        if topology:
            self.latest.pop(topology, None)   # re-inserted: the dict stays ordered by latest plan
            self.latest[topology] = record
            self.rounds[topology] = self.rounds.get(topology, 0) + 1
            if record.get("error") is None and record.get("assignments"):
                self.latest_good[topology] = record
            bound = self.entries.maxlen
            if bound is not None and len(self.latest) > bound:   # bounded too: forget the longest-quiet topology
                oldest = next(iter(self.latest))
                for kept in (self.latest, self.latest_good, self.rounds):
                    kept.pop(oldest, None)

    def copy(self) -> PlanHistory:
        """A copy another thread may read while this one grows (the records themselves are never changed)."""
        return PlanHistory(self.size, deque(self.entries, maxlen=self.entries.maxlen), dict(self.latest),
                           dict(self.latest_good), dict(self.rounds), self.plans)


class PlanLogReader:
    """Reads a plan log incrementally into a :class:`PlanHistory`; thread-safe (one read at a time), and
    :meth:`progress` answers at once even while a long read is under way."""

    def __init__(self, path: Path, *, history: int = DEFAULT_HISTORY, limits: JSONLimits = DEFAULT_LIMITS) -> None:
        self.path = Path(path)
        self.limits = limits
        self.history_size = history
        self._lock = threading.Lock()
        self._reset()
        self._warned_missing = False
        self._progress: dict[str, Any] = self._progress_now(loading=False, size=0)

    def _reset(self) -> None:
        self._offset = 0
        self._line_no = 0
        self._skipping = False   # inside a line longer than the limit, already counted as bad
        self._history = PlanHistory(self.history_size)
        self.bad_lines = 0
        self.last_bad: str | None = None

    def records(self) -> list[dict]:
        """The records kept (the last ``history``), oldest first, after reading what was appended."""
        return [record for _, record in self.read().entries]

    def read(self) -> PlanHistory:
        """Read what was appended since the last call; a copy of the history."""
        with self._lock:
            self._read_new()
            return self._history.copy()

    def progress(self) -> dict[str, Any]:
        """How far reading got (no lock: for a health check while a big log is read)."""
        return dict(self._progress)

    def _progress_now(self, loading: bool, size: int) -> dict[str, Any]:
        return {"loading": loading, "bytes_read": self._offset, "size": size, "lines": self._line_no,
                "bad_lines": self.bad_lines, "last_bad_line": self.last_bad, "plans": self._history.plans,
                "history": self.history_size}

    def _read_new(self) -> None:
        try:
            with self.path.open("rb") as handle:
                size = handle.seek(0, 2)
                if size < self._offset:  # truncated or replaced: start over
                    self._reset()
                handle.seek(self._offset)
                self._warned_missing = False
                self._progress = self._progress_now(loading=True, size=size)
                try:
                    self._read_chunks(handle, size)
                finally:
                    self._progress = self._progress_now(loading=False, size=size)
        except FileNotFoundError:
            if not self._warned_missing:
                log.warning("plan log %s does not exist (yet): showing no plans", self.path)
                self._warned_missing = True

    def _read_chunks(self, handle, size: int) -> None:
        pending = b""
        while chunk := handle.read(READ_CHUNK_BYTES):
            pending = self._consume(pending + chunk)
            self._progress = self._progress_now(loading=True, size=size)
        # What is left has no newline yet: the service is still writing it; read it whole next time.

    def _consume(self, data: bytes) -> bytes:
        """Handle every complete line of ``data``; return the unfinished rest (its bytes not consumed)."""
        start = 0
        while (end := data.find(b"\n", start)) != -1:
            line = data[start:end]
            start = end + 1
            self._offset += len(line) + 1
            if self._skipping:   # the end of an over-long line, already counted
                self._skipping = False
                continue
            self._line_no += 1
            self._handle_line(line)
        rest = data[start:]
        if len(rest) > self.limits.max_bytes or (self._skipping and rest):
            # An over-long line: counted once, its bytes dropped as they come, up to its newline.
            if not self._skipping:
                self._line_no += 1
                self._bad(f"more than {self.limits.max_bytes:,} bytes (setting --max-line-bytes)")
                self._skipping = True
            self._offset += len(rest)
            return b""
        return rest

    def _handle_line(self, line: bytes) -> None:
        if len(line) > self.limits.max_bytes:
            self._bad(f"{len(line):,} bytes, more than {self.limits.max_bytes:,} (setting --max-line-bytes)")
            return
        try:
            record = parse_record(line, self.limits)
        except BadPlanLogLine as error:
            self._bad(str(error))
            return
        if record is not None:
            self._history.add(record)

    def _bad(self, why: str) -> None:
        self.bad_lines += 1
        self.last_bad = f"line {self._line_no}: {why}"
        log.warning("%s line %d skipped: %s", self.path, self._line_no, why)
