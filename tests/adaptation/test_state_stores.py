"""State stores: the file store (CLI) and the ZooKeeper store (service, only with a reachable ZooKeeper)."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from storm_planner.adaptation.state import (
    FileStateStore,
    MemoryStateStore,
    StateStoreError,
    ZooKeeperStateStore,
    state_key,
)

STATE = {"version": 1, "sets": [["a", "b"], ["c", "d", "e"]]}


@pytest.mark.parametrize("make", [lambda tmp: MemoryStateStore(), lambda tmp: FileStateStore(tmp / "s.json")])
def test_round_trip_and_delete(tmp_path, make):
    store = make(tmp_path)
    assert store.load("topo/albic") is None
    store.save("topo/albic", STATE)
    store.save("other/albic", {"version": 1, "sets": []})
    assert store.load("topo/albic") == STATE
    store.delete("topo/albic")
    assert store.load("topo/albic") is None
    assert store.load("other/albic") == {"version": 1, "sets": []}


def test_file_store_survives_a_new_process_view_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "nested" / "state.json"
    FileStateStore(path).save("k", STATE)
    assert FileStateStore(path).load("k") == STATE          # a fresh object, as after a restart
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.json"]


def test_file_store_reports_a_corrupt_file(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{not json")
    with pytest.raises(StateStoreError, match="not JSON"):
        FileStateStore(path).load("k")


def test_non_json_states_are_refused(tmp_path):
    with pytest.raises(StateStoreError, match="JSON"):
        FileStateStore(tmp_path / "s.json").save("k", {"x": object()})
    with pytest.raises(StateStoreError, match="JSON object"):
        MemoryStateStore().save("k", ["not", "an", "object"])


# How long a connect may take before the test calls ZooKeeper unreachable: generous, since it bounds only a
# failure's time, and a loaded CI machine took more than 5 s to answer a fresh session.
CONNECT_S = 30


def test_zookeeper_store_round_trip_and_restart(zookeeper):
    root = f"/storm-planner-test/{uuid.uuid4().hex}"
    store = ZooKeeperStateStore.connect(zookeeper.hosts, root=root, timeout_s=CONNECT_S)
    try:
        assert store.load("topo/albic") is None
        store.save("topo/albic", STATE)
        store.save("topo/albic", {**STATE, "sets": [["a", "b"]]})   # overwrite
    finally:
        store.close()
    again = ZooKeeperStateStore.connect(zookeeper.hosts, root=root, timeout_s=CONNECT_S)   # a restarted service
    try:
        assert again.load("topo/albic") == {**STATE, "sets": [["a", "b"]]}
        again.delete("topo/albic")
        assert again.load("topo/albic") is None
    finally:
        again.client.delete(root, recursive=True)
        again.close()


def test_zookeeper_store_unreachable_is_a_clear_error():
    with pytest.raises(StateStoreError, match="did not answer"):
        ZooKeeperStateStore.connect("127.0.0.1:1", timeout_s=0.5)


def test_zookeeper_keys_are_checked():
    store = ZooKeeperStateStore(client=None)
    with pytest.raises(Exception, match="state key"):
        store._path("../escape")


def test_service_runner_keeps_albic_state_in_zookeeper_across_a_restart(zookeeper):
    """The service's runner: a second service (new store, same ZooKeeper) gets the first one's state."""
    from storm_planner.adaptation.state import stateful_runner
    from storm_planner.core.problem import Problem

    problem = Problem.from_dict(
        json.loads((Path(__file__).resolve().parents[1] / "data" / "measured-skewed.json").read_text())
    )
    root = f"/storm-planner-test/{uuid.uuid4().hex}"
    first = ZooKeeperStateStore.connect(zookeeper.hosts, root=root, timeout_s=CONNECT_S)
    try:
        plan = stateful_runner(first)(problem, "albic")
        saved = first.load(state_key(problem.topology_id, "albic"))
    finally:
        first.close()
    assert saved is not None and saved == dict(plan.state)
    restarted = ZooKeeperStateStore.connect(zookeeper.hosts, root=root, timeout_s=CONNECT_S)
    try:
        assert restarted.load(state_key(problem.topology_id, "albic")) == saved
    finally:
        restarted.client.delete(root, recursive=True)
        restarted.close()


def test_an_unreachable_state_store_costs_the_state_not_the_plan():
    from storm_planner.adaptation.state import StateStore, run_with_state
    from storm_planner.core.problem import Problem

    class Broken(StateStore):
        def load(self, key):
            raise StateStoreError("ZooKeeper unreachable")

        def save(self, key, state):
            raise StateStoreError("ZooKeeper unreachable")

    problem = Problem.from_dict(
        json.loads((Path(__file__).resolve().parents[1] / "data" / "measured-skewed.json").read_text())
    )
    plan = run_with_state(problem, "albic", {}, Broken())
    assert len(plan.assignments) == len(problem.executors)
    assert any("not loaded" in note for note in plan.notes)
