"""What an hour of faults does and when, decided before it starts: the offered rate's steps and the faults'
timetable, both drawn from the run's seed (the same seed, duration and settings give the same run).

* The rate changes every ``step_s`` seconds to a rate drawn uniformly between ``low`` and ``high`` times the
  rate the topology sustains (``--sustained``): the load moves, so re-plans have reasons to happen, and never
  asks for more than the topology can do without faults.
* Each fault kind is injected ``per_kind`` times. The faults take turns: the window between ``warmup_s``
  after the start and ``tail_s`` before the end is cut into one slot per fault, each fault at a seeded
  moment in the first half of its slot, the kinds shuffled so that no kind follows itself where another
  order allows it. A fault that runs late (the one before took longer) starts as soon as that one recovered.
"""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

# The faults, in the order the report lists them.
SUPERVISOR_KILL = "supervisor-kill"     # a supervisor and its workers SIGKILLed, then the supervisor restarted
SERVICE_KILL = "service-kill"           # the planner service SIGKILLed, then restarted
SERVICE_HANG = "service-hang"           # the planner service SIGSTOPped past the plugin's deadline, then SIGCONT
ZOOKEEPER_RESTART = "zookeeper-restart"  # ZooKeeper stopped and started on its data
NIMBUS_RESTART = "nimbus-restart"       # Nimbus stopped and started on its data
LINK_CUT = "link-cut"                   # a supervisor's link down in its namespace, then up
KINDS = (SUPERVISOR_KILL, SERVICE_KILL, SERVICE_HANG, ZOOKEEPER_RESTART, NIMBUS_RESTART, LINK_CUT)


@dataclass(frozen=True)
class RateStep:
    at_s: float      # seconds after the soak's start
    rate: float      # tuples/s the spout offers from then on


@dataclass(frozen=True)
class PlannedFault:
    index: int       # 1-based, in time order
    at_s: float      # seconds after the soak's start
    kind: str


def parse_kinds(text: str) -> tuple[str, ...]:
    """``--faults``: comma-separated kinds of :data:`KINDS` (``all``: every one), each once, in KINDS' order."""
    names = {part.strip() for part in text.split(",") if part.strip()}
    if names == {"all"}:
        return KINDS
    unknown = sorted(names - set(KINDS))
    if unknown or not names:
        raise ValueError(f"--faults: unknown {', '.join(unknown) or '(none given)'} (known: all, {', '.join(KINDS)})")
    return tuple(kind for kind in KINDS if kind in names)


def rate_schedule(seed: int, duration_s: float, step_s: float, sustained: float, low: float = 0.2,
                  high: float = 0.8) -> list[RateStep]:
    """A step every ``step_s`` from 0 until ``duration_s``, each at a rate drawn uniformly from
    [``low``, ``high``] × ``sustained`` (rounded to whole tuples/s); consecutive steps differ by at least a
    tenth of that range, so every step changes the load."""
    if not (0 < low <= high) or sustained <= 0 or step_s <= 0 or duration_s <= 0:
        raise ValueError("a rate schedule needs 0 < low <= high, and a positive sustained rate, step and duration")
    rng = random.Random(f"soak-rates-{seed}")
    steps: list[RateStep] = []
    spread = (high - low) * sustained
    for k in range(math.ceil(duration_s / step_s)):
        rate = round(rng.uniform(low, high) * sustained)
        while steps and spread >= 10 and abs(rate - steps[-1].rate) < spread / 10:
            rate = round(rng.uniform(low, high) * sustained)
        steps.append(RateStep(k * step_s, float(max(1, rate))))
    return steps


def rate_at(schedule: Sequence[RateStep], at_s: float) -> float:
    """The rate offered ``at_s`` seconds after the start (the first step's before it)."""
    current = schedule[0].rate
    for step in schedule:
        if step.at_s <= at_s:
            current = step.rate
    return current


def tuples_offered(schedule: Sequence[RateStep], duration_s: float) -> float:
    """Tuples the schedule offers from 0 to ``duration_s``."""
    bounds = [step.at_s for step in schedule[1:]] + [duration_s]
    return sum(step.rate * max(0.0, min(end, duration_s) - step.at_s) for step, end in zip(schedule, bounds))


def fault_timetable(seed: int, duration_s: float, kinds: Sequence[str], per_kind: int, warmup_s: float,
                    tail_s: float) -> list[PlannedFault]:
    """Every kind ``per_kind`` times between ``warmup_s`` and ``duration_s - tail_s`` (module docstring)."""
    count = len(kinds) * per_kind
    if count == 0:
        return []
    window = duration_s - tail_s - warmup_s
    if window <= 0:
        raise ValueError(f"no time for faults: {duration_s:g} s less {warmup_s:g} s of warm-up and {tail_s:g} s "
                         "of tail")
    rng = random.Random(f"soak-faults-{seed}")
    order = spread_kinds([kind for kind in kinds for _ in range(per_kind)], rng)
    slot = window / count
    return [PlannedFault(k + 1, round(warmup_s + k * slot + rng.uniform(0, slot / 2), 1), kind)
            for k, kind in enumerate(order)]


def spread_kinds(kinds: list[str], rng: random.Random) -> list[str]:
    """``kinds`` shuffled, then each kind that follows itself swapped with a later one that does not."""
    order = list(kinds)
    rng.shuffle(order)
    for k in range(1, len(order)):
        if order[k] == order[k - 1]:
            later = next((j for j in range(k + 1, len(order)) if order[j] != order[k]), None)
            if later is not None:
                order[k], order[later] = order[later], order[k]
    return order


def feed_records(schedule: Sequence[RateStep], duration_s: float, start_s: float, round_to: int = 50_000) -> int:
    """Records a feed needs for the run: what the schedule offers over the duration plus ``start_s`` at the
    first rate (the start-up before the soak begins), a fifth more for the replays, rounded up to
    ``round_to`` (so runs of similar lengths share one cached feed)."""
    needed = 1.2 * (tuples_offered(schedule, duration_s) + schedule[0].rate * start_s)
    return int(math.ceil(needed / round_to) * round_to)
