"""Window documents -> TaskWindow -> executor loads and traffic (no ZooKeeper)."""
from __future__ import annotations

import json

import pytest
from metrics_docs import encode, window_doc

from storm_planner.metrics.loads_and_traffic import executor_tasks, measure
from storm_planner.metrics.windows import CorruptWindow, parse_window

NOW = 1_700_000_000_000
EXECUTORS = [("[1-1]", "words"), ("[2-3]", "count"), ("[4-4]", "total")]


def parsed(doc) -> object:
    return parse_window(encode(doc), where="test")


def test_a_hook_document_parses_into_a_task_window():
    w = parsed(window_doc("t-1", "count", 2, seq=4, end_ms=NOW, threads=((7, 120.0),), subprocess_ms=80.0,
                          sent=((4, 50),), executed=100, speed="2.0", state_mb=3.5))
    assert (w.topology, w.component, w.task, w.seq) == ("t-1", "count", 2, 4)
    assert w.duration_ms == 10_000 and w.cpu_ms == pytest.approx(200.0)
    assert w.sent[0].task == 4 and w.sent[0].tuples == 50 and w.sent[0].total == 200
    assert w.meta == {"speed": "2.0"} and w.state_mb == 3.5 and w.missing == ()


@pytest.mark.parametrize("data, reason", [
    (b"{not json", "not JSON"),
    (b"", "empty znode"),
    (b"[1, 2]", "not a JSON object"),
    (json.dumps({"version": 2}).encode(), "format version 2"),
    (json.dumps({"version": 1, "topology": "t", "component": "c", "task": 1}).encode(), "no 'window'"),
    (json.dumps({**window_doc("t", "c", 1), "window": {"start_ms": 10, "end_ms": 5}}).encode(), r"ends \(5\) before"),
    (json.dumps({**window_doc("t", "c", 1), "task": "x"}).encode(), "bad field"),
    (json.dumps({**window_doc("t", "c", 1), "cpu": {"threads": [{"id": 1, "ms": -3}]}}).encode(), "negative"),
])
def test_corrupt_documents_are_rejected_with_the_reason(data, reason):
    with pytest.raises(CorruptWindow, match=reason):
        parse_window(data, where="znode /x")


def test_a_partial_document_is_kept_and_says_what_it_lacks():
    doc = window_doc("t", "c", 1)
    del doc["cpu"], doc["sent"]
    w = parse_window(encode(doc))
    assert set(w.missing) == {"cpu", "sent"} and not w.cpu_known and w.sent == ()


def test_the_wait_strategies_are_parsed_and_a_spinning_default_is_noted():
    def doc(task, bolt_wait):
        d = window_doc("t", "count", task, end_ms=NOW, threads=((20 + task, 100.0),), executed=10)
        d["worker"]["waits"] = {"bolt": bolt_wait, "spout": "WaitStrategyPark", "other": ["ignored"]}
        return d

    parked = _windows(doc(2, "WaitStrategyPark"))
    assert parked[2][0].waits == {"bolt": "WaitStrategyPark", "spout": "WaitStrategyPark"}
    spinning = _windows(doc(2, "WaitStrategyPark"), doc(3, "WaitStrategyProgressive"))
    quiet = measure("t", parked, EXECUTORS, now_ms=NOW + 1000).notes
    loud = measure("t", spinning, EXECUTORS, now_ms=NOW + 1000).notes
    assert not any("spin" in n for n in quiet)
    assert any("idle bolts spin" in n and "WaitStrategyProgressive" in n for n in loud)
    for bad in ({"bolt": 3}, {"bolt": "W" * 201}, ["WaitStrategyPark"]):
        d = window_doc("t", "count", 2)
        d["worker"]["waits"] = bad
        with pytest.raises(CorruptWindow, match="worker.waits"):
            parsed(d)


def test_executor_ids_name_their_tasks():
    assert list(executor_tasks("[2-4]")) == [2, 3, 4]
    with pytest.raises(ValueError):
        executor_tasks("count")


def _windows(*docs):
    by_task = {}
    for doc in docs:
        w = parsed(doc)
        by_task.setdefault(w.task, []).append(w)
    return by_task


def test_loads_are_cpu_percent_times_speed_and_shared_threads_count_once():
    windows = _windows(
        # spout on the slow node: 100 ms thread + 400 ms subprocess over 10 s = 5 %
        window_doc("t", "words", 1, end_ms=NOW, node="sup-slow", pid=1, threads=((11, 100.0),),
                   subprocess_ms=400.0, sent=((2, 300), (3, 100)), emitted=400),
        # executor [2-3]: two tasks share thread 21 (listed by both, counted once): 1000 ms = 10 %
        window_doc("t", "count", 2, end_ms=NOW, node="sup-fast", pid=2, threads=((21, 1000.0),),
                   sent=((4, 30),), executed=300),
        window_doc("t", "count", 3, end_ms=NOW, node="sup-fast", pid=2, threads=((21, 1000.0),),
                   sent=((4, 10),), executed=100),
    )
    m = measure("t", windows, EXECUTORS, node_speed={"sup-fast": 2.0, "sup-slow": 1.0}, now_ms=NOW + 1000)
    assert m.executors["[1-1]"].cpu_percent == pytest.approx(5.0)
    assert m.executors["[1-1]"].load == pytest.approx(5.0)
    assert m.executors["[2-3]"].cpu_percent == pytest.approx(10.0)
    assert m.executors["[2-3]"].load == pytest.approx(20.0), "a percent of the 2x node is worth two"
    assert m.executors["[2-3]"].executed_per_s == pytest.approx(40.0)
    assert m.traffic == {("[1-1]", "[2-3]"): pytest.approx(40.0), ("[2-3]", "[4-4]"): pytest.approx(4.0)}
    assert m.component_traffic == {("words", "count"): pytest.approx(40.0), ("count", "total"): pytest.approx(4.0)}
    # [4-4] published nothing: estimated, and the notes say so.
    assert not m.executors["[4-4]"].measured
    assert m.measured_count == 2
    assert any("no usable window for [4-4]" in n for n in m.notes)
    assert any("measured for 2 of 3 executors" in n for n in m.notes)


def test_a_workers_own_cpu_is_spread_over_its_executors_by_the_tuples_they_handled():
    # Worker pid 2 (executors [2-3] and [4-4]) used 3,000 ms of CPU in the window; its executor threads
    # 21 (listed by both tasks of [2-3]) and 41 account 1,000 + 500: the other 1,500 ms are the worker's.
    windows = _windows(
        window_doc("t", "words", 1, end_ms=NOW, pid=1, threads=((11, 100.0),), subprocess_ms=400.0,
                   emitted=400),  # a worker that reports no process CPU: threads and subprocess only
        window_doc("t", "count", 2, end_ms=NOW, pid=2, threads=((21, 1000.0),), executed=300, emitted=0,
                   process_ms=3000.0),
        window_doc("t", "count", 3, end_ms=NOW, pid=2, threads=((21, 1000.0),), executed=100, emitted=100,
                   process_ms=3000.0),
        window_doc("t", "total", 4, end_ms=NOW, pid=2, threads=((41, 500.0),), executed=100,
                   process_ms=3000.0),
    )
    m = measure("t", windows, EXECUTORS, now_ms=NOW + 1000)
    count, total, words = m.executors["[2-3]"], m.executors["[4-4]"], m.executors["[1-1]"]
    # [2-3] handled 500 tuples, [4-4] 100: 5/6 and 1/6 of the 1,500 ms.
    assert count.worker_cpu_percent == pytest.approx(12.5)
    assert total.worker_cpu_percent == pytest.approx(2.5)
    assert count.cpu_percent == pytest.approx(10.0 + 12.5)
    assert total.cpu_percent == pytest.approx(5.0 + 2.5)
    # The worker's executors now add up to the whole process.
    assert (count.cpu_percent + total.cpu_percent) * 10_000 / 100 == pytest.approx(3000.0)
    assert words.worker_cpu_percent == 0.0 and words.cpu_percent == pytest.approx(5.0)
    assert any("workers' own CPU" in n and "15.0 of" in n for n in m.notes)

    papers = measure("t", windows, EXECUTORS, now_ms=NOW + 1000, worker_cpu=False)
    assert papers.executors["[2-3]"].cpu_percent == pytest.approx(10.0)
    assert papers.executors["[2-3]"].worker_cpu_percent == 0.0
    assert not any("workers' own CPU" in n for n in papers.notes)


def test_worker_cpu_is_never_negative_and_idle_workers_share_it_evenly():
    windows = _windows(
        # threads sampled a moment after the process: they exceed it; nothing is the worker's
        window_doc("t", "count", 2, end_ms=NOW, pid=2, threads=((21, 1000.0),), process_ms=900.0),
        window_doc("t", "count", 3, end_ms=NOW, pid=2, threads=((21, 1000.0),), process_ms=900.0),
        # no tuples at all in worker 3: its 600 ms beyond the threads go half and half
        window_doc("t", "words", 1, end_ms=NOW, pid=3, threads=((11, 100.0),), process_ms=800.0),
        window_doc("t", "total", 4, end_ms=NOW, pid=3, threads=((41, 100.0),), process_ms=800.0),
    )
    m = measure("t", windows, EXECUTORS, now_ms=NOW + 1000)
    assert m.executors["[2-3]"].worker_cpu_percent == 0.0
    assert m.executors["[2-3]"].cpu_percent == pytest.approx(10.0)
    assert m.executors["[1-1]"].worker_cpu_percent == pytest.approx(3.0)
    assert m.executors["[4-4]"].worker_cpu_percent == pytest.approx(3.0)


def test_process_cpu_is_parsed_when_present_and_refused_when_negative():
    assert parsed(window_doc("t", "count", 2, process_ms=250.0)).process_ms == 250.0
    assert parsed(window_doc("t", "count", 2)).process_ms is None
    with pytest.raises(CorruptWindow, match="cpu.process_ms: -1.0 is negative"):
        parsed(window_doc("t", "count", 2, process_ms=-1.0))


def test_the_last_windows_are_averaged_and_bytes_can_be_the_unit():
    windows = _windows(
        window_doc("t", "words", 1, seq=1, end_ms=NOW - 20_000, threads=((1, 100.0),), sent=((2, 100),)),
        window_doc("t", "words", 1, seq=2, end_ms=NOW - 10_000, threads=((1, 300.0),), sent=((2, 300),)),
        window_doc("t", "words", 1, seq=3, end_ms=NOW, threads=((1, 500.0),), sent=((2, 500),)),
    )
    m = measure("t", windows, EXECUTORS, last=2, now_ms=NOW, unit="bytes")
    assert m.executors["[1-1]"].cpu_percent == pytest.approx(4.0)       # (300 + 500) / 20 s
    assert m.traffic[("[1-1]", "[2-3]")] == pytest.approx(400.0)         # 10 bytes x 800 / 20 s
    assert m.unit == "bytes/s" and m.executors["[1-1]"].windows == 2


def test_stale_windows_are_skipped_unless_they_are_all_there_is():
    windows = _windows(window_doc("t", "words", 1, end_ms=NOW - 300_000, sent=((2, 10),)),
                       window_doc("t", "count", 2, end_ms=NOW, sent=((4, 10),)))
    fresh_only = measure("t", windows, EXECUTORS, now_ms=NOW)
    assert not fresh_only.executors["[1-1]"].measured
    assert any("skipped stale windows of tasks 1" in n for n in fresh_only.notes)
    cached = measure("t", windows, EXECUTORS, now_ms=NOW, use_stale=True)
    assert cached.executors["[1-1]"].measured
    assert any("used stale windows of tasks 1" in n for n in cached.notes)


def test_windows_of_tasks_the_topology_no_longer_has_are_ignored():
    windows = _windows(window_doc("t", "words", 9, end_ms=NOW))
    m = measure("t", windows, EXECUTORS, now_ms=NOW)
    assert not m.any_measured
    assert any("ignored windows of tasks 9" in n for n in m.notes)
