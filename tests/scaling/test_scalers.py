"""QCESA, qcesa-exact, CBA and the integer program on the cost model of QEScalor (issue #16)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import storm_planner
from storm_planner.core.errors import InvalidParameterError, TooLargeError, UnknownParameterError
from storm_planner.planners._parameters import documentation_gaps
from storm_planner.scaling import scaler_class, scalers
from storm_planner.scaling._grid import box_caps
from storm_planner.scaling.generator import paper_resources, random_problem
from storm_planner.scaling.qcesa import covering, paper_candidates
from storm_planner.scaling.scaling_problem import read_problem, resolve
from storm_planner.scaling.schedule import Schedule


def tiny_problem(seed: int, epochs: int = 4, provisions: int = 2, peak_instances: float | None = None) -> dict:
    """A random problem; ``peak_instances``: the peak rescaled to that many of the weakest instance."""
    data = random_problem(seed, epochs=epochs, provisions=provisions)
    if peak_instances is not None:
        scale = peak_instances * min(data["performance"].values()) / max(data["workload"])
        data["workload"] = [w * scale for w in data["workload"]]
    return data


def pairwise_dp(instance, rule) -> float:
    """The paper's DP read literally: enumerate each epoch's candidates, every pair of epochs."""
    caps = box_caps(instance)
    shape = tuple(int(c) + 1 for c in caps)
    counts = np.indices(shape)
    capacity = np.tensordot(instance.performance, counts, axes=1)
    states = {tuple(instance.current): 0.0}
    for t in range(instance.n_epochs):
        allowed = rule(instance, t, counts, capacity)
        nxt = {}
        for cand in zip(*np.nonzero(allowed)):
            run = float(np.dot(cand, instance.price))
            best = min(v + sum(instance.startup_cost * max(0, c - p) + instance.shutdown_cost * max(0, p - c)
                               for c, p in zip(cand, prev)) for prev, v in states.items())
            nxt[tuple(int(c) for c in cand)] = best + run
        states = nxt
    return min(states.values())


def brute_force(instance, limit: int) -> float:
    """Every schedule with counts up to ``limit`` per provision (no box lemma assumed)."""
    vectors = list(itertools.product(range(limit + 1), repeat=instance.n_resources))
    best = np.inf
    for path in itertools.product(vectors, repeat=instance.n_epochs):
        schedule = Schedule(np.array(path).reshape(instance.n_epochs, instance.n_resources))
        if not schedule.short_epochs(instance):
            best = min(best, schedule.cost(instance))
    return best


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rule", [paper_candidates, covering], ids=["qcesa", "exact"])
def test_the_grid_dp_equals_the_pairwise_dp(seed, rule):
    instance = resolve(read_problem(tiny_problem(seed, epochs=5, provisions=3, peak_instances=6)))
    scaler = "qcesa" if rule is paper_candidates else "qcesa-exact"
    schedule = scaler_class(scaler)().schedule(instance)
    assert schedule.cost(instance) == pytest.approx(pairwise_dp(instance, rule), rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_qcesa_exact_equals_brute_force_beyond_the_box(seed):
    data = tiny_problem(seed, epochs=3, provisions=2, peak_instances=2.5)
    instance = resolve(read_problem(data))
    limit = int(box_caps(instance).max()) + 2  # counts past the box: the lemma says they never pay
    exact = scaler_class("qcesa-exact")().schedule(instance).cost(instance)
    assert exact == pytest.approx(brute_force(instance, limit), rel=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_qcesa_exact_equals_the_integer_program(seed):
    instance = resolve(read_problem(tiny_problem(seed, epochs=6, provisions=3)))
    program = scaler_class("scaling-ip")(time_limit_s=30)
    reference = program.schedule(instance).cost(instance)
    assert program.optimal
    assert scaler_class("qcesa-exact")().schedule(instance).cost(instance) == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_qcesa_covers_every_epoch_costs_no_more_than_any_cba_and_within_one_percent(seed):
    data = random_problem(seed, epochs=24)
    qcesa = storm_planner.scale(data, "qcesa")
    assert all(c >= w * (1 - 1e-9) for c, w in zip(qcesa["capacity"], qcesa["workload"]))
    for resource in data["resources"]:
        assert qcesa["cost"] <= storm_planner.scale(data, "cba", resource=resource["id"])["cost"] + 1e-9
    assert qcesa["cost"] <= 1.01 * storm_planner.scale(data, "qcesa-exact")["cost"]


def test_more_workload_never_costs_less():
    data = random_problem(7, epochs=12)
    base = storm_planner.scale(data, "qcesa-exact")["cost"]
    data["workload"] = [w * 1.3 for w in data["workload"]]
    assert storm_planner.scale(data, "qcesa-exact")["cost"] >= base - 1e-9


def test_switching_costs_keep_instances_through_a_dip():
    data = {"resources": paper_resources(), "performance": {"r1": 1000, "r2": 1900, "r3": 2600, "r4": 3200},
            "startup_cost": 50.0, "shutdown_cost": 50.0, "workload": [3000, 500, 3000]}
    schedule = storm_planner.scale(data, "qcesa")
    assert schedule["epochs"][0] == schedule["epochs"][1] == schedule["epochs"][2]
    data["startup_cost"] = data["shutdown_cost"] = 0.0
    cheap = storm_planner.scale(data, "qcesa")
    assert cheap["capacity"][1] < cheap["capacity"][0]  # free switching follows the dip


def test_the_answer_has_the_documented_shape():
    data = random_problem(3, epochs=6)
    answer = storm_planner.scale(data)
    assert answer["algorithm"] == "qcesa" and len(answer["epochs"]) == 6
    assert set().union(*answer["epochs"]) <= {r["id"] for r in data["resources"]}
    assert answer["cost"] == pytest.approx(answer["running_cost"] + data["startup_cost"] * answer["startups"]
                                           + data["shutdown_cost"] * answer["shutdowns"])


@pytest.mark.parametrize("name", sorted(scalers()))
def test_every_scaler_keeps_the_parameter_contract(name):
    cls = scaler_class(name)
    scaler = cls()
    assert cls(**scaler.get_params()).get_params() == scaler.get_params()
    with pytest.raises(UnknownParameterError, match="no parameter 'bogus'"):
        cls(bogus=1)
    data = random_problem(11, epochs=6, provisions=2)
    first, again = storm_planner.scale(data, name), storm_planner.scale(data, name)
    assert first["epochs"] == again["epochs"]


@pytest.mark.parametrize("name", sorted(scalers()))
def test_every_scaler_parameter_is_documented_in_the_class_docstring(name):
    cls = scaler_class(name)
    assert cls.__dict__.get("__doc__"), f"{cls.__name__} has no class docstring"
    assert documentation_gaps(cls) == []


def test_scale_algorithms_prints_each_parameter_with_its_description(capsys):
    from storm_planner.cli import main

    assert main(["scale", "algorithms"]) == 0
    listing = " ".join(capsys.readouterr().out.split())
    assert "resource = null (str or None)" in listing
    assert "The provision's id; None takes the cheapest of the single-provision schedules." in listing


def test_bad_parameters_are_refused_naming_them():
    with pytest.raises(InvalidParameterError, match="max_states"):
        storm_planner.scale(random_problem(1, epochs=4), "qcesa", max_states=0)
    with pytest.raises(InvalidParameterError, match="resource must be one of r1, r2"):
        storm_planner.scale(random_problem(1, epochs=4, provisions=2), "cba", resource="r9")
    with pytest.raises(TooLargeError, match="max_states"):
        storm_planner.scale(random_problem(1, epochs=48), "qcesa-exact", max_states=1000)
