"""The replay spout's time log and stop file (``worldcup.times_dir``, ``worldcup.stop_file``): what the
end-to-end benchmark reads complete latencies and lost tuples from. The spout runs in this process
(its code is this checkout's), its emits captured."""
from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamparse")

from storm_planner.streaming.timelog import read_times  # noqa: E402


def request(i: int) -> str:
    return json.dumps({"timestamp": 894000000 + i, "object_id": i, "size": 100 + i, "url": f"/english/a_{i}.html"})


def make_spout(tmp_path):
    from worldcup.spouts import RequestSpout

    feed = tmp_path / "requests.jsonl"
    feed.write_text("\n".join(request(i) for i in range(6)) + "\n")
    spout = RequestSpout(input_stream=io.BytesIO(), output_stream=io.BytesIO())
    spout.logger = logging.getLogger("test-spout")
    spout.component_name = "requests"
    spout.sent = []
    spout.emit = lambda values, tup_id=None, stream=None: spout.sent.append(tup_id)
    conf = {"worldcup.feed": str(feed), "worldcup.sink": str(tmp_path / "sink.jsonl"),
            "worldcup.times_dir": str(tmp_path / "times"), "worldcup.stop_file": str(tmp_path / "stop"),
            "worldcup.replay_batch": 2}
    spout.initialize(conf, {"taskid": 3, "componentid": "requests", "task->component": {"3": "requests"}})
    return spout


@pytest.fixture
def spout(tmp_path):
    return make_spout(tmp_path)


INCARNATION = """
import sys
from pathlib import Path
sys.path[:0] = [sys.argv[2], sys.argv[3]]
from test_spout_times import make_spout
spout = make_spout(Path(sys.argv[1]))
spout.next_tuple()
spout.ack(spout.sent[0])
spout.times.flush()
"""


def test_a_spout_moved_to_another_worker_keeps_its_predecessors_times(tmp_path):
    """A re-plan that moves the spout starts a new process whose message ids start over ("0:0:0" again):
    both incarnations' tuples count, the first one's unacked tuple as lost, not as a replay."""
    here = Path(__file__).resolve().parent
    topology_src = here.parents[1] / "topologies" / "worldcup" / "src"
    for _ in range(2):   # the same task, two worker processes one after the other
        subprocess.run([sys.executable, "-c", INCARNATION, str(tmp_path), str(here), str(topology_src)],
                       check=True, timeout=60)
    times = read_times(tmp_path / "times")
    assert (len(times.emitted), len(times.acked), times.replayed) == (4, 2, 0)
    assert times.never_acked() == 2


def test_every_emit_ack_and_fail_is_logged_and_a_stop_file_ends_new_emits(spout, tmp_path):
    spout.next_tuple()
    assert len(spout.sent) == 2
    (tmp_path / "stop").write_text("")
    spout.stop._checked = 0.0   # look at the file now rather than a second later
    spout.next_tuple()
    assert len(spout.sent) == 2          # stopped: no new record
    first, second = spout.sent
    spout.fail(first)
    assert spout.sent[-1] == second      # not re-emitted by the fail itself: on the next call
    spout.next_tuple()
    assert spout.sent[-1] == first       # a failed tuple is still replayed after the stop
    spout.ack(first)
    spout.times.flush()
    times = read_times(tmp_path / "times")
    assert (len(times.emitted), len(times.acked), times.failed, times.replayed) == (2, 1, 1, 1)
    assert times.never_acked() == 1      # the second is still in flight
    [latency] = times.latencies_s(0, float("inf"))
    assert 0 <= latency < 60
    assert sorted(p.name for p in (tmp_path / "times").iterdir()) == [f"requests-3-{os.getpid()}.times"]


def test_without_the_options_nothing_is_written(tmp_path):
    from storm_planner.streaming.timelog import StopSignal, TimeLog

    log = TimeLog(None)
    log.record("e", "0:0:0")
    log.flush()
    assert not StopSignal(None).is_set()
    assert list(tmp_path.iterdir()) == []


def test_the_rate_file_sets_the_spouts_rate_while_it_runs(tmp_path):
    """``worldcup.replay_rate_file`` replaces ``replay_rate`` whenever the file changes (how ``bench e2e``
    steps a running topology's rate to profile it)."""
    import time

    from worldcup.spouts import RequestSpout

    feed = tmp_path / "requests.jsonl"
    feed.write_text("\n".join(request(i) for i in range(400)) + "\n")
    rate_file = tmp_path / "rate"
    rate_file.write_text("100")
    spout = RequestSpout(input_stream=io.BytesIO(), output_stream=io.BytesIO())
    spout.logger = logging.getLogger("test-spout")
    spout.component_name = "requests"
    spout.sent = []
    spout.emit = lambda values, tup_id=None, stream=None: spout.sent.append(tup_id)
    spout.initialize({"worldcup.feed": str(feed), "worldcup.sink": str(tmp_path / "sink.jsonl"),
                      "worldcup.replay_rate": 4, "worldcup.replay_rate_file": str(rate_file)},
                     {"taskid": 3, "componentid": "requests", "task->component": {"3": "requests"}})

    def emitted_in(seconds: float) -> int:
        before, start = len(spout.sent), time.monotonic()
        while time.monotonic() - start < seconds:
            spout.next_tuple()
        return len(spout.sent) - before

    assert 35 <= emitted_in(0.5) <= 65          # 100 tuples/s, not replay_rate's 4
    rate_file.write_text("20")
    time.sleep(0.6)                              # the file is looked at every 0.5 s
    assert 5 <= emitted_in(1.0) <= 30            # 20 tuples/s from the change on, no catching up


def test_a_spout_held_back_behind_its_schedule_shows_the_backlog_in_latency_from_the_due_time(tmp_path):
    """Coordinated omission: a spout Storm stops calling (``max.spout.pending`` full) emits late. Latency from
    the emit hides that wait; latency from the due time (the schedule's) counts it, and the lag says it."""
    spout = make_spout(tmp_path)
    spout.pacer.set_rate(20.0)          # one tuple due every 50 ms
    spout.next_tuple()                  # the first is due now
    assert len(spout.sent) == 1
    spout.ack(spout.sent[0])
    import time as clock
    clock.sleep(0.3)                    # held back: no next_tuple for 300 ms
    for _ in range(6):
        spout.next_tuple()              # catching up: the ones due meanwhile go out at once
    for tup_id in spout.sent[1:]:
        spout.ack(tup_id)
    spout.times.flush()
    times = read_times(tmp_path / "times")
    late = [m for m in times.emitted if times.lag_s(m) > 0.15]
    assert late, "tuples due during the hold were emitted late and their lag is logged"
    worst_from_due = max(times.acked[m] - times.due_of(m) for m in times.acked)
    worst_from_emit = max(times.acked[m] - times.emitted[m] for m in times.acked)
    assert worst_from_due >= 0.2 > worst_from_emit


def test_time_logs_without_due_times_still_read_and_a_cut_due_time_is_no_event(tmp_path):
    log = tmp_path / "requests-3-1.times"
    log.write_text("e 0:0:0 100.0000\ne 0:1:0 101.0000 100.5000\ne 0:2:0 102.0000 101\na 0:0:0 100.2000\n"
                   "a 0:1:0 101.2000\n")
    times = read_times(tmp_path)
    assert set(times.emitted) == {"requests-3-1/0:0:0", "requests-3-1/0:1:0"}   # the cut due time: no event
    assert times.due_of("requests-3-1/0:0:0") == 100.0 and times.lag_s("requests-3-1/0:0:0") == 0.0
    assert times.due_of("requests-3-1/0:1:0") == 100.5 and times.lag_s("requests-3-1/0:1:0") == pytest.approx(0.5)


def test_a_follower_reads_a_growing_log_as_read_times_reads_it_whole(tmp_path):
    """``TimesFollower``: each update parses only what was added; a line still without its newline waits,
    and two incarnations of a stable task merge by id as in one ``read_times``."""
    from storm_planner.streaming.timelog import TimesFollower

    first, second = tmp_path / "requests-3-10.times", tmp_path / "requests-3-11.times"
    first.write_text("# ids stable requests-3\ne 0:0:0 100.0000 99.9000\ne 0:1:0 100.1000 100.0000\na 0:0")
    follower = TimesFollower(tmp_path)
    times = follower.update()
    assert set(times.emitted) == {"@requests-3/0:0:0", "@requests-3/0:1:0"} and not times.acked
    with first.open("a") as handle:
        handle.write(":0 100.3000\nf 0:1:0 130.2000\n")
    second.write_text("# ids stable requests-3\ne 0:1:0 131.0000\na 0:1:0 131.1000\n")
    times = follower.update()
    whole = read_times(tmp_path)
    assert times.acked == whole.acked == {"@requests-3/0:0:0": 100.3, "@requests-3/0:1:0": 131.1}
    assert times.emitted == whole.emitted and times.due == whole.due and times.replayed == whole.replayed == 1
    assert times.failed == whole.failed == 1 and follower.update() is times and times.failed == 1


def test_failures_cost_their_bookkeeping_and_the_next_call_replays_them_oldest_first(spout, monkeypatch):
    """Storm fails timed-out tuples one by one on the spout's thread, taking no ack meanwhile: a fail only
    queues its tuple, and ``next`` re-emits a bounded batch of them, oldest first, before any new record;
    one given up meanwhile is not re-emitted."""
    import storm_planner.streaming.spout as spout_module

    monkeypatch.setattr(spout_module, "REPLAYS_PER_CALL", 2)
    spout.max_replays = 2
    spout.next_tuple()
    spout.next_tuple()
    sent = list(spout.sent)
    assert len(sent) == 4
    for tup_id in (sent[2], sent[0], sent[3]):
        spout.fail(tup_id)
    assert spout.sent == sent                            # nothing re-emitted yet
    spout.next_tuple()
    assert spout.sent[4:] == [sent[2], sent[0]]          # two per call, in the order they failed, no new one
    spout.fail(sent[2])                                  # its replay failed too: queued again
    spout.fail(sent[2])                                  # and again while queued: given up (max_replays 2)
    assert sent[2] not in spout.pending and spout.given_up == 1
    spout.next_tuple()
    assert spout.sent[6:] == [sent[3]]                   # the given-up one is not re-emitted
    spout.next_tuple()
    assert len(spout.sent) == 9 and not set(spout.sent[7:]) & set(sent)   # then new records again
    assert spout.total_replays == 4
