"""Eq. 7 and eq. 8 on small graphs computed by hand."""
from __future__ import annotations

import pytest

from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Problem
from storm_planner.planners.hetero.model import build_model, tcu
from storm_planner.planners.hetero.rates import propagate


def problem(components, streams, alpha=None, shares=None, times=None):
    """Components as (id, kind); streams as (from, to, grouping); one machine type 'a'."""
    profile = {"components": {
        name: {"times": {"a": (times or {}).get(name, 1.0)},
               **({"alpha": alpha[name]} if alpha and name in alpha else {}),
               **({"input_share": shares[name]} if shares and name in shares else {})}
        for name, _ in components
    }}
    return Problem.from_dict({
        "nodes": [{"id": "n0", "machine_type": "a"}],
        "topology": {"id": "t", "components": [{"id": n, "type": k} for n, k in components],
                     "streams": [{"from": s, "to": t, "grouping": g} for s, t, g in streams]},
        "profiles": profile,
    })


def test_eq7_is_linear_in_the_input_rate():
    # 100 tuples/s at 2 ms + 0.5 ms per tuple: 250 ms of CPU per second = 25 % of a core
    assert tcu(100, 2.0, 0.5) == pytest.approx(25.0)
    assert tcu(200, 2.0, 0.5) == pytest.approx(2 * tcu(100, 2.0, 0.5))


def test_model_cost_is_percent_per_tuple_per_second():
    model = build_model(problem([("s", "spout")], [], times={"s": 2.5}))
    assert model.cost[0, 0] == pytest.approx(tcu(1, 2.5, 0))


def test_a_linear_chain_with_a_division_ratio_and_several_instances():
    # s -> a -> b; a emits 2 tuples per input. IR = 10, instances s:1, a:2, b:3
    model = build_model(problem([("s", "spout"), ("a", "bolt"), ("b", "bolt")],
                                [("s", "a", "shuffle"), ("a", "b", "shuffle")], alpha={"a": 2}))
    rates = propagate(model, [1, 2, 3], input_rate=10)
    assert rates.total.tolist() == pytest.approx([10, 10, 20])
    assert rates.per_instance.tolist() == pytest.approx([10, 5, 20 / 3])  # eq. 8: α·IR / n
    assert rates.throughput == pytest.approx(40)


def test_every_subscriber_gets_the_whole_stream_and_a_join_adds_them():
    # diamond: s -> {x, y} -> j, fields grouping is split uniformly
    model = build_model(problem([("s", "spout"), ("x", "bolt"), ("y", "bolt"), ("j", "bolt")],
                                [("s", "x", "shuffle"), ("s", "y", "fields"),
                                 ("x", "j", "shuffle"), ("y", "j", "shuffle")], alpha={"x": 0.5}))
    rates = propagate(model, [1, 1, 2, 4], input_rate=8)
    assert rates.total.tolist() == pytest.approx([8, 8, 8, 4 + 8])
    assert rates.per_instance.tolist() == pytest.approx([8, 8, 4, 3])


def test_per_target_division_ratios_split_a_components_output():
    model = build_model(problem([("s", "spout"), ("x", "bolt"), ("y", "bolt")],
                                [("s", "x", "shuffle"), ("s", "y", "shuffle")],
                                alpha={"s": {"x": 0.25, "y": 0.75}}))
    assert propagate(model, [1, 1, 1], 100).total.tolist() == pytest.approx([100, 25, 75])


def test_global_grouping_feeds_only_the_first_instance():
    model = build_model(problem([("s", "spout"), ("g", "bolt")], [("s", "g", "global")]))
    rates = propagate(model, [1, 3], input_rate=6)
    assert rates.instance_rate(1, 0) == pytest.approx(6)
    assert rates.instance_rate(1, 1) == rates.instance_rate(1, 2) == 0
    assert rates.total[1] == pytest.approx(6)


def test_all_grouping_replicates_the_stream_to_every_instance_and_downstream():
    model = build_model(problem([("s", "spout"), ("r", "bolt"), ("d", "bolt")],
                                [("s", "r", "all"), ("r", "d", "shuffle")]))
    rates = propagate(model, [1, 3, 2], input_rate=5)
    assert [rates.instance_rate(1, i) for i in range(3)] == pytest.approx([5, 5, 5])
    assert rates.total.tolist() == pytest.approx([5, 15, 15])
    assert rates.per_instance[2] == pytest.approx(7.5)


def test_several_spouts_each_emit_their_share_of_the_input_rate():
    model = build_model(problem([("s1", "spout"), ("s2", "spout"), ("c", "bolt")],
                                [("s1", "c", "shuffle"), ("s2", "c", "shuffle")], shares={"s2": 0.5}))
    rates = propagate(model, [2, 1, 1], input_rate=10)
    assert rates.total.tolist() == pytest.approx([10, 5, 15])
    assert rates.per_instance[0] == pytest.approx(5)


def test_rates_scale_with_the_input_rate():
    model = build_model(problem([("s", "spout"), ("a", "bolt")], [("s", "a", "shuffle")], alpha={"s": 3}))
    one, many = propagate(model, [1, 2], 1.0), propagate(model, [1, 2], 7.0)
    assert (many.total == pytest.approx(7 * one.total))


def test_a_cycle_has_no_rates():
    with pytest.raises(ProblemError, match="cycle through a, b"):
        build_model(problem([("s", "spout"), ("a", "bolt"), ("b", "bolt")],
                            [("s", "a", "shuffle"), ("a", "b", "shuffle"), ("b", "a", "shuffle")]))


def test_parallelism_must_give_every_component_an_instance():
    model = build_model(problem([("s", "spout"), ("a", "bolt")], [("s", "a", "shuffle")]))
    with pytest.raises(ValueError):
        propagate(model, [1, 0])
