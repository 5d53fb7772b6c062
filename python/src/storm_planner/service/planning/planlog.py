"""The plan log: every plan the service answered, one JSON line each.

What the operator, the dashboard and the end-to-end tests compare with what Nimbus applied. Other events
(``"event": "rebalance"``: a rebalance the service asked Nimbus for, and its outcome) are lines of the same
file; plan records have ``"event": "plan"``.

The log is a record, never a reason to fail a plan:

* a line is strict JSON (``allow_nan=False``): a figure that is not finite is written as ``null`` and named
  in the record's ``"sanitised"`` list; a value JSON cannot hold (an id that is not text) is written as text;
* a line longer than ``max_line_mb`` (default 8 MB; ``serve --plan-log-max-line-mb``,
  ``$STORM_PLANNER_PLAN_LOG_MAX_LINE_MB``) is replaced by a summary of it (no assignments, ``"truncated"``
  saying how long it was): a plan of 100,000 executors is about 3 MB;
* a write that fails (full disk, read-only file system, ...) is logged once per kind of failure and then at
  most every minute, and counted (``plan_log_failures`` in ``Health.counters``); the plan goes back to
  Nimbus all the same;
* the file is bounded: once it passes ``max_file_mb`` (default 256 MB) it becomes ``<file>.1`` (replacing an
  older one) and a new file starts, so a service that runs for months keeps at most twice that on disk.
"""
from __future__ import annotations

import errno
import json
import logging
import math
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from storm_planner.core.plan import ParallelismAdvice
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.counters import ServiceCounters

log = logging.getLogger("storm_planner.service")

DEFAULT_MAX_LINE_MB = 8.0
DEFAULT_MAX_FILE_MB = 256.0
MAX_LINE_ENV = "STORM_PLANNER_PLAN_LOG_MAX_LINE_MB"
# Notes and messages kept in a summary line, each cut to this many characters.
SUMMARY_TEXT_CHARS = 512


class PlanLog:
    def __init__(self, path: Path, counters: ServiceCounters | None = None,
                 max_line_mb: float = DEFAULT_MAX_LINE_MB, max_file_mb: float = DEFAULT_MAX_FILE_MB) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.counters = counters or ServiceCounters()
        self.max_line_bytes = int(max_line_mb * 1024 * 1024)
        self.max_file_bytes = max(self.max_line_bytes, int(max_file_mb * 1024 * 1024))
        self._lock = threading.Lock()

    def write(self, request_id: str, plan: Any, advice: ParallelismAdvice | None = None) -> None:
        """Append one plan record; never raises."""
        try:
            record = plan_record(request_id, plan, advice)
        except Exception as error:  # noqa: BLE001 - a record that cannot be built is a failed write
            self._failed("record", error)
            return
        self._append(record)

    def event(self, record: Mapping[str, Any]) -> None:
        """Another kind of record (``record["event"]`` names it), stamped with the time; never raises."""
        self._append({"time": time.time(), **record})

    def _append(self, record: Mapping[str, Any]) -> None:
        try:
            line = self._line(record)
            with self._lock:
                self._rotate_if_full(len(line) + 1)
                with self.path.open("a") as out:
                    out.write(line + "\n")
        except Exception as error:  # noqa: BLE001 - the plan goes back to Nimbus whatever the log does
            self._failed(_kind(error), error)

    def _rotate_if_full(self, adding: int) -> None:
        """Past ``max_file_bytes`` the file becomes ``<file>.1`` and a new one starts."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size + adding > self.max_file_bytes:
            self.path.replace(self.path.with_name(self.path.name + ".1"))

    def _line(self, record: Mapping[str, Any]) -> str:
        line = strict_json(record)
        if len(line) > self.max_line_bytes:
            self.counters.note("plan_log_lines_truncated", log, "plan log %s: a %d-byte line is over %d bytes: "
                               "written as a summary", self.path, len(line), self.max_line_bytes)
            line = strict_json(summary(record, len(line), self.max_line_bytes))
        return line

    def _failed(self, kind: str, error: BaseException) -> None:
        self.counters.add("plan_log_failures")
        self.counters.note(f"plan_log_failures.{kind}", log, "plan log %s: could not write a record (%s: %s); "
                           "plans are answered all the same", self.path, type(error).__name__, error)


def plan_record(request_id: str, plan: Any, advice: ParallelismAdvice | None = None) -> dict[str, Any]:
    return {
        "time": time.time(),
        "event": "plan",
        "request_id": request_id,
        "topology": plan.topology_id,
        "algorithm": plan.algorithm,
        "assignments": {e: f"{s.node_id}:{s.port}" for e, s in sorted(plan.assignments.items())},
        "figures": dict(plan.figures or {}),
        "solve_ms": plan.solve_ms,
        "notes": list(plan.notes or []),
        "error": None if plan.error is None else {
            "kind": T.ErrorKind._VALUES_TO_NAMES.get(plan.error.kind, str(plan.error.kind)),
            "message": plan.error.message,
        },
        **({"advice": advice.to_dict()} if advice else {}),
    }


def strict_json(record: Mapping[str, Any]) -> str:
    """One JSON line with no NaN or Infinity: the record as it is when it can be, else sanitised."""
    try:
        return json.dumps(record, allow_nan=False)
    except (ValueError, TypeError):
        changed: list[str] = []
        clean = _sanitised(record, "", changed)
        clean["sanitised"] = changed
        return json.dumps(clean, allow_nan=False)


def _sanitised(value: Any, path: str, changed: list[str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        changed.append(f"{path or 'value'}: {value} written as null")
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            name = _text(key, f"{path}.{key!r}", changed)
            out[name] = _sanitised(item, f"{path}.{name}", changed)
        return out
    if isinstance(value, (list, tuple)):
        return [_sanitised(item, f"{path}[{k}]", changed) for k, item in enumerate(value)]
    return _text(value, path, changed)


def _text(value: Any, path: str, changed: list[str]) -> str:
    if isinstance(value, str):
        return value
    text = value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value)
    changed.append(f"{path or 'value'}: {type(value).__name__} written as text")
    return text


def summary(record: Mapping[str, Any], length: int, limit: int) -> dict[str, Any]:
    """The record without its assignments and advice, notes and messages cut: what fits any line limit."""
    kept = {key: value for key, value in record.items() if key not in ("assignments", "advice")}
    kept["notes"] = [_cut(note) for note in (record.get("notes") or [])[:20]]
    if isinstance(record.get("error"), Mapping):
        kept["error"] = {**record["error"], "message": _cut(record["error"].get("message"))}
    kept["truncated"] = {"line_bytes": length, "max_line_bytes": limit,
                         "assignments": len(record.get("assignments") or {})}
    return kept


def _cut(text: Any) -> Any:
    if not isinstance(text, str) or len(text) <= SUMMARY_TEXT_CHARS:
        return text
    return f"{text[:SUMMARY_TEXT_CHARS]}... ({len(text)} characters)"


def _kind(error: BaseException) -> str:
    """A failure's kind for the log: the errno's name (ENOSPC, EROFS, ...) or the exception's type."""
    code = getattr(error, "errno", None)
    return errno.errorcode.get(code, type(error).__name__) if code else type(error).__name__


def read_plan_log(path: Path, event: str | None = "plan") -> list[dict[str, Any]]:
    """The records of a plan log, oldest first (missing file: none): the plans by default,
    the records of another ``event`` (e.g. ``"rebalance"``), or every record (``event=None``)."""
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return []
    records = [json.loads(line) for line in lines if line.strip()]
    return [r for r in records if event is None or r.get("event", "plan") == event]
