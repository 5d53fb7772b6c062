"""`storm-planner bench hetero-real`: the pure parts (implied rates, judging a rate step on synthetic
windows, the rate search, the placement check, the placements and their run order, the plans and RAS's
declared CPU, the comparison of placements, the profile, the project). The cluster run itself is a
benchmark command, reported in benchmarks/reports/hetero.md; benchmarks/harness/tests/test_hetero_real_cluster.py
runs it once with the shortest settings."""
from __future__ import annotations

import pytest

from storm_planner.profiling.measurements import WindowFigures
from storm_planner_bench.hetero_real.driver import Machine, predicted_rate
from storm_planner_bench.hetero_real.project import COMPONENT_TYPES, real_profile, write_project
from storm_planner_bench.hetero_real.search import (
    BenchError,
    RateSearch,
    component_rates,
    expected_rates,
    grid_index_below,
    grid_rate,
    judge_step,
    nimbus_scheduler,
    parse_capacities,
    parse_placements,
    parse_shares,
    placement_counts,
    placement_differences,
    run_order,
)

LINEAR = ("spout", "mid", "high", "sink")


def window(component, task, seq, *, executed=0, emitted=0, ms=3000):
    return WindowFigures(component, task, seq, ms, 0.0, executed, emitted, 0.0, 0)


def linear_windows(per_window: dict[str, list[int]]) -> list[WindowFigures]:
    """One task per component, one 3 s window per count; the spout's counts are emitted tuples."""
    found = []
    for task, component in enumerate(LINEAR, start=1):
        for seq, count in enumerate(per_window[component], start=1):
            spout = component == "spout"
            found.append(window(component, task, seq, executed=0 if spout else count, emitted=count if spout else 0))
    return found


def test_implied_rates_follow_every_stream_of_each_shape():
    assert expected_rates("linear", 50) == {"spout": 50, "mid": 50, "high": 50, "sink": 50}
    diamond = expected_rates("diamond", 50)
    assert diamond["sink"] == 150 and diamond["low"] == diamond["mid"] == diamond["high"] == 50
    star = expected_rates("star", 50)
    assert star["center"] == 100 and star["sink1"] == star["sink2"] == 100


def test_component_rates_sum_tasks_over_their_own_window_time():
    windows = [window("mid", 2, 1, executed=300), window("mid", 2, 2, executed=150, ms=1500),
               window("mid", 3, 1, executed=90), window("spout", 1, 1, emitted=600, executed=999),
               window("__system", 9, 1, executed=1000)]
    rates = component_rates(windows, spouts=("spout",))
    assert rates == {"mid": pytest.approx(100 + 30), "spout": pytest.approx(200)}


def test_a_step_is_sustained_when_every_component_keeps_up_to_the_end():
    offered = 100  # 300 tuples per 3 s window
    ok = judge_step(linear_windows({c: [300, 297, 300] for c in LINEAR}), "linear", offered)
    assert ok.sustained and ok.worst_share >= 0.99

    # The sink does 90 % of the implied rate: the whole step falls behind.
    slow = {c: [300, 300, 300] for c in LINEAR} | {"sink": [270, 270, 270]}
    verdict = judge_step(linear_windows(slow), "linear", offered)
    assert not verdict.sustained
    assert verdict.worst_component == "sink" and verdict.worst_share == pytest.approx(0.9)

    # On average 96 % but falling at the end: a lag building up is not sustained either.
    falling = {c: [300, 300, 300] for c in LINEAR} | {"high": [310, 300, 254]}
    verdict = judge_step(linear_windows(falling), "linear", offered)
    assert verdict.worst_share >= 0.95 and verdict.last_share < 0.95
    assert not verdict.sustained and verdict.worst_component == "high"


def test_a_throttled_spout_that_cannot_emit_the_offered_rate_is_not_sustained():
    # Back-pressure or a CPU quota holds the spout back: everything downstream is consistent but slow.
    held = {c: [240, 240, 240] for c in LINEAR}
    assert not judge_step(linear_windows(held), "linear", 100).sustained
    assert judge_step(linear_windows(held), "linear", 80).sustained


def test_the_rate_grid_is_shared_and_indexes_round_down():
    assert grid_rate(0) == 10.0 and grid_rate(1) == 11.0
    assert grid_rate(grid_index_below(100)) <= 100 < grid_rate(grid_index_below(100) + 1)
    assert grid_index_below(3) == 0


def search_until_done(capacity: float, start: int, noisy: set[int] = frozenset(), max_steps: int = 30):
    search, index, measured = RateSearch(start=start, max_steps=max_steps), None, []
    index = search.first()
    while index is not None:
        sustained = grid_rate(index) <= capacity and not (index in noisy and index not in measured)
        measured.append(index)
        index = search.record(index, sustained)
    return search.best, measured


def test_the_rate_search_climbs_confirms_a_failure_and_fills_the_gap():
    best, measured = search_until_done(capacity=60, start=10)
    assert grid_rate(best) <= 60 < grid_rate(best + 1)
    assert measured[:5] == [10, 12, 14, 16, 18]
    assert measured[5] == measured[6] == 20          # the first failure is measured again
    assert measured[-1] == 19 or measured[-2] == 19  # the step between is tried


def test_one_noisy_failure_does_not_end_the_climb():
    best, measured = search_until_done(capacity=60, start=10, noisy={14})
    assert grid_rate(best) <= 60 < grid_rate(best + 1)
    # Failed, then passed: the pass right after a fail is measured once more before it counts.
    assert measured.count(14) == 3


def test_a_pass_right_after_a_fail_counts_only_when_the_next_measurement_passes_too():
    """The failure's backlog drains into the retry, which may pass once though the rate is not sustained."""
    search = RateSearch(start=10)
    assert search.record(10, True) == 12
    assert search.record(12, False) == 12             # measured again before the failure counts
    assert search.record(12, True) == 12              # a pass right after the fail: once more
    assert search.best == 10
    search.record(12, False)                          # and it fails: 12 is a confirmed failure
    assert search.best == 10 and search.failed == 12


def test_max_steps_bounds_the_search_and_keeps_the_highest_step_kept_up():
    assert search_until_done(capacity=60, start=10, max_steps=2) == (12, [10, 12])
    assert search_until_done(capacity=60, start=18, max_steps=2) == (18, [18, 20])   # the climb fell behind
    # A failure is measured again within the bound; two failures leave no sustained step.
    assert search_until_done(capacity=60, start=10, noisy={10}, max_steps=2) == (10, [10, 10])
    assert search_until_done(capacity=20, start=12, max_steps=2) == (None, [12, 12])


def test_the_rate_search_steps_down_when_the_start_is_too_high():
    best, measured = search_until_done(capacity=20, start=12)
    assert grid_rate(best) <= 20 < grid_rate(best + 1)
    assert measured[0] == 12 and min(measured) <= best


def test_placement_check_names_every_executor_placed_elsewhere():
    planned = {"[1-1]": "sup-large:6700", "[2-2]": "sup-small:6702"}
    assert placement_differences(dict(planned), planned) == []
    moved = placement_differences({"[1-1]": "sup-large:6700", "[2-2]": "sup-medium:6701"}, planned)
    assert moved == ["[2-2]: applied sup-medium:6701, planned sup-small:6702"]
    missing = placement_differences({"[1-1]": "sup-large:6700"}, planned)
    assert missing == ["[2-2]: applied nowhere, planned sup-small:6702"]


def test_placement_counts_per_component_and_node():
    rows = [{"component": "high", "node": "a"}, {"component": "high", "node": "a"}, {"component": "mid", "node": "b"}]
    assert placement_counts(rows) == {("high", "a"): 2, ("mid", "b"): 1}


def test_placements_are_parsed_in_order_and_wrong_lists_refused():
    assert parse_placements("hetero, ras,default") == ("hetero", "ras", "default")
    assert parse_placements("hetero,resource-aware") == ("hetero", "ras")
    assert parse_placements("hetero,storm-default") == ("hetero", "storm-default")   # the comparison before
    for bad, named in (("hetero,even", "even"), ("", "none given"), (" , ", "none given"),
                       ("hetero,ras,resource-aware", "ras named twice"), ("default,default", "default named twice")):
        with pytest.raises(BenchError, match=named):
            parse_placements(bad)


def test_each_placement_runs_under_its_nimbus_scheduler():
    assert [nimbus_scheduler(p) for p in ("hetero", "hetero-optimal", "storm-default", "default", "ras")] == [
        "planner", "planner", "planner", "default", "resource-aware"]


def test_runs_interleave_every_placement_once_then_again():
    assert run_order(2, ("hetero", "default", "ras")) == [
        (0, "hetero"), (0, "default"), (0, "ras"), (1, "hetero"), (1, "default"), (1, "ras")]
    assert run_order(1) == [(0, p) for p in ("hetero", "hetero-optimal", "storm-default", "default", "ras")]
    with pytest.raises(BenchError, match="at least 1"):
        run_order(0)


def test_ras_shares_are_decreasing_shares_of_the_rate():
    assert parse_shares("1,0.9,0.75") == (1.0, 0.9, 0.75)
    for bad in ("", "1.2", "0", "0.8,0.9", "1,1", "a"):
        with pytest.raises(BenchError, match="--ras-shares"):
            parse_shares(bad)


def test_capacities_are_three_positive_numbers():
    assert parse_capacities("100,50,25") == (100, 50, 25)
    for bad in ("100,50", "100,0,25", "a,b,c"):
        with pytest.raises(BenchError):
            parse_capacities(bad)


def test_the_profile_uses_one_set_of_times_on_every_machine_type_and_predicts_placements():
    reference = {"source": {"et": 0.0, "met": 0.3}, "lowCompute": {"et": 0.1, "met": 0.2},
                 "midCompute": {"et": 0.2, "met": 0.8}, "highCompute": {"et": 0.2, "met": 1.8}}
    profile = real_profile(reference, ["large", "small"])
    assert profile["component_types"]["highCompute"] == {"large": {"et": 0.2, "met": 1.8},
                                                          "small": {"et": 0.2, "met": 1.8}}
    assert set(profile["components"]) == set(COMPONENT_TYPES)
    machines = [Machine("sup-large", "large", 100, 6700), Machine("sup-small", "small", 25, 6701)]
    # Everything on the small machine: 25 % / (0.3 + 1 + 2 + 0.3 ms per input tuple / 10) = 69.4/s.
    on_small = [{"component": c, "node": "sup-small", "port": 6701} for c in LINEAR]
    assert predicted_rate("linear", machines, profile, on_small)["input_rate"] == pytest.approx(25 / 0.36)
    on_large = [dict(row, node="sup-large", port=6700) for row in on_small]
    assert predicted_rate("linear", machines, profile, on_large)["input_rate"] == pytest.approx(100 / 0.36)


@pytest.mark.parametrize("shape", ["linear", "diamond", "star"])
def test_each_project_declares_the_papers_shape_with_one_class_per_component(tmp_path, shape):
    from storm_planner.generators.hetero import TOPOLOGIES
    from storm_planner.profiling.project import load_project_topology

    topology = load_project_topology(write_project(tmp_path, shape))
    components = {c.name: c for c in topology.components}
    assert [(n, k) for n, k in TOPOLOGIES[shape]["components"]] == [(c.name, c.kind) for c in topology.components]
    streams = {(source, c.name) for c in topology.components for source, _, _ in c.inputs}
    assert streams == set(TOPOLOGIES[shape]["streams"])
    source = (tmp_path / "topologies" / f"{shape}.py").read_text()
    # The metrics hook tells subprocesses apart by class: no two components may share one.
    classes = [line.split("=")[1].split(".spec")[0].strip() for line in source.splitlines() if ".spec(" in line]
    assert len(set(classes)) == len(components)


def test_task_cpu_is_summed_per_machine_over_each_tasks_own_window_time():
    from storm_planner_bench.hetero_real.driver import machine_task_cpu

    windows = [WindowFigures("high", 3, 1, 3000, 600.0, 0, 0, 0.0, 0),
               WindowFigures("high", 3, 2, 3000, 300.0, 0, 0, 0.0, 0),
               WindowFigures("sink", 4, 1, 1500, 150.0, 0, 0, 0.0, 0),
               WindowFigures("__system", 9, 1, 3000, 999.0, 0, 0, 0.0, 0)]
    found = machine_task_cpu(windows, {3: "sup-large", 4: "sup-small"})
    assert found == {"sup-large": pytest.approx(15.0), "sup-small": pytest.approx(10.0)}


# -- the plans, RAS's declarations and the command's options -------------------------------------------

REFERENCE = {"source": {"et": 0.0, "met": 0.4}, "lowCompute": {"et": 0.1, "met": 0.25},
             "midCompute": {"et": 0.05, "met": 0.9}, "highCompute": {"et": 0.15, "met": 1.75}}
MACHINES = [Machine("sup-large", "large", 100, 6700), Machine("sup-medium", "medium", 50, 6701),
            Machine("sup-small", "small", 25, 6702)]


def test_ras_declares_what_eq_7_predicts_per_executor_at_heteros_rate():
    from storm_planner.core.problem import Problem
    from storm_planner.planners import run as run_planner
    from storm_planner_bench.hetero_real.driver import problem_dict
    from storm_planner_bench.hetero_real.plans import declared_cpu

    profile = real_profile(REFERENCE, ["large", "medium", "small"])
    parallelism = {"spout": 2, "mid": 4, "high": 5, "sink": 1}
    declared = declared_cpu("linear", MACHINES, profile, parallelism, 100.0)
    # Every component of Linear executes 100 tuples/s, split evenly over its executors: IR · (ET + MET) / 10.
    assert declared == pytest.approx({"spout": 50 * 0.4 / 10, "mid": 25 * 0.95 / 10, "high": 20 * 1.9 / 10,
                                      "sink": 100 * 0.35 / 10})
    # Diamond's sink receives the three middle bolts' streams: three times the input rate.
    diamond = declared_cpu("diamond", MACHINES, profile, {"spout": 1, "low": 1, "mid": 1, "high": 1, "sink": 2}, 10.0)
    assert diamond["sink"] == pytest.approx(15 * 0.35 / 10)
    # At hetero's predicted rate the declarations add up to the load the simulator puts on the machines.
    plan = run_planner(Problem.from_dict(problem_dict("linear", MACHINES, profile)), "hetero", mode="search")
    rate = plan.figures["max_input_rate"]
    chosen = {c: int(n) for c, n in plan.parallelism.items()}
    total = sum(chosen[c] * cpu for c, cpu in declared_cpu("linear", MACHINES, profile, chosen, rate).items())
    rows = [{"component": e.rsplit("/", 1)[0], "node": str(slot).rsplit(":", 1)[0], "port": 0}
            for e, slot in plan.assignments.items()]
    load = predicted_rate("linear", MACHINES, profile, rows)["utilisation"]
    assert total == pytest.approx(sum(load[m.supervisor] * m.capacity / 100 for m in MACHINES), rel=0.01)


def test_ras_options_scale_the_declarations_and_let_memory_never_decide():
    from storm_planner_bench.hetero_real.project import ras_options

    options = ras_options({"spout": 5.04, "mid": 23.75, "sink": 0.01}, 0.8, {"spout": 1, "mid": 2, "sink": 2})
    assert options["realbench.cpu.spout"] == 4.0 and options["realbench.cpu.mid"] == 19.0
    assert options["realbench.cpu.sink"] == 0.1                     # never 0: RAS reads a positive figure
    assert options["topology.worker.max.heap.size.mb"] == 768.0     # 5 executors: Storm's default holds them
    big = ras_options({"mid": 10.0}, 1.0, {"spout": 5, "mid": 6, "high": 6, "sink": 5})
    assert big["topology.worker.max.heap.size.mb"] == 128.0 * 22   # one worker may hold all 22
    assert "realbench.cpu.high" not in big                          # only what was declared


def test_the_shape_plan_gives_each_placement_its_graph_and_records_a_refused_optimum():
    from storm_planner.core.errors import StormPlannerError
    from storm_planner_bench.hetero_real.plans import plan_shape

    profile = real_profile(REFERENCE, ["large", "medium", "small"])
    plan = plan_shape("linear", MACHINES, profile, optimal=True, optimal_max_nodes=2_000_000)
    assert plan.optimal is not None and not plan.skipped
    assert plan.parallelism_of("hetero") == plan.parallelism == plan.parallelism_of("ras")
    assert plan.parallelism_of("hetero-optimal") == plan.optimal["parallelism"]
    # The optimum is at least as good as hetero's, and planning its own graph again keeps the graph.
    assert plan.optimal["figures"]["max_input_rate"] >= plan.figures["max_input_rate"] * (1 - 1e-9)
    assert sum(plan.optimal["graph_placement"].values()) == sum(plan.optimal["parallelism"].values())
    assert set(plan.declared_cpu) == set(plan.parallelism) and all(v > 0 for v in plan.declared_cpu.values())
    bounded = plan_shape("linear", MACHINES, profile, optimal=True, optimal_max_nodes=3)
    assert bounded.optimal is None and "more than 3 search nodes" in bounded.skipped["hetero-optimal"]
    with pytest.raises(StormPlannerError, match="hetero-optimal has no plan"):
        bounded.parallelism_of("hetero-optimal")
    assert plan_shape("linear", MACHINES, profile, optimal=False, optimal_max_nodes=3).skipped == {}


def command_args(*argv: str):
    import argparse

    from storm_planner_bench.hetero_real.experiment import BENCHMARKS

    parser = argparse.ArgumentParser()
    BENCHMARKS[0].add_to(parser.add_subparsers())
    return parser.parse_args(["hetero-real", *argv])


def test_the_command_takes_placements_and_repetitions_and_pairs_as_their_old_name():
    from storm_planner_bench.hetero_real.experiment import settings_from_args

    settings = settings_from_args(command_args())
    assert tuple(settings.placements) == ("hetero", "hetero-optimal", "storm-default", "default", "ras")
    assert settings.repetitions == 2 and settings.ras_shares[0] == 1.0 and settings.max_steps == 30
    assert settings_from_args(command_args("--max-steps", "2")).max_steps == 2
    before = settings_from_args(command_args("--placements", "hetero,storm-default", "--pairs", "3"))
    assert tuple(before.placements) == ("hetero", "storm-default") and before.repetitions == 3
    for argv, named in ((("--placements", "hetero,fast"), "fast"), (("--repetitions", "0"), "at least 1"),
                        (("--ras-shares", "2"), "--ras-shares"), (("--optimal-max-nodes", "0"), "max-nodes"),
                        (("--max-steps", "0"), "--max-steps")):
        with pytest.raises(BenchError, match=named):
            settings_from_args(command_args(*argv))


# -- the comparison -------------------------------------------------------------------------------------

def made_run(placement: str, repetition: int, throughput: float, *, throttled: float = 0.9, status: str = "ran"):
    """A finished run of Linear whose highest sustained step processed ``throughput`` tuples/s in all."""
    from storm_planner_bench.hetero_real.driver import Run, Step
    from storm_planner_bench.hetero_real.search import Verdict

    run = Run("linear", placement, repetition, status=status, predicted={"input_rate": 50.0, "throughput": 200.0})
    if status != "ran":
        return run
    rates = {c: throughput / 4 for c in LINEAR}
    run.steps.append(Step(run.name, throughput / 4, 3, Verdict(True, "high", 1.0, 1.0, rates), 1.0,
                          {"large": throttled, "small": 1.0}, {"large": 90.0, "small": 25.0}, {"large": 80.0}))
    run.sustained_offered, run.sustained_rates = throughput / 4, rates
    return run


def test_ratios_are_of_medians_with_the_spread_of_the_repetitions():
    from storm_planner_bench.hetero_real.compare import summaries, summary_rows

    runs = [made_run("hetero", 0, 400), made_run("default", 0, 200), made_run("ras", 0, 100),
            made_run("hetero", 1, 600), made_run("default", 1, 100), made_run("ras", 1, 300),
            made_run("hetero", 2, 500), made_run("default", 2, 150), made_run("ras", 2, 200)]
    (shape,) = summaries(runs)
    hetero = shape["placements"]["hetero"]
    assert hetero["throughput"].median == 500 and (hetero["throughput"].low, hetero["throughput"].high) == (400, 600)
    assert hetero["ratios"]["default"] == pytest.approx({"median": 500 / 150, "low": 400 / 200, "high": 600 / 100})
    assert hetero["ratios"]["ras"] == pytest.approx({"median": 2.5, "low": 400 / 300, "high": 6.0})
    assert shape["placements"]["default"]["ratios"]["default"]["median"] == pytest.approx(1.0)
    assert shape["verdict"]["beats"] is True
    rows = {r["placement"]: r for r in summary_rows([shape])}
    assert rows["hetero"]["beats_default_and_ras"] is True and rows["ras"]["beats_default_and_ras"] == ""
    assert rows["hetero"]["x_ras"] == 2.5 and rows["hetero"]["throttled_large"] == 0.9
    assert rows["hetero"]["saturated"] == "large small"


def test_hetero_does_not_beat_both_when_one_repetition_of_a_baseline_reaches_it():
    from storm_planner_bench.hetero_real.compare import summaries

    runs = [made_run("hetero", 0, 400), made_run("default", 0, 200), made_run("ras", 0, 410, throttled=0.2),
            made_run("hetero", 1, 600), made_run("default", 1, 100), made_run("ras", 1, 300, throttled=0.2)]
    (shape,) = summaries(runs)
    assert shape["verdict"]["beats"] is False
    assert "ras's highest (410.0)" in shape["verdict"]["reason"]
    # Where each placement saturated: ras's runs left the large machine unthrottled.
    assert shape["placements"]["ras"]["saturated"] == ["small"]
    assert shape["placements"]["hetero"]["saturated"] == ["large", "small"]


def test_no_verdict_without_a_measured_run_of_each_baseline():
    from storm_planner_bench.hetero_real.compare import summaries

    not_placed = "not scheduled: RAS placed no worker within 60 s at any declared share"
    runs = [made_run("hetero", 0, 400), made_run("default", 0, 200), made_run("ras", 0, 0, status=not_placed)]
    (shape,) = summaries(runs)
    assert shape["verdict"] == {"beats": None, "reason": "not judged: no measured run of ras"}
    assert shape["placements"]["ras"]["not_run"] == [not_placed] and shape["placements"]["ras"]["runs"] == 0
    assert shape["placements"]["hetero"]["ratios"]["ras"] is None
    (alone,) = summaries([made_run("hetero", 0, 400), made_run("storm-default", 0, 200)])
    assert alone["verdict"]["beats"] is None and "default, ras" in alone["verdict"]["reason"]
    assert alone["placements"]["hetero"]["ratios"] == {}


def test_a_runs_throughput_counts_no_backlog_draining_into_its_top_step():
    """A step after steps that fell behind drains their queues in its windows: a sink executing 130/s where
    100 were offered counts 100 (the steady state the offered rate asks for)."""
    from storm_planner_bench.hetero_real.driver import Step
    from storm_planner_bench.hetero_real.search import Verdict

    run = made_run("ras", 0, 400.0)
    run.sustained_rates = {"spout": 100.0, "mid": 100.0, "high": 110.0, "sink": 130.0}
    assert run.measured_throughput == 400.0
    # The step the throughput comes from is the counted one: a higher pass the search did not count is not.
    uncounted = Step(run.name, 120.0, 4, Verdict(True, "high", 1.0, 1.0, {}), 1.0, {}, {}, {})
    run.steps.append(uncounted)
    assert run.top_step is run.steps[0]


def test_each_run_is_handed_on_as_it_ends_and_skipped_placements_are_left_out():
    """run_bench writes the outputs after every run through this: a stop or an error later loses one run."""
    from types import SimpleNamespace

    from storm_planner_bench.hetero_real import experiment as hetero_real

    ran, handed = [], []

    class Bench:
        def run(self, shape, placement, repetition, parallelism, declared):
            ran.append((placement, repetition))
            return SimpleNamespace(placement=placement, repetition=repetition, handed_before=list(handed))

    plan = SimpleNamespace(shape="linear", skipped={"hetero-optimal": "too many nodes"},
                           parallelism_of=lambda placement: {}, declared_cpu={})
    settings = SimpleNamespace(repetitions=2, placements=["hetero", "hetero-optimal", "default"])
    runs = hetero_real.run_shape(Bench(), plan, settings, handed.append)
    assert ran == [("hetero", 0), ("default", 0), ("hetero", 1), ("default", 1)]
    assert handed == runs
    assert [len(run.handed_before) for run in runs] == [0, 1, 2, 3]   # each handed on before the next began
