"""The adaptation round (Alg. 1): release drained nodes, plan, scale, re-plan, report nodes to drain."""
from __future__ import annotations

import pytest

from storm_planner.adaptation import (
    AdaptationController,
    FileStateStore,
    ScalingDecision,
    ThresholdScaling,
    adaptation_round,
)
from storm_planner.adaptation.scaling import NoScaling
from storm_planner.core.errors import InfeasibleError, ProblemError
from storm_planner.core.problem import Problem
from storm_planner.generators.albic import CollocationWorkload, fluctuation_problem

FAST = 0.4


def problem(utilisation: float = 60.0, nodes: int = 6, executors: int = 48, budget: int = 6) -> Problem:
    return Problem.from_dict(fluctuation_problem(nodes=nodes, executors=executors, budget=budget, varies=0.0,
                                                 utilisation=utilisation, time_limit_s=FAST))


def applied(p: Problem, plan) -> Problem:
    return Problem.from_dict({**p.to_dict(), "current": {e: str(s) for e, s in plan.assignments.items()}})


def test_threshold_policy_decisions():
    policy = ThresholdScaling(scale_out_above=80, scale_in_below=40, target=60)
    busy = problem(utilisation=90)
    decision = policy.decide(busy, None)
    assert decision.add >= 1 and not decision.drain
    idle = problem(utilisation=20)
    from storm_planner.planners import run

    plan = run(idle, "even")
    decision = policy.decide(idle, plan)
    # 6 nodes at 20%: draining 4 leaves 2 at 60% (the target), not more.
    assert len(decision.drain) == 4
    assert policy.decide(problem(utilisation=60), plan) == ScalingDecision()
    with pytest.raises(ProblemError):
        ThresholdScaling(scale_out_above=50, scale_in_below=60, target=55)


def test_scale_in_marks_nodes_and_drains_them_over_rounds_then_releases_them(tmp_path):
    """Lemma 1/2 through Alg. 1: marked nodes only lose executors, end empty, then are released."""
    p = problem(utilisation=25)
    controller = AdaptationController(FileStateStore(tmp_path / "state.json"), "milp",
                                      ThresholdScaling(scale_out_above=80, scale_in_below=40, target=60))
    first = controller.round(p)
    marked = set(first.decision.drain)
    assert marked and set(first.plan.drain) == marked
    assert first.plan.figures["migrations"] <= 6
    released: set[str] = set()
    on_marked = [sum(1 for n in first.plan.nodes.values() if n in marked)]
    p = applied(p, first.plan)
    for _ in range(12):
        # A fresh controller each round: the marks must come back from the file (a restart).
        controller = AdaptationController(FileStateStore(tmp_path / "state.json"), "milp", NoScaling())
        result = controller.round(p)
        released |= set(result.released)
        assert result.plan.figures["migrations"] <= 6
        on_marked.append(sum(1 for n in result.plan.nodes.values() if n in marked))
        kept_nodes = {n.id for n in p.nodes} - set(result.released)
        p = applied(p, result.plan).replace(nodes=tuple(n for n in p.nodes if n.id in kept_nodes))
        if released == marked:
            break
    assert all(b <= a for a, b in zip(on_marked, on_marked[1:])), on_marked
    assert released == marked
    assert not result.plan.drain


def test_potential_plan_then_replan_when_scaling_in():
    p = problem(utilisation=25)
    result = adaptation_round(p, "milp", ThresholdScaling())
    assert result.potential is not None and result.decision.drain
    assert any("marked for removal" in note for note in result.plan.notes)
    assert result.state["draining"] == sorted(result.decision.drain)


def test_scale_out_is_reported_not_performed():
    result = adaptation_round(problem(utilisation=90), "milp", ThresholdScaling())
    assert result.plan.figures["scale_out_nodes"] >= 1 and not result.plan.drain
    assert result.potential is None


def test_albic_state_is_carried_in_the_round_state():
    w = CollocationWorkload.build(5, 60, 4, one_to_one=1.0, seed=1)
    p = w.problem(w.base, w.random_placement(1), {"max_migrations": 6, "time_limit_s": FAST})
    result = adaptation_round(p, "albic", NoScaling())
    assert result.state["planner"]["sets"] == result.plan.state["sets"]
    again = adaptation_round(applied(p, result.plan), "albic", NoScaling(), state=result.state)
    assert again.state["planner"]["sets"]


def test_all_nodes_marked_is_infeasible_and_bad_state_is_rejected():
    p = problem()
    with pytest.raises(InfeasibleError):
        adaptation_round(p, "milp", NoScaling(), state={"version": 1, "draining": [n.id for n in p.nodes]})
    with pytest.raises(ProblemError, match="version"):
        adaptation_round(p, "milp", NoScaling(), state={"version": 99})
