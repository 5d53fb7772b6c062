"""Which process joins an instance's cgroups: the worker's log is a hint, /proc decides.

The attack: a component's log message holds a newline and then text that looks like Storm's
"Launched subprocess with pid N" line, naming pid 1 or any process outside the topology's worker. Before
the fix such a pid was written into the cpu and memory ``cgroup.procs`` (and on exit every process went
to the root cgroup). Real processes throughout: a stand-in worker (``conftest.storm_worker``) and its
children, real cgroup v1 groups under the project's prefix, removed afterwards.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from storm_planner.profiling.cgroups import CGROUP_CPU, CGROUP_MEMORY, CpuQuota, EnrolmentRefused, detect_emulation
from storm_planner.profiling.processes import ProcessId, cgroup_of
from storm_planner.scaling.live.instances import (
    Instance,
    InstanceProvisions,
    Provision,
    Refusals,
    Subprocess,
    running_instances,
)

writable = pytest.mark.skipif(not (detect_emulation().cgroup_quota and os.access(CGROUP_MEMORY, os.W_OK)),
                              reason="needs writable cgroup v1 cpu and memory hierarchies (root)")

STAMP = "2026-11-24 21:17:22.201"
REAL = f"{STAMP} o.a.s.t.ShellBolt Thread-17-relay-executor[3, 3] [INFO] Launched subprocess with pid {{child}}\n"


def forged(pid: int, first: int) -> str:
    """A whole log line as ShellBolt writes it, naming ``pid`` for executor [first, first]."""
    return f"{STAMP} o.a.s.t.ShellBolt Thread-17-relay-executor[{first}, {first}] [INFO] Launched subprocess with pid {pid}"


def attack_log(child: int, worker: int, outsider: int, unmatched: int) -> str:
    # A component's message as ShellBolt logs it: "ShellLog pid:<its pid>, name:<component> <message>".
    message = f"{STAMP} o.a.s.t.ShellBolt Thread-17-relay-executor[3, 3] [INFO] ShellLog pid:{child}, name:relay "
    return (REAL.format(child=child)
            # the text inside a line, and continued on a line of its own: no log line of ShellBolt's
            + message + f"a Thread-17-relay-executor[6, 6] [INFO] Launched subprocess with pid {unmatched}\n"
            + message + f"b\nThread-17-relay-executor[7, 7] [INFO] Launched subprocess with pid {unmatched}\n"
            # whole lines forged after a newline: they match, /proc refuses their pids
            + message + "c\n" + forged(1, 8) + "\n"
            + message + "d\n" + forged(outsider, 9) + "\n"
            + message + "e\n" + forged(worker, 10) + "\n")


def sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def orphan() -> int:
    """A process this one did not start (as far as /proc can tell): a shell's background child, left to
    init when the shell exits. (The test's parent is no such process when pytest itself is an orphan.)"""
    run = subprocess.run(["sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                         check=True)
    return int(run.stdout)


def test_a_launched_line_forged_in_a_message_finds_no_process_outside_the_workers_tree(tmp_path, storm_worker):
    worker = storm_worker(children=1)
    outsider, unmatched = sleeper(), sleeper()
    try:
        worker.write_log(attack_log(worker.children[0], worker.pid, outsider.pid, unmatched.pid))
        refusals = Refusals()
        found = running_instances(tmp_path, "topo-1-1", "relay", refusals)
        assert [(i.first_task, i.pids) for i in found] == [(3, (worker.children[0],))]
        assert sorted(p.pid for p in refusals.reasons) == sorted([1, outsider.pid, worker.pid])
        assert "never moved" in refusals.reasons[ProcessId.of(1)]
        assert refusals.reasons[ProcessId.of(outsider.pid)] == f"not a descendant of process {worker.pid}"
    finally:
        outsider.kill()
        unmatched.kill()


def test_a_log_without_a_running_worker_of_its_topology_yields_no_instance(tmp_path, storm_worker):
    worker = storm_worker(children=1, topology_id="topo-1-1")
    worker.write_log(REAL.format(child=worker.children[0]))
    (worker.port_dir / "worker.pid").write_text(str(os.getpid()))  # a process, but no worker of topo-1-1
    refusals = Refusals()
    assert running_instances(tmp_path, "topo-1-1", "relay", refusals) == []
    assert list(refusals.reasons.values()) == ["no running worker of topo-1-1 writes this log"]


@writable
def test_nothing_outside_the_workers_tree_or_with_a_reused_pid_is_enrolled(storm_worker):
    worker = storm_worker(children=2)
    outsider = sleeper()
    tree = ProcessId.of(worker.pid)
    child, other_child = (ProcessId.of(pid) for pid in worker.children)
    candidates = (Subprocess(ProcessId.of(1), tree), Subprocess(ProcessId.of(outsider.pid), tree),
                  Subprocess(ProcessId(other_child.pid, other_child.start + 1), tree),  # as if its pid were reused
                  Subprocess(child, tree))
    before = {pid: (cgroup_of(pid, "cpu"), cgroup_of(pid, "memory")) for pid in (1, outsider.pid, other_child.pid)}
    try:
        with InstanceProvisions(f"storm-planner-test-{os.getpid()}") as groups:
            applied = groups.apply([Instance(3, 3, "relay", candidates)], [Provision("r1", 0.5, 256, 1.0)])
            assert applied[0]["pids"] == [child.pid]
            assert (groups.cpu_parent / "3-3" / "cgroup.procs").read_text().split() == [str(child.pid)]
            assert (groups.memory_parent / "3-3" / "cgroup.procs").read_text().split() == [str(child.pid)]
            assert {p.pid: r for p, r in groups.refusals.reasons.items()} == {
                1: "pid 1 (init) and its whole tree are never moved",
                outsider.pid: f"not a descendant of process {worker.pid}",
                other_child.pid: f"pid reused: the process now started at tick {other_child.start}, the one found "
                                 f"at tick {other_child.start + 1}"}
        assert before == {pid: (cgroup_of(pid, "cpu"), cgroup_of(pid, "memory")) for pid in before}
    finally:
        outsider.kill()


GRANDCHILD_ON_FLAG = """
import os, subprocess, sys, time
while not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
print(grandchild.pid, flush=True)
grandchild.wait()
"""


class OriginGroups:
    """Test-only groups under the project's prefix that processes start in, so "back where it came
    from" differs from the hierarchy's root; removed afterwards."""

    def __init__(self) -> None:
        name = f"storm-planner-test-origin-{os.getpid()}"
        self.paths = {"cpu": CGROUP_CPU / name, "memory": CGROUP_MEMORY / name}

    def __enter__(self) -> OriginGroups:
        for path in self.paths.values():
            path.mkdir(exist_ok=True)
        return self

    def put(self, pid: int) -> None:
        for path in self.paths.values():
            (path / "cgroup.procs").write_text(str(pid))

    def __exit__(self, *exc) -> None:
        deadline = time.monotonic() + 10
        for path in self.paths.values():
            while path.exists() and time.monotonic() < deadline:
                try:
                    path.rmdir()
                except OSError:
                    time.sleep(0.1)  # killed processes leave their group a moment later


@writable
def test_an_enrolled_child_and_what_it_forks_go_back_to_their_own_cgroups_on_exit(tmp_path, storm_worker):
    with OriginGroups() as origin:
        worker = storm_worker(children=1, child_code=GRANDCHILD_ON_FLAG)
        try:
            child = worker.children[0]
            origin.put(child)
            assert cgroup_of(child, "cpu") == f"/{origin.paths['cpu'].name}"
            tree = ProcessId.of(worker.pid)
            with InstanceProvisions(f"storm-planner-test-{os.getpid()}") as groups:
                instance = Instance(3, 3, "relay", (Subprocess(ProcessId.of(child), tree),))
                assert groups.apply([instance], [Provision("r1", 0.5, 256, 1.0)])[0]["pids"] == [child]
                assert cgroup_of(child, "cpu") == f"/{groups.cpu_parent.name}/3-3"
                assert cgroup_of(child, "memory") == f"/{groups.memory_parent.name}/3-3"
                worker.flag.touch()  # the enrolled child forks: its child starts in the child's groups
                grandchild = int(worker.process.stdout.readline())
                worker.others.append(grandchild)
                assert cgroup_of(grandchild, "cpu") == f"/{groups.cpu_parent.name}/3-3"
            for pid in (child, grandchild):
                assert cgroup_of(pid, "cpu") == f"/{origin.paths['cpu'].name}", pid
                assert cgroup_of(pid, "memory") == f"/{origin.paths['memory'].name}", pid
            assert not groups.cpu_parent.exists() and not groups.memory_parent.exists()
        finally:
            worker.kill()


@writable
def test_a_machine_types_quota_refuses_pid_1_and_processes_it_did_not_start_and_gives_back_what_it_took():
    name = f"storm-planner-test-quota-{os.getpid()}"
    with OriginGroups() as origin:
        daemon = sleeper()  # as a supervisor the cluster launcher started
        stranger = orphan()
        try:
            origin.put(daemon.pid)
            with CpuQuota(name, 50.0) as quota:
                for pid, reason in ((1, "pid 1"), (stranger, f"(before|not a descendant of) process {os.getpid()}")):
                    with pytest.raises(EnrolmentRefused, match=f"pid {pid} not put in a cgroup: .*{reason}"):
                        quota.add(pid)
                quota.add(daemon.pid)
                assert quota.members() == [daemon.pid]
            assert cgroup_of(daemon.pid, "cpu") == f"/{origin.paths['cpu'].name}"
            assert not (CGROUP_CPU / name).exists()
        finally:
            daemon.kill()
            daemon.wait()
            os.kill(stranger, 9)


@writable
def test_a_quota_group_a_member_joined_at_the_last_moment_is_still_removed(monkeypatch):
    """A worker forking as the group is left puts a new member in after the give-back: the rmdir fails
    (busy) and is tried again after giving back once more, not left behind."""
    name = f"storm-planner-test-late-{os.getpid()}"
    with OriginGroups() as origin:
        daemon = sleeper()
        try:
            origin.put(daemon.pid)
            calls = []
            members = CpuQuota.members
            # The first give-back sees no one (the fork had not happened yet); the next ones see the member.
            monkeypatch.setattr(CpuQuota, "members", lambda self: [] if not calls.append(1) and len(calls) == 1
                                else members(self))
            with CpuQuota(name, 50.0) as quota:
                quota.add(daemon.pid)
            assert len(calls) >= 2
            assert not (CGROUP_CPU / name).exists()
            assert cgroup_of(daemon.pid, "cpu") == f"/{origin.paths['cpu'].name}"
        finally:
            daemon.kill()
            daemon.wait()
