"""Per-tuple costs from measurements at several rates (storm_planner.metrics.per_tuple)."""
from __future__ import annotations

import math

import pytest

from storm_planner.metrics.loads_and_traffic import ExecutorFigures, Measurement
from storm_planner.metrics.per_tuple import (
    DEFAULT_EXECUTOR_FIXED,
    ComponentCost,
    CostHistory,
    Point,
    capped_nodes,
    fit,
    observe,
)

# The truth the measurements below are made of: a count executor uses 2 % at zero rate and 0.02 % per
# tuple/s it executes; the spout 1 % and 0.05 % per tuple/s it emits; two counts share the spout's tuples.
COUNT_FIXED, COUNT_PER_TUPLE = 2.0, 0.02
SPOUT_FIXED, SPOUT_PER_TUPLE = 1.0, 0.05


def measurement(rate: float, *, acked: bool = True, windowed: bool = True) -> Measurement:
    figures = {"[1-1]": ExecutorFigures("[1-1]", "tweets", True, load=SPOUT_FIXED + SPOUT_PER_TUPLE * rate,
                                        emitted_per_s=rate, acked_per_s=rate if acked else 0.0)}
    for i in (2, 3):
        figures[f"[{i}-{i}]"] = ExecutorFigures(f"[{i}-{i}]", "count", windowed,
                                                load=COUNT_FIXED + COUNT_PER_TUPLE * rate / 2,
                                                executed_per_s=rate / 2)
    return Measurement("t-1-1", figures, {}, {})


def test_an_observation_takes_the_source_rate_from_the_spouts_acks_else_their_emits():
    seen = observe(measurement(400.0), {"tweets"})
    assert seen.source_rate == 400.0 and seen.executors == {"tweets": 1, "count": 2}
    assert seen.points["count"] == Point(200.0, COUNT_FIXED + COUNT_PER_TUPLE * 200)
    assert observe(measurement(300.0, acked=False), {"tweets"}).source_rate == 300.0   # no message ids
    assert "count" not in observe(measurement(300.0, windowed=False), {"tweets"}).points


def test_points_at_two_rates_give_the_fixed_part_and_the_per_tuple_cost():
    history = CostHistory()
    for rate in (400.0, 1200.0):
        history.add(observe(measurement(rate), {"tweets"}))
    costs = history.costs()
    assert costs is not None and costs.source_rate == 1200.0
    count = costs.components["count"]
    assert count.fitted and count.fixed == pytest.approx(COUNT_FIXED)
    assert count.per_tuple == pytest.approx(COUNT_PER_TUPLE) and count.per_source == pytest.approx(1.0)
    # At 3,000 t/s with four counts instead of two: each executes 750 t/s.
    assert count.load(3000.0, 4) == pytest.approx(COUNT_FIXED + COUNT_PER_TUPLE * 750)
    assert costs.components["tweets"].load(3000.0, 1) == pytest.approx(SPOUT_FIXED + SPOUT_PER_TUPLE * 3000)


def test_one_rate_or_rates_too_close_take_the_prior_fixed_part():
    one = fit([(400.0, Point(200.0, 6.0))], 2)
    assert one is not None and not one.fitted and one.fixed == DEFAULT_EXECUTOR_FIXED
    assert one.per_tuple == pytest.approx((6.0 - DEFAULT_EXECUTOR_FIXED) / 200.0)
    close = fit([(400.0, Point(200.0, 6.0)), (420.0, Point(210.0, 6.2))], 2)
    assert close is not None and not close.fitted


def test_a_fit_never_gives_a_fixed_part_above_the_least_load_nor_below_zero():
    # Loads that fall as the rate rises (a noisy, saturated window): no fit, the prior, capped by the load.
    falling = fit([(100.0, Point(50.0, 0.3)), (800.0, Point(400.0, 0.2))], 2)
    assert falling is not None and falling.fixed <= 0.2 and not falling.fitted
    steep = fit([(100.0, Point(50.0, 0.1)), (800.0, Point(400.0, 40.0))], 2)
    assert steep is not None and steep.fixed == 0.0 and steep.fitted


def test_nothing_finite_or_processed_gives_no_cost():
    assert fit([(400.0, Point(0.0, 5.0)), (0.0, Point(10.0, 5.0)), (400.0, Point(10.0, math.nan))], 1) is None
    history = CostHistory()
    history.add(observe(Measurement("t", {}, {}, {}), {"tweets"}))
    assert history.costs() is None


def test_a_cost_is_a_value():
    assert ComponentCost(1.0, 0.01, 2.0).load(100.0, 4) == pytest.approx(1.0 + 0.01 * 2.0 * 100.0 / 4)


def test_at_one_rate_a_remembered_fixed_part_is_the_prior_and_two_rates_fit_their_own():
    """A resubmission's first windows come at one rate: the fixed part an earlier run fitted stands in for the
    default (so the rest is read as per-tuple cost), clipped to the least load seen; two rates fit anew."""
    history = CostHistory()
    history.add(observe(measurement(400.0), {"tweets"}))
    count = history.costs({"count": COUNT_FIXED}).components["count"]
    assert not count.fitted and count.fixed == COUNT_FIXED
    assert count.per_tuple == pytest.approx(COUNT_PER_TUPLE)          # the truth, where the default misreads it
    assert history.costs().components["count"].per_tuple > COUNT_PER_TUPLE * 1.1
    clipped = history.costs({"count": 99.0, "tweets": math.nan}).components
    assert clipped["count"].fixed == pytest.approx(COUNT_FIXED + COUNT_PER_TUPLE * 200)   # the load it used
    assert clipped["tweets"].fixed == DEFAULT_EXECUTOR_FIXED                             # unusable: the default
    history.add(observe(measurement(1200.0), {"tweets"}))
    refit = history.costs({"count": 7.0}).components["count"]
    assert refit.fitted and refit.fixed == pytest.approx(COUNT_FIXED)


def test_points_measured_at_a_nodes_quota_give_no_intercept():
    """Word Count on the hetero cluster: tokenize's node at its 30 % quota at every search step, its load flat
    whatever it processed; a line through those points read the flat CPU as a fixed part of 10.9-13.1 %
    against 3.8 % in the calibration. Points where the component's executors all ran on a capped node keep
    the prior fixed part; their newest still gives the per-tuple cost."""
    def at(rate: float, load: float, node: str) -> Measurement:
        figures = {"[1-1]": ExecutorFigures("[1-1]", "tweets", True, cpu_percent=5.0, load=5.0, node="big",
                                            emitted_per_s=rate, acked_per_s=rate),
                   "[2-2]": ExecutorFigures("[2-2]", "count", True, cpu_percent=load, load=load, node=node,
                                            executed_per_s=rate)}
        return Measurement("t-1-1", figures, {}, {})

    capacities = {"big": 70.0, "small": 30.0}
    history = CostHistory()
    for rate, load in ((400.0, 28.0), (800.0, 28.5)):          # flat at the small node's quota
        measured = at(rate, load, "small")
        history.add(observe(measured, {"tweets"}, capped=capped_nodes(measured, capacities)))
    count = history.costs({"count": 3.8}).components["count"]
    assert not count.fitted and count.fixed == pytest.approx(3.8)
    assert count.per_tuple == pytest.approx((28.5 - 3.8) / 800.0)
    # Unaware of the quota, the same points fit a fixed part of 27.5 %.
    blind = CostHistory()
    for rate, load in ((400.0, 28.0), (800.0, 28.5)):
        blind.add(observe(at(rate, load, "small"), {"tweets"}))
    assert blind.costs({"count": 3.8}).components["count"].fixed == pytest.approx(27.5)
    # The node is capped by the topology's CPU on it against its capacity; an unknown node never is.
    assert capped_nodes(at(400.0, 28.0, "small"), capacities) == {"small"}
    assert capped_nodes(at(400.0, 20.0, "small"), capacities) == set()
    assert capped_nodes(at(400.0, 28.0, "elsewhere"), capacities) == set()
    assert capped_nodes(at(400.0, 28.0, "small"), {"small": math.nan}) == set()
