"""What every benchmark writes: CSV tables, markdown tables, PNG plots, the command that
reproduces them, and progress lines while it runs.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from storm_planner.progress import Progress, print_progress

__all__ = ["Progress", "command_line", "markdown_table", "print_progress", "pyplot", "stamped_progress",
           "write_csv"]


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Rows (dicts with the same keys, in column order) as a CSV file with a header line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def pyplot():
    """matplotlib.pyplot drawing to files (the Agg backend); matplotlib is the ``plots`` extra."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def command_line(args: argparse.Namespace, name: str | None = None) -> str:
    """``storm-planner bench NAME ...`` as it was run (to reproduce a report)."""
    name = name or args.benchmark
    return "storm-planner bench " + " ".join(sys.argv[sys.argv.index(name):]) \
        if name in sys.argv else f"storm-planner bench {name}"


def stamped_progress(label: str, stream: TextIO | None = None) -> Progress:
    """A :data:`Progress` that prefixes every line with ``[label HH:MM:SS]`` (stdout by default)."""
    def progress(message: str) -> None:
        print(f"[{label} {time.strftime('%H:%M:%S')}] {message}", file=stream or sys.stdout, flush=True)

    return progress
