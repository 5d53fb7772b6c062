"""The capacity search: the highest offered rate a running topology sustains, to within 5 %, in one submission.

The search only decides which rate to offer next; whoever runs it measures each step and says whether it was
sustained (:mod:`.rule`), and holds the topology at a low rate when asked (:func:`search`'s ``measure`` and
``recover``). In order:

1. **latency steps** (optional): the given rates (the report's 50 % and 80 % of RAS's capacity), whatever
   their verdicts;
2. **coarse steps**: from the start rate up by ``factor`` (× 1.4) until a step is not sustained; a rate at or
   below one already sustained is skipped, and one at or above one already missed ends the climb;
3. **down steps**, only when nothing was sustained yet: below the lowest rate missed, by ``factor``, until a
   step is sustained (or the rate falls under ``min_rate``: capacity below it);
4. **bisection** between the highest rate sustained and the lowest rate missed above it, at their midpoint,
   until the bracket is at most ``resolution`` (5 %) of the rate sustained.

After a step that was not sustained the next one starts from a **recovery hold** (``recover``): the topology
at half the next rate (never above the highest rate kept), long enough for the tuples the missed step left
queued to time out, fail and be replayed (Storm's message timeout and a margin), so a step never inherits
another's backlog.

The result: the highest rate sustained and the bracket ``[kept, missed)`` around it. A missed step below a
kept one (noise: the verdicts need not be monotone in the rate) is recorded and counted, and the bracket is
taken above the highest rate kept. Every step counts toward ``max_steps``, so a search ends in a bounded
number of steps whatever the verdicts: with the defaults a capacity between 1/4 and 4 times the start rate
is bracketed within 5 % in at most 10 steps after the latency steps.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

LATENCY, COARSE, DOWN, BISECT = "latency", "coarse", "down", "bisect"
ROLES = (LATENCY, COARSE, DOWN, BISECT)
RECOVERY_SHARE = 0.5


@dataclass(frozen=True)
class SearchSettings:
    start_rate: float
    factor: float = 1.4
    resolution: float = 0.05
    latency_rates: tuple[float, ...] = ()
    max_steps: int = 16
    min_rate: float = 1.0
    max_rate: float = 1e6

    def __post_init__(self) -> None:
        if not (self.start_rate > 0 and math.isfinite(self.start_rate)):
            raise ValueError(f"the search's start rate must be positive, not {self.start_rate!r}")
        if not self.factor > 1:
            raise ValueError(f"the coarse step factor must be above 1, not {self.factor!r}")
        if not 0 < self.resolution < 1:
            raise ValueError(f"the resolution must be between 0 and 1, not {self.resolution!r}")
        if self.max_steps < 1:
            raise ValueError(f"a search needs at least one step, not {self.max_steps}")
        if any(not rate > 0 for rate in self.latency_rates):
            raise ValueError(f"latency rates must be positive: {self.latency_rates}")


@dataclass(frozen=True)
class Step:
    rate: float
    role: str
    sustained: bool


@dataclass
class SearchResult:
    steps: list[Step] = field(default_factory=list)
    stopped: str = ""             # why the search ended before resolving, else ""

    @property
    def kept(self) -> float:
        """The highest rate sustained (0: none)."""
        return max((s.rate for s in self.steps if s.sustained), default=0.0)

    @property
    def missed(self) -> float:
        """The lowest rate missed above the highest kept (inf: none)."""
        kept = self.kept
        return min((s.rate for s in self.steps if not s.sustained and s.rate > kept), default=math.inf)

    @property
    def inversions(self) -> int:
        """Steps missed at a rate below one kept."""
        kept = self.kept
        return sum(1 for s in self.steps if not s.sustained and s.rate < kept)

    def resolved(self, resolution: float) -> bool:
        kept, missed = self.kept, self.missed
        return kept > 0 and math.isfinite(missed) and missed - kept <= resolution * kept


class _Budget(Exception):
    """The search used its steps."""


def search(measure: Callable[[float, str], bool], recover: Callable[[float], None],
           settings: SearchSettings) -> SearchResult:
    """Run the search (module docstring): ``measure(rate, role)`` offers ``rate`` and says whether the step
    was sustained; ``recover(rate)`` holds the topology at ``rate`` before the step that follows a miss."""
    result = SearchResult()
    try:
        _latency(result, measure, recover, settings)
        _climb(result, measure, recover, settings)
        _descend(result, measure, recover, settings)
        _bisect(result, measure, recover, settings)
    except _Budget:
        result.stopped = f"used its {settings.max_steps} steps"
    return result


def _step(result: SearchResult, measure: Callable[[float, str], bool], recover: Callable[[float], None],
          settings: SearchSettings, rate: float, role: str) -> bool:
    if len(result.steps) >= settings.max_steps:
        raise _Budget
    rate = float(f"{rate:.4g}")   # what the spout's rate file gets: four significant figures
    if result.steps and not result.steps[-1].sustained:
        kept = result.kept
        recover(RECOVERY_SHARE * (min(rate, kept) if kept else rate))
    ok = bool(measure(rate, role))
    result.steps.append(Step(rate, role, ok))
    return ok


def _latency(result: SearchResult, measure, recover, settings: SearchSettings) -> None:
    for rate in settings.latency_rates:
        _step(result, measure, recover, settings, rate, LATENCY)


def _climb(result: SearchResult, measure, recover, settings: SearchSettings) -> None:
    rate = settings.start_rate
    while rate <= settings.max_rate:
        if rate >= result.missed:
            return
        if rate > result.kept and not _step(result, measure, recover, settings, rate, COARSE):
            return
        rate *= settings.factor
    result.stopped = f"sustained the highest rate allowed ({settings.max_rate:g} t/s)"


def _descend(result: SearchResult, measure, recover, settings: SearchSettings) -> None:
    while result.kept == 0 and result.steps:
        rate = min(s.rate for s in result.steps) / settings.factor
        if rate < settings.min_rate:
            result.stopped = f"sustained no rate down to {settings.min_rate:g} t/s"
            return
        _step(result, measure, recover, settings, rate, DOWN)


def _bisect(result: SearchResult, measure, recover, settings: SearchSettings) -> None:
    while result.kept > 0 and math.isfinite(result.missed) and not result.resolved(settings.resolution):
        _step(result, measure, recover, settings, (result.kept + result.missed) / 2.0, BISECT)


def plan_rates(kept: float, shares: Sequence[float]) -> tuple[float, ...]:
    """Rates at ``shares`` of a capacity ``kept`` (the latency steps at 50 % and 80 % of RAS's), rounded to
    three significant figures; none without a capacity."""
    if not kept > 0:
        return ()
    return tuple(float(f"{share * kept:.3g}") for share in shares)
