"""Typed reads of topology configuration.

Options given at submit time (``--option trends.top_k=5``) may reach the
components as strings, JSON numbers or booleans, depending on the submit path;
:class:`ConfReader` accepts all of them and fails with the key's name when a
value cannot be used.
"""
from __future__ import annotations

import builtins
import os
from collections.abc import Mapping
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.fields import parse_flag


class ConfError(StormPlannerError, ValueError):
    """A configuration key is missing or has an unusable value."""


class ConfReader:
    """Reads ``<prefix>.<name>`` keys from a (merged) Storm configuration."""

    def __init__(self, conf: Mapping[str, Any] | None, prefix: str):
        self.conf = dict(conf or {})
        self.prefix = prefix

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def raw(self, name: str, default: Any = None) -> Any:
        value = self.conf.get(self.key(name))
        return default if value is None else value

    def has(self, name: str) -> bool:
        return self.conf.get(self.key(name)) not in (None, "")

    def str(self, name: str, default: str | None = None) -> str | None:
        value = self.raw(name, default)
        return None if value is None else str(value)

    def int(self, name: builtins.str, default: int, minimum: int | None = None) -> int:
        value = self.raw(name, default)
        try:
            number = int(float(value)) if isinstance(value, str) else int(value)
            if isinstance(value, str) and float(value) != number:
                raise ValueError
        except (TypeError, ValueError):
            raise ConfError(f"{self.key(name)}={value!r}: expected an integer") from None
        if minimum is not None and number < minimum:
            raise ConfError(f"{self.key(name)}={number}: must be at least {minimum}")
        return number

    def float(self, name: builtins.str, default: float, minimum: float | None = None) -> float:
        value = self.raw(name, default)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfError(f"{self.key(name)}={value!r}: expected a number") from None
        if minimum is not None and number < minimum:
            raise ConfError(f"{self.key(name)}={number}: must be at least {minimum}")
        return number

    def bool(self, name: builtins.str, default: bool) -> bool:
        value = self.raw(name, default)
        flag = False if str(value).strip() == "" else parse_flag(value)
        if flag is not None:
            return flag
        raise ConfError(f"{self.key(name)}={value!r}: expected true or false")

    def path(self, name: builtins.str, default: builtins.str | os.PathLike | None = None) -> builtins.str | None:
        """An absolute filesystem path (components run with an unrelated cwd)."""
        value = self.raw(name, default)
        if value is None or value == "":
            return None
        path = os.path.expanduser(str(value))
        if not os.path.isabs(path):
            raise ConfError(
                f"{self.key(name)}={value!r}: must be an absolute path "
                "(Storm runs components in the topology's resources directory)")
        return path

    def required_path(self, name: builtins.str) -> builtins.str:
        path = self.path(name)
        if path is None:
            raise ConfError(f"{self.key(name)} is required (pass --option {self.key(name)}=/abs/path)")
        return path
