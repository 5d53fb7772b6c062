"""A replay spout that resumes after a restart (``worldcup.checkpoint_dir``): the committed records are
not emitted again, the rest are, under the same message ids, and the time logs of two incarnations merge
by id. Driven as tests/topologies/test_spout_times.py drives one: in this process, its emits captured;
a restart is a new instance with the same conf and task."""
from __future__ import annotations

import io
import json
import logging
import math
import os
from pathlib import Path

import pytest

pytest.importorskip("streamparse")

from storm_planner.streaming.checkpoint import CHECKPOINT_SUFFIX, MAX_CHECKPOINT_BYTES  # noqa: E402
from storm_planner.streaming.spout import DONE_SUFFIX  # noqa: E402
from storm_planner.streaming.timelog import STABLE_HEADER, TimeLog, read_times  # noqa: E402
from storm_planner.streaming.watermarks import WatermarkTracker  # noqa: E402

RUN = "e2e-topk-link-1-1790000000"
CONTEXT = {"taskid": 3, "componentid": "requests", "task->component": {"3": "requests"}}


def request(i: int) -> str:
    return json.dumps({"timestamp": 894000000 + i, "object_id": i, "size": 100 + i, "url": f"/english/a_{i}.html"})


def conf(tmp_path: Path, **more) -> dict:
    feed = tmp_path / "requests.jsonl"
    if not feed.exists():
        feed.write_text("\n".join(request(i) for i in range(10)) + "\n")
    return {"worldcup.feed": str(feed), "worldcup.sink": str(tmp_path / "sink.jsonl"),
            "worldcup.times_dir": str(tmp_path / "times"), "worldcup.checkpoint_dir": str(tmp_path / "checkpoints"),
            "worldcup.replay_batch": 4, "storm.id": RUN, **more}


def start(tmp_path: Path, watermarks: bool = False, **more):
    """One incarnation of task 3: its emits in ``sent`` (message ids, None for a watermark), the records it
    turned into tuples in ``turned`` (object ids), watermarks in ``marks``."""
    from worldcup.spouts import RequestSpout

    cls = type("WatermarkedRequestSpout", (RequestSpout,), {"watermark_stream": "watermark"}) if watermarks \
        else RequestSpout
    spout = cls(input_stream=io.BytesIO(), output_stream=io.BytesIO())
    spout.logger = logging.getLogger("test-spout")
    spout.component_name = "requests"
    spout.sent, spout.turned, spout.marks = [], [], []

    def emit(values, tup_id=None, stream=None):
        if stream == "watermark":
            spout.marks.append(values[0])
            spout.sent.append(None)
        else:
            spout.sent.append(tup_id)

    def tuples_for(record, original=spout.tuples_for):
        spout.turned.append(record["object_id"])
        return original(record)

    spout.emit = emit
    spout.tuples_for = tuples_for
    spout.initialize(conf(tmp_path, **more), CONTEXT)
    return spout


def checkpoint_file(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints" / RUN / f"requests-0-of-1{CHECKPOINT_SUFFIX}"


def test_a_restarted_spout_skips_its_committed_records_and_reuses_their_ids(tmp_path, monkeypatch):
    first = start(tmp_path)
    first.next_tuple()
    assert first.sent == ["0:0:0", "0:1:0", "0:2:0", "0:3:0"]
    for acked in ("0:0:0", "0:1:0", "0:3:0"):      # record 2 still in flight
        first.ack(acked)
    assert first.committed() == 2
    first.close()                                   # what the periodic save and a clean exit do
    assert checkpoint_file(tmp_path).read_text().strip() == "2 4"   # committed 2, emitted 4

    own_pid = os.getpid()
    monkeypatch.setattr(os, "getpid", lambda: 424242)   # the restarted worker is another process
    second = start(tmp_path)
    assert second.resumed_from == 2
    second.next_tuple()
    # Records 0 and 1 are read past, never turned into tuples; 2 and 3 come again under their old ids.
    assert second.turned[:2] == [2, 3] and second.sent[:2] == ["0:2:0", "0:3:0"]
    while not second.exhausted:
        for tup_id in list(second.pending):
            second.ack(tup_id)
        second.next_tuple()
    for tup_id in list(second.pending):
        second.ack(tup_id)
    assert second.reported and 0 not in second.turned and 1 not in second.turned
    committed, emitted = map(int, checkpoint_file(tmp_path).read_text().split())
    assert committed == 10 and emitted >= 10                        # exhausted and all acked
    done = json.loads(Path(str(tmp_path / "sink.jsonl") + DONE_SUFFIX).read_text())
    (task,) = done["tasks"]
    assert (done["records"], task["resumed_from"], task["tuples"], task["acked"]) == (10, 2, 8, 8)

    # Two time logs, one per incarnation, both saying their ids are stable: merged by id, nothing lost.
    files = sorted((tmp_path / "times").iterdir())
    assert {f.name for f in files} == {f"requests-3-{own_pid}.times", "requests-3-424242.times"}
    assert all(f.read_text().splitlines()[0] == f"{STABLE_HEADER} requests-3" for f in files)
    times = read_times(tmp_path / "times")
    # Records 2 and 3 were emitted twice (3 had been acked, but 2 before it had not: 3 was not committed).
    assert (len(times.emitted), len(times.acked), times.never_acked(), times.replayed) == (10, 10, 0, 2)
    # Record 2's latency runs from its first emit (the first incarnation) to its ack (the second).
    first_emit = min(float(line.split()[2]) for f in files for line in f.read_text().splitlines()
                     if line.startswith("e 0:2:0 "))
    assert times.emitted["@requests-3/0:2:0"] == first_emit


def test_a_worker_killed_after_a_checkpoint_leaves_every_committed_records_ack_in_its_time_log(tmp_path):
    """The successor never emits a committed record again, so the only ack it will ever have is the one its
    predecessor logged: the log is on disk before the checkpoint that commits the record."""
    first = start(tmp_path)
    first.next_tuple()                                      # records 0..3
    first.times.flush()                                     # a periodic flush: their emits are on disk
    for tup_id in list(first.pending):
        first.ack(tup_id)
    first.checkpoint._saved_at -= 2                         # the periodic save is due, the log's flush is not
    first.next_tuple()                                      # saves committed 4; then killed by a signal
    assert checkpoint_file(tmp_path).read_text().split()[0] == "4"
    second = start(tmp_path)
    while not second.exhausted:
        second.next_tuple()
        for tup_id in list(second.pending):
            second.ack(tup_id)
    second.close()
    assert 0 not in second.turned                           # record 0 was committed: never emitted again
    times = read_times(tmp_path / "times")
    assert (len(times.emitted), times.never_acked()) == (10, 0)


def test_a_spout_restarted_after_the_stop_re_emits_what_its_predecessor_had_in_flight_then_stops(tmp_path):
    """The stop file says: no new record. A predecessor's unacked records are not new; without their
    re-emit they would never be acked (lost), however long the drain."""
    (tmp_path / "requests.jsonl").write_text("\n".join(request(i) for i in range(30)) + "\n")
    stop = tmp_path / "stop"
    first = start(tmp_path, **{"worldcup.stop_file": str(stop)})
    first.next_tuple()
    first.next_tuple()                                  # records 0..7 emitted
    for acked in ("0:0:0", "0:1:0", "0:5:0"):
        first.ack(acked)
    stop.touch()
    # Killed by a signal: no save at exit. The file holds what the emits reserved ahead of themselves.
    assert checkpoint_file(tmp_path).read_text().strip() == "0 12"
    second = start(tmp_path, **{"worldcup.stop_file": str(stop)})
    for _ in range(6):
        second.next_tuple()
    # Records 0..7 come again under their ids (at least once: 0, 1 and 5 had been acked, but the last save
    # came before their acks), then 8..11, which the predecessor had reserved; 12 on are new: not emitted.
    assert second.sent == [f"0:{r}:0" for r in range(12)] and not second.exhausted
    for tup_id in list(second.pending):
        second.ack(tup_id)
    second.close()
    assert checkpoint_file(tmp_path).read_text().strip() == "12 12"
    third = start(tmp_path, **{"worldcup.stop_file": str(stop)})
    third.next_tuple()
    assert third.sent == []                             # nothing was in flight: the stop holds


def resumed_after_the_stop(tmp_path: Path, checkpoint: str):
    """An incarnation of task 3 started with ``checkpoint`` on file and the stop file already set."""
    path = checkpoint_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(checkpoint)
    stop = tmp_path / "stop"
    stop.touch()
    return start(tmp_path, **{"worldcup.stop_file": str(stop)})


def test_a_task_resumed_after_the_stop_with_its_share_done_reports_exhausted(tmp_path):
    """The predecessor emitted the whole share: the successor re-emits what was not acked and, with no
    record left, is exhausted and writes its part (the stop does not keep it from the end)."""
    spout = resumed_after_the_stop(tmp_path, "8 10\n")
    for _ in range(4):
        spout.next_tuple()
    assert spout.sent == ["0:8:0", "0:9:0"] and spout.exhausted
    for tup_id in list(spout.pending):
        spout.ack(tup_id)
    assert spout.reported


def test_a_checkpoint_of_one_number_resumes_with_nothing_in_flight(tmp_path):
    """The format before the emitted record number: ``C`` alone (E = C)."""
    spout = resumed_after_the_stop(tmp_path, "3\n")
    spout.next_tuple()
    spout.next_tuple()
    assert (spout.resumed_from, spout.emitted_before, spout.sent) == (3, 3, [])


def test_a_resumed_spout_re_emits_its_watermark_from_the_first_record_it_emits(tmp_path):
    first = start(tmp_path, watermarks=True)
    first.next_tuple()
    assert first.marks == [894000000 + i for i in range(4)]
    first.ack("0:0:0")
    first.close()
    second = start(tmp_path, watermarks=True)
    second.next_tuple()
    # The watermark starts again at record 1, before its tuple; a consumer holding 894000003 ignores it.
    assert second.marks[0] == 894000001 and second.sent[:2] == [None, "0:1:0"]
    tracker = WatermarkTracker([3])
    assert tracker.update(3, first.marks[-1]) == 894000003
    assert tracker.update(3, second.marks[0]) is None and tracker.current == 894000003


def test_the_checkpoint_is_written_at_most_once_a_second_and_only_when_it_advanced(tmp_path):
    def on_file() -> str:
        return checkpoint_file(tmp_path).read_text().strip()

    spout = start(tmp_path)
    spout.next_tuple()                                      # records 0..3, a batch reserved before record 0
    assert on_file() == "0 4"
    spout.ack("0:0:0")
    spout.next_tuple()                                      # record 4 is past it: twice as many reserved,
    assert on_file() == "1 12"                              # the last reservation lasted under two seconds
    spout.next_tuple()                                      # records 8, 9 inside it; the feed is exhausted
    assert spout.exhausted and on_file() == "1 12"
    checkpoint_file(tmp_path).write_text("1 12 (not rewritten)\n")
    spout.checkpoint._saved_at -= 2
    spout.next_tuple()                                      # neither advanced: nothing written
    assert on_file() == "1 12 (not rewritten)"
    spout.ack("0:1:0")
    spout.next_tuple()                                      # committed 2, under a second since the last save
    assert on_file() == "1 12 (not rewritten)"
    spout.checkpoint._saved_at -= 2
    spout.next_tuple()
    assert on_file() == "2 12"


def test_a_tuple_given_up_counts_as_done(tmp_path):
    spout = start(tmp_path, **{"worldcup.max_replays": 1})
    spout.next_tuple()
    spout.fail("0:0:0")                 # replayed once
    spout.fail("0:0:0")                 # given up
    assert spout.given_up == 1 and spout.committed() == 1


def test_one_record_held_open_long_keeps_the_commit_there_in_bounded_memory(tmp_path):
    (tmp_path / "requests.jsonl").write_text("\n".join(request(i) for i in range(3000)) + "\n")
    spout = start(tmp_path, **{"worldcup.replay_batch": 500})
    while not spout.exhausted:
        spout.next_tuple()
        for tup_id in [t for t in spout.pending if t != "0:7:0"]:
            spout.ack(tup_id)
        spout.committed()
    assert spout.committed() == 7 and len(spout._open_heap) <= 1 + 1024 + 4
    spout.ack("0:7:0")
    assert spout.committed() == 3000


@pytest.mark.parametrize("content, says", [
    (b"abc\n", "is not one or two non-negative integers"),
    (b"-3\n", "is not one or two non-negative integers"),
    (b"2.5\n", "is not one or two non-negative integers"),
    (b"", "is not one or two non-negative integers"),
    (b"\xff\xfe7\n", "is not one or two non-negative integers"),
    (b"2 3 4\n", "is not one or two non-negative integers"),
    (b"5 3\n", "its emitted record number is below its committed one"),
    (b"1" * (MAX_CHECKPOINT_BYTES + 1), f"larger than {MAX_CHECKPOINT_BYTES} bytes"),
    (None, "not a regular file"),       # a directory in its place
])
def test_an_unusable_checkpoint_is_ignored_with_a_warning_naming_it(tmp_path, caplog, content, says):
    path = checkpoint_file(tmp_path)
    path.parent.mkdir(parents=True)
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="test-spout"):
        spout = start(tmp_path)
    assert spout.resumed_from == 0
    spout.next_tuple()
    assert spout.sent[0] == "0:0:0"
    (warning,) = [r.getMessage() for r in caplog.records if "ignoring checkpoint" in r.getMessage()]
    assert str(path) in warning and says in warning


def test_a_fifo_in_the_checkpoints_place_does_not_block(tmp_path, caplog):
    path = checkpoint_file(tmp_path)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with caplog.at_level(logging.WARNING, logger="test-spout"):
        spout = start(tmp_path)
    assert spout.resumed_from == 0 and "not a regular file" in caplog.text


def test_a_checkpoint_past_the_end_of_the_share_leaves_nothing_to_emit(tmp_path, caplog):
    path = checkpoint_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("25\n")
    spout = start(tmp_path)
    with caplog.at_level(logging.WARNING, logger="test-spout"):
        spout.next_tuple()
        spout.next_tuple()
    assert spout.sent == [] and spout.exhausted and spout.reported
    assert "has only 10" in caplog.text


def test_each_run_and_task_split_has_its_own_checkpoint(tmp_path):
    """Another run (storm.id) of the same topology, or another split of the feed, starts from the beginning."""
    first = start(tmp_path)
    first.next_tuple()
    first.ack("0:0:0")
    first.close()
    rerun = start(tmp_path, **{"storm.id": "e2e-topk-link-2-1790000500"})
    assert rerun.resumed_from == 0


def test_without_a_checkpoint_dir_the_ids_start_over_and_the_log_says_nothing_of_stability(tmp_path):
    spout = start(tmp_path, **{"worldcup.checkpoint_dir": ""})
    spout.next_tuple()
    spout.ack("0:0:0")
    spout.close()
    assert spout.checkpoint is None and not (tmp_path / "checkpoints").exists()
    again = start(tmp_path, **{"worldcup.checkpoint_dir": ""})
    again.next_tuple()
    assert again.sent[0] == "0:0:0"
    (log,) = (tmp_path / "times").iterdir()
    assert not log.read_text().startswith("#")


# -- time logs across incarnations ---------------------------------------------------------------------

FIRST = ["e 0:0:0 10.0", "e 0:1:0 11.0", "a 0:0:0 12.0"]     # killed with 0:1:0 in flight
SECOND = ["e 0:1:0 20.0", "a 0:1:0 21.0", "e 0:2:0 22.0", "a 0:2:0 23.0"]


def write(path: Path, lines: list[str], header: str | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in ([header] if header else []) + lines))


def test_incarnations_whose_ids_are_stable_merge_by_id(tmp_path):
    # The later incarnation's file sorts first (its pid is lower): the earliest emit still counts.
    write(tmp_path / "requests-3-900.times", FIRST, f"{STABLE_HEADER} requests-3")
    write(tmp_path / "requests-3-100.times", SECOND, f"{STABLE_HEADER} requests-3")
    times = read_times(tmp_path)
    assert (len(times.emitted), len(times.acked), times.never_acked(), times.replayed) == (3, 3, 0, 1)
    assert sorted(times.latencies_s(0, 100)) == [1.0, 2.0, 10.0]    # 0:1:0: 11 -> 21 across the restart


def test_old_style_logs_are_not_merged(tmp_path):
    """Without the header, ids restart at 0 per incarnation: 0:1:0 of one file is not 0:1:0 of the other."""
    write(tmp_path / "requests-3-900.times", FIRST)
    write(tmp_path / "requests-3-100.times", SECOND)
    times = read_times(tmp_path)
    assert (len(times.emitted), len(times.acked), times.never_acked(), times.replayed) == (4, 3, 1, 0)


def test_only_files_naming_the_same_task_merge(tmp_path):
    write(tmp_path / "requests-3-900.times", FIRST, f"{STABLE_HEADER} requests-3")
    write(tmp_path / "requests-4-100.times", SECOND, f"{STABLE_HEADER} requests-4")   # another task
    write(tmp_path / "requests-3-50.times", SECOND)                                 # an old-style file
    write(tmp_path / "requests-3-60.times", ["# not a header"] + SECOND)             # not the header
    times = read_times(tmp_path)
    assert len(times.emitted) == 2 + 2 + 2 + 2 and times.replayed == 0 and times.never_acked() == 1


def test_a_stable_log_writes_its_header_once_and_first(tmp_path):
    path = tmp_path / "times" / "requests-3-1.times"
    log = TimeLog(str(path), stable_key="requests-3")
    log.record("e", "0:0:0")
    log.flush()
    again = TimeLog(str(path), stable_key="requests-3")   # the same file appended to (a pid reused)
    again.record("a", "0:0:0")
    again.flush()
    lines = path.read_text().splitlines()
    assert lines[0] == f"{STABLE_HEADER} requests-3" and len(lines) == 3 and lines[1].startswith("e 0:0:0 ")
    with pytest.raises(ValueError):
        TimeLog(str(path), stable_key="two words")


# -- over the real multilang protocol ------------------------------------------------------------------

def test_a_spout_process_that_storm_leaves_saves_its_progress_and_the_next_one_resumes(tmp_path):
    """Two worker processes one after the other, each a real ``streamparse_run`` of the trends spout with this
    checkout's kit on its PYTHONPATH (what ``bench e2e`` gives its workers). The first acks two of its
    tuples and Storm goes away (its stdin closes): it saves its progress on the way out, and the second
    emits from the third record on, under the ids the first gave them."""
    from multilang import MultilangComponent, emits, storm_context

    import storm_planner

    topology_src = Path(__file__).resolve().parents[2] / "topologies" / "trends" / "src"
    kit = Path(storm_planner.__file__).resolve().parents[1]
    feed = tmp_path / "tweets.jsonl"
    feed.write_text("".join(json.dumps({"id": i, "timestamp_ms": str(1000 * (i + 1)), "text": f"#t{i}",
                                        "entities": {"hashtags": [{"text": f"t{i}", "indices": [0, 1]}]}}) + "\n"
                            for i in range(6)))
    conf = {"storm.id": RUN, "trends.feed": str(feed), "trends.sink": str(tmp_path / "sink.jsonl"),
            "trends.checkpoint_dir": str(tmp_path / "checkpoints"), "trends.times_dir": str(tmp_path / "times"),
            "trends.replay_batch": 4}
    context = storm_context("tweets", 10, {10: "tweets"})
    with MultilangComponent("trends.spouts.TweetSpout", topology_src, conf, context, python_path=[kit]) as first:
        sent = emits(first.next())
        ids = [m["id"] for m in sent]
        assert [m["tuple"][0] for m in sent] == ["t0", "t1", "t2", "t3"]
        first.ack(ids[0])
        first.ack(ids[1])
        first.ack(ids[3])
    assert (tmp_path / "checkpoints" / RUN / f"tweets-0-of-1{CHECKPOINT_SUFFIX}").read_text().strip() == "2 4"
    with MultilangComponent("trends.spouts.TweetSpout", topology_src, conf, context, python_path=[kit]) as second:
        again = emits(second.next())
        assert [m["tuple"][0] for m in again] == ["t2", "t3", "t4", "t5"]
        assert [m["id"] for m in again[:2]] == ids[2:4]
        second.ack_all([m["id"] for m in again])
        assert any("resuming at record 2" in line for line in second.logs)
    times = read_times(tmp_path / "times")
    assert (len(times.emitted), times.never_acked(), times.replayed) == (6, 0, 2)


def test_a_log_line_cut_inside_its_time_is_not_taken_for_the_earliest_ack(tmp_path, monkeypatch):
    """A worker killed in the middle of a flush leaves "a 0:0:0 17": three fields, a number, not the time."""
    first = start(tmp_path)
    first.next_tuple()                                      # records 0..3
    first.times.flush()
    first.ack("0:0:0")
    with open(first.times.path, "a", encoding="utf-8") as out:
        out.write("".join(first.times._lines)[:len("a 0:0:0 17")])     # the write cut by the kill
    monkeypatch.setattr(os, "getpid", lambda: 424242)
    second = start(tmp_path)                                # nothing committed: record 0 comes again
    while not second.exhausted:
        second.next_tuple()
        for tup_id in list(second.pending):
            second.ack(tup_id)
    second.close()
    times = read_times(tmp_path / "times")
    assert times.never_acked() == 0 and min(times.latencies_s(0, math.inf)) >= 0


def test_the_next_incarnation_of_a_pid_starts_its_lines_after_a_cut_one(tmp_path):
    log = TimeLog(str(tmp_path / "t.times"))
    Path(log.path).write_text("e 0:0:0 1790000000.1000\na 0:0:0 17")   # cut
    log.record("a", "0:0:0")
    log.flush()
    times = read_times(tmp_path)
    assert "t/0:0:0" in times.acked and times.acked["t/0:0:0"] > 1790000000.1


def test_an_overlapping_incarnations_reservation_on_file_is_never_moved_back(tmp_path, monkeypatch):
    """Storm may start the task's new worker before the old one (on another supervisor) is killed: the old
    one reserves further while the new one runs, and the new one's save must not write a lower E over it."""
    stop = tmp_path / "stop"
    (tmp_path / "requests.jsonl").write_text("\n".join(request(i) for i in range(30)) + "\n")
    first = start(tmp_path, **{"worldcup.stop_file": str(stop)})
    first.next_tuple()                                      # records 0..3: "0 4"
    monkeypatch.setattr(os, "getpid", lambda: 424242)
    second = start(tmp_path, **{"worldcup.stop_file": str(stop)})    # loads (0, 4)
    first.next_tuple()
    first.next_tuple()                                      # the old one emits 4..11, reserving "0 12"
    second.next_tuple()
    second.ack("0:0:0")
    second.checkpoint._saved_at -= 2
    second.next_tuple()                                     # its periodic save
    assert checkpoint_file(tmp_path).read_text().split()[1] == "12"
    stop.touch()                                            # both killed
    monkeypatch.setattr(os, "getpid", lambda: 515151)
    third = start(tmp_path, **{"worldcup.stop_file": str(stop)})
    for _ in range(6):
        third.next_tuple()
    assert "0:11:0" in third.sent                           # the old one's last record in flight comes again
