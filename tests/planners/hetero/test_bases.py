"""A fixed CPU cost per instance (issue #18): ``TCU = base + IR · (ET + MET) / 10`` everywhere.

The profile format, the simulator's closed form, ``hetero`` against an exhaustive
optimum, ``hetero-optimal`` against brute force, the fluid bound, monotonicity in
the base, and the least-squares fit that measures it.
"""
from __future__ import annotations

import copy
import itertools
import random

import numpy as np
import pytest

from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import add_bases, micro_problem, random_problem
from storm_planner.planners import run
from storm_planner.planners.hetero.bounds import fluid_bound, machine_base_bound
from storm_planner.planners.hetero.hetero_optimal import (
    ExhaustiveSearch,
    _search_from,
    optimal_placement,
    polish,
)
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.profiles import (
    Measurement,
    ProfileError,
    fit_affine_series,
    parse_profile,
    profile_from_measurements,
)
from storm_planner.planners.hetero.simulate import Placement, max_input_rate, simulate


def one_bolt(base_a: float, base_b: float, et_a: float = 1.0, et_b: float = 1.0) -> dict:
    """A spout and one bolt on two machines of types ``a`` and ``b`` (the spout costs almost nothing)."""
    return {
        "nodes": [
            {"id": "na", "machine_type": "a", "capacity": 100},
            {"id": "nb", "machine_type": "b", "capacity": 100},
        ],
        "topology": {
            "id": "t",
            "components": [{"id": "s", "type": "spout"}, {"id": "b", "type": "bolt"}],
            "streams": [{"from": "s", "to": "b"}],
        },
        "profiles": {
            "input_rate": 1,
            "components": {
                "s": {"times": {"a": 0.001, "b": 0.001}},
                "b": {"times": {"a": {"et": et_a, "base": base_a}, "b": {"et": et_b, "base": base_b}}},
            },
        },
    }


# -- the profile format ------------------------------------------------------------------------------------

def test_a_base_defaults_to_zero_so_old_profiles_mean_what_they_meant():
    profile = parse_profile({"components": {"x": {"times": {"a": {"et": 1.0, "met": 0.5}, "b": 2.0}}}})
    assert profile.times("x", "a").base == 0.0 and profile.times("x", "b").base == 0.0
    assert profile.times("x", "a").cpu_percent(10) == pytest.approx(1.5)


def test_tcu_is_the_base_plus_the_papers_eq7():
    profile = parse_profile({"components": {"x": {"times": {"a": {"et": 0.2, "met": 0.1, "base": 7.5}}}}})
    assert profile.times("x", "a").cpu_percent(100) == pytest.approx(7.5 + 100 * 0.3 / 10)


def test_a_derived_machine_type_divides_the_base_by_its_speed():
    profile = parse_profile({"machine_types": {"fast": {"like": "a", "speed": 2.0}},
                             "components": {"x": {"times": {"a": {"et": 1.0, "base": 10.0}}}}})
    assert profile.times("x", "fast").base == pytest.approx(5.0)


def test_the_base_is_a_percent_and_not_scaled_by_the_time_unit():
    profile = parse_profile({"time_unit": "us", "components": {"x": {"times": {"a": {"et": 500, "base": 12}}}}})
    assert profile.times("x", "a").et == pytest.approx(0.5) and profile.times("x", "a").base == 12


@pytest.mark.parametrize("bad, culprit", [
    ({"components": {"x": {"times": {"a": {"et": 1.0, "base": -1}}}}}, "components.x.times.a.base"),
    ({"components": {"x": {"times": {"a": {"et": 1.0, "bse": 3}}}}}, "'bse'"),
    ({"components": {"x": {"times": {"a": 1.0}, "alhpa": 2}}}, "'alhpa'"),
    ({"components": {"x": {"times": {"a": 1.0}}}, "inputrate": 5}, "'inputrate'"),
    ({"machine_types": {"f": {"like": "a", "sped": 2}}, "components": {"x": {"times": {"a": 1.0}}}}, "'sped'"),
])
def test_bad_profiles_are_refused_naming_the_culprit(bad, culprit):
    with pytest.raises(ProfileError) as error:
        parse_profile(bad)
    assert culprit in str(error.value)


def test_a_base_survives_the_round_trip_through_to_dict():
    profile = parse_profile({"components": {"x": {"times": {"a": {"et": 1.0, "base": 4.0}, "b": 2.0}}}})
    again = parse_profile(profile.to_dict())
    assert again.times("x", "a").base == 4.0 and again.times("x", "b").base == 0.0


# -- the simulator -------------------------------------------------------------------------------------

def test_the_highest_rate_leaves_room_for_the_bases():
    model = build_model(Problem.from_dict(one_bolt(30.0, 0.0)))
    both_on_a = Placement(((0,), (0,)))
    coef = 1.0 * 0.1 + 1.0 * 0.0001                  # bolt + spout, CPU percent per tuple/s
    assert max_input_rate(model, both_on_a) == pytest.approx((100 - 30) / coef)
    assert simulate(model, both_on_a).load["na"] == pytest.approx(100.0)


def test_a_placement_whose_bases_alone_overfill_a_machine_sustains_nothing():
    model = build_model(Problem.from_dict(one_bolt(60.0, 0.0)))
    assert max_input_rate(model, Placement(((0,), (0, 0)))) == 0.0


# -- hetero against the exhaustive optimum --------------------------------------------------------------------

def brute_force_rate(model, largest: int) -> float:
    """The best max input rate over every placement with 1..largest instances per component."""
    per_component = []
    for _ in range(model.n_components):
        options = []
        for n in range(1, largest + 1):
            options += list(itertools.combinations_with_replacement(range(model.n_machines), n))
        per_component.append(options)
    return max(max_input_rate(model, Placement(tuple(choice))) for choice in itertools.product(*per_component))


SMALL_SEEDS = [seed for seed in range(30)
               if len(random_problem(seed, related=seed % 2 == 0)["topology"]["components"]) <= 3][:6]


@pytest.mark.parametrize("seed", SMALL_SEEDS)   # brute force kept to three components
def test_hetero_optimal_is_the_brute_force_optimum_with_bases(seed):
    problem = Problem.from_dict(random_problem(seed, related=seed % 2 == 0, bases=(5, 40)))
    model = build_model(problem)
    placement, _ = optimal_placement(model, [1] * model.n_components, 3)
    assert max_input_rate(model, placement) == pytest.approx(brute_force_rate(model, 3), rel=1e-9)


@pytest.mark.parametrize("related", [True, False])
def test_hetero_is_within_one_percent_of_the_optimum_with_bases_up_to_40_percent(related):
    worst = 1.0
    for seed in range(40):
        problem = Problem.from_dict(random_problem(seed, related, bases=(5, 40)))
        best = run(problem, "hetero-optimal").figures["max_input_rate"]
        ours = run(problem, "hetero").figures["max_input_rate"]
        assert ours <= best * (1 + 1e-9)
        worst = min(worst, ours / best if best > 0 else 1.0)
    assert worst >= 0.99


def test_machines_whose_slope_and_base_rank_differently():
    # a: the cheaper tuple but the dearer instance; b: the reverse. At low rates b wins, at high rates a.
    problem = Problem.from_dict(one_bolt(base_a=40.0, base_b=5.0, et_a=0.5, et_b=1.0))
    best = run(problem, "hetero-optimal").figures["max_input_rate"]
    assert run(problem, "hetero").figures["max_input_rate"] == pytest.approx(best, rel=0.01)


def test_the_paper_profile_with_bases_stays_within_one_percent_on_its_small_cluster():
    for topology in ("linear", "diamond", "star"):
        data = micro_problem(topology, (1, 1, 1))
        add_bases(data["profiles"], random.Random(topology), 5, 40)
        problem = Problem.from_dict(data)
        best = run(problem, "hetero-optimal").figures["max_input_rate"]
        assert run(problem, "hetero").figures["max_input_rate"] >= 0.99 * best


def one_instance_away(model, placement: Placement, rng: random.Random) -> Placement:
    """A different placement with every (component, machine) count within one of ``placement``'s."""
    machines_of = []
    for machines in placement.machines_of:
        counts = np.bincount(np.asarray(machines, dtype=int), minlength=model.n_machines)
        for m in range(model.n_machines):
            counts[m] = max(0, counts[m] + rng.choice((-1, 0, 1)))
        if not counts.any():
            counts[rng.randrange(model.n_machines)] = 1
        machines_of.append(tuple(m for m in range(model.n_machines) for _ in range(counts[m])))
    return Placement(tuple(machines_of))


@pytest.mark.parametrize("seed", range(6))
def test_the_neighbourhood_search_reaches_an_optimum_one_instance_away(seed):
    # Refinement 5's neighbourhood covers every component changing at once: from a placement one
    # instance per (component, machine) away from the optimum, one neighbourhood search reaches the
    # optimum, never searching more nodes than the whole space takes from the same start.
    rng = random.Random(seed)
    problem = Problem.from_dict(random_problem(seed, related=seed % 2 == 0, bases=(5, 40)))
    model = build_model(problem)
    lower, upper = [1] * model.n_components, [2 * model.n_machines] * model.n_components
    optimum, _ = optimal_placement(model, lower, upper[0])
    best = max_input_rate(model, optimum)
    start = one_instance_away(model, optimum, rng)
    whole = ExhaustiveSearch(model, lower, upper, 10**7, incumbent=1 / max(max_input_rate(model, start), 1e-12))
    whole.run()
    found, nodes, complete = _search_from(model, start, lower, upper, 10**7, neighbourhood=True)
    assert complete and nodes <= whole.nodes
    assert max_input_rate(model, found or start) == pytest.approx(best, rel=1e-9)
    polished, _, _ = polish(model, start, lower, upper, max_nodes=nodes + 1)
    assert max_input_rate(model, polished) == pytest.approx(best, rel=1e-9)


def test_the_polish_never_returns_a_worse_placement():
    problem = Problem.from_dict(random_problem(3, related=False, bases=(5, 40)))
    model = build_model(problem)
    start = Placement(tuple((0,) for _ in range(model.n_components)))
    polished, nodes, _ = polish(model, start, [1] * model.n_components, [4] * model.n_components, max_nodes=50)
    assert nodes <= 51
    assert max_input_rate(model, polished) >= max_input_rate(model, start)


def test_with_bases_hetero_uses_fewer_instances():
    data = micro_problem("diamond", (1, 1, 1))
    plain = run(Problem.from_dict(data), "hetero").figures["instances"]
    add_bases(data["profiles"], random.Random(0), 30, 40)
    assert run(Problem.from_dict(data), "hetero").figures["instances"] < plain


# -- monotonicity and the bound --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_more_base_never_raises_the_maximum_rate(seed):
    data = random_problem(seed, related=seed % 2 == 1, bases=(5, 20))
    more = copy.deepcopy(data)
    for entry in more["profiles"]["components"].values():
        for times in entry["times"].values():
            times["base"] *= 2
    low, high = (Problem.from_dict(d) for d in (data, more))
    model_low, model_high = build_model(low), build_model(high)
    # the same placement, and the optimum of each
    placement, _ = optimal_placement(model_low, [1] * model_low.n_components, 4)
    assert max_input_rate(model_high, placement) <= max_input_rate(model_low, placement) * (1 + 1e-9)
    assert (run(high, "hetero-optimal").figures["max_input_rate"]
            <= run(low, "hetero-optimal").figures["max_input_rate"] * (1 + 1e-9))
    assert fluid_bound(model_high) <= fluid_bound(model_low) * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_no_placement_beats_the_base_fluid_bound(seed):
    problem = Problem.from_dict(random_problem(seed, related=seed % 2 == 0, bases=(5, 40)))
    model = build_model(problem)
    assert run(problem, "hetero-optimal").figures["max_input_rate"] <= fluid_bound(model) * (1 + 1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_the_machine_base_bound_lies_between_the_optimum_and_the_fluid_bound(seed):
    problem = Problem.from_dict(random_problem(seed, related=seed % 2 == 1, bases=(5, 40)))
    model = build_model(problem)
    best = run(problem, "hetero-optimal").figures["max_input_rate"]
    assert best * (1 - 1e-6) <= machine_base_bound(model) <= fluid_bound(model) * (1 + 1e-6)


# -- advice for a running topology -------------------------------------------------------------------------------

def test_with_heavy_bases_the_advice_may_lower_parallelism():
    data = one_bolt(base_a=35.0, base_b=35.0)
    data["executors"] = [{"id": "[1-1]", "component": "s"}] + [{"id": f"[{i}-{i}]", "component": "b"}
                                                             for i in range(2, 6)]
    plan = run(Problem.from_dict(data), "hetero")
    assert plan.advice.parallelism["b"] < 4
    assert plan.advice.max_input_rate > plan.advice.current_max_input_rate


# -- fitting the base -------------------------------------------------------------------------------------------

def samples(base: float, per_tuple_ms: float, rates, noise: float = 0.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [Measurement("bolt", "m", rate, base + rate * per_tuple_ms / 10 + rng.normal(0, noise), per_tuple_ms / 2)
            for rate in rates]


def test_least_squares_recovers_base_and_slope():
    fit = fit_affine_series(samples(12.0, 0.4, [50, 100, 200, 400, 800]))
    assert fit.base == pytest.approx(12.0) and fit.per_tuple_ms == pytest.approx(0.4)
    assert fit.r2 == pytest.approx(1.0) and max(abs(r) for r in fit.residuals) < 1e-9
    assert fit.times.et == pytest.approx(0.2) and fit.times.met == pytest.approx(0.2)


def test_a_noisy_series_reports_its_residuals_and_a_lower_r2():
    fit = fit_affine_series(samples(12.0, 0.4, range(50, 1050, 50), noise=3.0, seed=1))
    assert fit.base == pytest.approx(12.0, abs=4) and fit.per_tuple_ms == pytest.approx(0.4, rel=0.1)
    assert 0.8 < fit.r2 < 1.0 and len(fit.residuals) == 20


def test_a_negative_intercept_is_refitted_through_the_origin():
    fit = fit_affine_series(samples(-5.0, 0.4, [100, 200, 300]))
    assert fit.base == 0.0 and "origin" in fit.note


def test_the_affine_method_builds_a_profile_with_bases():
    profile = profile_from_measurements(samples(9.0, 0.5, [100, 300, 500]), method="affine")
    assert profile.times("bolt", "m").base == pytest.approx(9.0)
    assert profile.times("bolt", "m").per_tuple_ms == pytest.approx(0.5)
    with pytest.raises(ValueError, match="one of"):
        profile_from_measurements(samples(9.0, 0.5, [100]), method="cubic")
