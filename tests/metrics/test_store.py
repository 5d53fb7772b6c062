"""The metrics store against a real ZooKeeper server: reading, watching, corrupt and deleted znodes,
killed topologies, and an outage the store recovers from by itself."""
from __future__ import annotations

import time

import pytest
from metrics_docs import encode, window_doc

from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import MetricsStore
from storm_planner.service.contract import planner_thrift as T

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
    notes = StoreMetricsSource(store).measure(spec(), [])["notes"]
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
    assert result["executors"], "the cached windows still measure the topology"
    assert any("does not exist in ZooKeeper" in n or "were deleted" in n for n in result["notes"])
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
        assert len(result["executors"]) == 2, "planning goes on with the cached windows"
        assert any("unreachable since" in n and "planning on the last metrics" in n for n in result["notes"])
        unknown = source.measure(spec("other-1-1"), [])
        assert unknown["executors"] == [] and any("no metrics cached" in n for n in unknown["notes"])

        zookeeper.start()
        until(lambda: store.connected, timeout_s=30, message="the store to reconnect")
        writer = KazooClient(hosts=zookeeper.hosts)
        writer.start(timeout=15)
        try:
            write(writer, root, 1, window_doc(TOPOLOGY, "words", 1, seq=5))
        finally:
            writer.stop()
        until(lambda: store.view(TOPOLOGY).windows[1][-1].seq == 5, timeout_s=15, message="a window after recovery")
        assert not any("unreachable" in n for n in source.measure(spec(), [])["notes"])
