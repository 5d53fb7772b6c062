"""``storm-planner bench soak`` without a cluster: the seeded schedule and timetable, the figures read back
from a run's files (stalls and their causes, memory flatness, log growth, Nimbus' outages, drains, moves,
fallbacks), the report written from them and again from its CSV alone, each fault undone when the run stops
in the middle of it, and the options refused."""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.common.report import append_csv
from storm_planner_bench.common.results import read_tables
from storm_planner_bench.soak import analysis, faults, monitor, proc, schedule
from storm_planner_bench.soak import experiment as soak
from storm_planner_bench.soak.report import write_report

# -- the schedule and the timetable ----------------------------------------------------------------------


def test_the_rate_schedule_is_seeded_within_its_bounds_and_changes_every_step():
    steps = schedule.rate_schedule(7, 3600, 240, 400)
    assert steps == schedule.rate_schedule(7, 3600, 240, 400)
    assert steps != schedule.rate_schedule(8, 3600, 240, 400)
    assert [s.at_s for s in steps] == [240.0 * k for k in range(15)]
    assert all(80 <= s.rate <= 320 for s in steps)
    assert all(abs(a.rate - b.rate) >= 24 for a, b in zip(steps, steps[1:]))
    assert schedule.rate_at(steps, 250) == steps[1].rate and schedule.rate_at(steps, -5) == steps[0].rate
    assert schedule.tuples_offered(steps, 480) == pytest.approx(240 * (steps[0].rate + steps[1].rate))
    assert schedule.feed_records(steps, 480, 60) % 50_000 == 0
    assert schedule.feed_records(steps, 480, 60) >= 1.2 * (240 * (steps[0].rate + steps[1].rate) + 60 * steps[0].rate)


def test_the_timetable_injects_each_kind_as_often_as_asked_inside_its_window():
    planned = schedule.fault_timetable(3, 3600, schedule.KINDS, 3, 120, 240)
    assert len(planned) == 18 and [p.index for p in planned] == list(range(1, 19))
    assert all(planned[k].at_s < planned[k + 1].at_s for k in range(17))
    assert planned[0].at_s >= 120 and planned[-1].at_s <= 3600 - 240
    assert {kind: sum(p.kind == kind for p in planned) for kind in schedule.KINDS} == dict.fromkeys(schedule.KINDS, 3)
    assert all(a.kind != b.kind for a, b in zip(planned, planned[1:]))
    assert planned == schedule.fault_timetable(3, 3600, schedule.KINDS, 3, 120, 240)
    assert schedule.fault_timetable(3, 600, (), 3, 60, 60) == []
    with pytest.raises(ValueError, match="no time for faults"):
        schedule.fault_timetable(3, 300, schedule.KINDS, 1, 200, 200)


def test_fault_kinds_are_named_or_all():
    assert schedule.parse_kinds("all") == schedule.KINDS
    assert schedule.parse_kinds("link-cut, service-kill") == ("service-kill", "link-cut")
    with pytest.raises(ValueError, match="unknown power-cut"):
        schedule.parse_kinds("service-kill,power-cut")


# -- stalls and their causes -----------------------------------------------------------------------------


def paced(begin: float, end: float, rate: float, gaps: dict[float, float] = None, latency: float = 0.05) -> TupleTimes:
    """Tuples due every 1/rate s from ``begin`` to ``end``, each acked ``latency`` after; those due inside a
    gap (start -> its end) acked only at its end."""
    times = TupleTimes()
    for k, due in enumerate(np.arange(begin, end, 1.0 / rate)):
        key = f"@requests-1/0:{k}:0"
        times.emitted[key] = float(due)
        times.due[key] = float(due)
        times.emits_at.append(float(due))
        ack = float(due) + latency
        for start, stop in (gaps or {}).items():
            if start <= due < stop:
                ack = stop + latency
        times.acked[key] = ack
    return times


def test_a_stall_is_a_run_of_seconds_without_an_ack_while_tuples_were_due():
    times = paced(1000, 1100, 10, gaps={1040.0: 1052.0})
    seconds = analysis.per_second(times, 1000, 1100)
    assert seconds.begin == 1000 and len(seconds.acks) == 100
    assert seconds.acks[:40].min() >= 9 and seconds.acks[40:52].max() == 0
    assert seconds.outstanding[45] >= 50       # every tuple due since the gap began is owed
    assert analysis.stalls(seconds) == [(1040.0, 1052.0, 10)]   # 10 tuples owed in its first second
    # a gap of 5 s is not longer than 5 s
    assert analysis.stalls(analysis.per_second(paced(1000, 1100, 10, gaps={1040.0: 1045.0}), 1000, 1100)) == []


def test_seconds_without_tuples_due_are_no_stall():
    times = paced(1000, 1020, 10)
    times_later = paced(1060, 1080, 10)
    for key, value in times_later.emitted.items():   # a pause with nothing due: the spout was not asked to emit
        fresh = key.replace("@requests-1/0:", "@requests-1/1:")
        times.emitted[fresh] = value
        times.due[fresh] = value
        times.acked[fresh] = times_later.acked[key]
    assert analysis.stalls(analysis.per_second(times, 1000, 1080)) == []


def test_a_stall_is_explained_by_the_faults_and_drains_whose_window_holds_its_start():
    fault_rows = [{"index": "1", "kind": "supervisor-kill", "target": "i5-a", "injected": "1000", "undone": "1020",
                   "recovered": "1030"},
                  {"index": "-1", "kind": "crash", "target": "nimbus", "injected": "2000", "undone": "2000",
                   "recovered": ""},
                  {"index": "2", "kind": "service-kill", "target": "planner", "injected": "", "undone": ""}]
    causes = analysis.fault_causes(fault_rows, aftermath_s=90)
    assert [(c.start, c.end, c.label) for c in causes] == [(1000.0, 1120.0, "fault 1 supervisor-kill (i5-a)"),
                                                          (2000.0, 2090.0, "crash of nimbus")]
    drains = [{"start": 3000.0, "end": 3040.0, "phases": "pause drain move start resume"}]
    causes += analysis.plan_causes([{"time": 4000.0, "moved": 2}], drains, aftermath_s=90)
    assert [c.label for c in analysis.explain(1100, causes)] == ["fault 1 supervisor-kill (i5-a)"]
    assert [c.label for c in analysis.explain(3100, causes)] == ["drain (pause drain move start resume)"]
    assert [c.label for c in analysis.explain(4010, causes)] == ["move of 2 executor(s)"]
    assert analysis.explain(1500, causes) == []


# -- the plan log, Nimbus' log and the probes ------------------------------------------------------------


def plan(at: float, assignments: dict, error: dict | None = None, topology: str = "t-1") -> dict:
    return {"time": at, "event": "plan", "topology": topology, "algorithm": "auto", "assignments": assignments,
            "notes": ["a note"], "error": error}


def drain_record(at: float, phase: str, seconds: float, **extra) -> dict:
    return {"time": at, "event": "drain", "topology": "t-1", "phase": phase, "seconds": seconds, "note": phase,
            "outcome": "ok", **extra}


def test_moves_drains_and_errors_come_from_the_plan_log():
    records = [plan(10, {"[1-1]": "a:1", "[2-2]": "b:1"}), plan(20, {"[1-1]": "a:1", "[2-2]": "b:1"}),
               plan(30, {"[1-1]": "a:1", "[2-2]": "a:1"}), plan(35, {}, {"kind": "TIMEOUT", "message": "late"}),
               plan(40, {"[1-1]": "x:1"}, topology="other"),
               drain_record(25, "pause", 0.5), drain_record(27, "drain", 2.0, in_flight=0),
               drain_record(29, "move", 1.0), drain_record(33, "start", 4.0), drain_record(34, "resume", 0.2),
               drain_record(50, "pause", 0.4)]
    assert [(m["time"], m["moved"], m["executors"]) for m in analysis.moves(records, "t-1")] == [(30.0, 1, "[2-2]")]
    assert analysis.answer_errors(records, "t-1") == [{"time": 35.0, "kind": "TIMEOUT", "message": "late"}]
    found = analysis.drains(records, "t-1")
    assert [(d["start"], d["end"], d["phases"], d["resumed"]) for d in found] == [
        (24.5, 34.0, "pause drain move start resume", True), (49.6, 50.0, "pause", False)]
    assert found[0]["drain_phase_s"] == 2.0 and found[0]["in_flight"] == 0 and found[0]["start_phase_s"] == 4.0


def test_the_plan_log_is_read_with_its_rotated_file_and_cut_lines_are_skipped(tmp_path):
    log = tmp_path / "plans.jsonl"
    (tmp_path / "plans.jsonl.1").write_text(json.dumps(plan(1, {})) + "\n")
    log.write_text(json.dumps(plan(2, {})) + "\n" + '{"time": 3, "ev')
    assert [r["time"] for r in analysis.read_log_records(log)] == [1, 2]


NIMBUS_LOG = "\n".join([
    "2026-12-06 03:00:01.100 o.s.PlannerScheduler timer [WARN] storm-planner: the planner service at 10.0.0.1:7627 "
    "did not answer within 20000 ms; running topologies keep their placement (logged once until the cause changes)",
    "2026-12-06 03:00:31.250 o.s.PlannerScheduler timer [INFO] storm-planner: planner service at 10.0.0.1:7627 answers",
    "2026-12-06 03:00:32.000 o.s.PlannerScheduler timer [WARN] storm-planner: t-1 fell back to DefaultScheduler "
    "(unreachable): no connection",
    "2026-12-06 03:00:33.000 o.s.PlannerScheduler timer [INFO] storm-planner scheduler ready: {}",
    "2026-12-06 03:00:34.000 o.s.Other main [INFO] a component wrote storm-planner: t-1 fell back to DefaultScheduler",
    ""])


def test_the_plugins_fallbacks_are_read_from_nimbus_log(tmp_path):
    (tmp_path / "nimbus.log").write_text(NIMBUS_LOG)
    lines = analysis.nimbus_log_lines(tmp_path)
    begin = time.mktime(time.strptime("2026-12-06 03:00:00", "%Y-%m-%d %H:%M:%S"))
    events = analysis.plugin_events(lines, begin, begin + 60)
    assert [e["kind"] for e in events] == ["service failed", "service answers", "fallback"]
    assert events[1]["time"] == pytest.approx(begin + 31.25)
    assert analysis.plugin_events(lines, begin + 32, begin + 60)[0]["kind"] == "fallback"


def probe(at: float, port: int = 1, leader: int = 1, status: str = "ACTIVE") -> dict:
    return {"time": str(at), "port_open": str(port), "leader": str(leader), "supervisors": "4",
            "topology_status": status}


def test_nimbus_outages_are_allowed_only_inside_an_injected_restart():
    probes = [probe(0), probe(2, 0, 0, ""), probe(4, 1, 0, ""), probe(6), probe(8), probe(16, 0, 0, ""), probe(18)]
    assert analysis.outages(probes) == [(2.0, 6.0, 2, 1), (16.0, 18.0, 1, 1)]
    restarts = [{"index": "1", "kind": "nimbus-restart", "injected": "1", "undone": "3", "recovered": "5"},
                {"index": "2", "kind": "zookeeper-restart", "injected": "15", "undone": "16", "recovered": "17"}]
    rows = analysis.outage_rows(probes, restarts, 0.0)
    assert [(r["start_s"], r["allowed"], r["injected_restart"], r["during"]) for r in rows] == [
        (2.0, True, "fault 1 nimbus-restart", ""), (16.0, False, "", "fault 2 zookeeper-restart")]
    assert analysis.outages([probe(0), probe(2, 1, 0)]) == [(2.0, 2.0, 1, 0)]


def test_nimbus_without_a_leader_while_zookeeper_restarts_is_allowed_only_with_its_port_open():
    zookeeper = [{"index": "1", "kind": "zookeeper-restart", "injected": "1", "undone": "6", "recovered": "7"},
                 {"index": "2", "kind": "supervisor-kill", "injected": "19", "undone": "39", "recovered": "44"}]
    leaderless = [probe(0), probe(2, 1, 0, ""), probe(4, 1, 0, ""), probe(6)]
    refused = [probe(0), probe(2, 1, 0, ""), probe(4, 0, 0, ""), probe(6)]
    elsewhere = [probe(18), probe(20, 1, 0, ""), probe(22)]       # leaderless, but ZooKeeper was up
    assert [(r["allowed"], r["port_refused"]) for r in analysis.outage_rows(leaderless, zookeeper, 0.0)] == [(True, 0)]
    assert [(r["allowed"], r["port_refused"]) for r in analysis.outage_rows(refused, zookeeper, 0.0)] == [(False, 1)]
    assert [r["allowed"] for r in analysis.outage_rows(elsewhere, zookeeper, 0.0)] == [False]
    outlasting = [probe(0), probe(2, 1, 0, ""), probe(16, 1, 0, ""), probe(18)]   # leaderless long after it
    assert [r["allowed"] for r in analysis.outage_rows(outlasting, zookeeper, 0.0)] == [False]


def test_a_topology_not_active_is_a_cause():
    causes = analysis.status_causes([probe(0), probe(2, status="INACTIVE"), probe(4, status="INACTIVE"), probe(6),
                                     probe(8, status="REBALANCING")])
    assert [(c.start, c.end, c.label) for c in causes] == [(2.0, 6.0, "topology INACTIVE"),
                                                         (8.0, 8.0, "topology REBALANCING")]


# -- memory, open files and logs -------------------------------------------------------------------------


def service_rows(rss_mb, files, pids=None, step=60.0, plans=1000, growth=100) -> list[dict]:
    return [{"time": str(1000 + k * step), "pid": str((pids or [1] * len(rss_mb))[k]), "state": "S",
             "rss_kb": str(int(r * 1024)), "open_files": str(f), "children": "2",
             "plan_log_bytes": str(plans + growth * k), "problem_log_bytes": str(10 * plans + 10 * growth * k)}
            for k, (r, f) in enumerate(zip(rss_mb, files))]


def test_memory_is_flat_when_the_last_quarter_stays_within_a_tenth_of_the_second():
    flat = service_rows([100, 110, 111, 112, 112, 113, 114, 115], [30, 31, 31, 32, 32, 33, 33, 33])
    rows = analysis.memory_rows(flat, 1000, 1000 + 7 * 60)
    assert rows[0]["scope"] == "whole run" and rows[0]["rss_flat"] and rows[0]["files_flat"]
    growing = service_rows([100, 110, 120, 140, 160, 180, 200, 220], [30, 40, 50, 60, 70, 80, 90, 100])
    rows = analysis.memory_rows(growing, 1000, 1000 + 7 * 60)
    assert not rows[0]["rss_flat"] and not rows[0]["files_flat"]
    assert analysis.flat(30, 32, analysis.FLAT_FILES) and not analysis.flat(math.nan, 1)


def test_a_restart_does_not_hide_a_leak_in_the_longest_lived_process():
    # the first process leaks; a restart near the end makes the whole run's last quarter look small
    rows = service_rows([100, 120, 140, 160, 180, 200, 220, 240, 50, 50], [30] * 10, pids=[1] * 8 + [2] * 2)
    whole, longest = analysis.memory_rows(rows, 1000, 1000 + 9 * 60)
    assert longest["scope"] == "longest-lived process (pid 1)" and not longest["rss_flat"]
    assert [p["pid"] for p in analysis.process_rows(rows, 1000)] == ["1", "2"]


def test_the_logs_growth_per_hour_and_their_bound():
    rows = analysis.log_rows(service_rows([100] * 61, [30] * 61, growth=1000))
    plans, problems = rows
    assert plans["log"] == "plan log" and plans["growth_mb_per_hour"] == pytest.approx(60_000 / 2**20, abs=0.01)
    assert problems["growth_mb_per_hour"] == pytest.approx(600_000 / 2**20, abs=0.01)
    assert plans["bound_mb"] == 512 and plans["hours_to_rotation"] > 1000


def test_counters_are_summed_from_the_services_metrics():
    text = "\n".join([
        "# TYPE storm_planner_plans_total counter",
        'storm_planner_plans_total{algorithm="auto",outcome="ok"} 12.0',
        'storm_planner_plans_total{algorithm="auto",outcome="timeout"} 2.0',
        "# TYPE storm_planner_fallbacks_total counter",
        'storm_planner_fallbacks_total{cause="timeout"} 1.0',
        "# TYPE storm_planner_replans_total counter",
        'storm_planner_replans_total{outcome="moved"} 1.0',
        'storm_planner_replans_total{outcome="kept"} 30.0', ""])
    assert monitor.counters_in(text) == {"plans_ok": 12.0, "plans_failed": 2.0, "fallbacks": 1.0,
                                         "replans_moved": 1.0, "replans_kept": 30.0}


def test_proc_reads_this_process_and_its_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert proc.alive(os.getpid()) and proc.rss_kb(os.getpid()) > 1000 and proc.open_files(os.getpid()) >= 3
        assert child.pid in proc.descendants(os.getpid())
        assert proc.stat(child.pid).ppid == os.getpid() and "time.sleep" in proc.command(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not proc.alive(child.pid) and proc.rss_kb(child.pid) is None and proc.stat(10**9) is None


def test_log_bytes_counts_the_rotated_file(tmp_path):
    (tmp_path / "plans.jsonl").write_text("x" * 10)
    (tmp_path / "plans.jsonl.1").write_text("y" * 5)
    assert monitor.log_bytes(tmp_path / "plans.jsonl") == 15 and monitor.log_bytes(tmp_path / "none") == 0


# -- a fault is undone when the run stops in the middle of it --------------------------------------------


class FakeCluster:
    """Just enough of a LocalCluster for the service's faults: its run records and a network."""

    def __init__(self, run_dir: Path, pid: int, network=None):
        from storm_planner.cluster.daemons import DaemonRecord

        self.run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        DaemonRecord("planner", pid, ["sleep"], None, "", time.time()).save(run_dir / "planner.json")
        self.network = network


def interrupting_sleep(monkeypatch, after: int = 1):
    """time.sleep in the faults module raising KeyboardInterrupt (as Ctrl-C would) on its ``after``-th call."""
    calls = []

    def sleep(seconds: float) -> None:
        calls.append(seconds)
        if len(calls) >= after:
            raise KeyboardInterrupt

    monkeypatch.setattr(faults.time, "sleep", sleep)


def test_a_stopped_service_is_continued_when_the_run_stops_during_its_hang(tmp_path, monkeypatch):
    child = subprocess.Popen(["sleep", "60"])
    try:
        injector = faults.Injector(FakeCluster(tmp_path / "run", child.pid), faults.FaultSettings(hang_s=30),
                                   lambda message: None)
        interrupting_sleep(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            injector.inject(schedule.PlannedFault(1, 10.0, schedule.SERVICE_HANG))
        assert _state_settles(child.pid) != "T"
        assert injector.current.outcome.startswith("interrupted") and injector.current.undone > 0
    finally:
        child.kill()
        child.wait()


def _state_settles(pid: int) -> str:
    for _ in range(20):
        state = proc.stat(pid).state
        if state != "T":
            return state
        time.sleep(0.05)
    return state


def _gone_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_watchdog_starts_again_a_daemon_that_died_while_a_fault_is_waited_out(tmp_path, monkeypatch):
    """A supervisor halts itself when a link cut outlasts its ZooKeeper session: waiting for a healthy
    cluster must not wait for it in vain (the first soak hour did, from its seventh fault on)."""
    found, restarted = [], []
    injector = faults.Injector(FakeCluster(tmp_path / "run", _gone_pid()), faults.FaultSettings(recover_timeout_s=20),
                               lambda message: None, on_crash=found.append)
    monkeypatch.setattr(injector, "_start_again", lambda name: restarted.append(name) or (lambda: True))
    monkeypatch.setattr(injector, "cluster_healthy", lambda: bool(restarted))
    monkeypatch.setattr(faults.time, "sleep", lambda seconds: None)
    assert not math.isnan(injector._wait(injector.cluster_healthy))
    assert restarted == ["planner"]
    assert [(c.kind, c.target, c.outcome) for c in found] == [(faults.CRASH, "planner", "recovered")]


def test_daemons_found_dead_together_are_all_started_before_the_cluster_is_waited_for(tmp_path, monkeypatch):
    from storm_planner.cluster.daemons import DaemonRecord

    cluster = FakeCluster(tmp_path / "run", _gone_pid())
    DaemonRecord("zookeeper", _gone_pid(), ["sleep"], None, "", time.time()).save(cluster.run_dir / "zookeeper.json")
    found, restarted = [], []
    injector = faults.Injector(cluster, faults.FaultSettings(recover_timeout_s=2), lambda message: None,
                               on_crash=found.append)
    monkeypatch.setattr(injector, "_start_again", lambda name: restarted.append(name) or (lambda: True))
    monkeypatch.setattr(injector, "cluster_healthy", lambda: len(restarted) == 2)
    assert len(injector.watch()) == 2
    assert sorted(restarted) == ["planner", "zookeeper"]
    assert [c.outcome for c in found] == ["recovered", "recovered"]


def test_a_soak_running_late_still_lets_the_watchdog_look(tmp_path):
    looked = []
    late = soak.Soak.__new__(soak.Soak)       # only _until's part of a soak
    late.injector = type("Watchdog", (), {"watch": lambda self: looked.append("watch"),
                                          "watch_if_due": lambda self: looked.append("due")})()
    late._until(time.time() - 60)
    assert looked == ["watch"]


def test_a_cut_link_is_raised_again_when_the_run_stops_during_the_cut(tmp_path, monkeypatch):
    from storm_planner.cluster.network import Link, NetworkLayout

    layout = NetworkLayout("198.18.7.0/24", "spnxbr", "198.18.7.1",
                           (Link("i5-a", "spn-x-0", "spnxv0", "198.18.7.2", 2.0),))
    commands = []
    monkeypatch.setattr(faults, "_ip", lambda command: commands.append(command) or "")
    injector = faults.Injector(FakeCluster(tmp_path / "run", os.getpid(), layout), faults.FaultSettings(),
                               lambda message: None)
    monkeypatch.setattr(injector, "_pick_supervisor", lambda: "i5-a")
    interrupting_sleep(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        injector.inject(schedule.PlannedFault(1, 10.0, schedule.LINK_CUT))
    assert commands == [["ip", "-n", "spn-x-0", "link", "set", "eth0", "down"],
                        ["ip", "-n", "spn-x-0", "link", "set", "eth0", "up"]]


def test_a_fault_that_fails_is_recorded_and_the_run_goes_on(tmp_path):
    injector = faults.Injector(FakeCluster(tmp_path / "run", os.getpid()), faults.FaultSettings(),
                               lambda message: None)
    record = injector.inject(schedule.PlannedFault(1, 10.0, schedule.LINK_CUT))   # no emulated network
    assert record.outcome.startswith("failed: RuntimeError: link-cut needs an emulated network")
    row = record.row(0.0)
    assert list(row) == list(faults.FAULT_COLUMNS) and row["injected_at_s"] == ""


def _runs_sleep(pids: list[int]) -> bool:
    for pid in pids:
        with __import__("contextlib").suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                return True
    return False


def test_a_killed_services_orphans_are_named_and_killed(tmp_path):
    # a process group of its own, as the launcher starts every daemon: a leader and a child
    leader = subprocess.Popen([sys.executable, "-c", "import subprocess, time; subprocess.Popen(['sleep', '60']); "
                                                     "time.sleep(60)"], start_new_session=True)
    try:
        # until the child runs sleep: counted between its fork and its exec, it is still a python (CI under load)
        deadline = time.monotonic() + 10
        while not _runs_sleep(proc.group_members(leader.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        injector = faults.Injector(FakeCluster(tmp_path / "run", leader.pid), faults.FaultSettings(),
                                   lambda message: None)
        os.kill(leader.pid, signal.SIGKILL)
        leader.wait()
        said = injector._orphans(leader.pid)
        assert said.startswith("1 orphan(s) of the killed service") and "sleep 60" in said
        deadline = time.monotonic() + 5
        while proc.group_members(leader.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.group_members(leader.pid) == []
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)


# -- the report ------------------------------------------------------------------------------------------


def write_run(out: Path, start: float = 1_000_000.0) -> None:
    """A small run's files: 400 s at 20 t/s with one supervisor kill (a stall inside its window), one stall
    no fault explains, a Nimbus restart, a drain and a move; the service sampled flat."""
    out.mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({
        "start": start, "end": start + 400, "drained": start + 430, "topology": "t-1", "duration_s": 400,
        "status": "finished", "final_status": "ACTIVE", "command": "storm-planner bench soak --duration 400"}))
    times = paced(start, start + 400, 20, gaps={start + 50: start + 70, start + 300: start + 310})
    folder = out / "topology" / "times"
    folder.mkdir(parents=True)
    lines = ["# ids stable requests-1"]
    for key, at in times.emitted.items():
        lines.append(f"e {key.split('/')[1]} {at:.4f} {at:.4f}")
        lines.append(f"a {key.split('/')[1]} {times.acked[key]:.4f}")
    (folder / "requests-1-100.times").write_text("\n".join(lines) + "\n")
    fault_rows = [faults.FaultRecord(1, "supervisor-kill", 40.0, "i5-a", start + 45, start + 65, start + 75,
                                     start + 78, "recovered", "5 processes killed"),
                  faults.FaultRecord(2, "nimbus-restart", 130.0, "nimbus", start + 130, start + 136, start + 150,
                                     start + 151, "recovered", "stopped"),
                  faults.FaultRecord(3, "service-hang", 340.0, "planner", start + 340, start + 370, start + 371,
                                     start + 372, "recovered")]
    for fault in fault_rows:
        append_csv(out / "faults.csv", faults.FAULT_COLUMNS, fault.row(start))
    for k, rate in enumerate((20.0, 25.0)):
        append_csv(out / "rates.csv", ("time", "at_s", "rate"), {"time": start + 200 * k, "at_s": 200 * k, "rate": rate})
    for row in service_rows([100 + k % 3 for k in range(81)], [30] * 81, step=5.0):
        append_csv(out / "service.csv", monitor.SERVICE_COLUMNS,
                   {**row, "time": str(start + float(row["time"]) - 1000), "answers": "1"})
    for k in range(0, 430, 2):
        down = 132 <= k < 150
        append_csv(out / "nimbus.csv", monitor.NIMBUS_COLUMNS, {"time": start + k, "port_open": int(not down),
                                                                "leader": int(not down), "supervisors": 4,
                                                                "topology_status": "ACTIVE"})
    logs = out / "cluster" / "logs"
    logs.mkdir(parents=True)
    records = [plan(start - 20, {"[1-1]": "a:1", "[2-2]": "b:1"}), drain_record(start + 100, "pause", 0.5),
               drain_record(start + 103, "drain", 3.0, in_flight=0), drain_record(start + 104, "move", 1.0),
               plan(start + 104, {"[1-1]": "a:1", "[2-2]": "a:1"}), drain_record(start + 120, "start", 16.0),
               drain_record(start + 121, "resume", 0.5)]
    (logs / "plans.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(start + 345))
    (logs / "nimbus.log").write_text(f"{stamp}.000 o.s.P timer [WARN] storm-planner: the planner service did not "
                                     "answer; running topologies keep their placement (logged once until the cause "
                                     "changes)\n")


def test_the_report_gives_every_check_stall_cause_and_outage(tmp_path):
    out = tmp_path / "soak"
    write_run(out)
    report = write_report(out, "storm-planner bench soak --duration 400")
    assert report == tmp_path / "soak.md"
    tables = read_tables(out)
    summary = {row["check"]: row for row in tables["summary"]}
    assert str(summary["lost"]["value"]) == "0" and summary["lost"]["verdict"] == "ok"
    assert summary["stalls"]["value"] == "2 over 5 s, 1 unexplained" and summary["stalls"]["verdict"] == "NOT OK"
    assert summary["Nimbus"]["verdict"] == "ok" and summary["service back after its faults"]["value"] == "1 of 1"
    assert summary["topology at the end"]["value"] == "ACTIVE"
    assert summary["service RSS, whole run"]["verdict"] == "ok"
    stalls = tables["stalls"]
    # the gaps' first second still holds the ack of the tuple due 50 ms before the gap
    assert [(s["start_s"], s["seconds"]) for s in stalls] == [(51.0, 19.0), (301.0, 9.0)]
    assert stalls[0]["causes"].startswith("fault 1 supervisor-kill (i5-a) (began 6 s after it)")
    assert stalls[1]["causes"] == "unexplained"
    assert [(n["start_s"], n["allowed"]) for n in tables["nimbus"]] == [(132.0, True)]
    assert tables["drains"][0]["phases"] == "pause drain move start resume"
    assert tables["moves"][0]["moved"] == 1
    assert [f["kind"] for f in tables["fallbacks"]] == ["service failed"]
    assert [row["offered_tps"] for row in tables["throughput"]] == [20.0, 25.0]
    text = report.read_text()
    for section in ("summary", "faults", "stalls", "throughput", "service", "nimbus", "replans"):
        assert f"<!-- generated {section}" in text
    assert "Reproduce: `storm-planner bench soak --duration 400`" in text
    assert (out / "throughput.png").stat().st_size > 10_000 and (out / "service.png").stat().st_size > 10_000
    # Published, the run's files are gone: --report-only rewrites the markdown from cells.csv alone.
    for name in ("run.json", "faults.csv", "service.csv", "nimbus.csv", "rates.csv"):
        (out / name).unlink()
    report.write_text(text.replace("unexplained", "EDITED"))
    soak.run(argparse.Namespace(out=str(out), report_only=True, **defaults()))
    assert report.read_text() == text


def test_a_run_stopped_before_its_drain_reports_what_it_has(tmp_path):
    out = tmp_path / "soak"
    write_run(out)
    run = json.loads((out / "run.json").read_text())
    run.update(drained=None, status="interrupted (KeyboardInterrupt)")
    (out / "run.json").write_text(json.dumps(run))
    write_report(out, "storm-planner bench soak")
    summary = {row["check"]: row for row in read_tables(out)["summary"]}
    assert summary["run"]["verdict"] == "NOT OK" and "interrupted" in summary["run"]["value"]
    assert summary["lost"]["verdict"] == "NOT OK" and "not drained" in summary["lost"]["value"]


# -- the command -----------------------------------------------------------------------------------------


def defaults(**given) -> dict:
    values = {"workload": "topk-link", "duration": 3600.0, "step": 240.0, "sustained": None, "low": 0.2,
              "high": 0.8, "faults": "all", "per_kind": 3, "warmup": None, "tail": None, "force_move": None,
              "force_after": None, "hang": None, "supervisor_down": 20.0, "service_down": 5.0, "link_cut": 20.0,
              "sample": 5.0, "drain": 180.0, "start_timeout": 300.0, "cluster": str(soak.DEFAULT_CLUSTER), "seed": 1}
    return {**values, **given}


def description(emulated: bool = True):
    import dataclasses

    from storm_planner.cluster.description import load_description

    loaded = load_description(str(Path(__file__).resolve().parents[3] / soak.DEFAULT_CLUSTER))
    return loaded if emulated else dataclasses.replace(
        loaded, network=dataclasses.replace(loaded.network, emulated=False))


def test_the_options_make_the_hour_and_refuse_what_cannot_run():
    config = soak.config_from(argparse.Namespace(**defaults()), description())
    assert config.kinds == schedule.KINDS and config.sustained == 400.0 and config.faults.hang_s == 30.0
    assert config.force == "count@*" and config.force_after_s == 1200.0
    assert (config.warmup_s, config.tail_s) == (120.0, 240.0)
    assert len(config.timetable()) == 18 and len(config.schedule()) == 15
    short = soak.config_from(argparse.Namespace(**defaults(duration=240.0, force_move="none")), description())
    assert short.force is None and (short.warmup_s, short.tail_s) == (36.0, 60.0)
    for bad, message in ((defaults(faults="link-cut,fire"), "unknown fire"),
                         (defaults(hang=15.0), "must exceed the plugin's deadline"),
                         (defaults(duration=10.0), "--duration"), (defaults(workload="bargains-link"), "--workload"),
                         (defaults(low=0.9, high=0.5), "--low")):
        with pytest.raises(ValueError, match=message):
            soak.config_from(argparse.Namespace(**bad), description())
    with pytest.raises(ValueError, match="link-cut needs a cluster with an emulated network"):
        soak.config_from(argparse.Namespace(**defaults(faults="link-cut")), description(emulated=False))


def test_the_command_names_what_differs_from_the_defaults():
    assert soak.soak_command(argparse.Namespace(**defaults())) == "storm-planner bench soak"
    assert soak.soak_command(argparse.Namespace(**defaults(duration=900.0, per_kind=1, seed=2))) == \
        "storm-planner bench soak --duration 900 --per-kind 1 --seed 2"


def test_a_new_run_refuses_a_folder_that_holds_one(tmp_path, monkeypatch):
    out = tmp_path / "soak"
    out.mkdir()
    (out / "run.json").write_text("{}")
    with pytest.raises(ValueError, match="holds a run already"):
        soak.run(argparse.Namespace(out=str(out), report_only=False, **defaults()))


def test_a_feed_already_built_long_enough_is_replayed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("STORM_PLANNER_STATE", str(tmp_path))
    for name, complete in (("worldcup-100000-1", True), ("worldcup-3000000-1", True), ("worldcup-200000-1", False),
                           ("worldcup-500000-2", True), ("tweets-900000-1", True)):
        (tmp_path / "e2e-feeds" / name).mkdir(parents=True)
        if complete:
            (tmp_path / "e2e-feeds" / name / ".complete").write_text("")
    assert soak.built_feed("worldcup", 150_000, 1) == {"worldcup": tmp_path / "e2e-feeds" / "worldcup-3000000-1"}
    assert soak.built_feed("worldcup", 50_000, 1) == {"worldcup": tmp_path / "e2e-feeds" / "worldcup-100000-1"}
    assert soak.built_feed("worldcup", 600_000, 2) is None


def test_a_restarted_supervisor_counts_as_back_once_nimbus_lists_it_up_since_its_restart():
    from types import SimpleNamespace as S

    summary = S(supervisors=[S(supervisor_id="i5-a", total_resources={"cpu.pcore.percent": 35.0}, uptime_secs=400),
                             S(supervisor_id="i5-b", total_resources={"cpu.pcore.percent": 35.0}, uptime_secs=3),
                             S(supervisor_id="i7-a", total_resources={}, uptime_secs=1)])
    assert faults._lists(summary, "i5-a") and not faults._lists(summary, "i7-a") and not faults._lists(summary, "x")
    assert not faults._lists(summary, "i5-a", since=1000.0, now=1010.0)    # still the killed one's registration
    assert faults._lists(summary, "i5-b", since=1000.0, now=1010.0)


def test_the_topologys_files_are_absolute_under_a_relative_out(tmp_path, monkeypatch):
    """``--out benchmarks/results/soak`` (relative, as the default is): Storm runs the components in the
    topology's resources directory, so the sink and times paths they are given must be absolute (the first
    hour's run died at submission on a relative sink)."""
    monkeypatch.chdir(tmp_path)
    run = soak.Soak(config=None, bench=None, injector=None, out=Path("results") / "soak", record={}, schedule=[],
                    timetable=[], workload=argparse.Namespace(name="topk-link"))
    assert run.scratch.is_absolute() and run.scratch == tmp_path / "results" / "soak" / "topology"
