"""The load memory outlives the service: a restarted service plans a known topology name on its measured loads.

A capacity run resumed in another sitting started a new service whose memory was empty: ``auto``'s first plan of
Word Count fell back to the declared 10 % per executor and put the ackers alone on the 70 % node. The memory is
now written to a file or ZooKeeper (throttled) and read back, checked, when the service starts.
"""
from __future__ import annotations

import argparse
import json
import logging
import math

import pytest

from storm_planner.adaptation.state import FileStateStore, ZooKeeperStateStore
from storm_planner.metrics.per_tuple import ComponentCost, TupleCosts
from storm_planner.service.metrics import service_state_for_serve
from storm_planner.service.planning.handler import PlannerHandler
from storm_planner.service.planning.memory import ComponentLoad, LoadMemory
from storm_planner.service.planning.memory_store import (
    MAX_STORED_BYTES,
    STORE_KEY,
    MemoryKeeper,
    to_record,
)
from storm_planner.service.transport.counters import ServiceCounters
from tests.service.test_load_memory import Clock, handler_with_metrics_for, plan_of

COSTS = TupleCosts(900.0, {"count": ComponentCost(2.0, 0.01, 2.7, True), "split": ComponentCost(1.5, 0.02, 1.0)})


def remembered(memory: LoadMemory, name: str = "wc", run: str = "wc-3-1700000000") -> None:
    memory.remember(name, run, {"count": ComponentLoad(14.0, 4), "split": ComponentLoad(6.5, 2)},
                    {("split", "count"): 90.0}, {("split", "count"): 2400.0}, COSTS)


class Wall:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_what_a_service_remembered_is_what_the_next_one_recalls_with_the_time_it_was_down(tmp_path):
    store = FileStateStore(tmp_path / "loads.json")
    clock, wall = Clock(), Wall()
    first = LoadMemory(clock=clock)
    remembered(first)
    clock.now += 20
    assert MemoryKeeper(first, store, wall=wall).write_if_due()
    wall.now += 600                                   # the service was down for ten minutes
    later = Clock()
    later.now = 5.0                                   # a new process: its monotonic clock starts elsewhere
    second = LoadMemory(clock=later)
    assert MemoryKeeper(second, store, wall=wall).restore() == 1
    before, after = first.recall("wc"), second.recall("wc")
    assert before is not None and after is not None
    assert after.topology_id == before.topology_id and after.peak_rate == before.peak_rate == 900.0
    assert dict(after.loads) == dict(before.loads) and dict(after.tuple_bytes) == dict(before.tuple_bytes)
    assert dict(after.rates) == dict(before.rates) and dict(after.costs.components) == dict(COSTS.components)
    assert later.now - after.measured_at == pytest.approx(620.0)   # 20 s old when written, then 600 s down


def test_writes_are_throttled_and_forced_only_when_the_memory_changed(tmp_path):
    store = FileStateStore(tmp_path / "loads.json")
    clock = Clock()
    memory = LoadMemory(clock=clock)
    keeper = MemoryKeeper(memory, store, write_every_s=30.0)
    assert not keeper.write_if_due(force=True)         # nothing remembered yet: nothing to write
    remembered(memory)
    assert keeper.write_if_due()                       # the first change is written at once
    remembered(memory, "tk", "tk-1-1")
    clock.now += 10
    assert not keeper.write_if_due()                   # within 30 s of the last write
    clock.now += 25
    assert keeper.write_if_due()
    assert not keeper.write_if_due(force=True)         # unchanged since
    remembered(memory, "other", "other-2-2")
    assert keeper.write_if_due(force=True)             # the service stopping writes what changed
    names = [r["name"] for r in json.loads((tmp_path / "loads.json").read_text())[STORE_KEY]["topologies"]]
    assert names == ["wc", "tk", "other"]


def test_a_bad_record_is_refused_by_name_and_the_good_ones_are_kept(tmp_path, caplog):
    memory = LoadMemory()
    remembered(memory)
    good = to_record("wc", memory.recall("wc"), 1.0)
    nan_load = {**good, "name": "nan", "topology_id": "nan-1-1", "loads": {"count": [math.nan, 2]}}
    foreign = {**good, "name": "taken", "topology_id": "other-1-1"}
    negative = {**good, "name": "neg", "topology_id": "neg-1-1", "rates": [["a", "b", -4.0]]}
    many = {**good, "name": "many", "topology_id": "many-1-1", "loads": {f"c{k}": [1.0, 1] for k in range(3000)}}
    (tmp_path / "loads.json").write_text(json.dumps({STORE_KEY: {"format": 1, "saved_at": "yesterday",
                                                                 "topologies": [nan_load, "x", foreign, good, negative,
                                                                                many]}}))
    counters = ServiceCounters()
    restored = LoadMemory()
    with caplog.at_level(logging.WARNING, logger="storm_planner.service"):
        assert MemoryKeeper(restored, FileStateStore(tmp_path / "loads.json"), counters).restore() == 1
    assert [name for name, _ in restored.entries()] == ["wc"]
    assert counters.snapshot()["load_memory_records_refused"] == 5
    assert "record 0 ('nan') refused: load of 'count' must be a finite non-negative number, not nan" in caplog.text
    assert "record 2 ('taken') refused: topology_id 'other-1-1' is not an id Storm gives" in caplog.text
    # Only the most recently used max_topologies records are read: the older ones would be forgotten anyway.
    small = LoadMemory(max_topologies=1)
    assert MemoryKeeper(small, FileStateStore(tmp_path / "loads.json")).restore() == 0   # the last is 'many', bad


def test_an_unreadable_oversized_or_foreign_store_restores_nothing_and_the_service_plans_on(tmp_path):
    path = tmp_path / "loads.json"
    path.write_text("{not json")
    counters = ServiceCounters()
    assert MemoryKeeper(LoadMemory(), FileStateStore(path), counters).restore() == 0
    path.write_text(json.dumps({STORE_KEY: {"format": 99, "topologies": []}}))
    assert MemoryKeeper(LoadMemory(), FileStateStore(path), counters).restore() == 0
    path.write_text(" " * 2000)
    assert MemoryKeeper(LoadMemory(), FileStateStore(path, max_bytes=1000), counters).restore() == 0
    assert counters.snapshot()["load_memory_read_failures"] == 3
    # The service starts all the same, and its first write replaces what it could not read.
    path.write_text("{not json")
    handler = PlannerHandler(isolate=False, load_memory_store=FileStateStore(path))
    remembered(handler.load_memory)
    handler.close()
    assert json.loads(path.read_text())[STORE_KEY]["topologies"][0]["name"] == "wc"
    assert [p.read_text() for p in tmp_path.glob("loads.json.unreadable-*")] == ["{not json"]   # kept aside


def test_a_failed_write_is_counted_and_tried_again(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    counters = ServiceCounters()
    memory = LoadMemory()
    keeper = MemoryKeeper(memory, FileStateStore(blocked / "loads.json"), counters, write_every_s=0.0)
    remembered(memory)
    assert not keeper.write_if_due()
    assert counters.snapshot()["load_memory_write_failures"] == 1
    blocked.unlink()
    blocked.mkdir()
    assert keeper.write_if_due()                       # still changed since the last write that worked


def test_the_stored_memory_stays_under_its_bound_keeping_the_most_recently_used(tmp_path):
    memory = LoadMemory()
    wide = {f"component-{k:04d}": ComponentLoad(1.0 + k, 1) for k in range(1500)}
    for n in range(40):
        memory.remember(f"t{n}", f"t{n}-1-1", wide, {})
    counters = ServiceCounters()
    assert MemoryKeeper(memory, FileStateStore(tmp_path / "loads.json"), counters).write_if_due()
    stored = json.loads((tmp_path / "loads.json").read_text())[STORE_KEY]
    assert len(json.dumps(stored)) <= MAX_STORED_BYTES          # as one znode holds it
    kept = [r["name"] for r in stored["topologies"]]
    assert kept and kept[-1] == "t39" and "t0" not in kept and counters.snapshot()["load_memory_topologies_dropped"] == 1


def test_a_restarted_service_plans_a_known_name_on_its_remembered_loads(tmp_path):
    plan_log = tmp_path / "plans.jsonl"
    first = handler_with_metrics_for("e2e-bargains-link-1-1", 7.0, plan_log=plan_log)
    plan_of(first, "e2e-bargains-link-1-1", {})        # measured: remembered
    assert not (tmp_path / "plans.jsonl.loads.json").exists()     # not inside the plugin's round
    first.after_answer()                                 # written once the plugin has its answer
    assert (tmp_path / "plans.jsonl.loads.json").exists()
    first.close()
    restarted = PlannerHandler(isolate=False, plan_log=plan_log)      # no metrics, an empty process
    fresh = PlannerHandler(isolate=False, plan_log=tmp_path / "elsewhere.jsonl")
    asks = {"planner.loads.remembered": "true"}
    on = plan_of(restarted, "e2e-bargains-link-2-2", asks)
    off = plan_of(fresh, "e2e-bargains-link-2-2", asks)
    assert on.error is None and off.error is None
    assert any(note.startswith("loads of 7 components") and "as measured on e2e-bargains-link-1-1" in note
               for note in on.notes), on.notes
    assert on.figures["cpu_utilisation"] == pytest.approx(0.7 * off.figures["cpu_utilisation"])
    restarted.close()
    fresh.close()


def test_serve_keeps_the_memory_in_zookeeper_unless_given_a_file(zookeeper, tmp_path):
    hosts = zookeeper.hosts
    with service_state_for_serve(argparse.Namespace(zookeeper=hosts, load_memory=None)) as kept:
        assert isinstance(kept.load_memory, ZooKeeperStateStore)
        memory = LoadMemory()
        remembered(memory)
        assert MemoryKeeper(memory, kept.load_memory).write_if_due()
    with service_state_for_serve(argparse.Namespace(zookeeper=hosts, load_memory=None)) as kept:
        again = LoadMemory()
        assert MemoryKeeper(again, kept.load_memory).restore() == 1 and again.recall("wc") is not None
        kept.load_memory.delete(STORE_KEY)
    with service_state_for_serve(argparse.Namespace(zookeeper=hosts, load_memory=tmp_path / "m.json")) as kept:
        assert isinstance(kept.load_memory, FileStateStore) and kept.load_memory.path == tmp_path / "m.json"
    with service_state_for_serve(argparse.Namespace(zookeeper=None, load_memory=None)) as kept:
        assert kept == (None, None)                     # the handler keeps it beside the plan log


def test_the_local_cluster_gives_its_planner_the_load_memory_file_it_was_told(tmp_path, monkeypatch):
    from storm_planner.cluster.description import default_description
    from storm_planner.cluster.launcher import ClusterOptions, LocalCluster

    commands = {}
    for told in (None, tmp_path / "memory" / "hetero.json"):
        cluster = LocalCluster(default_description(), tmp_path, ClusterOptions(load_memory=told))
        monkeypatch.setattr(cluster, "_start", lambda name, command, port, env=None, told=told:
                            commands.__setitem__(told, command))
        cluster.start_planner(wait=False)
    assert "--load-memory" not in commands[None]                       # the cluster's ZooKeeper keeps it
    told_command = commands[tmp_path / "memory" / "hetero.json"]
    assert told_command[told_command.index("--load-memory") + 1] == str(tmp_path / "memory" / "hetero.json")


@pytest.mark.parametrize("stored", [
    b"\xff\xfe not utf-8",                                     # bad UTF-8
    b"[" * 200_000,                                            # nesting deeper than the parser's stack
    b'{"topologies": ' + b"9" * 5000 + b"}",                   # an integer past Python's digit limit
])
def test_a_hostile_store_restores_nothing_and_the_service_starts(tmp_path, stored):
    path = tmp_path / "loads.json"
    path.write_bytes(stored)
    counters = ServiceCounters()
    assert MemoryKeeper(LoadMemory(), FileStateStore(path), counters).restore() == 0
    assert counters.snapshot()["load_memory_read_failures"] == 1
    handler = PlannerHandler(isolate=False, load_memory_store=FileStateStore(path))   # starts
    remembered(handler.load_memory)
    handler.close()                                            # and its write sets the corrupt file aside
    assert json.loads(path.read_text())[STORE_KEY]["topologies"][0]["name"] == "wc"
    assert [p.read_bytes() for p in tmp_path.glob("loads.json.unreadable-*")] == [stored]


def test_a_record_with_a_number_too_large_for_a_float_costs_that_record_alone(tmp_path):
    memory = LoadMemory()
    remembered(memory)
    good = to_record("wc", memory.recall("wc"), 1.0)
    huge = {**good, "name": "huge", "topology_id": "huge-1-1", "age_s": 10 ** 400}
    (tmp_path / "loads.json").write_text(json.dumps({STORE_KEY: {"format": 1, "saved_at": 10 ** 400,
                                                                 "topologies": [huge, good]}}))
    restored = LoadMemory()
    assert MemoryKeeper(restored, FileStateStore(tmp_path / "loads.json")).restore() == 1
    assert [name for name, _ in restored.entries()] == ["wc"]


def test_a_store_that_is_no_regular_file_or_too_long_is_refused_unread_and_not_set_aside(tmp_path):
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    counters = ServiceCounters()
    assert MemoryKeeper(LoadMemory(), FileStateStore(fifo), counters).restore() == 0   # did not block
    long = tmp_path / "long.json"
    long.write_text(" " * 5000)
    assert MemoryKeeper(LoadMemory(), FileStateStore(long, max_bytes=4000), counters).restore() == 0
    assert counters.snapshot()["load_memory_read_failures"] == 2
    memory = LoadMemory()
    remembered(memory)
    assert not MemoryKeeper(memory, FileStateStore(long, max_bytes=4000), counters).write_if_due()
    assert long.read_text() == " " * 5000 and not list(tmp_path.glob("*.unreadable-*"))   # not read: kept
