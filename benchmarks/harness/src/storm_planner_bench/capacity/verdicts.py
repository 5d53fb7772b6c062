"""The figures the capacity report reads off a run's searches: capacities per arm, the A/A noise floor, the
verdicts it allows, the hook's loss.

**Resolution.** A difference between two arms is a verdict only when it is larger than what separates one
scheduler from itself. The A/A pair (``X`` and ``X#2``, the same arm run twice as two arms, interleaved like
the others) gives, per cluster and workload, the gap between their median capacities, ``|a − b| / min(a, b)``.
The run's resolution is the largest of those gaps and the search's own resolution (5 %): a ratio within it of
1 reads "no difference", never "higher" or "lower" (:func:`compare`).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from storm_planner_bench.e2e.figures import cluster_cpu

Row = Mapping[str, Any]
HOOK_TARGET = 0.03       # the metrics hook's cost at saturation, at most (issue #48)


def number(value: Any) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except (TypeError, ValueError):
        return math.nan


def capacities(searches: Iterable[Row], cluster: str, workload: str, arm: str) -> list[float]:
    """The capacities (offered t/s) of an arm's searches that ran, repetitions ≥ 1 (the pilot is 0)."""
    return [number(r["capacity_tps"]) for r in searches
            if r["cluster"] == cluster and r["workload"] == workload and r["arm"] == arm
            and r.get("status") == "ran" and int(number(r["repetition"]) or 0) >= 1
            and math.isfinite(number(r["capacity_tps"]))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def aa_gap(first: Sequence[float], second: Sequence[float]) -> float:
    """The A/A pair's gap: the difference of their medians over the smaller (NaN without both)."""
    a, b = median(first), median(second)
    if not (a > 0 and b > 0):
        return math.nan
    return abs(a - b) / min(a, b)


def resolution(gaps: Iterable[float], search_resolution: float) -> float:
    """The run's resolution: the largest A/A gap, at least the search's own resolution."""
    return max([search_resolution, *(g for g in gaps if math.isfinite(g))])


def compare(ratio: float, floor: float) -> str:
    """A ratio of two capacities read against the resolution: ``higher``, ``lower`` or ``no difference``."""
    if not math.isfinite(ratio) or ratio <= 0:
        return "–"
    if abs(ratio - 1.0) <= floor:
        return "no difference"
    return "higher" if ratio > 1.0 else "lower"


def ratio_text(mine: float, theirs: float, floor: float) -> str:
    """``1.32 (higher)``: the ratio of medians and what it means at the run's resolution."""
    if not (mine >= 0 and theirs > 0):
        return "–"
    ratio = mine / theirs
    return f"{ratio:.2f} ({compare(ratio, floor)})"


def hook_loss(with_hook: Sequence[float], without: Sequence[float]) -> float:
    """What the metrics hook costs at saturation: ``1 − capacity with / capacity without`` (medians)."""
    on, off = median(with_hook), median(without)
    return 1.0 - on / off if off > 0 and math.isfinite(on) else math.nan


def hook_verdict(loss: float, floor: float) -> str:
    """The loss against the 3 % target, at the run's resolution."""
    if not math.isfinite(loss):
        return "–"
    if loss <= HOOK_TARGET:
        return "within the 3 % target" + (" (below the resolution)" if abs(loss) <= floor else "")
    if loss <= floor:
        return f"above the 3 % target but within the resolution ({floor:.0%}): not resolved"
    return "above the 3 % target, beyond the resolution"


QUOTA_BOUND = 0.95   # a supervisor using this share of its CPU quota is held by it: its CPU is the quota


def at_quota(step: Row, quotas: Mapping[str, float]) -> list[str]:
    """The supervisors whose cgroup used at least :data:`QUOTA_BOUND` of their quota in the step's window:
    there the CPU measured is the quota, not the work, and cannot show what the hook costs."""
    return sorted(node for node, quota in quotas.items()
                  if number(quota) > 0 and number(step.get(f"cpu_{node}_pct")) >= QUOTA_BOUND * number(quota))


def hook_cpu(with_hook: Iterable[Row], without: Iterable[Row]) -> list[tuple[float, float, float]]:
    """(offered t/s, cluster CPU with the hook, without) at every rate both arms sustained, the CPU the median
    over the repetitions: what the hook costs at one offered rate, which a 5 % capacity bracket cannot resolve
    down to the 3 % target. Lowest rate first."""
    def by_rate(steps: Iterable[Row]) -> dict[float, list[float]]:
        found: dict[float, list[float]] = {}
        for step in steps:
            cpu = cluster_cpu(step)
            if step.get("verdict") == "sustained" and math.isfinite(cpu):
                found.setdefault(number(step["offered_tps"]), []).append(cpu)
        return found

    on, off = by_rate(with_hook), by_rate(without)
    return [(rate, median(on[rate]), median(off[rate])) for rate in sorted(set(on) & set(off))]
