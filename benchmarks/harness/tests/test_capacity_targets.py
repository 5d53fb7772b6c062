"""Issue #51's targets read off a run's medians (``capacity/targets.py``): which workloads each holds on, at
the run's resolution, and when a verdict may be given at all."""
from __future__ import annotations

import math

from storm_planner_bench.capacity.targets import Figures, judge


def figures(workload: str, capacity: float, *, ras: float = 1000.0, measured: float = 1000.0,
            bound: float = 1000.0, p99: float = 80.0, ras_p99: float = 100.0, lost: float = 0.0,
            repetitions: int = 3) -> Figures:
    return Figures(workload, capacity, ras, measured, bound, p99, ras_p99, lost, repetitions)


def by_text(targets):
    return {t.text: t for t in targets}


def test_four_workloads_with_three_repetitions_are_judged_met_or_missed():
    run = [figures("trends", 1500), figures("topk", 1400), figures("wordcount", 1350),
           figures("bargains", 1050, p99=120.0)]
    targets = by_text(judge(run, floor=0.10))
    assert targets["≥ 1.3 × RAS, beyond the resolution"].held == ("trends", "topk", "wordcount")
    assert targets["≥ 1.3 × RAS, beyond the resolution"].verdict == "met"
    assert targets["≥ 1.0 × RAS"].verdict == "met"
    assert targets["≥ 1.1 × ras+measured, beyond the resolution"].verdict == "met"
    assert targets["≥ 85 % of λ*"].verdict == "met"
    # bargains' p99 (120 ms) is above RAS's (100): one workload short of all four
    p99 = targets["p99 at 80 % of RAS's capacity no higher than RAS's"]
    assert p99.held == ("trends", "topk", "wordcount") and p99.verdict == "missed"
    assert targets["nothing lost"].verdict == "met"


def test_a_ratio_within_the_resolution_is_no_win():
    # 1.32 × RAS but a floor of 35 %: no difference, so it does not count towards the 1.3 target
    run = [figures(w, 1320) for w in ("a", "b", "c", "d")]
    targets = by_text(judge(run, floor=0.35))
    assert targets["≥ 1.3 × RAS, beyond the resolution"].held == ()
    assert targets["≥ 1.3 × RAS, beyond the resolution"].verdict == "missed"
    assert targets["≥ 1.0 × RAS"].verdict == "met"


def test_too_few_workloads_or_repetitions_give_no_verdict():
    three = [figures(w, 2000) for w in ("a", "b", "c")]
    assert {t.verdict for t in judge(three, floor=0.05)} == {"incomplete"}
    short = [figures(w, 2000) for w in ("a", "b", "c")] + [figures("d", 2000, repetitions=2)]
    assert {t.verdict for t in judge(short, floor=0.05)} == {"incomplete"}


def test_an_arm_that_never_ran_and_a_lost_tuple_hold_nothing():
    run = [figures("a", math.nan, p99=math.nan), figures("b", 2000, ras_p99=math.nan), figures("c", 2000, lost=3),
           figures("d", 2000, bound=math.nan)]
    targets = by_text(judge(run, floor=0.05))
    assert targets["≥ 1.0 × RAS"].held == ("b", "c", "d")
    assert targets["p99 at 80 % of RAS's capacity no higher than RAS's"].held == ("c", "d")
    assert targets["nothing lost"].held == ("a", "b", "d")
    assert targets["≥ 85 % of λ*"].held == ("b", "c")
