"""JSON from outside, read within bounds (:mod:`storm_planner.core.limits`): the one reader of user files.

Python's ``json`` reads files of any size, integers of any length (thousands of digits cost quadratic
time and then trip the interpreter's own digit limit with a traceback), ``NaN`` and ``Infinity``, and
nesting until the interpreter's recursion limit breaks. Here a file larger than the limit is not read
past it; integers longer than the limit, non-finite numbers (``NaN``, ``Infinity``, ``1e999``) and
nesting deeper than the limit are refused with a :class:`JsonFileError` naming the file and the field
(``nodes[0].capacity``).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from storm_planner.core.errors import ProblemError
from storm_planner.core.limits import (MAX_INT_DIGITS_ENV, MAX_JSON_BYTES_ENV, MAX_JSON_DEPTH_ENV, Limits,
                                       current_limits)


class JsonFileError(ProblemError):
    """A JSON file from outside is unreadable, not JSON, or beyond a limit; the message names it."""


class _LongInteger:
    """Stands for an integer beyond the digit limit until the walk finds where it is."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


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
    if len(text) > limits.max_json_bytes:
        raise JsonFileError(f"{source}: longer than {limits.max_json_bytes} characters ({MAX_JSON_BYTES_ENV})")

    def integer(digits: str) -> int | _LongInteger:
        count = len(digits) - digits.startswith("-")
        return int(digits) if count <= limits.max_int_digits else _LongInteger(count)

    try:
        document = json.loads(text, parse_int=integer)
    except json.JSONDecodeError as error:
        raise JsonFileError(f"{source}: not JSON: {error}") from None
    except RecursionError:
        raise JsonFileError(f"{source}: nested deeper than {limits.max_json_depth} levels "
                            f"({MAX_JSON_DEPTH_ENV})") from None
    _check_values(document, source, limits)
    return document


def _check_values(document: Any, source: str, limits: Limits) -> None:
    """Walk the document once, in document order and without recursion: nesting depth, integer lengths,
    finite numbers; the first value refused is named."""
    stack: list[tuple[Any, tuple]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if not isinstance(value, (dict, list)):
            _check_scalar(value, path, source, limits)
            continue
        if len(path) >= limits.max_json_depth:
            raise JsonFileError(f"{source}: {_where(path)}: nested deeper than {limits.max_json_depth} levels "
                                f"({MAX_JSON_DEPTH_ENV})")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        stack.extend(reversed([(item, path + (key,)) for key, item in items]))


def _check_scalar(value: Any, path: tuple, source: str, limits: Limits) -> None:
    if isinstance(value, _LongInteger):
        raise JsonFileError(f"{source}: {_where(path)}: an integer of {value.digits} digits, more than "
                            f"{limits.max_int_digits} ({MAX_INT_DIGITS_ENV})")
    if isinstance(value, float) and not math.isfinite(value):
        raise JsonFileError(f"{source}: {_where(path)}: a finite number, got {value!r} (NaN and Infinity, "
                            "and numbers beyond a double's range, are refused)")


def _where(path: tuple) -> str:
    """``nodes[0].capacity`` (the document itself: ``top level``)."""
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).lstrip(".")
    return text or "top level"
