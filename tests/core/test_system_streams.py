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
    DEFAULT_WATERMARK_STREAMS,
    MAX_PRIOR_RATE,
    WATERMARK_STREAM,
    acker_streams,
    metrics_streams,
    prior_rates,
    with_system_streams,
)
from storm_planner.streaming.watermarks import WATERMARK_STREAM as streaming_watermark_stream

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


# bargains' graph (topologies/bargains): two replay spouts with all-grouped watermark streams beside their data.
BARGAINS = (Component("trades", "spout", 1), Component("quotes", "spout", 1), Component("vwap", "bolt", 2),
            Component("join", "bolt", 2), Component("filter", "bolt", 1), Component("sink", "bolt", 1),
            Component(ACKER, "bolt", 4, system=True))
BARGAINS_STREAMS = (
    Stream("trades", "vwap", "fields"), Stream("trades", "vwap", "all", stream_id=WATERMARK_STREAM),
    Stream("vwap", "join", "fields"), Stream("vwap", "join", "all", stream_id=WATERMARK_STREAM),
    Stream("quotes", "join", "fields"), Stream("quotes", "join", "all", stream_id=WATERMARK_STREAM),
    Stream("join", "filter", "shuffle"), Stream("filter", "sink", "global"))


def test_watermarks_are_priced_as_the_kit_sends_them_and_add_no_data():
    """A replay spout sends a watermark per record (its data rate), each all-grouped copy reaches every task, a
    bolt passes one on per one received, and a watermark adds no data tuple. Selectivity 1 over every input (the
    code before) made vwap emit 3 tuples per trade on each output and the join 12 per trade and quote."""
    rates = {(s.source, s.target, s.stream_id): s.rate for s in prior_rates(BARGAINS, BARGAINS_STREAMS)}
    assert rates[("trades", "vwap", WATERMARK_STREAM)] == 1.0
    assert rates[("vwap", "join", "default")] == 1.0               # one VWAP per trade
    assert rates[("vwap", "join", WATERMARK_STREAM)] == 2.0        # each of vwap's 2 tasks passes each one on
    assert rates[("quotes", "join", WATERMARK_STREAM)] == 1.0
    assert rates[("join", "filter", "default")] == 2.0             # its data inputs: a VWAP and a quote
    assert rates[("filter", "sink", "default")] == 2.0


def test_watermarks_start_no_tree_and_cost_the_acker_nothing():
    """Watermarks go out unanchored (no message id at the spout, anchors=[] in the bolts): one init and one
    completion per spout record, and a bolt acks only its data tuples to the acker."""
    user = prior_rates(BARGAINS, BARGAINS_STREAMS)
    acks = by_pair(acker_streams(BARGAINS, user))
    assert acks["trades", ACKER, ACK_INIT_STREAM].rate == 1.0
    assert acks[ACKER, "quotes", ACK_ACK_STREAM].rate == 1.0
    assert acks["vwap", ACKER, ACK_ACK_STREAM].rate == 1.0          # the trade; not its 2 watermark copies
    assert acks["join", ACKER, ACK_ACK_STREAM].rate == 2.0          # a VWAP and a quote; not 6 watermark copies


def test_which_streams_are_watermarks_is_the_callers_choice():
    """Another id is declared as a watermark stream; declaring none prices every stream as data (as before)."""
    renamed = tuple(Stream(s.source, s.target, s.grouping, s.rate, "marks" if s.stream_id == WATERMARK_STREAM
                           else s.stream_id) for s in BARGAINS_STREAMS)
    rates = {(s.source, s.target): s.rate for s in prior_rates(BARGAINS, renamed, watermark_streams=("marks",))
             if s.stream_id == "default"}
    assert rates[("join", "filter")] == 2.0
    as_data = {(s.source, s.target): s.rate for s in prior_rates(BARGAINS, BARGAINS_STREAMS, watermark_streams=())
               if s.stream_id == "default"}
    assert as_data[("vwap", "join")] == 3.0 and as_data[("join", "filter")] == 12.0
    assert DEFAULT_WATERMARK_STREAMS == (WATERMARK_STREAM,) == (streaming_watermark_stream,)


def test_a_bolt_fed_by_watermarks_alone_and_one_that_starts_them():
    """No data input: its data outputs take every input (the old rule). No watermark input but a watermark output:
    it starts them, one per data tuple it receives, as a spout does per record."""
    components = (Component("s", "spout", 1), Component("timer", "bolt", 3), Component("a", "bolt", 2),
                  Component("b", "bolt", 1))
    streams = (Stream("s", "timer", "all", stream_id=WATERMARK_STREAM), Stream("timer", "b"),
               Stream("s", "a"), Stream("s", "a", "fields", stream_id="side"),
               Stream("a", "b", "all", stream_id=WATERMARK_STREAM))
    rates = {(s.source, s.target, s.stream_id): s.rate for s in prior_rates(components, streams)}
    assert rates[("timer", "b", "default")] == 3.0     # 3 watermark copies in, no data input
    assert rates[("a", "b", WATERMARK_STREAM)] == 2.0  # started per data tuple: default 1 + side 1
