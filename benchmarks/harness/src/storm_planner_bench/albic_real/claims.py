"""Madsen et al.'s claims for ALBIC (§5.4, Figs. 12-14) checked on ``bench albic-real``'s periods: each
planner's settled periods against those of Storm's two schedulers and of PoTC, on the paper's metrics.

The unit of spread is the adaptation period. A planner starts from the ``spread`` placement (as little
collocation as possible) and climbs from there, while Storm's schedulers place once and stay, so every run
is compared on its **settled periods**: the second half of its measured periods (periods 5-8 of eight),
pooled over repetitions. A planner beats a baseline *beyond the spread* on a metric when every one of its
settled periods is better than every settled period of the baseline; *by the median* when only the medians
are ordered. Two settled periods at least are needed on each side.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from storm_planner_bench.common.report import markdown_table
from storm_planner_bench.e2e.figures import numbers

BASELINES = ("default", "ras", "potc")


@dataclass(frozen=True)
class Claim:
    """One metric of the paper's figures: its column in ``periods.csv``, its label, which way is better."""
    column: str
    label: str
    higher: bool
    digits: int


CLAIMS = (Claim("collocation_factor", "collocation factor (Fig. 12a)", higher=True, digits=2),
          Claim("load_distance", "load distance, % points (Fig. 12b)", higher=False, digits=1),
          Claim("latency_p99_ms", "p99 complete latency, ms", higher=False, digits=0))


def settled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the second half of each run's measured periods (a run: scheduler and repetition); a run
    stopped after its first period has none (its one period is the placement before any re-plan)."""
    last: dict[tuple[str, int], int] = {}
    for row in rows:
        key = (row["scheduler"], row["repetition"])
        last[key] = max(last.get(key, 0), row["period"])
    return [row for row in rows
            if (end := last[(row["scheduler"], row["repetition"])]) >= 2 and row["period"] > end / 2]


def verdict(mine: list[float], theirs: dict[str, list[float]], higher: bool) -> str:
    """Whether ``mine`` (a planner's settled periods) beat every baseline's: beyond the spread, by the
    median only, not (naming which), or too few periods to say."""
    present = {name: values for name, values in theirs.items() if values}
    if len(mine) < 2 or not present or any(len(values) < 2 for values in present.values()):
        return "fewer than two settled periods"

    def better(a: float, b: float) -> bool:
        return a > b if higher else a < b

    names = " and ".join(present)
    if all(better(min(mine), max(values)) if higher else better(max(mine), min(values))
           for values in present.values()):
        return f"✓ beats {names} beyond the spread"
    behind = [name for name, values in present.items()
              if not better(statistics.median(mine), statistics.median(values))]
    if behind:
        return f"not better than {' and '.join(behind)} (median)"
    return "better by the median, inside the spread"


def claims_section(rows: list[dict[str, Any]], planners: list[str]) -> str:
    """The markdown section: per planner and metric, the settled periods' median [min-max] of the planner
    and of each baseline that ran, and the verdict; empty without a planner or a baseline."""
    calm = settled(rows)
    baselines = [b for b in BASELINES if any(r["scheduler"] == b for r in calm)]
    if not planners or not baselines:
        return ""
    table = []
    for planner in planners:
        mine = [r for r in calm if r["scheduler"] == planner]
        for claim in CLAIMS:
            theirs = {b: numbers([r for r in calm if r["scheduler"] == b], claim.column) for b in baselines}
            table.append([planner, claim.label, _spread(numbers(mine, claim.column), claim.digits),
                          *(_spread(theirs[b], claim.digits) for b in baselines),
                          verdict(numbers(mine, claim.column), theirs, claim.higher)])
        table.append([planner, "migrations per settled period", _per_period(mine),
                      *(_per_period([r for r in calm if r["scheduler"] == b]) for b in baselines), "–"])
    header = ["planner", "metric", "planner", *baselines, "verdict"]
    return ("## Madsen et al.'s metrics against Storm's schedulers and PoTC\n\n"
            "Settled periods (the second half of each run's measured periods, pooled over repetitions): median "
            "[min–max]. ✓: every settled period of the planner is better than every settled period of each "
            "baseline. Storm's schedulers and PoTC never move an executor.\n\n"
            + markdown_table(header, table, right=range(2, len(header) - 1)) + "\n")


def _spread(values: list[float], digits: int) -> str:
    if not values:
        return "–"
    text = [f"{v:,.{digits}f}" for v in (statistics.median(values), min(values), max(values))]
    return text[0] if len(values) == 1 else f"{text[0]} [{text[1]}–{text[2]}]"


def _per_period(rows: list[dict[str, Any]]) -> str:
    moves = numbers(rows, "migrations")
    return f"{sum(moves) / len(moves):.1f}" if moves else "–"
