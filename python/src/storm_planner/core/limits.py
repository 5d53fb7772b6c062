"""How much of a file from outside is read: the limits on JSON files and on problems.

Every JSON file the command line reads from a user (problem files, scaling problems, profiles, cluster
files) goes through :func:`storm_planner.core.jsonfile.read_json` under these limits, and every problem
read from its JSON (:meth:`~storm_planner.core.problem.Problem.from_dict`) under the executor limit, so a hostile or broken file costs a clear error,
not a traceback, a hang or all the memory (scaling problems: under the epoch limit). Each limit has a default and an environment variable:

=====================================  ===============  ======================================================
setting (environment variable)          default          what it bounds
=====================================  ===============  ======================================================
``STORM_PLANNER_MAX_JSON_BYTES``        134217728        size of one JSON file (128 MiB)
``STORM_PLANNER_MAX_JSON_DEPTH``        64               nesting of arrays and objects in it
``STORM_PLANNER_MAX_INT_DIGITS``        30               digits of one integer in it
``STORM_PLANNER_MAX_EXECUTORS``         1000000          executors of one problem (given or derived)
``STORM_PLANNER_MAX_EPOCHS``            10000            epochs one scaling problem plans (workload, horizon)
=====================================  ===============  ======================================================
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from storm_planner.core.errors import ProblemError
from storm_planner.core.fields import env_number

MAX_JSON_BYTES_ENV = "STORM_PLANNER_MAX_JSON_BYTES"
MAX_JSON_DEPTH_ENV = "STORM_PLANNER_MAX_JSON_DEPTH"
MAX_INT_DIGITS_ENV = "STORM_PLANNER_MAX_INT_DIGITS"
MAX_EXECUTORS_ENV = "STORM_PLANNER_MAX_EXECUTORS"
MAX_EPOCHS_ENV = "STORM_PLANNER_MAX_EPOCHS"

DEFAULT_MAX_JSON_BYTES = 128 * 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 64
DEFAULT_MAX_INT_DIGITS = 30
DEFAULT_MAX_EXECUTORS = 1_000_000
DEFAULT_MAX_EPOCHS = 10_000


class LimitSettingError(ProblemError):
    """A limit's environment variable is not a positive whole number."""


@dataclass(frozen=True)
class Limits:
    max_json_bytes: int = DEFAULT_MAX_JSON_BYTES
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH
    max_int_digits: int = DEFAULT_MAX_INT_DIGITS
    max_executors: int = DEFAULT_MAX_EXECUTORS
    max_epochs: int = DEFAULT_MAX_EPOCHS


def current_limits() -> Limits:
    """The defaults, each replaced by its environment variable when that is set."""
    return Limits(
        max_json_bytes=_setting(MAX_JSON_BYTES_ENV, DEFAULT_MAX_JSON_BYTES),
        max_json_depth=_setting(MAX_JSON_DEPTH_ENV, DEFAULT_MAX_JSON_DEPTH),
        max_int_digits=_setting(MAX_INT_DIGITS_ENV, DEFAULT_MAX_INT_DIGITS),
        max_executors=_setting(MAX_EXECUTORS_ENV, DEFAULT_MAX_EXECUTORS),
        max_epochs=_setting(MAX_EPOCHS_ENV, DEFAULT_MAX_EPOCHS),
    )


def _setting(name: str, default: int) -> int:
    return int(env_number(os.environ, name, int, default, error=LimitSettingError))
