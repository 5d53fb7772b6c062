"""``hetero`` on a running topology: parallelism advice bounded by each component's task count."""
from __future__ import annotations

import json

import pytest

from storm_planner.core.plan import ParallelismAdvice, Plan
from storm_planner.core.problem import Options, Problem
from storm_planner.generators.hetero import micro_problem
from storm_planner.planners import run
from storm_planner.planners.hetero.advice import task_counts


def running_linear(tasks: dict[str, int], executors: dict[str, int] | None = None, **options) -> Problem:
    """The micro ``linear`` topology (spout -> mid -> high -> sink) as Storm runs it on Table IV's small
    cluster: executors named by task range, ``tasks[c]`` tasks of each component spread over
    ``executors[c]`` executors (default one)."""
    data = micro_problem("linear", "small", **options)
    names, first = [], 1
    for component in [c["id"] for c in data["topology"]["components"]]:
        count, spread = tasks.get(component, 1), (executors or {}).get(component, 1)
        sizes = [count // spread + (1 if i < count % spread else 0) for i in range(spread)]
        for size in sizes:
            names.append({"id": f"[{first}-{first + size - 1}]", "component": component})
            first += size
    data["executors"] = names
    return Problem.from_dict(data)


def test_task_counts_add_up_the_task_ranges_of_each_component():
    problem = running_linear({"mid": 5, "high": 4}, {"mid": 2})
    assert task_counts(problem) == {"spout": 1, "mid": 5, "high": 4, "sink": 1}
    named_otherwise = Problem.from_dict(micro_problem("linear", "small"))  # "<component>/<i>": unknown
    assert task_counts(named_otherwise) == {}


def test_each_component_is_advised_at_most_its_own_task_count():
    roomy = run(running_linear({"mid": 8, "high": 8}), "hetero").advice
    assert roomy.parallelism["high"] > 1 and roomy.parallelism["mid"] > 1  # both want more than one

    bounded = run(running_linear({"mid": 8, "high": 1}), "hetero").advice
    assert bounded.tasks == {"spout": 1, "mid": 8, "high": 1, "sink": 1}
    assert all(bounded.parallelism[c] <= bounded.tasks[c] for c in bounded.parallelism)
    assert bounded.parallelism["high"] == 1 and bounded.parallelism["spout"] == bounded.parallelism["sink"] == 1
    assert bounded.max_input_rate < roomy.max_input_rate  # the bound costs throughput


def test_a_running_topology_is_placed_as_is_and_the_advice_says_what_a_rebalance_gains():
    problem = running_linear({"high": 6})  # one high executor of 6 tasks
    plan = run(problem, "hetero")
    assert set(plan.assignments) == {e.id for e in problem.executors}  # nothing new to place
    advice = plan.advice
    assert advice.current == {"spout": 1, "mid": 1, "high": 1, "sink": 1}
    assert advice.changes and set(advice.changes) <= {"mid", "high"}
    assert advice.current_max_input_rate == pytest.approx(plan.figures["max_input_rate"])
    assert advice.max_input_rate > advice.current_max_input_rate
    assert advice.gain == pytest.approx(advice.max_input_rate / advice.current_max_input_rate - 1)
    (note,) = [n for n in plan.notes if n.startswith("parallelism kept")]
    command = "storm-planner rebalance micro-linear " + " ".join(f"-e {c}={n}" for c, n in advice.changes.items())
    assert command in note and f"{advice.gain:+.0%}" in note


def test_the_note_names_the_topology_by_its_storm_name():
    # The service passes Storm's topology name as the option topology.name (rebalance takes the name).
    problem = running_linear({"high": 6})
    named = problem.replace(options=Options(seed=1, extra={**problem.options.extra, "topology.name": "trends"}))
    assert any("storm-planner rebalance trends -e" in n for n in run(named, "hetero").notes)


def test_a_topology_at_its_task_counts_gets_nothing_to_change():
    plan = run(running_linear({}), "hetero")  # one task each: no rebalance can add an executor
    assert plan.advice.changes == {} and plan.advice.gain == 0
    assert any(n.endswith("nothing to change") for n in plan.notes)


def test_a_new_topology_gets_its_parallelism_in_the_plan_and_no_advice():
    plan = run(Problem.from_dict(micro_problem("linear", "small")), "hetero")
    assert plan.advice is None and sum(plan.parallelism.values()) == len(plan.assignments)
    assert "advice" not in plan.to_dict()


def test_the_advice_survives_the_plan_json_and_the_api():
    plan = run(running_linear({"high": 6}), "hetero")
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["advice"]["gain"] == pytest.approx(plan.advice.gain)
    again = Plan.from_dict(data)
    assert again.advice == plan.advice and again.to_dict() == data
    with pytest.raises(Exception, match="advice"):
        Plan.from_dict({**data, "advice": {"parallelism": {"high": "many"}}})


def test_the_gain_of_an_advice_with_nothing_sustainable_now_is_not_a_number_in_json():
    advice = ParallelismAdvice(parallelism={"a": 2}, current={"a": 1}, tasks={"a": 2},
                               max_input_rate=10.0, current_max_input_rate=0.0)
    assert advice.gain == float("inf") and advice.to_dict()["gain"] is None
    json.dumps(advice.to_dict(), allow_nan=False)


def test_topology_options_reach_hetero_under_planner_hetero_keys():
    # through the service a topology's conf arrives as strings, under its planner.* names
    roomy = run(running_linear({"mid": 8, "high": 8}), "hetero").advice
    capped = run(running_linear({"mid": 8, "high": 8}, **{"planner.hetero.max_instances": "1"}), "hetero").advice
    assert max(roomy.parallelism.values()) > 1
    assert max(capped.parallelism.values()) == 1


def test_search_mode_on_a_running_topology_is_a_clear_error():
    from storm_planner.core.errors import ProblemError

    with pytest.raises(ProblemError, match="rebalance"):
        run(running_linear({"high": 4}, **{"planner.hetero.mode": "search"}), "hetero")
