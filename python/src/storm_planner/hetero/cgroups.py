"""Machine types on one host: cgroup v1 CPU quotas (what this host allows is probed first).

A quota caps a machine's *capacity*: a throttled task waits, so its latency grows, but one tuple
still costs the same CPU time (see :mod:`storm_planner.hetero.profiling`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .errors import ProfilingError

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
CFS_PERIOD_US = 100_000


def quota_us(cpu_capacity: float, period_us: int = CFS_PERIOD_US) -> int:
    """A supervisor's ``cpu`` (100 = one core) as a CFS quota per period (at least 1 ms)."""
    if cpu_capacity <= 0:
        raise ProfilingError(f"supervisor cpu {cpu_capacity}: must be positive to become a CPU quota")
    return max(1000, int(round(period_us * cpu_capacity / 100.0)))




@dataclass(frozen=True)
class EmulationSupport:
    """What this host allows to make one machine type differ from another."""

    cgroup_quota: bool
    taskset: bool
    detail: str


def detect_emulation(cgroup_root: Path = CGROUP_CPU) -> EmulationSupport:
    """Try a throw-away cgroup with a quota, and ``taskset``; say what works."""
    notes = []
    cgroup_ok = False
    probe = cgroup_root / f"storm-planner-probe-{os.getpid()}"
    try:
        probe.mkdir()
        (probe / "cpu.cfs_quota_us").write_text("50000")
        cgroup_ok = (probe / "cpu.cfs_quota_us").read_text().strip() == "50000"
        notes.append(f"cgroup v1 CPU quota in {cgroup_root}: {'works' if cgroup_ok else 'not applied'}")
    except OSError as error:
        notes.append(f"cgroup v1 CPU quota in {cgroup_root}: unavailable ({error.strerror or error})")
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass
    taskset_ok = shutil.which("taskset") is not None and subprocess.run(
        ["taskset", "-p", str(os.getpid())], capture_output=True).returncode == 0
    notes.append(f"taskset: {'works' if taskset_ok else 'unavailable'}")
    return EmulationSupport(cgroup_ok, taskset_ok, "; ".join(notes))


class CgroupGroup:
    """A cgroup v1 group under ``root``; processes moved in take their future children along.

    On exit, leftover processes (already stopped daemons cannot be) go back to the root group and
    the group is removed.
    """

    def __init__(self, name: str, root: Path) -> None:
        self.path = root / name

    def __enter__(self):
        self.path.mkdir(exist_ok=True)
        return self

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def __exit__(self, *exc) -> None:
        root_procs = self.path.parent / "cgroup.procs"
        for pid in (self.path / "cgroup.procs").read_text().split():
            try:
                root_procs.write_text(pid)
            except OSError:
                pass
        try:
            self.path.rmdir()
        except OSError:
            pass


class CpuQuota(CgroupGroup):
    """A cgroup v1 CPU group with a CFS quota: a machine of ``cpu_capacity`` (100 = one core)."""

    def __init__(self, name: str, cpu_capacity: float, root: Path = CGROUP_CPU) -> None:
        super().__init__(name, root)
        self.quota = quota_us(cpu_capacity)

    def __enter__(self) -> "CpuQuota":
        super().__enter__()
        (self.path / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (self.path / "cpu.cfs_quota_us").write_text(str(self.quota))
        return self

    def set_capacity(self, cpu_capacity: float) -> None:
        """Change the quota of the running group (it applies from the next CFS period)."""
        self.quota = quota_us(cpu_capacity)
        (self.path / "cpu.cfs_quota_us").write_text(str(self.quota))

    def throttled(self) -> dict[str, int]:
        """``cpu.stat`` of the group (nr_throttled, throttled_time ns, ...)."""
        stat = {}
        for line in (self.path / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            stat[key] = int(value)
        return stat


def throttled_share(before: Mapping[str, int], after: Mapping[str, int]) -> float:
    """Share of CFS periods throttled between two reads of a group's ``cpu.stat``."""
    periods = after.get("nr_periods", 0) - before.get("nr_periods", 0)
    throttled = after.get("nr_throttled", 0) - before.get("nr_throttled", 0)
    return throttled / periods if periods > 0 else 0.0


class CpuAccount(CgroupGroup):
    """A cgroup v1 ``cpuacct`` group: the CPU time its processes (and their later children) used.

    Beside the quota group, so the machine's whole CPU — worker JVM overhead, serialisation and
    transfer, garbage collection, the supervisor itself — can be compared with the CPU the metrics
    hook attributes to the machine's tasks (the only CPU eq. 7 describes)."""

    def __init__(self, name: str, root: Path = CGROUP_CPUACCT) -> None:
        super().__init__(name, root)

    def usage_ns(self) -> int:
        return int((self.path / "cpuacct.usage").read_text().strip())
