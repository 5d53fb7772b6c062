"""The recommended planner against issue #51's targets, read off a capacity run.

Issue #51 asks of the recommended planner (``planner:auto``, with any suffix), on each benchmark cluster over
its four workloads, in one run of at least three interleaved repetitions on one commit:

* a capacity at least 1.3 × RAS's, and higher beyond the run's resolution, on at least three workloads;
* at least 1.0 × RAS's on all four;
* at least 1.1 × ``ras+measured``'s, and higher beyond the resolution, on at least two;
* at least 85 % of λ\\* on all four;
* at 80 % of RAS's capacity, a p99 from the due time no higher than RAS's (medians over repetitions) on all four;
* nothing lost on any.

:func:`judge` counts, per target, the workloads where it holds; a target is met or missed only once all four
workloads were measured with at least three repetitions of each arm compared, and is *incomplete* before.
Capacities and p99s are medians over repetitions (NaN where an arm has none: that workload then does not count
as holding).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from storm_planner_bench.capacity import verdicts as v

WORKLOADS = 4          # the four workloads per cluster
REPETITIONS = 3        # the fewest repetitions per arm the issue accepts


@dataclass(frozen=True)
class Figures:
    """One workload's medians for the planner and the two baselines it is held to."""

    workload: str
    capacity: float          # the planner's highest sustained t/s
    ras: float
    ras_measured: float
    lambda_star: float
    p99_ms: float            # the planner's p99 from the due time at 80 % of RAS's capacity
    ras_p99_ms: float
    lost: float
    repetitions: int         # the fewest of the three arms'

    @property
    def times_ras(self) -> float:
        return _ratio(self.capacity, self.ras)

    @property
    def times_measured(self) -> float:
        return _ratio(self.capacity, self.ras_measured)

    @property
    def of_lambda(self) -> float:
        return _ratio(self.capacity, self.lambda_star)


@dataclass(frozen=True)
class Target:
    """One target: the workloads where it holds, of those judged, and how many it needs."""

    text: str
    held: tuple[str, ...]
    judged: int
    needs: int
    complete: bool

    @property
    def verdict(self) -> str:
        if not self.complete:
            return "incomplete"
        return "met" if len(self.held) >= self.needs else "missed"


def judge(figures: Sequence[Figures], floor: float) -> list[Target]:
    """Each target of issue #51 over one cluster's workloads, at the run's resolution ``floor``."""
    complete = len(figures) >= WORKLOADS and all(f.repetitions >= REPETITIONS for f in figures)

    def target(text: str, needs: int, holds) -> Target:
        return Target(text, tuple(f.workload for f in figures if holds(f)), len(figures), needs, complete)

    return [
        target("≥ 1.3 × RAS, beyond the resolution", WORKLOADS - 1,
               lambda f: f.times_ras >= 1.3 and v.compare(f.times_ras, floor) == "higher"),
        target("≥ 1.0 × RAS", WORKLOADS, lambda f: f.times_ras >= 1.0),
        target("≥ 1.1 × ras+measured, beyond the resolution", 2,
               lambda f: f.times_measured >= 1.1 and v.compare(f.times_measured, floor) == "higher"),
        target("≥ 85 % of λ*", WORKLOADS, lambda f: f.of_lambda >= 0.85),
        target("p99 at 80 % of RAS's capacity no higher than RAS's", WORKLOADS,
               lambda f: math.isfinite(f.p99_ms) and math.isfinite(f.ras_p99_ms) and f.p99_ms <= f.ras_p99_ms),
        target("nothing lost", WORKLOADS, lambda f: f.lost == 0),
    ]


def _ratio(mine: float, theirs: float) -> float:
    return mine / theirs if theirs > 0 and math.isfinite(mine) else math.nan
