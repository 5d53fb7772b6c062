"""The capacity planner: its model by hand, its exact answer against brute force, its bound, its scale."""
from __future__ import annotations

import itertools
import random

import pytest

import storm_planner
from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Problem
from storm_planner.core.traffic import TrafficModel
from storm_planner.planners.capacity import exact
from storm_planner.planners.capacity.bound import factor_bound
from storm_planner.planners.capacity.model import CapacityModel
from storm_planner.planners.capacity.search import greedy, improve


def pipeline(nodes=(("a", 100.0), ("b", 100.0)), link: float | None = None, spout_load=20.0, bolt_load=30.0,
             bolts=2, rate=100.0, tuple_bytes=500.0, costs=None, current=None, declared=None) -> dict:
    """A spout feeding ``bolts`` executors of one bolt by shuffle, loads measured at ``rate``."""
    executors = [{"id": "[1-1]", "component": "spout", "load": spout_load}]
    executors += [{"id": f"[{i}-{i}]", "component": "bolt", "load": bolt_load} for i in range(2, bolts + 2)]
    if declared is not None:
        for e in executors:
            e["cpu"] = declared
    problem = {
        "nodes": [{"id": n, "capacity": c, "slots": [6700, 6701],
                   **({"bandwidth": link} if link is not None else {})} for n, c in nodes],
        "topology": {"id": "t", "components": [{"id": "spout", "type": "spout"},
                                               {"id": "bolt", "executors": bolts}],
                     "streams": [{"from": "spout", "to": "bolt", "grouping": "shuffle", "rate": rate,
                                  "tuple_bytes": tuple_bytes}]},
        "executors": executors,
        "costs": costs or {"reference_rate": rate, "worker_fixed": 2.0, "origin": "measured"},
    }
    if current:
        problem["current"] = current
    return problem


def test_the_factor_is_the_least_headroom_over_cpu_and_links_computed_by_hand():
    model = CapacityModel(Problem.from_dict(pipeline(link=1.0)), worker_fixed=2.0)
    node_of = {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b"}
    # a: 2 fixed + 50 per unit of factor; b: 2 + 30. The spout sends one pair's share
    # (100 t/s / 2 pairs × 500 B × 8 = 0.2 Mbit/s) across to b: 1 Mbit/s allows 5×.
    assert model.factor(node_of) == pytest.approx((100 - 2) / 50)
    narrow = CapacityModel(Problem.from_dict(pipeline(link=0.3)), worker_fixed=2.0)
    assert narrow.factor(node_of) == pytest.approx(0.3 / 0.2)
    assert narrow.bottleneck(node_of)[1] in ("sent", "received")


def test_fixed_costs_do_not_grow_with_the_rate():
    problem = Problem.from_dict(pipeline(costs={"reference_rate": 100, "executor_fixed": {"bolt": 10},
                                                "worker_fixed": 0, "origin": "measured"}))
    model = CapacityModel(problem, problem.costs.executor_fixed, 0.0)
    everything_on_a = dict.fromkeys(("[1-1]", "[2-2]", "[3-3]"), "a")
    # fixed 20 (two bolts), variable 20 + 2 × 20 = 60: (100 − 20) / 60
    assert model.factor(everything_on_a) == pytest.approx(80 / 60)


def test_a_link_that_binds_keeps_the_stream_on_one_node():
    plan = storm_planner.plan(pipeline(link=0.05, bolt_load=10.0), algorithm="capacity")
    assert len({slot.split(":")[0] for slot in plan["assignments"].values()}) == 1
    cpu_bound = storm_planner.plan(pipeline(link=100.0, bolt_load=40.0), algorithm="capacity")
    assert len({slot.split(":")[0] for slot in cpu_bound["assignments"].values()}) == 2


def random_problem(rng: random.Random) -> Problem:
    nodes = [{"id": f"n{i}", "capacity": rng.choice([35.0, 45.0, 100.0]), "slots": [6700],
              "bandwidth": rng.choice([0.5, 2.0, 50.0])} for i in range(3)]
    components = [{"id": "s", "type": "spout", "executors": 1}, {"id": "x", "executors": rng.randint(1, 3)},
                  {"id": "y", "executors": rng.randint(1, 2)}]
    executors, task = [], 1
    for component in components:
        for _ in range(component["executors"]):
            executors.append({"id": f"[{task}-{task}]", "component": component["id"],
                              "load": round(rng.uniform(2, 25), 1)})
            task += 1
    streams = [{"from": "s", "to": "x", "grouping": rng.choice(["shuffle", "fields"]), "rate": 200.0,
                "tuple_bytes": rng.choice([100.0, 400.0])},
               {"from": "x", "to": "y", "grouping": rng.choice(["fields", "global"]), "rate": 100.0,
                "tuple_bytes": 200.0}]
    return Problem.from_dict({"nodes": nodes, "topology": {"id": "r", "components": components, "streams": streams},
                              "executors": executors,
                              "costs": {"reference_rate": 200, "worker_fixed": 1.5, "origin": "measured"}})


def brute_force(model: CapacityModel) -> float:
    executors, nodes = list(model.component), model.usable_nodes()
    return max(model.factor(dict(zip(executors, choice))) for choice in itertools.product(nodes, repeat=len(executors)))


@pytest.mark.parametrize("seed", range(12))
def test_exact_reaches_the_brute_force_optimum_and_the_bound_is_above_it(seed):
    problem = random_problem(random.Random(seed))
    model = CapacityModel(problem, worker_fixed=1.5)
    best = brute_force(model)
    bound = factor_bound(model)
    assert bound >= best * (1 - 1e-6)
    start = improve(model, greedy(model))
    assert model.factor(start) <= best * (1 + 1e-9)
    result = exact.solve(model, model.factor(start), bound, tolerance=0.005, time_limit_s=120)
    assert result is not None
    assert model.factor(result.node_of) == pytest.approx(best, rel=0.01)
    assert model.factor(result.node_of) >= result.factor * (1 - 1e-6)  # what it claims, the placement does


def test_a_single_executor_kept_whole_tightens_the_bound_computed_by_hand():
    """A spout (20 % at the reference rate) feeding two bolts (30 % each) by shuffle, 0.4 Mbit/s in all, over
    0.3 Mbit/s links between two nodes of 100 %. The pure LP splits the spout and both bolts evenly, so no
    tuple crosses a link, and half a worker (1 %) on each node: (200 − 2) / 80 = 2.475×. Kept whole on node a with a share x of the bolts there, the
    spout sends 0.4·(1 − x) Mbit/s, so f·0.4·(1 − x) ≤ 0.3 and 2 + f·(20 + 60x) ≤ 100 meet at f = 143/80.
    The best placement (the spout and one bolt on a) sustains 1.5×: still below the bound."""
    model = CapacityModel(Problem.from_dict(pipeline(link=0.3)), worker_fixed=2.0)
    assert factor_bound(model, whole=False) == pytest.approx(198 / 80, rel=2e-3)
    assert factor_bound(model) == pytest.approx(143 / 80, rel=2e-3)
    assert brute_force(model) == pytest.approx(1.5)


@pytest.mark.parametrize("seed", range(12))
def test_keeping_single_executors_whole_never_loosens_the_bound(seed):
    model = CapacityModel(random_problem(random.Random(seed)), worker_fixed=1.5)
    assert brute_force(model) * (1 - 1e-6) <= factor_bound(model) <= factor_bound(model, whole=False) * (1 + 2e-3)


def test_the_plan_reports_its_predicted_rate_and_the_bound():
    plan = storm_planner.plan(pipeline(), algorithm="capacity")
    figures = plan["figures"]
    assert 0 < figures["predicted_rate"] <= figures["rate_bound"] * (1 + 1e-6)
    assert figures["predicted_rate"] == pytest.approx(figures["capacity_factor"] * 100)
    assert "predicted" in plan["notes"][0] and "λ*" in plan["notes"][0]


def test_a_current_placement_that_sustains_the_target_is_kept():
    current = {"[1-1]": "b:6700", "[2-2]": "b:6700", "[3-3]": "a:6700"}
    kept = storm_planner.plan(pipeline(current=current), algorithm="capacity", target_rate=150.0)
    assert kept["assignments"] == current and "kept" in kept["notes"][0]
    moved = storm_planner.plan(pipeline(current={e: "a:6700" for e in current}), algorithm="capacity",
                               target_rate=150.0)
    assert moved["assignments"] != {e: "a:6700" for e in current}


def test_it_plans_on_measured_costs_not_on_declared_cpu():
    # Every executor declares 60 % (Storm's accounting would allow one per node), but measures 10 %.
    plan = storm_planner.plan(pipeline(declared=60.0, spout_load=10.0, bolt_load=10.0, link=0.05), algorithm="capacity")
    assert len({slot.split(":")[0] for slot in plan["assignments"].values()}) == 1
    assert not any("declared CPU" in note for note in plan["notes"])


def test_more_executors_are_advised_where_the_count_binds_and_within_the_tasks():
    problem = pipeline(nodes=(("a", 45.0), ("b", 45.0), ("c", 45.0), ("d", 45.0)), bolts=1, bolt_load=40.0,
                       spout_load=5.0)
    problem["executors"][1]["id"] = "[2-5]"   # one executor running four tasks
    plan = storm_planner.plan(problem, algorithm="capacity")
    advice = plan["advice"]
    assert advice["parallelism"]["bolt"] > 1 and advice["parallelism"]["bolt"] <= advice["tasks"]["bolt"] == 4
    assert advice["max_input_rate"] > advice["current_max_input_rate"]
    assert "rebalance t -e bolt=" in plan["notes"][-2]
    at_tasks = pipeline(nodes=(("a", 45.0), ("b", 45.0)), bolts=1, bolt_load=40.0)
    plan = storm_planner.plan(at_tasks, algorithm="capacity")
    assert plan["advice"]["parallelism"] == plan["advice"]["current"]


@pytest.mark.timeout(120)
def test_local_search_scales_without_executor_pairs(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the capacity planner built executor pairs")
    monkeypatch.setattr(TrafficModel, "executor_pairs", refuse)
    nodes = [{"id": f"n{i}", "capacity": 400.0, "slots": [6700, 6701], "bandwidth": 1000.0} for i in range(60)]
    components = [{"id": "s", "type": "spout", "executors": 200, "cost": 2000.0},
                  {"id": "a", "executors": 1000, "cost": 8000.0}, {"id": "b", "executors": 800, "cost": 6000.0},
                  {"id": "c", "executors": 1, "cost": 50.0}]
    streams = [{"from": "s", "to": "a", "grouping": "shuffle", "rate": 50000.0, "tuple_bytes": 100.0},
               {"from": "a", "to": "b", "grouping": "fields", "rate": 50000.0, "tuple_bytes": 100.0},
               {"from": "b", "to": "c", "grouping": "global", "rate": 1000.0, "tuple_bytes": 50.0}]
    problem = {"nodes": nodes, "topology": {"id": "big", "components": components, "streams": streams},
               "options": {"time_limit_s": 5}}
    plan = storm_planner.plan(problem, algorithm="capacity", max_columns=0, advise=False)
    assert len(plan["assignments"]) == 2001
    assert plan["figures"]["capacity_factor"] > 0


def test_costs_are_checked_and_round_trip():
    problem = Problem.from_dict(pipeline(costs={"reference_rate": 50, "executor_fixed": {"bolt": 1.5},
                                                "worker_fixed": 3, "origin": "remembered"}))
    assert Problem.from_dict(problem.to_dict()).costs == problem.costs
    for costs, word in (({"reference_rate": -1}, "reference_rate"), ({"executor_fixed": {"nope": 1}}, "nope"),
                        ({"origin": "guessed"}, "origin"), ({"speed": 1}, "speed"),
                        ({"worker_fixed": float("nan")}, "worker_fixed")):
        with pytest.raises(ProblemError, match=word):
            Problem.from_dict(pipeline(costs=costs))


def test_the_bound_and_the_exact_model_hold_after_another_highs_solve_in_the_process():
    """HiGHS sizes one thread scheduler per process at its first run: a solve that asked for another size
    afterwards got no solution (the bound read 0, the exact model nothing) once any other planner, or any
    HiGHS run with its default threads, had solved in the same process (the service, the bench)."""
    import highspy

    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    x = highs.addVariable(lb=0, ub=1)
    highs.addConstr(x <= 1)
    highs.run()
    problem = Problem.from_dict(pipeline(link=1.0))
    model = CapacityModel(problem, worker_fixed=2.0)
    assert factor_bound(model) > 0
    node_of = {"[1-1]": "a", "[2-2]": "a", "[3-3]": "b"}
    found = exact.solve(model, model.factor(node_of), factor_bound(model), time_limit_s=2.0)
    assert found is not None and model.factor(found.node_of) >= model.factor(node_of) - 1e-9


def test_advice_skips_counts_that_leave_the_busiest_executor_its_tasks():
    # Two executors of a four-task bolt, each alone filling a node: three executors would run two, one and one
    # tasks (Storm's split), the first as busy as now, so the advice goes to four.
    problem = pipeline(nodes=(("a", 45.0), ("b", 45.0), ("c", 45.0), ("d", 45.0)), bolts=2, bolt_load=40.0,
                       spout_load=2.0)
    problem["executors"][1]["id"], problem["executors"][2]["id"] = "[2-3]", "[4-5]"
    plan = storm_planner.plan(problem, algorithm="capacity", max_columns=0)
    assert plan["advice"]["tasks"]["bolt"] == 4
    assert plan["advice"]["parallelism"]["bolt"] == 4


def test_a_what_if_executor_carries_its_tasks_share_of_the_load():
    from storm_planner.planners.capacity.advice import with_parallelism

    problem = Problem.from_dict(pipeline(bolts=2, bolt_load=40.0))
    model = CapacityModel(problem, executor_fixed={"bolt": 4.0})
    three = with_parallelism(problem, model, {"bolt": 3}, {"bolt": 4})
    loads = sorted((e.load for e in three.executors if e.component == "bolt"), reverse=True)
    # 72 % of variable load in all: two tasks' share, then one task's each; the fixed 4 % on every executor.
    assert loads == pytest.approx([4.0 + 36.0, 4.0 + 18.0, 4.0 + 18.0])
    even = with_parallelism(problem, model, {"bolt": 3})
    assert sorted(e.load for e in even.executors if e.component == "bolt") == pytest.approx([28.0] * 3)


def test_one_worker_keeps_every_executor_on_one_node_whatever_the_search_tries():
    """topology.workers 1: the local search's random kicks may not open a second node (they once fell back
    to every node when the one used was the bottleneck)."""
    problem = pipeline(nodes=(("a", 100.0), ("b", 100.0), ("c", 100.0)), bolt_load=40.0)
    problem["options"] = {"workers": 1}
    plan = storm_planner.plan(problem, algorithm="capacity", max_columns=0)    # local search alone
    assert len({slot.split(":")[0] for slot in plan["assignments"].values()}) == 1, plan["assignments"]
