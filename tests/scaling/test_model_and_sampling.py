"""OOPSer's DSA and FSSA, and OPRPMer's model comparison (Tables 2 and 3 of Mu et al. 2020)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from storm_planner.scaling.generator import operator_curve, random_problem
from storm_planner.scaling.performance import PerformanceModel, compare_models
from storm_planner.scaling.sampling import dsa, fssa

LEVELS = [(round(0.1 * i, 1), 33.0 + i) for i in range(1, 41)]


def counting(curve):
    calls = []

    def measure(level: int) -> float:
        calls.append(level)
        return curve(*LEVELS[level])
    return measure, calls


def test_fssa_measures_every_kth_level_and_the_last():
    measure, calls = counting(lambda cpu, memory: cpu * 100)
    samples = fssa(LEVELS, measure, 4)
    assert calls == [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 39]
    assert samples[1] == (*LEVELS[4], pytest.approx(50.0))


def test_dsa_takes_long_steps_where_flat_and_stops_at_the_plateau():
    saturating = lambda cpu, memory: 1000 * min(cpu, 1.5)  # noqa: E731 - linear to 1.5 cores, then flat
    measure, calls = counting(saturating)
    samples = dsa(LEVELS, measure)
    assert len(set(calls)) == len(calls)            # no level measured twice
    assert max(calls) < 39                          # stopped on the plateau
    assert len(samples) < len(fssa(LEVELS, counting(saturating)[0], 1)) / 2


def test_dsa_resamples_inside_a_step_where_performance_jumps():
    jump = lambda cpu, memory: 500 + (800 if cpu >= 2.05 else 0) + 10 * cpu  # noqa: E731
    measure, calls = counting(jump)
    dsa(LEVELS, measure, plateau_gain=0.0001, patience=50)
    jump_level = next(i for i, (cpu, _) in enumerate(LEVELS) if cpu >= 2.05)
    assert {jump_level - 1, jump_level} <= set(calls)  # both sides of the jump are measured


def test_the_random_forest_fits_an_operator_curve_from_dsa_samples():
    curve = operator_curve("CMO", seed=3, noise=0.0)
    measure, _ = counting(curve)
    model = PerformanceModel(seed=0).fit(dsa(LEVELS, measure))
    truth = np.array([curve(*level) for level in LEVELS])
    error = np.abs(model.predict(LEVELS) - truth) / truth.max()
    assert error.mean() < 0.05


def test_the_model_comparison_scores_every_model_and_ensembles_beat_svr():
    curve = operator_curve("CO", seed=1)
    train = [(*level, curve(*level)) for level in LEVELS[::2]]
    test = [(*level, curve(*level)) for level in LEVELS]
    scores = {s.model: s for s in compare_models(train, test, repeats=1, folds=5)}
    assert set(scores) == {"RFR", "AdaBoost", "GBDT", "XGBoost", "SVR"}
    assert all(np.isfinite(s.rmse) and s.mae <= s.rmse for s in scores.values())
    assert scores["RFR"].rmse < scores["SVR"].rmse


def test_scale_plan_prints_the_schedule_alone_and_refuses_bad_parameters(tmp_path):
    path = tmp_path / "scaling.json"
    path.write_text(json.dumps(random_problem(2, epochs=8)))
    for algorithm in ("qcesa", "scaling-ip"):
        out = subprocess.run([sys.executable, "-m", "storm_planner", "scale", "plan", "-a", algorithm, str(path)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert len(json.loads(out.stdout)["epochs"]) == 8  # fails on any banner around the JSON
    bad = subprocess.run([sys.executable, "-m", "storm_planner", "scale", "plan", "-p", "max_state=5", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "max_state" in bad.stderr and bad.stdout == ""
