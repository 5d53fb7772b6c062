"""Checks of single values in user files (problem files, profiles, topology options), with messages
that name the field.

``where`` is the field's path as the user wrote it (``nodes[2].capacity``); ``error`` is the
exception class the caller's format raises (a :class:`ProblemError` or a subclass of it).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from storm_planner.core.errors import ProblemError

TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")


def parse_flag(value: Any) -> bool | None:
    """A yes/no setting: a boolean, or one of :data:`TRUE_WORDS` / :data:`FALSE_WORDS` (any case,
    spaces around; so 0 and 1 too); None when it is none of these (the caller decides what that means).

    The one boolean parser of planner parameters, topology options and component configuration.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    return None


def number(value: Any, where: str, error: type[ProblemError] = ProblemError) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error(f"{where}: a finite number, got {value!r}")
    return float(value)


def non_negative(value: Any, where: str, error: type[ProblemError] = ProblemError) -> float:
    result = number(value, where, error)
    if result < 0:
        raise error(f"{where}: must not be negative, got {value!r}")
    return result


def positive(value: Any, where: str, error: type[ProblemError] = ProblemError) -> float:
    result = number(value, where, error)
    if result <= 0:
        raise error(f"{where}: must be positive, got {value!r}")
    return result


def text(value: Any, what: str, error: type[ProblemError] = ProblemError) -> str:
    """``value`` as a name: a string that is not empty (the message says missing when it is None)."""
    if not isinstance(value, str) or not value:
        raise error(f"{what} is {'missing' if value is None else f'{value!r}, not a name'}")
    return value


def listed(value: Any, what: str, error: type[ProblemError] = ProblemError) -> list[Any]:
    """``value`` as a list (the message says missing when it is None)."""
    if not isinstance(value, list):
        raise error(f"{what} is {'missing' if value is None else 'not a list'}")
    return value


def finite(value: Any, what: str, *, minimum: float | None = None, positive: bool = False,
           given: Any = None, error: type[ProblemError] = ProblemError) -> float | None:
    """``value`` as a float (None stays None): finite, at least ``minimum``, above zero when ``positive``.
    Messages show ``given`` (what the request said, when ``value`` was converted from it) or ``value``."""
    if value is None:
        return None
    shown = f"{what}={given}" if given is not None else f"{what}={value!r}"
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise error(f"{shown} is not a number") from None
    if not math.isfinite(number):
        raise error(f"{shown} is not a finite number")
    if positive and number <= 0:
        raise error(f"{shown} must be positive")
    if minimum is not None and number < minimum:
        raise error(f"{shown} must not be below {minimum:g}")
    return number


# Longest environment value shown in a message (a variable may hold anything).
SHOWN_CHARS = 40


def env_number(environ: Mapping[str, str], name: str, kind: type, default: Any = None, *,
               error: type[Exception] = ProblemError) -> Any:
    """The environment variable ``name`` as a positive ``kind`` (``int``: digits only; ``float``: finite),
    ``default`` when it is unset or blank; ``error`` naming the variable and its default otherwise.

    The one reader of the package's numeric environment settings (file limits, service limits, the plan
    log's line limit)."""
    text = environ.get(name, "").strip()
    if not text:
        return default
    wanted = "a whole number >= 1" if kind is int else "a positive number"
    problem = f"{name}={text[:SHOWN_CHARS]!r}: {wanted}" + ("" if default is None else f" (default {default})")
    if kind is int:
        if not (text.isascii() and text.isdigit()) or len(text) > 18 or int(text) < 1:
            raise error(problem)
        return int(text)
    try:
        value = float(text)
    except ValueError:
        raise error(problem) from None
    if not (math.isfinite(value) and value > 0):
        raise error(problem)
    return value
