"""Figures over the e2e bench's cells (rows of ``cells.csv`` as dicts of text): the numbers of a column, their
median, spread and sum as the reports print them, a row's supervisors' CPU together, and whether a scheduler
beat both of Storm's beyond the repetitions' spread. Shared by the e2e report, its papers' section,
``bench topdown-real``'s report and ``bench capacity``'s hook section."""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

BASELINES = ("default", "ras")

def beats_both(mine: list[dict[str, Any]], cells: list[dict[str, Any]], column: str, higher: bool) -> bool:
    """Whether every cell of ``mine`` is better on ``column`` than every cell of DefaultScheduler and of
    RAS among ``cells`` that ran as asked (two repetitions at least on each side; every cell of ``mine`` ran
    as asked, has the figure and a lost count, and lost nothing)."""
    values, lost = numbers(mine, column), numbers(mine, "lost")
    if (len(values) < 2 or len(values) < len(mine) or len(lost) < len(mine) or any(v > 0 for v in lost)
            or not all(ran(c) for c in mine)):
        return False
    for baseline in BASELINES:
        theirs = numbers([c for c in cells if c["scheduler"] == baseline and ran(c)], column)
        if len(theirs) < 2:
            return False
        if (min(values) <= max(theirs)) if higher else (max(values) >= min(theirs)):
            return False
    return True


def ran(cell: dict[str, Any]) -> bool:
    """Whether a cell ran as asked: any other status (no ack in time, the plugin's fallback to
    DefaultScheduler's placement, not scheduled) has figures that are not its scheduler's."""
    return cell.get("status") == "ran"


def numbers(cells: Sequence[Mapping[str, Any]], column: str) -> list[float]:
    values = []
    for cell in cells:
        try:
            given = cell.get(column)
            value = math.nan if given is None or given == "" else float(given)   # a 0 is a figure
        except (TypeError, ValueError):
            continue
        if not math.isnan(value):
            values.append(value)
    return values


def cluster_cpu(row: Mapping[str, Any]) -> float:
    """The CPU every supervisor's cgroup used together in a cell's or step's window, % of a core (its
    ``cpu_<node>_pct`` columns); NaN for a row without one (it did not run), not 0."""
    figures = [value for column in row if column.startswith("cpu_") and column.endswith("_pct")
               for value in numbers([row], column)]
    return math.fsum(figures) if figures else math.nan


def median(cells: list[dict[str, Any]], column: str) -> float:
    values = numbers(cells, column)
    return statistics.median(values) if values else math.nan


def spread(cells: list[dict[str, Any]], column: str) -> str:
    values = numbers(cells, column)
    if not values:
        return "–"
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}–{fmt(max(values))}]"


def total(cells: list[dict[str, Any]], column: str) -> str:
    values = numbers(cells, column)
    return fmt(sum(values)) if values else "–"


def fmt(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 100 or value == int(value) else f"{value:.1f}"
