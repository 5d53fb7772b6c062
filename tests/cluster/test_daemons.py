"""Process groups, pid records, stray sweeps, readable supervisor ids, port checks."""
from __future__ import annotations

import socket
import sys
import time

import pytest

from storm_planner.cluster import daemons
from storm_planner.cluster.description import default_description
from storm_planner.cluster.errors import ClusterError
from storm_planner.cluster.launcher import ClusterOptions, LocalCluster
from storm_planner.cluster.probes import free_port_offset, port_free
from storm_planner.cluster.supervisor_id import read_supervisor_id, seed_supervisor_id

# A "daemon" that forks a grandchild (as a supervisor forks workers) and sleeps.
FAMILY = (
    "import subprocess, sys, time\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "time.sleep(60)\n"
)


def _children_of(pid):
    found = []
    for stat in __import__("pathlib").Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_stop_kills_the_whole_process_group(tmp_path):
    record = daemons.start_daemon(
        "family", [sys.executable, "-c", FAMILY], run_dir=tmp_path / "run",
        out_file=tmp_path / "logs" / "family.out", cwd=tmp_path,
    )
    deadline = time.monotonic() + 10
    while not _children_of(record.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    grandchildren = _children_of(record.pid)
    assert grandchildren, "the test daemon did not fork"
    assert daemons.is_alive(record)
    assert [r.name for r in daemons.records(tmp_path / "run")] == ["family"]
    assert daemons.stop_daemon(record, grace_s=5) in {"stopped", "killed"}
    assert not daemons.is_alive(record)
    assert not daemons.group_alive(record.pid)
    assert all(not daemons._pid_alive(p) for p in grandchildren)
    assert daemons.stop_daemon(record) == "not running"


def test_a_record_whose_command_differs_is_not_ours(tmp_path):
    record = daemons.DaemonRecord("x", 1, ["definitely-not-init"], None, str(tmp_path / "x.out"), 0.0)
    assert not daemons.is_alive(record)


def test_stray_sweep_spares_its_caller_and_finds_cluster_processes(tmp_path):
    state = tmp_path / "state"
    (state / "data" / "sup").mkdir(parents=True)
    assert daemons.stray_processes(state) == []
    import subprocess

    stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=state / "data" / "sup")
    try:
        assert daemons.stray_processes(state) == [stray.pid]
        daemons.kill_pids([stray.pid])
        stray.wait(timeout=5)
    finally:
        stray.kill()


def test_supervisor_id_seed_round_trip(tmp_path):
    assert read_supervisor_id(tmp_path) is None
    assert seed_supervisor_id(tmp_path, "sup-fast")
    assert read_supervisor_id(tmp_path) == "sup-fast"
    # Existing state is never overwritten (the supervisor owns it after start).
    assert not seed_supervisor_id(tmp_path, "other")
    assert read_supervisor_id(tmp_path) == "sup-fast"


def _fake_home(tmp_path):
    """Just enough of a Storm home to pass validation (no Maven in unit tests)."""
    home = tmp_path / "home"
    for part in ("lib", "lib-worker", "log4j2"):
        (home / part).mkdir(parents=True)
    (home / "lib" / "storm-server-2.8.3.jar").write_bytes(b"")
    (home / "log4j2" / "cluster.xml").write_text("<Configuration/>")
    (home / "log4j2" / "worker.xml").write_text("<Configuration/>")
    return home


def test_busy_port_is_reported_with_a_way_out(tmp_path):
    description = default_description()
    description = description.with_offset(free_port_offset(description))
    with socket.socket() as busy:
        busy.bind((description.host, description.ports.nimbus))
        busy.listen()
        assert not port_free(description.host, description.ports.nimbus)
        cluster = LocalCluster(description, tmp_path / "state",
                               ClusterOptions(plugin=False, planner=False, storm_home=_fake_home(tmp_path)),
                               progress=lambda m: None)
        with pytest.raises(ClusterError, match=rf"{description.ports.nimbus} \(nimbus\).*--port-offset"):
            cluster.up()


def test_missing_plugin_jar_is_a_clear_error(tmp_path):
    cluster = LocalCluster(default_description(), tmp_path,
                           ClusterOptions(plugin=True, plugin_jar=tmp_path / "missing.jar"),
                           progress=lambda m: None)
    with pytest.raises(ClusterError, match="plugin jar not found.*--no-plugin"):
        cluster.up()


def test_waiting_for_a_daemon_that_dies_quotes_its_output_and_its_log(tmp_path):
    from storm_planner.cluster.probes import wait_healthy
    record = daemons.start_daemon(
        "nimbus", [sys.executable, "-c", "import sys; print('bad storm.yaml: nimbus.seeds'); sys.exit(3)"],
        run_dir=tmp_path / "run", out_file=tmp_path / "logs" / "nimbus.out", cwd=tmp_path)
    log4j = tmp_path / "logs" / "nimbus.log"
    log4j.write_text("ERROR o.a.s.d.n.Nimbus - Error on initialization\n")
    said = []
    with pytest.raises(ClusterError) as error:
        wait_healthy("nimbus", lambda: False, 30, progress=said.append, record=record, log4j_log=log4j)
    message = str(error.value)
    assert message.startswith("nimbus exited during start-up (exit code 3)")
    assert "bad storm.yaml: nimbus.seeds" in message and "Error on initialization" in message
    assert said == []


def test_waiting_ends_healthy_or_after_its_timeout_with_the_daemons_name(tmp_path):
    from storm_planner.cluster.probes import wait_healthy
    said = []
    checks = iter([False, True])
    wait_healthy("ui", lambda: next(checks), 30, progress=said.append, detail=lambda: "port 8080")
    assert len(said) == 1 and said[0].startswith("  ui") and "healthy" in said[0] and "port 8080" in said[0]
    started = time.monotonic()
    with pytest.raises(ClusterError, match=r"^dashboard not healthy after 1s"):
        wait_healthy("dashboard", lambda: False, 1, progress=said.append, log4j_log=tmp_path / "none.log")
    assert time.monotonic() - started < 5


def test_starting_one_daemon_again_needs_a_cluster_that_is_up_and_a_daemon_it_has(tmp_path):
    cluster = LocalCluster(default_description(), tmp_path, ClusterOptions(plugin=False, ui=False),
                           progress=lambda m: None)
    with pytest.raises(ClusterError, match="cannot start nimbus: .* is not up in this process"):
        cluster.start_daemon("nimbus")
    cluster.home, cluster.addresses = object(), object()   # as if up: the name is checked next
    for name in ("supervisor-nowhere", "ui", "workers"):
        with pytest.raises(ClusterError, match=f"no daemon '{name}' to start again"):
            cluster.start_daemon(name)
