"""Bargain detection components over the real multilang protocol."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import bargains
import pytest
from bargains.logic import AsOfJoin, VwapWindow, is_bargain, margin_ppm
from multilang import MultilangComponent, emits, storm_context

from storm_planner.streaming.watermarks import END

TASKS = {1: "trades", 2: "quotes", 3: "vwap", 4: "vwap", 5: "join", 6: "join", 7: "filter", 8: "sink"}
SRC = Path(__file__).resolve().parents[2] / "topologies" / "bargains" / "src"


def conf_for(tmp_path: Path, **options) -> dict:
    conf = {"topology.name": "bargains-test", "storm.id": "bargains-test-1-1",
            "bargains.sink": str(tmp_path / "bargains.jsonl")}
    conf.update({f"bargains.{k}": v for k, v in options.items()})
    return conf


def start(target, tmp_path, name, task, tasks=TASKS, **options):
    return MultilangComponent(f"bargains.{target}", SRC, conf_for(tmp_path, **options),
                              storm_context(name, task, tasks))


def trade(symbol, minute, second, price, size):
    return {"DATE": "20130603", "TIME_M": f"09:{minute:02d}:{second:02d}.000", "SYM_ROOT": symbol,
            "PRICE": price, "SIZE": size}


def quote(symbol, minute, second, ask, size=100):
    return {"DATE": "20130603", "TIME_M": f"09:{minute:02d}:{second:02d}.000", "SYM_ROOT": symbol,
            "BID": ask - 0.01, "BIDSIZ": 100, "ASK": ask, "ASKSIZ": size}


# -- pure logic ----------------------------------------------------------------------------

def test_vwap_window_slides_by_one_trade_over_ten_minutes():
    window = VwapWindow(600_000)
    assert window.add(0, 100_0000, 100) == (100_0000 * 100, 100)
    assert window.add(300_000, 200_0000, 300) == (100_0000 * 100 + 200_0000 * 300, 400)
    # At t = 600 s the trade at 0 leaves the window (t - 600 s, t].
    assert window.add(600_000, 150_0000, 100) == (200_0000 * 300 + 150_0000 * 100, 400)


def test_bargain_rule_is_exact_at_the_margin():
    # VWAP exactly 100.0000; margin 1 %: an ask of 99.0000 is not below 99.0000.
    assert not is_bargain(99_0000, 100_0000 * 7, 7, margin_ppm(0.01))
    assert is_bargain(98_9999, 100_0000 * 7, 7, margin_ppm(0.01))


def test_as_of_join_waits_for_the_trades_watermark():
    join = AsOfJoin()
    assert join.add_quote(["A", 1_500, 10, 1]) == []  # trades not yet past 1.5 s
    join.add_vwap("A", 1_000, 50, 5)
    assert join.advance_trades(1_500) == []  # watermark 1.5 s: trades at 1.5 s may still come
    join.add_vwap("A", 1_500, 60, 6)  # a trade at the quote's instant counts
    assert join.advance_trades(1_501) == [(["A", 1_500, 10, 1], (60, 6))]
    assert join.add_quote(["B", 1_200, 10, 1]) == [(["B", 1_200, 10, 1], None)]  # no trade for B


def test_a_pending_quote_keeps_its_vwap_when_the_quotes_run_ahead():
    join = AsOfJoin()
    for time_ms, sums in ((1_000, (10, 1)), (2_000, (20, 1)), (3_000, (30, 1))):
        join.add_vwap("X", time_ms, *sums)
    join.add_quote(["X", 1_500, 9, 1])  # waits for the trades' watermark
    join.advance_quotes(3_500)  # the quotes feed is already past the VWAPs the quote needs
    assert join.advance_trades(4_000) == [(["X", 1_500, 9, 1], (10, 1))]


def join_channels(trades_feed, quotes_feed, vwap_tasks=2, window_ms=600_000):
    """What reaches one join task, per upstream task, in order: lists of (kind, payload) messages.

    As in the topology: the trades' watermarks go to every vwap task (all grouping),
    each symbol's trades to one vwap task (fields grouping), and each vwap task
    forwards its data and the watermarks to the join; quotes and their watermarks
    come on their own channel. A spout emits a watermark before each record of a
    new event time and END after the last.
    """
    from bargains.taq import quote_values, trade_values

    from storm_planner.streaming.feedio import iter_feed_records
    from storm_planner.streaming.spout import stable_hash

    def replay(feed, values_of):
        last = None
        for record in iter_feed_records(str(feed)):
            values = values_of(record)
            if values is None:
                continue
            if last is None or values[1] > last:
                last = values[1]
                yield "mark", values[1]
            yield "data", values
        yield "mark", END

    vwaps = [[] for _ in range(vwap_tasks)]
    windows = {}
    for kind, values in replay(trades_feed, trade_values):
        if kind == "mark":
            for channel in vwaps:
                channel.append(("trades mark", values))
            continue
        symbol, time_ms, price, size = values
        window = windows.setdefault(symbol, VwapWindow(window_ms))
        vwaps[stable_hash(symbol) % vwap_tasks].append(
            ("vwap", (symbol, time_ms, *window.add(time_ms, price, size))))
    quotes = [("quotes mark" if kind == "mark" else "quote", values)
              for kind, values in replay(quotes_feed, quote_values)]
    return [*vwaps, quotes]


@pytest.mark.parametrize("seed", range(8))
def test_the_join_finds_every_bargain_however_its_inputs_interleave(seed):
    """JoinBolt's logic over randomly paced upstream tasks equals the oracle.

    Each upstream task gets a speed; one vwap task or the quotes far ahead of the
    others is what a loaded host produces.
    """
    import random

    from bargains.bolts import watermark_ms

    from storm_planner.streaming.watermarks import WatermarkTracker

    trades_feed, quotes_feed = bargains.shipped_trades(), bargains.shipped_quotes()
    expected = bargains.expected_bargains(trades_feed, quotes_feed, margin=0.004)
    assert expected
    channels = join_channels(trades_feed, quotes_feed)
    rng = random.Random(seed)
    speeds = [rng.choice([1, 10, 100]) for _ in channels]
    positions = [0] * len(channels)
    trades_marks = WatermarkTracker(range(len(channels) - 1))
    join, found, ppm = AsOfJoin(), [], margin_ppm(0.004)
    while True:
        open_channels = [c for c in range(len(channels)) if positions[c] < len(channels[c])]
        if not open_channels:
            break
        c = rng.choices(open_channels, weights=[speeds[o] for o in open_channels])[0]
        kind, payload = channels[c][positions[c]]
        positions[c] += 1
        released = []
        if kind == "vwap":
            join.add_vwap(*payload)
        elif kind == "quote":
            released = join.add_quote(list(payload))
        elif kind == "quotes mark":
            join.advance_quotes(watermark_ms(payload / 1000 if payload != END else END))
        else:
            advanced = trades_marks.update(c, payload / 1000 if payload != END else END)
            if advanced is not None:
                released = join.advance_trades(watermark_ms(advanced))
        found += [tuple(q) for q, sums in released if sums is not None and is_bargain(q[2], *sums, ppm)]
    assert sorted(found) == expected


# -- components ------------------------------------------------------------------------------

def test_trade_spout_partitions_by_symbol_and_emits_watermarks(tmp_path):
    feed = tmp_path / "trades.jsonl"
    rows = [trade(s, 30, i, 10.0 + i, 100) for i in range(6) for s in ("AAA", "BBB", "CCC")]
    feed.write_text("".join(json.dumps(r) + "\n" for r in rows) + "oops\n")
    tasks = {**TASKS, 9: "trades"}
    seen = {}
    for task in (1, 9):
        with start("spouts.TradeSpout", tmp_path, "trades", task, tasks=tasks, trades_feed=str(feed)) as spout:
            sent = []
            for _ in range(4):
                sent += emits(spout.next())
            data = [m for m in sent if m.get("stream") is None]
            marks = [m["tuple"][0] for m in sent if m.get("stream") == "watermark"]
            assert all("id" not in m for m in sent if m.get("stream") == "watermark")  # unreliable
            assert marks == sorted(marks) and marks[-1] == END
            times = [m["tuple"][1] for m in data]
            assert times == sorted(times)
            seen[task] = {m["tuple"][0] for m in data}
            assert all(m["id"] for m in data)
    assert seen[1].isdisjoint(seen[9]) and seen[1] | seen[9] == {"AAA", "BBB", "CCC"}


def test_vwap_bolt_emits_sums_and_forwards_the_minimum_watermark(tmp_path):
    tasks = {**TASKS, 9: "trades"}
    with start("bolts.VwapBolt", tmp_path, "vwap", 3, tasks=tasks) as bolt:
        out = bolt.process(["A", 1000, 10_0000, 10], tup_id="t1", comp="trades", task=1)
        assert emits(out)[0]["tuple"] == ["A", 1000, 100_0000, 10]
        assert emits(out)[0]["anchors"] == ["t1"]  # anchored to the trade
        out = bolt.process(["A", 2000, 20_0000, 30], tup_id="t2", comp="trades", task=1)
        assert emits(out)[0]["tuple"] == ["A", 2000, 100_0000 + 600_0000, 40]
        # Watermarks: the minimum over both trades tasks, forwarded when it advances.
        assert emits(bolt.process([5.0], tup_id="w1", comp="trades", stream="watermark", task=1)) == []
        out = emits(bolt.process([3.0], tup_id="w2", comp="trades", stream="watermark", task=9))
        assert [(m["stream"], m["tuple"]) for m in out] == [("watermark", [3.0])]
        out = emits(bolt.process([END], tup_id="w3", comp="trades", stream="watermark", task=9))
        assert [m["tuple"] for m in out] == [[5.0]]


def test_join_and_filter_bolts(tmp_path):
    with start("bolts.JoinBolt", tmp_path, "join", 5) as join, \
            start("bolts.FilterBolt", tmp_path, "filter", 7, margin=0.01) as filt:
        # A quote arrives before the trades' watermark passed its time: held.
        assert emits(join.process(["A", 2_000, 98_0000, 100], tup_id="q", comp="quotes", task=2)) == []
        join.process(["A", 1_000, 100_0000 * 10, 10], tup_id="v1", comp="vwap", task=3)
        join.process(["A", 3_000, 1, 1], tup_id="v2", comp="vwap", task=3)  # after the quote: not used
        join.process([1.5], tup_id="w", comp="vwap", stream="watermark", task=3)
        assert emits(join.process([END], tup_id="w2", comp="vwap", stream="watermark", task=4)) == []
        out = emits(join.process([2.5], tup_id="w3", comp="vwap", stream="watermark", task=3))
        assert [m["tuple"] for m in out] == [["A", 2_000, 98_0000, 100, 100_0000 * 10, 10]]
        joined = out[0]["tuple"]
        flagged = emits(filt.process(joined, tup_id="j", comp="join", task=5))
        assert [m["tuple"] for m in flagged] == [["A", 2_000, 98_0000, 100, 100_0000.0]]
        not_cheap = ["A", 2_000, 99_5000, 100, 100_0000 * 10, 10]
        assert emits(filt.process(not_cheap, tup_id="j2", comp="join", task=5)) == []


def test_sink_writes_bargains_as_json_lines(tmp_path):
    with start("bolts.SinkBolt", tmp_path, "sink", 8) as sink:
        sink.heartbeat()
        sink.process(["A", 2_000, 98_0000, 100, 100_0000.0], tup_id="b", comp="filter", task=7)
    rows = [json.loads(line) for line in (tmp_path / "bargains.jsonl").read_text().splitlines()]
    assert rows == [{"symbol": "A", "time_ms": 2_000, "ask": 98.0, "ask_size": 100, "vwap": 100.0,
                     "discount": 0.02}]
    assert bargains.bargains_in_sink(tmp_path / "bargains.jsonl") == [("A", 2_000, 98_0000, 100)]


# -- the whole pipeline over the protocol ------------------------------------------------------

def to_task(value, tasks):
    return tasks[zlib.crc32(str(value).encode()) % len(tasks)]


def route(messages, comp, src_task, targets, key_field=0):
    """Inputs per target task, in emit order: data by fields grouping, watermarks to all."""
    inputs = {t: [] for t in targets}
    for message in messages:
        stream, values = message.get("stream"), message["tuple"]
        dests = targets if stream == "watermark" else [to_task(values[key_field], targets)]
        for t in dests:
            inputs[t].append({"values": values, "comp": comp, "stream": stream, "task": src_task})
    return inputs


@pytest.mark.parametrize("quotes_first", [True, False])
def test_pipeline_bargains_equal_the_direct_oracle(tmp_path, quotes_first):
    """Shipped feeds through 2 spouts, 2 vwap and 2 join tasks, a filter and a sink.

    ``quotes_first`` delivers every quote to the joins before any VWAP — the
    worst case for the join, which must hold the quotes until the trades catch
    up; otherwise the VWAPs come first.
    """
    sink_path = tmp_path / "bargains.jsonl"
    margin = 0.005
    procs = {
        "trades": start("spouts.TradeSpout", tmp_path, "trades", 1),
        "quotes": start("spouts.QuoteSpout", tmp_path, "quotes", 2),
        3: start("bolts.VwapBolt", tmp_path, "vwap", 3), 4: start("bolts.VwapBolt", tmp_path, "vwap", 4),
        5: start("bolts.JoinBolt", tmp_path, "join", 5), 6: start("bolts.JoinBolt", tmp_path, "join", 6),
        7: start("bolts.FilterBolt", tmp_path, "filter", 7, margin=margin),
        8: start("bolts.SinkBolt", tmp_path, "sink", 8),
    }
    try:
        trades_out, quotes_out = procs["trades"].drain(), procs["quotes"].drain()
        vwap_in = route(trades_out, "trades", 1, [3, 4])
        join_in = {5: [], 6: []}
        vwap_part = {5: [], 6: []}
        for task in (3, 4):
            for t, items in route(procs[task].process_batch(vwap_in[task]), "vwap", task, [5, 6]).items():
                vwap_part[t] += items
        quote_part = route(quotes_out, "quotes", 2, [5, 6])
        for t in (5, 6):
            join_in[t] = quote_part[t] + vwap_part[t] if quotes_first else vwap_part[t] + quote_part[t]
        filter_in = []
        for task in (5, 6):
            filter_in += [{"values": m["tuple"], "comp": "join", "task": task}
                          for m in procs[task].process_batch(join_in[task])]
        sink_in = [{"values": m["tuple"], "comp": "filter", "task": 7}
                   for m in procs[7].process_batch(filter_in)]
        procs[8].process_batch(sink_in)
        for name, out in (("trades", trades_out), ("quotes", quotes_out)):
            procs[name].ack_all([m["id"] for m in out if m.get("id")])
        assert Path(str(sink_path) + ".feed-done").exists()
        expected = bargains.expected_bargains(bargains.shipped_trades(), bargains.shipped_quotes(), margin)
        assert expected, "the shipped feed should hold bargains"
        assert bargains.bargains_in_sink(sink_path) == expected
    finally:
        for proc in procs.values():
            proc.close()
