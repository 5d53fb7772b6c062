"""Progress lines: what long-running commands (cluster start, submit, feeds, benchmarks) say
while they work.

A :data:`Progress` is any callable taking one line; :func:`print_progress`, the default
everywhere, writes it to stderr so stdout stays the command's answer.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

Progress = Callable[[str], None]


def print_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


__all__ = ["Progress", "print_progress"]
