"""The planner contract (planners/base.py), checked for every registered planner.

Parametrised from the registry, so a planner added as a module is covered without
touching this file; a planner whose parameter has no self-evident non-default value
(a string or a None default) needs an entry in ``EXAMPLE_VALUES``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import storm_planner
from storm_planner.cli import main
from storm_planner.core.check import check_plan
from storm_planner.core.errors import InvalidParameterError, UnknownParameterError
from storm_planner.core.evaluate import evaluate
from storm_planner.core.problem import Problem
from storm_planner.generators.hetero import micro_problem
from storm_planner.planners import available, documented_parameters, run
from storm_planner.planners._parameters import documentation_gaps
from storm_planner.planners.base import Planner
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.transport.contract import planner_thrift as T

SMALL_PROBLEM = Path(__file__).resolve().parents[1] / "data" / "small-problem.json"
PLANNERS = sorted(available())
NEEDS_PROFILES = {"hetero", "hetero-optimal"}
MISSPELLED = "no_such_parameter"

# A non-default value for each parameter whose default says nothing about its type or range.
EXAMPLE_VALUES: dict[str, Any] = {
    "priority": "imc",
    "imc_unit": "bytes",
    "pair_order": "source",
    "solver": "highs",
    "scale_in": "drain_first",
    "mode": "fixed",
    "time_limit_s": 1.5,
    "max_migrations": 3,
    "max_migration_cost": 4.5,
    "input_rate": 7.0,
    "target_rate": 250.0,
    "worker_fixed": 3.0,
    "max_instances": 3,
    "state": {"version": 1, "sets": [["tweets/0", "count/0"]]},
    "parallelism": {"count": 5},
}


def example_value(algorithm: str, name: str, default: Any) -> Any:
    """A valid value other than the default."""
    if name in EXAMPLE_VALUES:
        return EXAMPLE_VALUES[name]
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default * 2 if default else 1.0
    raise AssertionError(f"add a non-default example value for {algorithm}.{name} to EXAMPLE_VALUES")


def example_params(algorithm: str) -> dict[str, Any]:
    defaults = available()[algorithm].param_defaults()
    return {name: example_value(algorithm, name, default) for name, default in defaults.items()}


def as_option_text(value: Any) -> str:
    """How a value arrives from Storm's conf: a string (JSON for anything but a string)."""
    return value if isinstance(value, str) else json.dumps(value)


def problem_dict(algorithm: str, **options: Any) -> dict[str, Any]:
    if algorithm in NEEDS_PROFILES:
        return micro_problem("linear", "paper", **options)
    data = json.loads(SMALL_PROBLEM.read_text())
    # A generous limit: every planner finishes the small problem in well under a second, so the limit
    # never binds. A 2 s limit did bind under CI's load (CBC's first ALBIC attempt gets 40 % of it),
    # and a solve cut short by the wall clock returns whichever incumbent it had: same seed, other plan.
    data["options"].update({"time_limit_s": 30, **options})
    return data


class Reached(Exception):
    """Raised by the spy in place of planning: the planner was built and called."""


@pytest.fixture
def built_with(monkeypatch):
    """Replace every planner's ``plan`` by a spy; returns the parameters of the planner that ran."""
    seen: list[dict[str, Any]] = []

    def spy(self, problem):
        seen.append(self.get_params())
        raise Reached

    for cls in available().values():
        monkeypatch.setattr(cls, "plan", spy)
    return seen


def service_request(algorithm: str, options: dict[str, str]) -> Any:
    node = T.Node(id="a", host="host-a", cpu_capacity=400.0, memory_mb=4096.0,
                  meta={"machine.type": "i5", "speed": "1.0"}, free_ports=[6700, 6701], used_ports=[])
    spec = T.TopologySpec(
        id="t1", name="t1",
        components=[T.Component(id="tweets", type="spout", parallelism=1),
                    T.Component(id="count", type="bolt", parallelism=1)],
        streams=[T.Stream(from_component="tweets", to_component="count", grouping="shuffle")],
        executors=[T.Executor(id="[1-1]", component="tweets"), T.Executor(id="[2-2]", component="count")],
        current={}, algorithm=algorithm, num_workers=1, options=options)
    return T.PlanRequest(request_id="r1", nodes=[node], topologies=[spec], deadline_ms=5000)


def plan_through_service(algorithm: str, options: dict[str, str]) -> Any:
    # In process, so the spy sees the planner built (the worker process solver planners run in
    # resolves the same options with the same code: tests/service/test_worker.py).
    handler = PlannerHandler(isolate=False)
    (plan,) = handler.plan(service_request(algorithm, options)).plans
    return plan


# -- planning --------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", PLANNERS)
def test_same_seed_same_plan_and_the_plan_passes_the_shared_checks(algorithm):
    problem = Problem.from_dict(problem_dict(algorithm))
    first, second = run(problem, algorithm), run(problem, algorithm)
    assert (first.assignments, first.parallelism, first.drain) == \
        (second.assignments, second.parallelism, second.drain)
    check_plan(problem, first, allow_new_executors=available()[algorithm].changes_parallelism)
    figures = evaluate(problem, first.assignments)
    assert set(figures) <= set(first.figures)
    assert all(math.isfinite(value) for value in first.figures.values())


# -- parameters ------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", PLANNERS)
def test_get_params_lists_the_init_keywords_and_round_trips(algorithm):
    cls = available()[algorithm]
    default = cls()
    assert default.get_params() == cls.param_defaults()
    assert cls(**default.get_params()).get_params() == default.get_params()
    changed = cls(**example_params(algorithm))
    assert changed.get_params() == example_params(algorithm)
    assert cls(**changed.get_params()).get_params() == changed.get_params()


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_set_params_changes_values_and_refuses_unknown_names(algorithm):
    cls = available()[algorithm]
    planner = cls()
    assert planner.set_params(**example_params(algorithm)) is planner
    assert planner.get_params() == example_params(algorithm)
    with pytest.raises(UnknownParameterError, match=MISSPELLED):
        planner.set_params(**{MISSPELLED: 1})


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_an_unknown_parameter_is_refused_by_name_with_the_known_ones(algorithm):
    cls = available()[algorithm]
    with pytest.raises(UnknownParameterError) as refused:
        cls(**{MISSPELLED: 1})
    message = str(refused.value)
    assert refused.value.kind == "BAD_REQUEST"
    assert f"{algorithm} has no parameter '{MISSPELLED}'" in message
    assert all(name in message for name in cls.param_defaults())


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_a_value_of_the_wrong_type_is_refused_naming_the_parameter(algorithm):
    typed = {name: default for name, default in available()[algorithm].param_defaults().items()
             if isinstance(default, (bool, int, float, str))}
    for name in typed:
        with pytest.raises(InvalidParameterError, match=rf"{algorithm}: parameter {name} must be"):
            available()[algorithm](**{name: [1, 2]})


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_the_cli_refuses_an_unknown_parameter_with_exit_status_2(algorithm, capsys):
    status = main(["plan", "-a", algorithm, str(SMALL_PROBLEM), "-p", f"{MISSPELLED}=1"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert f"{algorithm} has no parameter '{MISSPELLED}'" in captured.err


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_the_api_and_options_refuse_an_unknown_parameter(algorithm):
    with pytest.raises(UnknownParameterError, match=MISSPELLED):
        storm_planner.plan(problem_dict(algorithm), algorithm=algorithm, **{MISSPELLED: 1})
    option = f"planner.{algorithm}.{MISSPELLED}"
    with pytest.raises(UnknownParameterError, match=option):
        storm_planner.plan(problem_dict(algorithm, **{option: "1"}), algorithm=algorithm)


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_the_service_answers_bad_request_naming_an_unknown_option(algorithm):
    plan = plan_through_service(algorithm, {f"planner.{algorithm}.{MISSPELLED}": "1"})
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert f"planner.{algorithm}.{MISSPELLED}" in plan.error.message
    assert not plan.assignments


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_every_parameter_reaches_the_planner_from_the_api(algorithm, built_with):
    with pytest.raises(Reached):
        storm_planner.plan(problem_dict(algorithm), algorithm=algorithm, **example_params(algorithm))
    assert built_with == [example_params(algorithm)]


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_every_parameter_reaches_the_planner_from_problem_options(algorithm, built_with):
    options = {f"planner.{algorithm}.{name}": as_option_text(value)
               for name, value in example_params(algorithm).items()}
    with pytest.raises(Reached):
        storm_planner.plan(problem_dict(algorithm, **options), algorithm=algorithm)
    assert built_with == [example_params(algorithm)]


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_every_parameter_reaches_the_planner_from_the_cli(algorithm, built_with):
    params = [arg for name, value in example_params(algorithm).items()
              for arg in ("-p", f"{name}={as_option_text(value)}")]
    with pytest.raises(Reached):
        main(["plan", "-a", algorithm, str(SMALL_PROBLEM), *params])
    assert built_with == [example_params(algorithm)]


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_every_parameter_reaches_the_planner_from_a_topology_conf(algorithm, built_with):
    options = {f"planner.{algorithm}.{name}": as_option_text(value)
               for name, value in example_params(algorithm).items()}
    plan = plan_through_service(algorithm, options)
    assert plan.error.kind == T.ErrorKind.INTERNAL  # the spy's Reached, not a refusal
    assert built_with == [example_params(algorithm)]


# -- the resolver's rules --------------------------------------------------------------------

def test_explicit_parameters_win_over_options_and_prefixed_options_over_bare_ones(built_with):
    data = problem_dict("cola", max_ld=3, **{"planner.cola.max_ld": "4"})
    with pytest.raises(Reached):
        storm_planner.plan(data, algorithm="cola")
    with pytest.raises(Reached):
        storm_planner.plan(data, algorithm="cola", max_ld=5)
    assert [seen["max_ld"] for seen in built_with] == [4.0, 5.0]


def test_zero_stays_zero_where_it_is_a_valid_value(built_with):
    with pytest.raises(Reached):
        storm_planner.plan(problem_dict("albic", **{"planner.albic.max_pl": "0", "max_resolves": 0}),
                           algorithm="albic")
    assert (built_with[0]["max_pl"], built_with[0]["max_resolves"]) == (0.0, 0)


def test_older_option_names_keep_their_meaning(built_with):
    state = {"version": 1, "sets": [["count/0", "count/1"]]}
    with pytest.raises(Reached):
        storm_planner.plan(problem_dict("albic", albic_state=state, adopt="false", solver="HIGHS"),
                           algorithm="albic")
    assert (built_with[0]["state"], built_with[0]["adopt"], built_with[0]["solver"]) == (state, False, "highs")


def test_option_values_are_converted_to_the_type_of_the_default_and_bad_ones_are_refused():
    with pytest.raises(InvalidParameterError, match="planner.topdown-ls.kicks must be a whole number"):
        storm_planner.plan(problem_dict("topdown-ls", **{"planner.topdown-ls.kicks": "many"}),
                           algorithm="topdown-ls")
    for infinite in ("inf", "-inf", float("inf")):
        with pytest.raises(InvalidParameterError, match="planner.albic.max_pl must be a finite number"):
            storm_planner.plan(problem_dict("albic", **{"planner.albic.max_pl": infinite}), algorithm="albic")
    plan = plan_through_service("topdown", {"planner.topdown.priority": "imx"})
    assert plan.error.kind == T.ErrorKind.BAD_REQUEST
    assert "priority must be one of significance, imc" in plan.error.message


def test_inputs_under_a_planners_prefix_are_not_taken_for_unknown_parameters(built_with):
    data = problem_dict("hetero")
    profile = data.pop("profiles")
    with pytest.raises(Reached):
        storm_planner.plan({**data, "options": {**data["options"],
                                                "planner.hetero.profiles": json.dumps(profile)}},
                           algorithm="hetero")
    assert built_with == [available()["hetero"]().get_params()]


def test_out_of_range_values_are_refused_naming_the_parameter():
    with pytest.raises(InvalidParameterError, match="topdown-ls: parameter kicks must be >= 0"):
        storm_planner.plan(problem_dict("topdown-ls"), algorithm="topdown-ls", kicks=-1)
    with pytest.raises(InvalidParameterError, match="w1 must exceed 2·w2"):
        storm_planner.plan(problem_dict("milp"), algorithm="milp", w1=0.01)


def test_algorithms_params_lists_every_parameter_with_its_default_and_description(capsys):
    assert main(["algorithms", "--params"]) == 0
    listing = capsys.readouterr().out
    flat = " ".join(listing.split())
    for cls in available().values():
        documented = documented_parameters(cls)
        for name, default in cls.param_defaults().items():
            assert f"{name} = {json.dumps(default)}  ({documented[name].kind})" in listing
            assert documented[name].description in flat


@pytest.mark.parametrize("algorithm", PLANNERS)
def test_every_parameter_is_documented_in_the_class_docstring(algorithm):
    cls = available()[algorithm]
    assert cls.__dict__.get("__doc__"), f"{cls.__name__} has no class docstring"
    assert documentation_gaps(cls) == []


class _HalfDocumented(Planner):
    """A planner whose docstring misses one parameter, misstates a default and names a stale one.

    Parameters
    ----------
    depth : int, default=4
        How deep.
    breadth : int, default=2
        A parameter it no longer has.

    Notes
    -----
    width : float, default=0.5
        Not a parameter entry: another section.
    """

    name = "half-documented"

    def __init__(self, *, depth: int = 3, width: float = 0.5) -> None:
        self.depth, self.width = depth, width


def test_an_undocumented_parameter_or_a_misstated_default_is_a_documentation_gap():
    assert documentation_gaps(_HalfDocumented) == [
        "width: not documented",
        "breadth: documented but not a parameter",
        "depth: documented default=4, the signature's is 3",
    ]
