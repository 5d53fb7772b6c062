"""Twitter trends components over the real multilang protocol.

Each component runs as ``streamparse_run trends.<module>.<Class>`` in a
subprocess with the supervisor's directory layout, driven by JSON messages.
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
import trends
from multilang import MultilangComponent, emits, storm_context
from trends.ranking import top_k

TASKS = {1: "tweets", 3: "count", 4: "count", 5: "rank", 6: "rank", 7: "total"}
TWO_SPOUT_TASKS = {**TASKS, 2: "tweets"}


def conf_for(tmp_path: Path, **options) -> dict:
    conf = {"topology.name": "trends-test", "storm.id": "trends-test-1-1",
            "trends.sink": str(tmp_path / "sink.jsonl"), "trends.emit_interval_s": 0}
    conf.update({f"trends.{k}": v for k, v in options.items()})
    return conf


def tweet(topics, ms, tweet_id=0) -> dict:
    return {"id": tweet_id, "timestamp_ms": str(ms), "text": " ".join(f"#{t}" for t in topics),
            "entities": {"hashtags": [{"text": t, "indices": [0, 1]} for t in topics]}}


def write_feed(path: Path, lines) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def component(trends_src, target, tmp_path, name, task, tasks=TASKS, **options):
    return MultilangComponent(f"trends.{target}", trends_src, conf_for(tmp_path, **options),
                              storm_context(name, task, tasks))


# -- count ---------------------------------------------------------------------------

def test_count_bolt_emits_changed_topics_on_ticks(trends_src, tmp_path):
    with component(trends_src, "bolts.CountBolt", tmp_path, "count", 3) as bolt:
        bolt.heartbeat()
        for i, topic in enumerate(["storm", "rain", "storm"]):
            answer = bolt.process([topic, 1000.0 + i], tup_id=f"t{i}", comp="tweets")
            assert answer == [{"command": "ack", "id": f"t{i}"}]  # counted, acked, nothing emitted yet
        out = emits(bolt.tick())
        assert sorted(m["tuple"] for m in out) == [["rain", 1], ["storm", 2]]
        assert all(m["anchors"] == [] for m in out)
        assert emits(bolt.tick("tick2")) == []  # nothing changed since
        bolt.process(["storm", 1003.0], tup_id="t9", comp="tweets")
        bolt.heartbeat()
        assert [m["tuple"] for m in emits(bolt.tick("tick3"))] == [["storm", 3]]


def test_count_bolt_waits_for_its_emit_interval(trends_src, tmp_path):
    with component(trends_src, "bolts.CountBolt", tmp_path, "count", 3, emit_interval_s=600) as bolt:
        bolt.process(["a", 1.0], tup_id="x")
        assert len(emits(bolt.tick())) == 1  # the first tick starts the interval
        bolt.process(["a", 2.0], tup_id="y")
        assert emits(bolt.tick("tick2")) == []  # changed, but the interval has not elapsed


def test_count_bolt_sliding_window_expires_old_events(trends_src, tmp_path):
    with component(trends_src, "bolts.CountBolt", tmp_path, "count", 3, window_s=10) as bolt:
        for i, (topic, when) in enumerate([("a", 0.0), ("a", 5.0), ("b", 12.0)]):
            bolt.process([topic, when], tup_id=str(i))
        # watermark 12, window (2, 12]: a's event at 0 expired
        assert sorted(m["tuple"] for m in emits(bolt.tick())) == [["a", 1], ["b", 1]]
        bolt.process(["c", 30.0], tup_id="late-window")
        assert sorted(m["tuple"] for m in emits(bolt.tick("t2"))) == [["a", 0], ["b", 0], ["c", 1]]


# -- rank ------------------------------------------------------------------------------

def test_rank_bolt_emits_its_top_k_with_deterministic_ties(trends_src, tmp_path):
    with component(trends_src, "bolts.RankBolt", tmp_path, "rank", 5, top_k=3) as bolt:
        for i, (topic, count) in enumerate([("b", 5), ("a", 5), ("c", 9), ("d", 1), ("e", 5)]):
            bolt.process([topic, count], tup_id=str(i), comp="count", task=3)
        out = emits(bolt.tick())
        assert [m["tuple"] for m in out] == [[[["c", 9], ["a", 5], ["b", 5]]]]
        assert emits(bolt.tick("t2")) == []  # unchanged: no emit
        bolt.process(["c", 0], tup_id="drop", comp="count", task=3)  # count 0: topic left the window
        assert [m["tuple"] for m in emits(bolt.tick("t3"))] == [[[["a", 5], ["b", 5], ["e", 5]]]]


# -- total -----------------------------------------------------------------------------

def test_total_bolt_merges_rankers_and_writes_json_lines(trends_src, tmp_path):
    sink = tmp_path / "sink.jsonl"
    with component(trends_src, "bolts.TotalBolt", tmp_path, "total", 7, top_k=3) as bolt:
        bolt.process([[["x", 7], ["a", 2]]], tup_id="r1", comp="rank", task=5)
        bolt.process([[["y", 7], ["b", 4]]], tup_id="r2", comp="rank", task=6)
        bolt.heartbeat()
        assert emits(bolt.tick()) == []  # the total writes to the sink; it emits nothing
        lines = [json.loads(line) for line in sink.read_text().splitlines()]
        assert [line["rankings"] for line in lines] == [[["x", 7], ["y", 7], ["b", 4]]]
        # A newer ranking from task 5 replaces (not adds to) its previous one.
        bolt.process([[["a", 9]]], tup_id="r3", comp="rank", task=5)
        bolt.tick("t2")
        bolt.tick("t3")  # unchanged: no new line
        lines = [json.loads(line) for line in sink.read_text().splitlines()]
        assert [line["rankings"] for line in lines][1:] == [[["a", 9], ["y", 7], ["b", 4]]]
        assert lines[-1]["k"] == 3


@pytest.mark.parametrize("exited_first", [False, True], ids=["racing", "exited-first"])
def test_total_bolt_requires_a_sink(trends_src, tmp_path, exited_first):
    conf = conf_for(tmp_path)
    del conf["trends.sink"]
    with MultilangComponent("trends.bolts.TotalBolt", trends_src, conf,
                            storm_context("total", 7, TASKS)) as bolt:
        if exited_first:  # the tick then meets a closed pipe, not an EOF
            bolt.proc.wait(timeout=30)
        with pytest.raises(AssertionError, match="exited"):
            bolt.tick()
        assert "trends.sink is required" in bolt.stderr + "".join(bolt.errors)


# -- spout -----------------------------------------------------------------------------

def test_spout_replays_reliably_and_reports_exhaustion(trends_src, tmp_path):
    feed = write_feed(tmp_path / "feed.jsonl", [
        tweet(["Storm", "rain", "storm"], 1000, 1),  # case-folded, de-duplicated
        "{not json",                                 # malformed: counted, skipped
        tweet([], 2000, 2),                          # no topic: no tuple
        tweet(["rain"], 3000, 3),
    ])
    sink = tmp_path / "sink.jsonl"
    done = Path(str(sink) + ".feed-done")
    with component(trends_src, "spouts.TweetSpout", tmp_path, "tweets", 1, feed=str(feed)) as spout:
        sent = []
        for _ in range(5):
            sent += emits(spout.next())
        assert [m["tuple"] for m in sent] == [["storm", 1.0], ["rain", 1.0], ["rain", 3.0]]
        ids = [m["id"] for m in sent]
        assert len(set(ids)) == 3  # every tuple tracked under its own message id
        assert not done.exists()  # exhausted, but nothing acked yet

        assert emits(spout.fail(ids[1])) == []   # not re-emitted by the fail itself: on the next call
        replay = spout.next()
        assert [(m["tuple"], m["id"]) for m in emits(replay)] == [(["rain", 1.0], ids[1])]
        assert spout.fail("unknown-id") == []  # a fail for an unknown id is ignored

        spout.ack(ids[0])
        spout.ack(ids[1])
        assert not done.exists()  # one tuple still pending
        spout.ack(ids[2])
        marker = json.loads(done.read_text())
        assert (marker["records"], marker["tuples"], marker["malformed"], marker["replays"]) == (3, 3, 1, 1)
        assert any("feed exhausted" in text for text in spout.logs)
        assert emits(spout.next()) == []


def test_parallel_spout_tasks_split_the_feed_and_share_one_marker(trends_src, tmp_path):
    feed = write_feed(tmp_path / "feed.jsonl", [tweet([f"t{i}"], 1000 + i, i) for i in range(7)])
    done = Path(str(tmp_path / "sink.jsonl") + ".feed-done")
    seen = []
    for task in (1, 2):
        with component(trends_src, "spouts.TweetSpout", tmp_path, "tweets", task, tasks=TWO_SPOUT_TASKS,
                       feed=str(feed)) as spout:
            sent = []
            for _ in range(3):
                sent += emits(spout.next())
            seen += [m["tuple"][0] for m in sent]
            for message in sent:
                spout.ack(message["id"])
            # The marker waits for both tasks of the component.
            assert done.exists() == (task == 2)
    assert sorted(seen) == sorted(f"t{i}" for i in range(7))
    assert json.loads(done.read_text())["tuples"] == 7


def test_spout_fixed_rate_paces_emits(trends_src, tmp_path):
    feed = write_feed(tmp_path / "feed.jsonl", [tweet([f"t{i}"], 1000 + i, i) for i in range(200)])
    import time
    with component(trends_src, "spouts.TweetSpout", tmp_path, "tweets", 1,
                   feed=str(feed), replay_rate=40) as spout:
        sent, start = 0, time.monotonic()
        while time.monotonic() - start < 0.5:
            sent += len(emits(spout.next()))
        # 40 tuples/s for half a second: about 20, far below the 200 available
        assert 10 <= sent <= 30


# -- the whole pipeline over the protocol ------------------------------------------------

def field_task(value: str, tasks: list[int]) -> int:
    return tasks[zlib.crc32(value.encode()) % len(tasks)]


def test_pipeline_final_ranking_equals_direct_count(trends_src, tmp_path):
    """Spout → 2 counters → 2 rankers → total, routed like fields/global groupings."""
    feed = trends.shipped_feed()
    sink = tmp_path / "sink.jsonl"
    options = {"feed": str(feed), "top_k": 10}
    spout = component(trends_src, "spouts.TweetSpout", tmp_path, "tweets", 1, **options)
    counters = {t: component(trends_src, "bolts.CountBolt", tmp_path, "count", t, **options) for t in (3, 4)}
    rankers = {t: component(trends_src, "bolts.RankBolt", tmp_path, "rank", t, **options) for t in (5, 6)}
    total = component(trends_src, "bolts.TotalBolt", tmp_path, "total", 7, **options)
    try:
        sent = spout.drain()
        count_in = {3: [], 4: []}
        for message in sent:
            count_in[field_task(message["tuple"][0], [3, 4])].append(
                {"values": message["tuple"], "id": message["id"], "comp": "tweets", "task": 1})
        for task, counter in counters.items():
            assert counter.process_batch(count_in[task]) == []  # counts go out on ticks only
        spout.ack_all([m["id"] for m in sent])
        assert Path(str(sink) + ".feed-done").exists()
        rank_in = {5: [], 6: []}
        for task, counter in counters.items():
            for message in emits(counter.tick()):
                rank_in[field_task(message["tuple"][0], [5, 6])].append(
                    {"values": message["tuple"], "comp": "count", "task": task})
        for task, ranker in rankers.items():
            ranker.process_batch(rank_in[task])
            for message in emits(ranker.tick()):
                total.process(message["tuple"], tup_id=f"r{task}", comp="rank", task=task)
        total.tick()
        last = json.loads(sink.read_text().splitlines()[-1])
        assert last["rankings"] == trends.expected_top_k(feed, 10)
        assert last["partitions"] == 2
    finally:
        for proc in [spout, total, *counters.values(), *rankers.values()]:
            proc.close()


# -- oracle ------------------------------------------------------------------------------

def test_expected_top_k_counts_tweets_per_topic_with_ties_by_name(tmp_path):
    feed = write_feed(tmp_path / "feed.jsonl", [
        tweet(["b", "B"], 1), tweet(["a"], 2), tweet(["c", "a"], 3), tweet(["b"], 4), "garbage", tweet(["d"], 5)])
    assert trends.expected_top_k(feed, 3) == [["a", 2], ["b", 2], ["c", 1]]
    # window (3.5 ms, 5 ms]: the tweets at 4 and 5 ms
    assert trends.expected_top_k(feed, 3, window_s=0.0015) == [["b", 1], ["d", 1]]


def test_top_k_of_merged_partition_rankings_is_the_global_top_k():
    import random
    rng = random.Random(3)
    counts = {f"t{i}": rng.randint(1, 6) for i in range(60)}
    partitions = [{}, {}, {}]
    for topic, count in counts.items():
        partitions[zlib.crc32(topic.encode()) % 3][topic] = count
    from trends.ranking import merge_rankings
    assert merge_rankings([top_k(p, 7) for p in partitions], 7) == top_k(counts, 7)
