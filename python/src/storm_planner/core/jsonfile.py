"""JSON from outside, read within bounds (:mod:`storm_planner.core.limits`): the one reader of user files.

Python's ``json`` reads files of any size, integers of any length (thousands of digits cost quadratic
time and then trip the interpreter's own digit limit with a traceback), ``NaN`` and ``Infinity``, and
nesting until the interpreter's recursion limit breaks. Here a file larger than the limit is not read
past it, and the text is parsed by :mod:`storm_planner.core.boundedjson` (the reader of metrics windows
and plan-log lines too): integers longer than the limit and non-finite numbers (``NaN``, ``Infinity``,
``1e999``) are refused with a :class:`JsonFileError` naming the file and the field
(``nodes[0].capacity``), nesting deeper than the limit naming the file.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from storm_planner.core import boundedjson
from storm_planner.core.boundedjson import JSONLimitError, JSONLimits
from storm_planner.core.errors import ProblemError
from storm_planner.core.limits import MAX_INT_DIGITS_ENV, MAX_JSON_BYTES_ENV, MAX_JSON_DEPTH_ENV, Limits, current_limits


class JsonFileError(ProblemError):
    """A JSON file from outside is unreadable, not JSON, or beyond a limit; the message names it."""


def read_json(path: str | Path, limits: Limits | None = None) -> Any:
    """The JSON document in ``path`` (``-``: standard input), within ``limits`` (default: the current ones)."""
    limits = limits or current_limits()
    try:
        if str(path) == "-":
            raw = sys.stdin.buffer.read(limits.max_json_bytes + 1)
        else:
            with open(path, "rb") as handle:
                raw = handle.read(limits.max_json_bytes + 1)
    except OSError as error:
        raise JsonFileError(f"cannot read {path}: {error.strerror or error}") from None
    if len(raw) > limits.max_json_bytes:
        raise JsonFileError(f"{path}: larger than {limits.max_json_bytes} bytes ({MAX_JSON_BYTES_ENV})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonFileError(f"{path}: not UTF-8 text at byte {error.start} (expected JSON)") from None
    return loads_bounded(text, str(path), limits)


def loads_bounded(text: str, source: str = "JSON", limits: Limits | None = None) -> Any:
    """``text`` as JSON within ``limits``; errors start with ``source`` (a file name)."""
    limits = limits or current_limits()
    bounds = JSONLimits(max_bytes=limits.max_json_bytes, max_depth=limits.max_json_depth,
                        max_int_digits=limits.max_int_digits, bytes_setting=MAX_JSON_BYTES_ENV,
                        depth_setting=MAX_JSON_DEPTH_ENV, digits_setting=MAX_INT_DIGITS_ENV)
    try:
        return boundedjson.loads_bounded(text, bounds)
    except JSONLimitError as error:
        raise JsonFileError(f"{source}: {error}") from None
