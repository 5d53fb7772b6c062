"""JSON from sources the service does not control (metrics znodes, plan-log lines), read within bounds.

``json.loads`` trusts its input: a 100,000-deep array exhausts the recursion limit (``RecursionError``),
a 5,000-digit integer trips CPython's integer-string limit (a bare ``ValueError``), ``Infinity`` and
``1e999`` become infinite floats. :func:`loads_bounded` checks the size, the nesting depth (before
parsing, so the parser never recurses deeper than allowed), the digits of every integer and that every
number is finite, and raises :class:`JSONLimitError` (a ``ValueError``) saying which bound was crossed.

Each caller documents its own limits and their settings (``docs/metrics.md``, the dashboard's CLI help)
and names them in :class:`JSONLimits` so the error says what to raise.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from storm_planner.core.errors import StormPlannerError

# What a JSON string holds never counts towards the nesting depth. Escapes go first (an escaped
# quote ends no string), then strings are plain quote-to-quote runs: two linear passes, no backtracking.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class JSONLimitError(StormPlannerError, ValueError):
    """Input that is not JSON, or JSON beyond the bounds; the message says which."""


@dataclass(frozen=True)
class JSONLimits:
    max_bytes: int
    max_depth: int
    max_int_digits: int
    # The settings that raise each bound, quoted in the errors (e.g. "--max-line-bytes").
    bytes_setting: str = ""
    depth_setting: str = ""
    digits_setting: str = ""
    # False: a non-finite number (NaN, Infinity, 1e999) is an error; True: it reads as None.
    non_finite_as_null: bool = False


def loads_bounded(data: bytes | str, limits: JSONLimits) -> Any:
    """The JSON value in ``data`` (UTF-8), or :class:`JSONLimitError` naming the bound it crosses and,
    for a number, where it stands (``nodes[0].capacity``)."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if len(raw) > limits.max_bytes:
        raise JSONLimitError(f"{len(raw):,} bytes, more than the limit of {limits.max_bytes:,}"
                             f"{_setting(limits.bytes_setting)}")
    depth = nesting_depth(raw, limits.max_depth)
    if depth > limits.max_depth:
        raise JSONLimitError(f"nested more than {limits.max_depth} levels deep{_setting(limits.depth_setting)}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JSONLimitError(f"not UTF-8 (byte {error.start})") from None
    refused: list[_Refused] = []
    try:
        document = json.loads(text, parse_int=_int_parser(limits, refused),
                              parse_float=_float_parser(limits, refused),
                              parse_constant=_constant_parser(limits, refused))
    except json.JSONDecodeError as error:
        raise JSONLimitError(f"not JSON ({error.msg}: line {error.lineno} column {error.colno})") from None
    except RecursionError:  # cannot happen below the depth checked above; kept as a last resort
        raise JSONLimitError(f"nested too deep to parse{_setting(limits.depth_setting)}") from None
    if refused:
        first = _first_refused(document)
        raise JSONLimitError(f"{_where(first[1])}: {first[0].reason}")
    return document


class _Refused:
    """Stands for a number beyond the bounds until the walk finds where it is."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _first_refused(document: Any) -> tuple[_Refused, tuple[Any, ...]]:
    """The first refused number in document order, with its path; iterative (depth is already bounded)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Refused):
            return value, path
        if isinstance(value, (dict, list)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(reversed([(item, path + (key,)) for key, item in items]))
    raise AssertionError("a refused number was parsed but not found")  # pragma: no cover


def _where(path: tuple[Any, ...]) -> str:
    """``nodes[0].capacity`` (the document itself: ``top level``)."""
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).lstrip(".")
    return text or "top level"


def nesting_depth(raw: bytes, stop_above: int) -> int:
    """How deep arrays and objects nest in ``raw`` (strings ignored); counting stops past ``stop_above``."""
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"__", raw)).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    break
        else:
            depth -= 1
    return deepest


def _int_parser(limits: JSONLimits, refused: list[_Refused]) -> Callable[[str], int | _Refused]:
    def parse_int(text: str) -> int | _Refused:
        digits = len(text) - (text[0] == "-")
        if digits > limits.max_int_digits:
            return _refuse(refused, f"an integer of {digits:,} digits, more than {limits.max_int_digits}"
                                    f"{_setting(limits.digits_setting)}")
        return int(text)
    return parse_int


def _float_parser(limits: JSONLimits, refused: list[_Refused]) -> Callable[[str], float | _Refused | None]:
    def parse_float(text: str) -> float | _Refused | None:
        value = float(text)
        if math.isfinite(value):
            return value
        if limits.non_finite_as_null:
            return None
        return _refuse(refused, f"a finite number, got {value!r} (the number {text[:40]} is out of range)")
    return parse_float


def _constant_parser(limits: JSONLimits, refused: list[_Refused]) -> Callable[[str], _Refused | None]:
    def parse_constant(name: str) -> _Refused | None:
        if limits.non_finite_as_null:
            return None
        return _refuse(refused, f"a finite number, got {float(name)!r} ({name} is not a finite number)")
    return parse_constant


def _refuse(refused: list[_Refused], reason: str) -> _Refused:
    marker = _Refused(reason)
    refused.append(marker)
    return marker


def _setting(name: str) -> str:
    return f" (setting {name})" if name else ""
