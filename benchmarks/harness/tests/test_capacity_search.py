"""``bench capacity``'s search against simulated topologies whose capacity is known: it brackets the capacity
within 5 % in a bounded number of steps, holds the topology low after every miss, and survives noise."""
from __future__ import annotations

import math
import random

import pytest

from storm_planner_bench.capacity.search import (
    BISECT,
    COARSE,
    DOWN,
    LATENCY,
    SearchResult,
    SearchSettings,
    plan_rates,
    search,
)


class Simulated:
    """A topology that sustains every rate up to ``capacity`` (``flip``: these rates get the wrong verdict
    once); records what it was asked."""

    def __init__(self, capacity: float, flip: tuple[float, ...] = ()) -> None:
        self.capacity, self.flip = capacity, set(flip)
        self.calls: list[tuple[str, float, str]] = []

    def measure(self, rate: float, role: str) -> bool:
        self.calls.append(("measure", rate, role))
        kept = rate <= self.capacity
        if rate in self.flip:
            self.flip.discard(rate)
            return not kept
        return kept

    def recover(self, rate: float) -> None:
        self.calls.append(("recover", rate, ""))


def run(capacity: float, **settings) -> tuple[SearchResult, Simulated]:
    topology = Simulated(capacity)
    return search(topology.measure, topology.recover, SearchSettings(**{"start_rate": 1000.0, **settings})), topology


@pytest.mark.parametrize("capacity", [260.0, 700.0, 999.0, 1000.0, 1001.0, 1372.0, 2345.6, 3990.0])
def test_the_search_brackets_a_known_capacity_within_5_percent_in_at_most_10_steps(capacity):
    result, _ = run(capacity)
    assert result.kept <= capacity < result.missed
    assert result.missed - result.kept <= 0.05 * result.kept
    assert result.resolved(0.05) and not result.stopped
    assert len(result.steps) <= 10, [(s.rate, s.role, s.sustained) for s in result.steps]


def test_over_many_capacities_the_steps_stay_bounded():
    rng = random.Random(7)
    worst = 0
    for _ in range(300):
        capacity = 1000.0 * math.exp(rng.uniform(math.log(0.25), math.log(4.0)))
        result, _ = run(capacity)
        assert result.kept <= capacity < result.missed and result.resolved(0.05)
        worst = max(worst, len(result.steps))
    assert worst <= 10


def test_coarse_steps_climb_by_the_factor_then_bisection_halves_the_bracket():
    result, _ = run(1500.0)
    roles = [(s.role, s.rate, s.sustained) for s in result.steps]
    assert roles[:3] == [(COARSE, 1000.0, True), (COARSE, 1400.0, True), (COARSE, 1960.0, False)]
    assert [r for r, _, _ in roles[3:]] == [BISECT] * (len(roles) - 3)
    assert roles[3][1] == pytest.approx((1400 + 1960) / 2)


def test_after_every_miss_the_next_step_follows_a_recovery_hold_below_the_rate_kept():
    result, topology = run(1500.0)
    calls = topology.calls
    for index, (kind, rate, _) in enumerate(calls):
        if kind == "measure" and index and calls[index - 1][0] == "measure":
            previous = calls[index - 1][1]
            assert previous <= topology.capacity, "a step after a miss came without a recovery hold"
        if kind == "recover":
            assert calls[index - 1][0] == "measure" and calls[index - 1][1] > topology.capacity
            assert rate <= 0.5 * result.kept + 1e-9
    assert sum(1 for kind, _, _ in calls if kind == "recover") == sum(1 for s in result.steps[:-1] if not s.sustained)


def test_latency_steps_come_first_and_inform_the_climb():
    result, _ = run(1500.0, start_rate=500.0, latency_rates=(600.0, 960.0))
    steps = [(s.role, s.rate) for s in result.steps]
    assert steps[:2] == [(LATENCY, 600.0), (LATENCY, 960.0)]
    # 500 and 700 are below the 960 kept: skipped; the climb goes on at 980 (= 500 × 1.4²)
    assert steps[2] == (COARSE, 980.0)
    assert result.kept <= 1500 < result.missed and result.resolved(0.05)


def test_a_start_above_capacity_steps_down_until_a_rate_is_kept():
    result, _ = run(200.0, start_rate=1000.0)
    assert [s.role for s in result.steps[:5]] == [COARSE, DOWN, DOWN, DOWN, DOWN]
    assert result.kept <= 200 < result.missed and result.resolved(0.05)


def test_nothing_sustained_down_to_the_least_rate_ends_the_search():
    result, _ = run(0.5, start_rate=10.0, min_rate=1.0)
    assert result.kept == 0 and "no rate" in result.stopped


def test_a_noisy_miss_below_a_kept_rate_is_an_inversion_and_the_bracket_stays_above():
    topology = Simulated(1500.0, flip=(1000.0,))      # 1000 missed once by noise, after 1200 was kept
    result = search(topology.measure, topology.recover,
                    SearchSettings(start_rate=1000.0, latency_rates=(1200.0, 1000.0)))
    assert [(s.rate, s.sustained) for s in result.steps[:2]] == [(1200.0, True), (1000.0, False)]
    assert ("recover", 600.0, "") in topology.calls     # half the rate kept, before the climb resumes
    assert result.inversions == 1
    assert result.kept <= 1500 < result.missed and result.resolved(0.05)


def test_the_step_budget_ends_a_search_it_cannot_resolve():
    result, _ = run(1500.0, max_steps=3)
    assert len(result.steps) == 3 and "3 steps" in result.stopped and not result.resolved(0.05)


def test_bad_settings_are_refused_and_latency_rates_round():
    for bad in ({"start_rate": 0}, {"factor": 1.0}, {"resolution": 0}, {"max_steps": 0}, {"latency_rates": (0,)}):
        with pytest.raises(ValueError):
            SearchSettings(**{"start_rate": 100.0, **bad})
    assert plan_rates(3712.0, (0.5, 0.8)) == (1860.0, 2970.0)
    assert plan_rates(0.0, (0.5,)) == ()
