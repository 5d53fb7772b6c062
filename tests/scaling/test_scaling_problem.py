"""The scaling problem's JSON: what is refused, and how performance and workload are resolved."""
from __future__ import annotations

import math

import pytest

import storm_planner
from storm_planner.core.errors import ProblemError, UnknownAlgorithmError
from storm_planner.scaling.generator import paper_resources, random_problem
from storm_planner.scaling.scaling_problem import read_problem, resolve


def valid() -> dict:
    return {"resources": paper_resources(), "performance": {"r1": 1000, "r2": 1800, "r3": 2500, "r4": 3000},
            "workload": [1000.0, 2000.0]}


@pytest.mark.parametrize("change, culprit", [
    (lambda d: d.update(workloads=[1]), "'workloads'"),
    (lambda d: d["resources"][0].update(cores=1), "resources\\[0\\]: unknown key 'cores'"),
    (lambda d: d["resources"][1].update(cpu=-1), "resources\\[1\\].cpu must be > 0"),
    (lambda d: d["resources"].append(dict(d["resources"][0])), "duplicate id 'r1'"),
    (lambda d: d["performance"].update(r9=5), "performance \\(resource ids\\): unknown key 'r9'"),
    (lambda d: d.update(current={"r1": -2}), "current.r1 must be a whole number"),
    (lambda d: d.update(workload=[]), "workload must be a non-empty list"),
    (lambda d: d.update(workload=[1, "x"]), "workload\\[1\\] must be a finite number"),
    (lambda d: d.update(history={"rates": [1, 2], "horizon": 2}), "exactly one of 'workload'"),
    (lambda d: d.pop("workload"), "exactly one of 'workload'"),
    (lambda d: d.update(startup_cost=-1), "startup_cost must be >= 0"),
    (lambda d: d.update(samples=[{"cpu": 1, "memory_mb": 2, "tput": 3}]), "samples\\[0\\]: unknown key 'tput'"),
])
def test_bad_problems_are_refused_naming_the_culprit(change, culprit):
    data = valid()
    change(data)
    with pytest.raises(ProblemError, match=culprit):
        read_problem(data)


def test_performance_missing_without_samples_names_the_provisions():
    data = valid()
    del data["performance"]["r3"], data["performance"]["r4"]
    with pytest.raises(ProblemError, match="no performance for r3, r4"):
        storm_planner.scale(data)


def test_unknown_algorithm_is_refused():
    with pytest.raises(UnknownAlgorithmError, match="qcesa"):
        storm_planner.scale(valid(), "qcesa2")


def test_performance_is_predicted_from_samples_by_the_random_forest():
    data = valid()
    del data["performance"]
    # Throughput grows with CPU and saturates; the provisions lie inside the sampled range.
    data["samples"] = [{"cpu": c / 10, "memory_mb": 33.5, "throughput": 2000 * (1 - math.exp(-c / 10))}
                       for c in range(2, 30)]
    performance = resolve(read_problem(data)).performance
    truth = [2000 * (1 - math.exp(-r["cpu"])) for r in data["resources"]]
    assert list(performance) == pytest.approx(truth, rel=0.05)
    assert storm_planner.scale(data)["capacity"][1] >= 2000.0


def test_the_workload_is_forecast_from_the_history():
    season = 12
    rates = [1000 + 500 * math.sin(2 * math.pi * t / season) for t in range(4 * season)]
    data = valid()
    del data["workload"]
    data["history"] = {"rates": rates, "season": season, "horizon": season}
    instance = resolve(read_problem(data))
    truth = [1000 + 500 * math.sin(2 * math.pi * t / season) for t in range(4 * season, 5 * season)]
    assert len(instance.workload) == season
    assert max(abs(a - b) for a, b in zip(instance.workload, truth)) < 50.0


def test_a_history_shorter_than_two_seasons_is_refused():
    data = valid()
    del data["workload"]
    data["history"] = {"rates": [1.0] * 10, "season": 12, "horizon": 3}
    with pytest.raises(ProblemError, match="two seasons"):
        read_problem(data)


def test_random_problems_are_valid_and_seeded():
    assert random_problem(5) == random_problem(5) != random_problem(6)
    read_problem(random_problem(5))
