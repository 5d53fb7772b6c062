"""QEScalor's controller (storm_planner.scaling.controller): one epoch's decision from measured rates, no cluster."""
from __future__ import annotations

import math

import pytest

from storm_planner.core.errors import ProblemError
from storm_planner.scaling import ScalingController
from storm_planner.scaling.generator import paper_resources

TEMPLATE = {"resources": paper_resources()[:2], "performance": {"r1": 100.0, "r2": 180.0},
            "startup_cost": 0.1, "shutdown_cost": 0.1}


def test_the_recent_peak_is_held_until_there_is_a_season_of_history():
    decision = ScalingController(TEMPLATE).decide([250.0, 640.0, 410.0], {"r1": 1})
    assert decision.workload == [640.0] * 6
    capacity = sum(n * TEMPLATE["performance"][r] for r, n in decision.counts.items())
    assert capacity >= 640.0 and decision.instances == sum(decision.counts.values()) and not decision.capped


def test_with_two_seasons_of_history_the_forecast_follows_the_season():
    season = 8
    rates = [500 + 300 * math.sin(2 * math.pi * t / season) for t in range(3 * season)]
    decision = ScalingController(TEMPLATE, season=season, horizon=season).decide(rates, {})
    assert max(decision.workload) - min(decision.workload) > 400  # not a flat line
    assert len(decision.workload) == season


def test_more_instances_than_tasks_are_capped_and_said():
    controller = ScalingController(TEMPLATE, max_instances=3)
    decision = controller.decide([2000.0], {"r1": 3})
    assert decision.instances == 3 and decision.capped
    assert "the component has 3 tasks" in decision.notes[0]


def test_when_the_cheapest_schedule_needs_more_instances_than_tasks_larger_provisions_cover_the_load():
    # r1 is cheaper per tuple, but 12 of them exceed the 6 tasks; 6 r2 instances (180 each) cover 1,000.
    template = {**TEMPLATE, "resources": [{**r, "price": p} for r, p in zip(paper_resources()[:2], (1.0, 1.9))]}
    decision = ScalingController(template, max_instances=6).decide([1000.0], {"r1": 2})
    assert not decision.capped and decision.instances <= 6
    assert sum(n * TEMPLATE["performance"][r] for r, n in decision.counts.items()) >= 1000.0
    assert set(decision.counts) == {"r2"}
    assert "planned with r2 only" in decision.notes[0]
    # Without the cap the cheaper r1 is chosen: the cap, not the prices, made the difference.
    assert "r1" in ScalingController(template).decide([1000.0], {"r1": 2}).counts


def test_a_template_holding_what_the_controller_measures_is_refused():
    with pytest.raises(ProblemError, match="must not hold workload"):
        ScalingController({**TEMPLATE, "workload": [1.0]})
    with pytest.raises(ProblemError, match="unknown key 'prices'"):
        ScalingController({**TEMPLATE, "prices": 1})


def test_calibration_replaces_the_models_figure_for_later_decisions():
    controller = ScalingController(TEMPLATE)
    before = controller.decide([450.0], {"r1": 1})
    assert sum(n * TEMPLATE["performance"][r] for r, n in before.counts.items()) >= 450.0
    assert sum(before.counts.values()) <= 5  # at 100 and 180 tuples/s per instance
    controller.calibrate("r1", 50.0)
    controller.calibrate("r2", 50.0)
    decision = controller.decide([450.0], {"r1": 1})
    assert sum(decision.counts.values()) == 9  # 450 / 50 per instance


def test_saturation_needs_a_shortfall_while_working_near_the_believed_capacity():
    from storm_planner.scaling.live.scale_run import _saturated

    assert _saturated(executed=400, offered=520, believed_capacity=500)       # short and busy: saturated
    assert not _saturated(executed=44, offered=54, believed_capacity=150)     # short at low load: lag, noise
    assert not _saturated(executed=300, offered=310, believed_capacity=320)   # keeps up
