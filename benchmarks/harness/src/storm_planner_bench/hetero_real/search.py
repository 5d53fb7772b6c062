"""``bench hetero-real``'s pure parts: expected rates, judging a step, the rate search, the placements.

No cluster here: what one step's metrics windows say about whether the topology kept up, how the
offered rate is searched on a geometric grid, which placements a run may name and in what order
they run.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.generators.hetero import TOPOLOGIES
from storm_planner.profiling.measurements import WindowFigures

GRID_BASE, GRID_FACTOR = 10.0, 1.1         # offered rates: GRID_BASE · GRID_FACTOR^k tuples/s
# What a run's placement may be. The first three are the plugin asking the planner service (Nimbus runs
# storm-planner's scheduler): hetero (its fixed-graph mode on hetero's graph), hetero-optimal (the exhaustive
# optimum, on its own graph) and storm-default (Storm's EvenScheduler order, planned by the service). The last
# two are Storm's own schedulers in Nimbus, no plugin: default (DefaultScheduler) and ras (ResourceAwareScheduler).
PLACEMENTS = ("hetero", "hetero-optimal", "storm-default", "default", "ras")
PLANNED = ("hetero", "hetero-optimal", "storm-default")
NIMBUS_SCHEDULERS = {"default": "default", "ras": "resource-aware"}   # the others: "planner"
ALIASES = {"resource-aware": "ras"}


class BenchError(StormPlannerError, RuntimeError):
    """The benchmark cannot go on; the message says why."""



def spouts_of(shape: str) -> tuple[str, ...]:
    return tuple(name for name, kind in TOPOLOGIES[shape]["components"] if kind == "spout")


def expected_rates(shape: str, offered: float) -> dict[str, float]:
    """Tuples/s each component must handle when every spout emits ``offered`` (α = 1, as profiled):
    a spout emits ``offered``; a bolt executes the sum of what its sources emit (every subscribing
    component receives the whole stream)."""
    spec = TOPOLOGIES[shape]
    rates = {name: (offered if kind == "spout" else 0.0) for name, kind in spec["components"]}
    remaining = list(spec["streams"])
    while remaining:  # the shapes are DAGs listed source-first; loop until every stream is summed
        for stream in list(remaining):
            source, target = stream
            if not any(t == source for _, t in remaining):
                rates[target] += rates[source]
                remaining.remove(stream)
    return rates


def component_rates(windows: Iterable[WindowFigures], spouts: Sequence[str]) -> dict[str, float]:
    """Per component, tuples/s summed over its tasks (emitted for a spout, executed for a bolt);
    each task's rate is its tuples over the time its own windows cover."""
    per_task: dict[tuple[str, int], list[WindowFigures]] = {}
    for w in windows:
        if not w.component.startswith("__") and w.duration_ms > 0:
            per_task.setdefault((w.component, w.task), []).append(w)
    rates: dict[str, float] = {}
    for (component, _), own in per_task.items():
        seconds = sum(w.duration_ms for w in own) / 1000.0
        tuples = sum(w.emitted if component in spouts else w.executed for w in own)
        rates[component] = rates.get(component, 0.0) + tuples / seconds
    return rates


def last_round(windows: Iterable[WindowFigures]) -> list[WindowFigures]:
    """Each task's newest window: the end of a step, where a growing lag shows first."""
    newest: dict[int, WindowFigures] = {}
    for w in windows:
        if w.task not in newest or w.seq > newest[w.task].seq:
            newest[w.task] = w
    return list(newest.values())


@dataclass(frozen=True)
class Verdict:
    """Did the topology keep up with an offered rate, and which component fell furthest behind."""

    sustained: bool
    worst_component: str
    worst_share: float                       # measured / expected of that component, whole step
    last_share: float                        # the same component's share in each task's last window
    rates: Mapping[str, float]               # measured tuples/s per component, whole step


def judge_step(windows: Sequence[WindowFigures], shape: str, offered: float, keep_up: float = 0.95) -> Verdict:
    """A step is sustained when every component handles at least ``keep_up`` of the tuples/s the
    offered rate implies, over all measured windows *and* in each task's last window (no lag
    building up at the end of the step)."""
    expected = expected_rates(shape, offered)
    spouts = spouts_of(shape)
    whole = component_rates(windows, spouts)
    last = component_rates(last_round(windows), spouts)
    shares = {c: whole.get(c, 0.0) / rate for c, rate in expected.items() if rate > 0}
    last_shares = {c: last.get(c, 0.0) / rate for c, rate in expected.items() if rate > 0}
    worst = min(shares, key=lambda c: (min(shares[c], last_shares[c]), c))
    sustained = all(shares[c] >= keep_up and last_shares[c] >= keep_up for c in shares)
    return Verdict(sustained, worst, shares[worst], last_shares[worst], whole)


def grid_rate(index: int) -> float:
    """The offered rate of grid step ``index`` (tuples/s per spout), one decimal."""
    return round(GRID_BASE * GRID_FACTOR ** index, 1)


def grid_index_below(rate: float) -> int:
    """The highest grid step at or below ``rate`` (at least 0)."""
    if rate <= GRID_BASE:
        return 0
    return int(math.floor(math.log(rate / GRID_BASE) / math.log(GRID_FACTOR) + 1e-9))


@dataclass
class RateSearch:
    """Which grid step to measure next.

    Climb ``climb`` grid steps at a time while steps are sustained. A failed
    step is measured once more before it counts (one noisy window must not end
    a run); a step that passes right after failing at its rate is measured once
    more too before it counts (the failure's backlog drains into it). After a
    confirmed failure, the untried steps between the highest
    sustained step and the lowest confirmed failure are measured, lowest
    first; if the very first step fails, step down until one is sustained (at
    most ``max_down`` times). The result, :attr:`best`, is the highest
    sustained grid step: every placement is judged on the same grid of rates.
    """

    start: int
    climb: int = 2
    max_steps: int = 30
    max_down: int = 6
    best: int | None = None
    failed: int | None = None
    fails_seen: Counter = field(default_factory=Counter)
    rechecked: set = field(default_factory=set)
    tried: set = field(default_factory=set)
    steps: int = 0
    downs: int = 0

    def first(self) -> int:
        return self.start

    def record(self, index: int, sustained: bool) -> int | None:
        """Record a measured step; the next step to measure, or None when done."""
        self.steps += 1
        if self.steps >= self.max_steps:
            if sustained:
                self.best = index if self.best is None else max(self.best, index)
            return None
        if sustained:
            if self.fails_seen[index] and index not in self.rechecked:
                self.rechecked.add(index)
                return index                      # a pass right after a fail: once more before it counts
            self.best = index if self.best is None else max(self.best, index)
        else:
            self.fails_seen[index] += 1
            if self.fails_seen[index] < 2:
                return index                      # confirm the failure before it counts
            self.failed = index if self.failed is None else min(self.failed, index)
        self.tried.add(index)
        if self.failed is None:
            return index + self.climb
        if self.best is None:
            if self.downs >= self.max_down or self.failed - self.climb < 0:
                return None
            self.downs += 1
            return self.failed - self.climb
        untried = [k for k in range(self.best + 1, self.failed) if k not in self.tried]
        return untried[0] if untried else None


# -- pure parts: placements, run order --------------------------------------------------------------------

def placement_counts(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """``{(component, node): executors}`` of assignment rows ``{"component", "node"}``."""
    return dict(Counter((row["component"], row["node"]) for row in rows))


def assignment_counts(assignments: Mapping[str, str], component_of: Mapping[str, str]) -> dict[tuple[str, str], int]:
    """``{(component, node): executors}`` of a plan's ``executor -> "node:port"``."""
    return dict(Counter((component_of[e], slot.rsplit(":", 1)[0]) for e, slot in assignments.items()))


def placement_differences(applied: Mapping[str, str], planned: Mapping[str, str]) -> list[str]:
    """Where Nimbus' assignment (``executor -> "node:port"``) differs from the plan; [] when equal."""
    found = []
    for executor in sorted(set(applied) | set(planned)):
        if applied.get(executor) != planned.get(executor):
            found.append(f"{executor}: applied {applied.get(executor, 'nowhere')}, "
                         f"planned {planned.get(executor, 'nowhere')}")
    return found


def nimbus_scheduler(placement: str) -> str:
    """The cluster description's scheduler Nimbus runs for ``placement``: ``planner``, ``default`` or
    ``resource-aware``."""
    return NIMBUS_SCHEDULERS.get(placement, "planner")


def parse_placements(text: str) -> tuple[str, ...]:
    """``--placements``: a comma list of :data:`PLACEMENTS` (``resource-aware`` is ``ras``), each once."""
    names = [ALIASES.get(part.strip(), part.strip()) for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in PLACEMENTS]
    if unknown or not names:
        raise BenchError(f"--placements {text!r}: unknown {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(PLACEMENTS)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BenchError(f"--placements {text!r}: {', '.join(twice)} named twice (--repetitions repeats them)")
    return tuple(names)


def run_order(repetitions: int, placements: Sequence[str] = PLACEMENTS) -> list[tuple[int, str]]:
    """Every placement once, in the order given, then again: ``(repetition, placement)`` as the runs happen
    (A B C A B C …), so a slow drift of the host touches every placement alike."""
    if repetitions < 1:
        raise BenchError(f"--repetitions {repetitions}: at least 1")
    return [(k, placement) for k in range(repetitions) for placement in placements]


def parse_capacities(text: str) -> tuple[float, float, float]:
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise BenchError(f"--capacities {text!r}: three numbers, e.g. 100,50,25") from None
    if len(values) != 3 or any(v <= 0 for v in values):
        raise BenchError(f"--capacities {text!r}: three positive numbers (percent of a core)")
    return values




def parse_shares(text: str) -> tuple[float, ...]:
    """``--ras-shares``: shares of hetero's predicted rate at which RAS's declarations are made, tried in
    turn until RAS places the topology; each in (0, 1], highest first."""
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise BenchError(f"--ras-shares {text!r}: numbers in (0, 1], e.g. 1,0.9,0.8") from None
    if not values or any(not 0 < v <= 1 for v in values):
        raise BenchError(f"--ras-shares {text!r}: numbers in (0, 1], e.g. 1,0.9,0.8")
    if list(values) != sorted(set(values), reverse=True):
        raise BenchError(f"--ras-shares {text!r}: each once, highest first (the first that RAS can place is used)")
    return values
