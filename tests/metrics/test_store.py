"""The metrics store against a real ZooKeeper server: reading, watching, corrupt and deleted znodes,
killed topologies, and an outage the store recovers from by itself."""
from __future__ import annotations

import threading
import time

import pytest
from metrics_docs import encode, window_doc

from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import MetricsStore
from storm_planner.service.transport.contract import planner_thrift as T

TOPOLOGY = "words-3-1700000000"


def until(condition, timeout_s: float = 10.0, message: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message}")


def write(kazoo, root: str, task: int, doc: dict, topology: str = TOPOLOGY) -> None:
    path = f"{root}/{topology}/{task}"
    if kazoo.exists(path):
        kazoo.set(path, encode(doc))
    else:
        kazoo.create(path, encode(doc), makepath=True)


def spec(topology: str = TOPOLOGY):
    executors = [T.Executor(id="[1-1]", component="words"), T.Executor(id="[2-2]", component="count")]
    return T.TopologySpec(id=topology, name="words", components=[], streams=[], executors=executors,
                          options={})


@pytest.fixture
def root(zk_paths):
    return zk_paths[0]


@pytest.fixture
def store(zookeeper, zk_paths):
    root, storm_root = zk_paths
    with MetricsStore(zookeeper.hosts, root, storm_root=storm_root, resync_s=2.0, timeout_s=2.0,
                      event_hold_s=1.0) as s:
        yield s


def test_windows_are_read_and_each_new_one_is_seen_through_its_watch(store, kazoo, root):
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1, sent=((2, 100),)))
    write(kazoo, root, 2, window_doc(TOPOLOGY, "count", 2, seq=1, received=((1, 100),)))
    until(lambda: len(store.view(TOPOLOGY).windows) == 2, message="two tasks")
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=2, sent=((2, 150),)))
    until(lambda: len(store.view(TOPOLOGY).windows[1]) == 2, timeout_s=1.5, message="the watch to fire")
    view = store.view(TOPOLOGY)
    assert [w.seq for w in view.windows[1]] == [1, 2]
    assert view.windows[1][-1].sent[0].tuples == 150 and view.windows[1][-1].version == 1
    assert view.connected and view.problems == ()
    assert store.topologies() == [TOPOLOGY]


def test_a_corrupt_znode_is_skipped_and_named_while_the_earlier_windows_stay(store, kazoo, root):
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1))
    until(lambda: store.view(TOPOLOGY).windows, message="a window")
    kazoo.set(f"{root}/{TOPOLOGY}/1", b"\x00garbage{")
    kazoo.create(f"{root}/{TOPOLOGY}/2", b'{"version": 99}')
    view = until(lambda: len(store.view(TOPOLOGY).problems) == 2 and store.view(TOPOLOGY), message="problems")
    assert "task 1: not JSON" in view.problems[0]
    assert "task 2: format version 99" in view.problems[1]
    assert [w.seq for w in view.windows[1]] == [1]
    notes = StoreMetricsSource(store).measure(spec(), []).notes
    assert any("skipped corrupt metrics znode, task 1: not JSON" in n for n in notes)
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=2))
    until(lambda: len(store.view(TOPOLOGY).problems) == 1, message="the repaired task to clear its problem")


def test_a_deleted_root_keeps_the_last_windows_and_says_so_until_workers_write_again(store, kazoo, root):
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1, sent=((2, 100),)))
    until(lambda: store.view(TOPOLOGY).windows, message="a window")
    kazoo.delete(root, recursive=True)
    view = until(lambda: store.view(TOPOLOGY).events and store.view(TOPOLOGY), message="an event")
    assert any("deleted" in e for e in view.events)
    assert view.windows[1][-1].seq == 1
    result = StoreMetricsSource(store).measure(spec(), [])
    assert result.executors, "the cached windows still measure the topology"
    assert any("does not exist in ZooKeeper" in n or "were deleted" in n for n in result.notes)
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=2))
    until(lambda: store.view(TOPOLOGY).windows[1][-1].seq == 2, message="the new window")
    assert store.view(TOPOLOGY).events, "the event stays in the notes a while after new windows"
    until(lambda: not store.view(TOPOLOGY).events, message="the event to expire")


def test_a_root_deleted_and_recreated_between_two_looks_is_noticed_from_the_creation_ids(zookeeper, zk_paths):
    from kazoo.client import KazooClient

    root, storm_root = zk_paths
    writer = KazooClient(hosts=zookeeper.hosts)
    writer.start(timeout=10)
    try:
        write(writer, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1))
        store = MetricsStore(zookeeper.hosts, root, storm_root=storm_root, resync_s=60.0)
        with store:
            until(lambda: store.view(TOPOLOGY).windows, message="a window")
            # Delete and re-create in one go, as a fast worker would.
            writer.delete(root, recursive=True)
            write(writer, root, 1, window_doc(TOPOLOGY, "words", 1, seq=2))
            until(lambda: store.view(TOPOLOGY).windows[1][-1].seq == 2, message="the re-created window")
            assert any("deleted" in e for e in store.view(TOPOLOGY).events), store.view(TOPOLOGY).events
    finally:
        writer.stop()
        writer.close()


def test_a_root_created_between_the_failed_listing_and_its_exists_watch_still_shows_the_next_topology(
        zookeeper, zk_paths):
    """The race that made the test above flaky, made certain: the listing finds no root, the root is
    created before the store's ``exists`` sets its watch, and a data watch never fires on a new child."""
    from kazoo.client import KazooClient

    root, storm_root = zk_paths
    writer = KazooClient(hosts=zookeeper.hosts)
    writer.start(timeout=10)
    raced = threading.Event()

    class RootAppearsDuringExists(KazooClient):
        def exists(self, path, watch=None):
            if path == root and not raced.is_set():
                writer.create(root, makepath=True)
                try:
                    return super().exists(path, watch=watch)
                finally:
                    raced.set()
            return super().exists(path, watch=watch)

    client = RootAppearsDuringExists(hosts=zookeeper.hosts, timeout=5)
    try:
        with MetricsStore(zookeeper.hosts, root, storm_root=storm_root, resync_s=60.0, client=client) as store:
            assert raced.wait(10), "the store never looked for its root"
            write(writer, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1))
            until(lambda: store.view(TOPOLOGY).windows, message="the first topology under the new root")
    finally:
        writer.stop()
        writer.close()


def test_metrics_of_a_topology_storm_no_longer_lists_are_deleted(store, kazoo, root):
    storms = store.storm_root + "/storms/"
    kazoo.create(storms + TOPOLOGY, b"", makepath=True)
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1))
    write(kazoo, root, 1, window_doc("gone-1-1", "words", 1), topology="gone-1-1")
    until(lambda: kazoo.exists(f"{root}/gone-1-1") is None, message="the killed topology's metrics to go")
    assert kazoo.exists(f"{root}/{TOPOLOGY}/1") is not None
    until(lambda: store.topologies() == [TOPOLOGY], message="the killed topology to be forgotten")
    kazoo.delete(storms + TOPOLOGY)
    until(lambda: kazoo.exists(f"{root}/{TOPOLOGY}") is None, message="a kill to be noticed")
    assert store.topologies() == []


def test_with_zookeeper_gone_the_last_metrics_are_used_and_it_recovers_by_itself(own_zookeeper):
    from kazoo.client import KazooClient

    zookeeper, root = own_zookeeper, "/storm-planner/metrics"
    kazoo = KazooClient(hosts=zookeeper.hosts)
    kazoo.start(timeout=15)
    write(kazoo, root, 1, window_doc(TOPOLOGY, "words", 1, seq=1, sent=((2, 100),)))
    write(kazoo, root, 2, window_doc(TOPOLOGY, "count", 2, seq=1))
    kazoo.stop()
    with MetricsStore(zookeeper.hosts, root, resync_s=1.0, timeout_s=2.0) as store:
        source = StoreMetricsSource(store)
        until(lambda: len(store.view(TOPOLOGY).windows) == 2, message="windows")
        zookeeper.stop()
        until(lambda: not store.connected, timeout_s=15, message="the store to notice the outage")
        result = source.measure(spec(), [])
        assert len(result.executors) == 2, "planning goes on with the cached windows"
        assert any("unreachable since" in n and "planning on the last metrics" in n for n in result.notes)
        unknown = source.measure(spec("other-1-1"), [])
        assert unknown.executors == () and any("no metrics cached" in n for n in unknown.notes)

        zookeeper.start()
        until(lambda: store.connected, timeout_s=30, message="the store to reconnect")
        writer = KazooClient(hosts=zookeeper.hosts)
        writer.start(timeout=15)
        try:
            write(writer, root, 1, window_doc(TOPOLOGY, "words", 1, seq=5))
        finally:
            writer.stop()
        until(lambda: store.view(TOPOLOGY).windows[1][-1].seq == 5, timeout_s=15, message="a window after recovery")
        assert not any("unreachable" in n for n in source.measure(spec(), []).notes)


def _bad_windows(topology: str) -> dict[int, bytes]:
    """Task -> a window that must be skipped, one of each kind a worker could write."""
    def doc(task: int, **changes) -> dict:
        base = window_doc(topology, "count", task)
        for path, value in changes.items():
            section, _, key = path.partition(".")
            if key:
                base[section] = {**base[section], key: value}
            else:
                base[section] = value
        return base

    def raw(task: int, field: str, literal: str, **changes) -> bytes:
        marker = "__replace_me__"
        text = encode(doc(task, **{field: marker}, **changes)).decode()
        return text.replace(f'"{marker}"', literal).encode()

    return {
        11: raw(11, "emitted.tuples", "9" * 5000),                         # a 5000-digit integer
        12: raw(12, "state_mb", "[" * 100_000 + "]" * 100_000),            # a 100,000-deep array
        13: raw(13, "emitted.tuples", "Infinity"),
        14: raw(14, "cpu.subprocess_ms", "1e999"),                         # infinite CPU
        15: raw(15, "executed.latency_ms_sum", "NaN"),
        16: encode(doc(16, **{"emitted.tuples": -5})),                     # a negative count
        17: raw(17, "window.period_s", "NaN"),
        18: encode(doc(18, **{"sent": [{"stream": "default", "to": 2, "tuples": "many"}]})),
        19: encode({**doc(19), "padding": "x" * 300_000}),                  # over the byte limit below
    }


def test_bad_windows_are_skipped_counted_and_named_and_every_good_window_arrives(zookeeper, kazoo, zk_paths):
    """One topology's bad windows (of every kind) cost neither its good windows nor another topology's."""
    from storm_planner.metrics.windows import WindowLimits

    root, storm_root = zk_paths
    bad_topology, good_topology = "a-bad-1-1700000000", "b-good-2-1700000000"
    write(kazoo, root, 1, window_doc(bad_topology, "words", 1), topology=bad_topology)
    bad = _bad_windows(bad_topology)
    for task, data in bad.items():
        kazoo.create(f"{root}/{bad_topology}/{task}", data, makepath=True)
    for task in (1, 2, 3):
        write(kazoo, root, task, window_doc(good_topology, "words", task), topology=good_topology)
    limits = WindowLimits(max_bytes=256 * 1024)  # the 100,000-deep array (200 kB) fits
    with MetricsStore(zookeeper.hosts, root, storm_root=storm_root, resync_s=60.0, limits=limits) as store:
        assert store.wait_synced(15)
        until(lambda: len(store.view(bad_topology).problems) == len(bad), message="every bad window named")
        assert sorted(store.view(good_topology).windows) == [1, 2, 3]
        view = store.view(bad_topology)
        assert list(view.windows) == [1] and view.corrupt_windows == len(bad)
        problems = dict(p.split(": ", 1) for p in view.problems)
        assert "integer of 5,000 digits" in problems["task 11"]
        assert "nested more than 16 levels" in problems["task 12"]
        assert "Infinity is not a finite number" in problems["task 13"]
        assert "1e999 is out of range" in problems["task 14"]
        assert "NaN is not a finite number" in problems["task 15"]
        assert problems["task 16"] == "bad field emitted.tuples: -5 is negative"
        assert "NaN is not a finite number" in problems["task 17"]
        assert problems["task 18"] == "bad field sent[0].tuples: expected an integer, got 'many'"
        assert "more than the limit of 262,144 (setting STORM_PLANNER_WINDOW_MAX_BYTES)" in problems["task 19"]
        # A full resync reads the same bad znodes again: they are not counted twice.
        assert store.refresh(10) and store.view(bad_topology).corrupt_windows == len(bad)
        notes = StoreMetricsSource(store).measure(spec(bad_topology), []).notes
        assert f"{len(bad)} corrupt metrics windows skipped so far" in notes


def test_the_warning_names_the_topology_and_the_znode(store, kazoo, root, caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="storm_planner.metrics"):
        kazoo.create(f"{root}/{TOPOLOGY}/4", encode({**window_doc(TOPOLOGY, "count", 4), "task": -0.5}),
                     makepath=True)
        until(lambda: store.view(TOPOLOGY).problems, message="the problem")
    assert f"topology {TOPOLOGY}, task 4, window skipped: znode {root}/{TOPOLOGY}/4: bad field task" in caplog.text
