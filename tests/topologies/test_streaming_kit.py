"""The streaming kit's pure parts: configuration, feeds, pacing, ticks, watermarks."""
from __future__ import annotations

import gzip
import json

import pytest

from storm_planner.streaming import ConfError, ConfReader, EmitTimer, ReplayPacer, iter_feed_records, tick_config
from storm_planner.streaming.feedio import FeedStats, feed_files
from storm_planner.streaming.spout import task_split, write_done_marker
from storm_planner.streaming.watermarks import END, WatermarkTracker, upstream_tasks


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_conf_reader_coerces_submit_strings_and_names_bad_keys():
    conf = ConfReader({"t.k": "5", "t.rate": "2.5", "t.on": "yes", "t.path": "/abs/x", "t.rel": "x",
                       "t.bad": "five"}, "t")
    assert conf.int("k", 1) == 5 and conf.float("rate", 0) == 2.5 and conf.bool("on", False) is True
    assert conf.int("missing", 7) == 7 and conf.path("path") == "/abs/x"
    with pytest.raises(ConfError, match="t.bad='five': expected an integer"):
        conf.int("bad", 1)
    with pytest.raises(ConfError, match="absolute path"):
        conf.path("rel")
    with pytest.raises(ConfError, match="t.sink is required"):
        conf.required_path("sink")
    with pytest.raises(ConfError, match="at least 1"):
        ConfReader({"t.k": 0}, "t").int("k", 1, minimum=1)


def test_feed_directories_are_read_in_part_order_and_bad_lines_counted(tmp_path):
    feed = tmp_path / "feed"
    feed.mkdir()
    with gzip.open(feed / "part-00001.jsonl.gz", "wt") as handle:
        handle.write('{"n": 3}\n[1, 2]\n{"n": 4}\n')
    (feed / "part-00000.jsonl").write_text('{"n": 1}\n\n{"n": 2}\nnot json\n')
    (feed / "_feed.json").write_text("{}")
    assert [p.name for p in feed_files(feed)] == ["part-00000.jsonl", "part-00001.jsonl.gz"]
    stats = FeedStats()
    assert [r["n"] for r in iter_feed_records(feed, stats)] == [1, 2, 3, 4]
    assert (stats.records, stats.malformed) == (4, 2)
    # stride counts lines, good or bad: lines 1, 3, 5 are {"n": 2}, {"n": 3}, {"n": 4}
    assert [r["n"] for r in iter_feed_records(feed, stride=2, offset=1)] == [2, 3, 4]
    with pytest.raises(FileNotFoundError):
        feed_files(tmp_path / "missing")


def test_pacer_modes():
    clock = FakeClock()
    asap = ReplayPacer(clock=clock)
    assert asap.wait_for(5.0) == 0 and asap.mode == "as fast as possible"
    rated = ReplayPacer(rate=10, clock=clock)
    assert rated.wait_for(None) == 0
    rated.emitted(3)
    assert rated.wait_for(None) == pytest.approx(0.3)  # three tuples used three 0.1 s slots
    clock.now += 0.3
    assert rated.wait_for(None) == pytest.approx(0.0)
    timed = ReplayPacer(speed=60, clock=clock)  # a minute of event time per second
    assert timed.wait_for(1000.0) == 0
    assert timed.wait_for(1120.0) == pytest.approx(2.0)
    clock.now += 2.5
    assert timed.wait_for(1120.0) < 0
    with pytest.raises(ValueError):
        ReplayPacer(rate=-1)


def test_emit_timer_and_tick_config():
    clock = FakeClock()
    timer = EmitTimer(2.0, clock=clock)
    assert timer.due()
    clock.now += 1.0
    assert not timer.due()
    clock.now += 0.98  # a tick a hair early still counts
    assert timer.due()
    assert tick_config(1) == {"topology.tick.tuple.freq.secs": 1}
    with pytest.raises(ValueError):
        tick_config(0)


def test_watermark_tracker_takes_the_minimum_over_all_upstream_tasks():
    context = {"task->component": {"1": "a", "2": "a", "3": "b"}}
    assert upstream_tasks(context, ["a"]) == [1, 2]
    tracker = WatermarkTracker([1, 2])
    assert tracker.update(1, 10.0) is None  # task 2 has said nothing yet
    assert tracker.update(2, 5.0) == 5.0
    assert tracker.update(2, 4.0) is None  # never goes back
    assert tracker.update(2, END) == 10.0
    assert tracker.update(1, END) == END and tracker.finished
    with pytest.raises(KeyError):
        tracker.update(3, 1.0)


def test_task_split_and_done_marker(tmp_path):
    context = {"taskid": 7, "componentid": "s", "task->component": {"5": "s", "7": "s", "9": "x"}}
    assert task_split(context) == (1, 2)
    sink = str(tmp_path / "out.jsonl")
    summary = {"component": "s", "task": 5, "records": 2, "tuples": 3, "malformed": 0, "replays": 1, "given_up": 0}
    assert not write_done_marker(sink, summary, 2, run_id="run-1")
    assert write_done_marker(sink, {**summary, "task": 7}, 2, run_id="run-1")
    done = json.loads((tmp_path / "out.jsonl.feed-done").read_text())
    assert (done["records"], done["tuples"], done["replays"], done["run"]) == (4, 6, 2, "run-1")
    # Another run's parts do not count toward this run.
    assert not write_done_marker(sink, summary, 2, run_id="run-2")
