"""Storm's own traffic in the model: the acker's streams, metrics consumers' and the rate priors."""
import math

import pytest

from storm_planner.core.elements import Component, Stream
from storm_planner.core.problem import Node, Problem, Slot
from storm_planner.core.slots import workers_note
from storm_planner.core.system_streams import (
    ACK_ACK_STREAM,
    ACK_INIT_STREAM,
    ACKER,
    MAX_PRIOR_RATE,
    acker_streams,
    metrics_streams,
    prior_rates,
    with_system_streams,
)

TOPK = (Component("requests", "spout", 1), Component("count", "bolt", 2), Component("top", "bolt", 1),
        Component(ACKER, "bolt", 2, system=True))


def by_pair(streams):
    return {(s.source, s.target, s.stream_id): s for s in streams}


def test_every_tree_costs_an_init_an_ack_per_bolt_tuple_and_a_completion():
    user = (Stream("requests", "count", "fields", 400.0), Stream("count", "top", "global", 40.0))
    acks = by_pair(acker_streams(TOPK, user, tuple_bytes=60.0))
    assert set(acks) == {("requests", ACKER, ACK_INIT_STREAM), (ACKER, "requests", ACK_ACK_STREAM),
                         ("count", ACKER, ACK_ACK_STREAM), ("top", ACKER, ACK_ACK_STREAM)}
    assert acks["requests", ACKER, ACK_INIT_STREAM].rate == 400.0     # one init per spout tuple
    assert acks[ACKER, "requests", ACK_ACK_STREAM].rate == 400.0     # one completion per tree
    assert acks["count", ACKER, ACK_ACK_STREAM].rate == 400.0        # one ack per tuple count receives
    assert acks["top", ACKER, ACK_ACK_STREAM].rate == 40.0
    assert acks[ACKER, "requests", ACK_ACK_STREAM].grouping == "direct"  # back to the root's own task
    assert acks["requests", ACKER, ACK_INIT_STREAM].grouping == "fields"  # the acker the root id names
    assert all(s.tuple_bytes == 60.0 for s in acks.values())


def test_one_emit_to_several_consumers_is_one_tree_and_all_grouping_acks_every_copy():
    components = (Component("spout", "spout", 1), Component("a", "bolt", 3), Component("b", "bolt", 1),
                  Component(ACKER, "bolt", 1, system=True))
    user = (Stream("spout", "a", "all", 10.0), Stream("spout", "b", "shuffle", 10.0),
            Stream("spout", "b", "shuffle", 5.0, stream_id="side"))
    acks = by_pair(acker_streams(components, user))
    assert acks["spout", ACKER, ACK_INIT_STREAM].rate == 15.0  # default (10, twice subscribed) + side (5)
    assert acks["a", ACKER, ACK_ACK_STREAM].rate == 30.0       # every one of a's 3 executors acks its copy
    assert acks["b", ACKER, ACK_ACK_STREAM].rate == 15.0


def test_measured_sizes_replace_the_estimate():
    user = (Stream("requests", "count", "fields", 1.0), Stream("count", "top", "global", 1.0))
    acks = by_pair(acker_streams(TOPK, user, tuple_bytes=60.0, sizes={("count", ACKER): 71.0}))
    assert acks["count", ACKER, ACK_ACK_STREAM].tuple_bytes == 71.0
    assert acks["top", ACKER, ACK_ACK_STREAM].tuple_bytes == 60.0


def test_no_acker_no_acker_streams_and_a_graph_that_has_them_is_left_alone():
    without = TOPK[:3]
    user = (Stream("requests", "count"), Stream("count", "top", "global"))
    assert acker_streams(without, user) == ()
    assert with_system_streams(without, user) == user
    given = user + (Stream("requests", ACKER, "fields", 3.0, ACK_INIT_STREAM),)
    assert with_system_streams(TOPK, given) == given


def test_prior_rates_flow_from_the_spouts_with_selectivity_one():
    components = (Component("s1", "spout", 1), Component("s2", "spout", 2), Component("join", "bolt", 2),
                  Component("fan", "bolt", 4), Component("sink", "bolt", 1))
    user = (Stream("s1", "join"), Stream("s2", "join"), Stream("join", "fan", "all"),
            Stream("fan", "sink", "global"))
    rates = {(s.source, s.target): s.rate for s in prior_rates(components, user)}
    assert rates == {("s1", "join"): 1.0, ("s2", "join"): 1.0, ("join", "fan"): 2.0, ("fan", "sink"): 8.0}


def test_prior_rates_stay_finite_in_cycles_and_deep_cascades():
    cycle = (Component("s", "spout", 1), Component("a", "bolt", 1), Component("b", "bolt", 1))
    rates = prior_rates(cycle, (Stream("s", "a"), Stream("a", "b"), Stream("b", "a")))
    assert all(math.isfinite(s.rate) and s.rate > 0 for s in rates)
    # 200 levels of diamonds would double the rate each level: capped instead
    components = [Component("s", "spout", 1)] + [Component(f"c{i}", "bolt", 1) for i in range(400)]
    streams, previous = [], ["s"]
    for level in range(200):
        left, right = f"c{2 * level}", f"c{2 * level + 1}"
        streams += [Stream(p, left) for p in previous] + [Stream(p, right) for p in previous]
        previous = [left, right]
    top = max(s.rate for s in prior_rates(components, streams))
    assert top == MAX_PRIOR_RATE


def test_metrics_consumers_get_one_batch_per_task_and_bucket():
    components = TOPK + (Component("__metrics_org.example.Consumer", "bolt", 1, system=True),)
    streams = {(s.source, s.target): s.rate for s in metrics_streams(components, bucket_s=60.0)}
    consumer = "__metrics_org.example.Consumer"
    assert streams[("count", consumer)] == pytest.approx(2 / 60.0)
    assert streams[(ACKER, consumer)] == pytest.approx(2 / 60.0)
    assert ("__metrics_org.example.Consumer", consumer) not in streams
    assert metrics_streams(TOPK) == ()


def _problem(workers):
    nodes = tuple(Node(f"n{i}", 100.0, slots=(6700, 6701)) for i in range(3))
    return Problem.from_dict({"nodes": [{"id": n.id, "capacity": 100, "slots": [6700, 6701]} for n in nodes],
                              "topology": {"id": "t", "components": [{"id": "a", "type": "spout", "executors": 2}]},
                              "options": {"workers": workers} if workers else {}})


def test_the_workers_note_says_how_many_against_topology_workers():
    two = {"a/0": Slot("n0", 6700), "a/1": Slot("n0", 6700)}
    assert "fewer than topology.workers 4" in workers_note(_problem(4), two)
    assert workers_note(_problem(1), two) == "1 worker(s) on 1 node(s) = topology.workers 1"
    spread = {"a/0": Slot("n0", 6700), "a/1": Slot("n1", 6700)}
    assert "more than topology.workers 1" in workers_note(_problem(1), spread)
    assert "one per node used" in workers_note(_problem(None), spread)
