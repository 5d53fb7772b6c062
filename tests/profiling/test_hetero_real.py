"""`storm-planner bench hetero-real`: the pure parts (implied rates, judging a rate step on synthetic
windows, the rate search, the placement check, pair ratios, the profile, the project). The cluster
run itself is a benchmark command, reported in benchmarks/reports/hetero.md, not a test."""
from __future__ import annotations

import pytest

from storm_planner.bench._hetero_real_driver import Machine, predicted_rate
from storm_planner.bench._hetero_real_project import COMPONENT_TYPES, real_profile, write_project
from storm_planner.bench._hetero_real_search import (
    BenchError,
    RateSearch,
    component_rates,
    expected_rates,
    grid_index_below,
    grid_rate,
    judge_step,
    pair_ratios,
    parse_capacities,
    placement_counts,
    placement_differences,
    run_order,
)
from storm_planner.profiling.measurements import WindowFigures

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


def search_until_done(capacity: float, start: int, noisy: set[int] = frozenset()):
    search, index, measured = RateSearch(start=start), None, []
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
    assert measured.count(14) == 2


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


def test_pairs_are_hetero_over_default_in_run_order():
    assert run_order(2) == [(0, "hetero"), (0, "storm-default"), (1, "hetero"), (1, "storm-default")]
    summary = pair_ratios([150, 120], [100, 100])
    assert summary.ratios == (1.5, 1.2) and summary.spread == (1.2, 1.5)
    assert summary.mean == pytest.approx(1.35)
    with pytest.raises(BenchError):
        pair_ratios([150], [0])


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
    from storm_planner.generators.nasiri import TOPOLOGIES
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
    from storm_planner.bench._hetero_real_driver import machine_task_cpu

    windows = [WindowFigures("high", 3, 1, 3000, 600.0, 0, 0, 0.0, 0),
               WindowFigures("high", 3, 2, 3000, 300.0, 0, 0, 0.0, 0),
               WindowFigures("sink", 4, 1, 1500, 150.0, 0, 0, 0.0, 0),
               WindowFigures("__system", 9, 1, 3000, 999.0, 0, 0, 0.0, 0)]
    found = machine_task_cpu(windows, {3: "sup-large", 4: "sup-small"})
    assert found == {"sup-large": pytest.approx(15.0), "sup-small": pytest.approx(10.0)}
