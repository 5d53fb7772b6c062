"""Per-instance provisions (hetero.instances): real cgroup v1 groups on real processes.

The processes here are plain Python busy loops; ``tests/e2e/test_scale_run.py`` does the same to the
subprocesses of a running topology's executors.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storm_planner.profiling.cgroups import detect_emulation
from storm_planner.profiling.errors import ProfilingError
from storm_planner.profiling.processes import ProcessId
from storm_planner.scaling.live.instances import (
    CGROUP_MEMORY,
    Instance,
    InstanceProvisions,
    Provision,
    Subprocess,
    provisions_in_order,
    resident_mb,
    running_instances,
)

writable = pytest.mark.skipif(not (detect_emulation().cgroup_quota and os.access(CGROUP_MEMORY, os.W_OK)),
                              reason="needs writable cgroup v1 cpu and memory hierarchies (root)")

LOG_LINES = """\
2026-11-24 21:17:22.166 o.a.s.s.ShellSpout Thread-15-tweets-executor[8, 8] [INFO] Launched subprocess with pid {spout}
2026-11-24 21:17:22.201 o.a.s.t.ShellBolt Thread-17-relay-executor[3, 4] [INFO] Launched subprocess with pid {dead}
2026-11-24 21:17:22.305 o.a.s.t.ShellBolt Thread-19-relay-executor[5, 5] [INFO] Launched subprocess with pid {relay}
2026-11-24 21:18:40.010 o.a.s.t.ShellBolt Thread-23-relay-executor[3, 4] [INFO] Launched subprocess with pid {restarted}
2026-11-24 21:18:40.310 o.a.s.t.ShellBolt Thread-23-relay-executor[3, 4] [INFO] Launched subprocess with pid {second}
"""


def busy_process() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def of_this_test(*pids: int) -> tuple[Subprocess, ...]:
    """Processes this test started, as subprocesses of an executor whose worker is this test's process."""
    return tuple(Subprocess(ProcessId.of(pid), ProcessId.of(os.getpid())) for pid in pids)


def test_instances_are_read_from_the_workers_logs_one_subprocess_per_task_live_only(tmp_path, storm_worker):
    worker = storm_worker(children=4)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    spout, relay, restarted, second = worker.children
    worker.write_log(LOG_LINES.format(spout=spout, dead=dead.pid, relay=relay, restarted=restarted, second=second))
    found = running_instances(tmp_path, "topo-1-1", "relay")
    # Executor [3, 4] runs two tasks, each in its own subprocess; its first launch's pid is gone.
    assert [(i.first_task, i.last_task, i.pids) for i in found] == [(3, 4, (restarted, second)), (5, 5, (relay,))]
    assert {s.worker for i in found for s in i.subprocesses} == {ProcessId.of(worker.pid)}
    assert running_instances(tmp_path, "topo-1-1", "tweets")[0].pids == (spout,)
    assert running_instances(tmp_path, "other-2-2", "relay") == []


def test_a_decision_becomes_one_provision_per_instance_in_the_listed_order():
    small, large = Provision("r1", 0.5, 256, 1.0), Provision("r2", 1.0, 512, 2.0)
    assert provisions_in_order({"r2": 1, "r1": 2}, [small, large]) == [small, small, large]
    with pytest.raises(ProfilingError, match="r9"):
        provisions_in_order({"r9": 1}, [small, large])


@writable
def test_each_instance_runs_under_its_own_cpu_quota_and_memory_limit():
    fast, slow = busy_process(), busy_process()
    try:
        instances = [Instance(1, 1, "work", of_this_test(fast.pid)), Instance(2, 2, "work", of_this_test(slow.pid))]
        provisions = [Provision("r2", 0.6, 256, 1.0), Provision("r1", 0.05, 128, 0.5)]
        with InstanceProvisions(f"storm-planner-test-{os.getpid()}") as groups:
            applied = groups.apply(instances, provisions)
            assert [a["provision"] for a in applied] == ["r2", "r1"]
            assert groups.quota_of(instances[0]) == pytest.approx(0.6)
            assert groups.quota_of(instances[1]) == pytest.approx(0.05)
            memberships = Path(f"/proc/{slow.pid}/cgroup").read_text()
            assert f"{groups.cpu_parent.name}/2-2" in memberships
            limit = int((groups.memory_parent / "2-2" / "memory.limit_in_bytes").read_text())
            assert limit == 128 * 1024 * 1024
            before = {p.pid: cpu_seconds(p.pid) for p in (fast, slow)}
            time.sleep(3.0)
            used = {pid: (cpu_seconds(pid) - t) / 3.0 for pid, t in before.items()}
            # Enforced: the throttled loop stays near its 0.05 cores; the other gets far more (a quota far
            # below a fair share of 2 busy cores, so the gap holds on a loaded machine).
            assert used[slow.pid] < 0.05 * 1.5, used
            assert used[fast.pid] > 2 * used[slow.pid], used
        assert not groups.cpu_parent.exists() and not groups.memory_parent.exists()
    finally:
        fast.kill()
        slow.kill()


@writable
def test_a_memory_limit_below_what_an_instance_holds_is_refused_naming_it():
    process = subprocess.Popen([sys.executable, "-c", "import time; block = bytearray(80 << 20); time.sleep(60)"])
    try:
        deadline = time.monotonic() + 10
        while resident_mb(process.pid) < 80 and time.monotonic() < deadline:
            time.sleep(0.1)
        with InstanceProvisions(f"storm-planner-test-{os.getpid()}") as groups:
            with pytest.raises(
                ProfilingError, match=rf"provision r1 allows 33.2 MB but instance work\[7\] \(pid {process.pid}\)"
            ):
                groups.apply([Instance(7, 7, "work", of_this_test(process.pid))], [Provision("r1", 0.6, 33.2, 0.6)])
            assert process.poll() is None  # nothing was applied: the instance lives on
    finally:
        process.kill()
