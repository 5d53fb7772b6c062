"""Profiles: the documented format, loading, validation, and fitting measured samples."""
from __future__ import annotations

import json

import pytest

from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import EXAMPLES, micro_problem
from storm_planner.planners.hetero.profiles import (
    Measurement,
    ProfileError,
    load_profile,
    parse_profile,
    profile_for_problem,
    profile_from_measurements,
)


def test_the_paper_profile_loads_with_table_iii_times(repo):
    profile = load_profile(EXAMPLES / "micro-benchmark.json")
    assert profile.times("high", "pentium").per_tuple_ms == pytest.approx(0.1915)
    assert profile.times("spout", "i3").et == pytest.approx(0.107)
    assert profile.component_type("center") == "highCompute"
    assert profile.input_rate == 8


def test_a_yaml_profile_derives_an_unprofiled_machine_type_from_another():
    profile = load_profile(EXAMPLES / "wordcount.yaml")
    i5, i7 = profile.times("split", "i5"), profile.times("split", "i7")  # i7: like i5, speed 1.3
    assert i7.et == pytest.approx(i5.et / 1.3) and i7.met == pytest.approx(i5.met / 1.3)
    assert profile.alpha("split", "count") == 8
    assert profile.alpha("count", "anything") == pytest.approx(0.1)


def test_times_units_alpha_per_target_and_input_share():
    profile = parse_profile({
        "time_unit": "us",
        "components": {
            "s": {"times": {"a": {"et": 500, "met": 100}}, "input_share": 0.5},
            "b": {"times": {"a": 2000}, "alpha": {"c": 0.25, "*": 3}},
        },
    })
    assert profile.times("s", "a").per_tuple_ms == pytest.approx(0.6)
    assert profile.times("b", "a").met == 0.0
    assert profile.alpha("b", "c") == 0.25 and profile.alpha("b", "d") == 3
    assert profile.input_share("s") == 0.5 and profile.input_share("b") == 1.0


def test_a_component_overrides_its_type_on_one_machine_type():
    profile = parse_profile({
        "component_types": {"t": {"a": {"et": 1.0}, "b": {"et": 2.0}}},
        "components": {"x": {"type": "t", "times": {"b": {"et": 5.0}}}},
    })
    assert profile.times("x", "a").et == 1.0 and profile.times("x", "b").et == 5.0


def test_round_trip_through_to_dict_keeps_every_time():
    profile = load_profile(EXAMPLES / "wordcount.yaml")
    again = parse_profile(json.loads(json.dumps(profile.to_dict())))
    for component in ("sentences", "split", "count"):
        for machine_type in ("i5", "i3", "i7"):
            assert again.times(component, machine_type) == pytest.approx(profile.times(component, machine_type))
        assert again.alpha(component, "x") == profile.alpha(component, "x")


def test_a_missing_machine_type_is_rejected_naming_component_type_and_node():
    data = micro_problem("linear", "paper")
    data["nodes"].append({"id": "new-box", "machine_type": "xeon"})
    with pytest.raises(ProfileError) as error:
        profile_for_problem(Problem.from_dict(data))
    message = str(error.value)
    assert "'spout'" in message and "'lowCompute'" in message and "'xeon'" in message and "'new-box'" in message


@pytest.mark.parametrize("times, where", [
    ({"et": -0.1}, "components.x.times.a.et: must not be negative, got -0.1"),
    ({"et": 0.1, "met": -2}, "components.x.times.a.met: must not be negative, got -2"),
    ({"met": 0.1}, "components.x.times.a.et: missing"),
    ({"et": 0, "met": 0}, "components.x.times.a: et + met must be positive"),
    ("fast", "components.x.times.a: a finite number, got 'fast'"),
])
def test_bad_times_are_rejected_with_the_path_of_the_field(times, where):
    with pytest.raises(ProfileError, match=f"^profiles.{where}".replace("+", r"\+").replace("(", r"\(")):
        parse_profile({"components": {"x": {"times": {"a": times}}}})


@pytest.mark.parametrize("data, message", [
    ({"components": {"x": {"type": "nope"}}}, "components.x.type: unknown component type 'nope'"),
    ({"components": {"x": {}}}, "components.x: needs a 'type' or its own 'times'"),
    ({"components": {"x": {"times": {"a": 1}, "alpha": -1}}}, "components.x.alpha: must not be negative"),
    ({"time_unit": "h"}, "time_unit: 'h' is not one of"),
    ({"input_rate": 0}, "input_rate: must be positive"),
    ({"format": "other/2"}, "format: 'other/2' is not"),
    ({"machine_types": {"i7": {"speed": 2}}}, "machine_types.i7.like: the name of a profiled machine type"),
    ([], "profiles: expected an object, got list"),
])
def test_malformed_profiles_are_rejected(data, message):
    with pytest.raises(ProfileError, match=message):
        parse_profile(data)


def test_a_component_without_profile_is_rejected_but_system_components_need_none():
    data = micro_problem("linear", "paper")
    data["topology"]["components"].append({"id": "__acker", "type": "bolt", "system": True})
    profile_for_problem(Problem.from_dict(data))  # fine
    data["topology"]["components"].append({"id": "extra", "type": "bolt"})
    with pytest.raises(ProfileError, match="no entry for component 'extra'"):
        profile_for_problem(Problem.from_dict(data))


def test_a_problem_without_profiles_gets_a_clear_error():
    data = micro_problem("linear", "paper")
    del data["profiles"]
    with pytest.raises(ProfileError, match="needs profiles"):
        profile_for_problem(Problem.from_dict(data))


def test_unreadable_profile_files_are_reported(tmp_path):
    with pytest.raises(ProfileError, match="cannot read .*absent.json: No such file"):
        load_profile(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ProfileError, match=r"bad.json: not JSON \(Expecting property name"):
        load_profile(bad)


def _samples(et: float, met: float, rates=(50, 100, 200, 400)):
    # eq. 7 in percent: TCU = IR * (ET + MET) / 10
    return [Measurement("bolt", "i5", rate, rate * (et + met) / 10, et) for rate in rates]


@pytest.mark.parametrize("method", ["max_point", "least_squares"])
def test_measured_samples_give_back_et_and_met(method):
    profile = profile_from_measurements(_samples(0.8, 0.2), alpha={"bolt": 2.0}, method=method)
    times = profile.times("bolt", "i5")
    assert times.et == pytest.approx(0.8) and times.met == pytest.approx(0.2)
    assert profile.alpha("bolt", "x") == 2.0 and profile.source == "measured"


def test_the_paper_fits_at_the_highest_input_rate():
    # lightly loaded samples are noisy (§6.2): only the top one counts for max_point
    samples = _samples(0.5, 0.1, rates=(400,)) + [Measurement("bolt", "i5", 10, 5.0, 0.5)]
    assert profile_from_measurements(samples).times("bolt", "i5").met == pytest.approx(0.1)


def test_bad_measurements_are_rejected():
    with pytest.raises(ProfileError):
        profile_from_measurements([Measurement("b", "i5", 0, 10, 1)])


def test_a_submitted_topology_carries_its_profile_as_json_in_an_option():
    data = micro_problem("star", "paper")
    profile = data.pop("profiles")
    data["options"]["planner.hetero.profiles"] = json.dumps(profile)
    assert profile_for_problem(Problem.from_dict(data)).times("center", "i5").et == pytest.approx(0.3207)
    data["options"]["planner.hetero.profiles"] = "{broken"
    with pytest.raises(ProfileError, match="options.planner.hetero.profiles: not JSON"):
        profile_for_problem(Problem.from_dict(data))
    data["options"]["planner.hetero.profiles"] = json.dumps({"components": {"spout1": {"times": {"i5": -1}}}})
    with pytest.raises(ProfileError, match=r"^options.planner.hetero.profiles.components.spout1.times.i5: must not"):
        profile_for_problem(Problem.from_dict(data))


def test_a_fit_with_no_r2_is_saved_as_strict_json():
    """One rate gives no coefficient of determination: the saved fit says null, not NaN (a profile the bench
    wrote was refused on reading it back: strict JSON has no NaN)."""
    from storm_planner.planners.hetero.profiles import Measurement, fit_affine_series

    fit = fit_affine_series([Measurement("counts", "i5", 13.7, 18.8, 0.14)])
    assert fit.r2 != fit.r2                       # NaN: undefined for one rate
    saved = json.loads(json.dumps(fit.to_dict(), allow_nan=False))
    assert saved["r2"] is None and saved["per_tuple_ms"] > 0


@pytest.mark.parametrize("entry, named", [
    ({"time_unit": "s", "components": {"a": {"times": {"m": {"et": 1e306}}}}}, "out of range"),
    ({"components": {"a": {"times": {"m": {"et": 1.0, "base": 1e300}}}}}, r"base: 1e\+300 is out of range"),
    ({"components": {"a": {"times": {"m": 1.0}, "alpha": 1e300}}}, r"alpha: 1e\+300 is out of range"),
    ({"components": {"a": {"times": {"m": 1.0}}}, "machine_types": {"n": {"like": "m", "speed": 1e-320}}},
     "speed: .* is out of range"),
])
def test_values_past_any_measurement_are_refused_not_turned_into_infinities(entry, named):
    with pytest.raises(ProfileError, match=named):
        parse_profile({"format": "storm-planner-profile/1", **entry})
