"""Machine types on one host: cgroup v1 CPU quotas (what this host allows is probed first).

A quota caps a machine's *capacity*: a throttled task waits, so its latency grows, but one tuple
still costs the same CPU time (see :mod:`storm_planner.profiling.profiler`).

A process joins a group only if it is one this process started (or, for an executor's subprocess,
one of its worker's: :mod:`.processes`), and leaves it, when the group goes, for the group it came
from.
"""
from __future__ import annotations

import errno
import math
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ProfilingError
from .processes import MAX_TREE_DEPTH, ProcessId, cgroup_of, parent_of, refusal

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
# The CFS period of an emulated machine: Linux's default, which container runtimes keep too. A group that spends
# its quota early is frozen for the rest of the period, every thread at once. A shorter period is no truer
# machine: measured side by side under RAS on the hetero cluster over capacity, 10 ms processed 19 % more on
# bargains but 8 % less on trends, where the large node used only 66 % of its 70 % (the kernel hands a group's
# quota to each CPU in 5 ms slices, and at 10 ms part of it is stranded). A bench may choose another period
# (``bench capacity --cfs-period-ms``); benchmarks/reports/cfs-period.md has the measurements.
CFS_PERIOD_US = 100_000
# The period of the groups judged by the share of periods throttled (the profiler's ``max_throttled``, the live
# sampler's ``min_throttled``): their thresholds were set at Linux's default, and a shorter period throttles the
# same load in more of its periods, so they keep it whatever the emulated machines use.
THROTTLE_JUDGED_PERIOD_US = 100_000
MIN_QUOTA_US = 1000      # the kernel's least quota
MAX_PERIOD_US = 1_000_000  # and its longest period


def period_us(cpu_capacity: float, base: int = CFS_PERIOD_US) -> int:
    """The CFS period for a machine of ``cpu_capacity``: ``base``, longer (up to the kernel's longest) where
    its quota would fall below the kernel's least (at 100 ms, a machine under 1 % of a core)."""
    if cpu_capacity <= 0:
        raise ProfilingError(f"supervisor cpu {cpu_capacity}: must be positive to become a CPU quota")
    _check_period(base)
    return min(MAX_PERIOD_US, max(base, math.ceil(MIN_QUOTA_US * 100.0 / cpu_capacity)))


def _check_period(period: int) -> None:
    if not MIN_QUOTA_US <= period <= MAX_PERIOD_US:
        raise ProfilingError(f"CFS period {period} µs: the kernel takes {MIN_QUOTA_US} to {MAX_PERIOD_US}")


def quota_us(cpu_capacity: float, period: int | None = None) -> int:
    """A supervisor's ``cpu`` (100 = one core) as a CFS quota per ``period`` (default: :func:`period_us`), at
    least 1 ms."""
    if cpu_capacity <= 0:
        raise ProfilingError(f"supervisor cpu {cpu_capacity}: must be positive to become a CPU quota")
    period = period_us(cpu_capacity) if period is None else period
    return max(MIN_QUOTA_US, int(round(period * cpu_capacity / 100.0)))


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


class EnrolmentRefused(ProfilingError):
    """A process may not join a cgroup: it is not the process meant (see :func:`.processes.refusal`)."""

    def __init__(self, pid: int, reason: str) -> None:
        super().__init__(f"pid {pid} not put in a cgroup: {reason}")
        self.pid, self.reason = pid, reason


class CgroupGroup:
    """A cgroup v1 group under ``root`` (in the hierarchy of ``controller``); processes moved in take
    their future children along.

    Only a process of the tree meant may join (:meth:`add`), and each one goes back on exit to the
    group it came from (its children forked since: to their parent's), not to the hierarchy's root,
    which would lift the limits that group held it to. Then the group is removed.
    """

    controller = "cpu"

    def __init__(self, name: str, root: Path, controller: str | None = None) -> None:
        self.path = root / name
        self.controller = controller or self.controller
        self.origins: dict[ProcessId, Path] = {}  # the group each process came from

    def __enter__(self):
        self.path.mkdir(exist_ok=True)
        return self

    def add(self, process: int | ProcessId, tree: ProcessId | None = None) -> None:
        """Move ``process`` in: it must descend from ``tree`` (default: this process, which started it)
        and, given as a :class:`ProcessId`, still be the process found then.

        Raises :class:`EnrolmentRefused`, naming the pid and why, for pid 1, a process outside the tree
        or one whose pid was reused."""
        if not isinstance(process, ProcessId):
            process = ProcessId.of(process) or ProcessId(int(process), -1)
        reason = refusal(process, tree or ProcessId.of(os.getpid()))
        if reason is not None:
            raise EnrolmentRefused(process.pid, reason)
        if process not in self.origins:
            self.origins[process] = self._group_now(process.pid)
        (self.path / "cgroup.procs").write_text(str(process.pid))

    def members(self) -> list[int]:
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def __exit__(self, *exc) -> None:
        # A member may fork between the give-back and the rmdir (a worker starting a subprocess), and
        # the rmdir then fails: give back again, a few times, rather than leave the group behind.
        for _ in range(5):
            for pid in self.members():
                self._give_back(pid)
            try:
                self.path.rmdir()
                return
            except OSError as error:
                if error.errno != errno.EBUSY:   # gone already, or not a cgroup: nothing to wait for
                    return
                time.sleep(0.2)

    def _group_now(self, pid: int) -> Path:
        path = cgroup_of(pid, self.controller)
        root = hierarchy_root(self.path)
        # Outside this cgroup namespace the path climbs above its root ("/../x"): unreachable from here.
        if not path or ".." in Path(path).parts:
            return root
        return root / path.lstrip("/")

    def _give_back(self, pid: int) -> None:
        """To the group it came from, or the nearest of that group's parents still there."""
        root, target = hierarchy_root(self.path), self._origin_of(pid)
        while target != root and not (target / "cgroup.procs").exists() and root in target.parents:
            target = target.parent
        try:
            (target / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass  # exited meanwhile

    def _origin_of(self, pid: int) -> Path:
        # A process forked after its parent joined came from where that parent came from.
        current: int | None = pid
        for _ in range(MAX_TREE_DEPTH):
            process = ProcessId.of(current) if current else None
            if process is None or process.pid <= 1:
                break
            if process in self.origins:
                return self.origins[process]
            current = parent_of(current)
        return next(iter(self.origins.values()), self.path.parent)


def hierarchy_root(path: Path) -> Path:
    """The root of the cgroup hierarchy ``path`` is in: its topmost ancestor that is a group."""
    root = path
    while root.parent != root and (root.parent / "cgroup.procs").exists():
        root = root.parent
    return root


class CpuQuota(CgroupGroup):
    """A cgroup v1 CPU group with a CFS quota: a machine of ``cpu_capacity`` (100 = one core)."""

    def __init__(self, name: str, cpu_capacity: float, root: Path = CGROUP_CPU, period: int | None = None) -> None:
        super().__init__(name, root, "cpu")
        self._base_period = period or CFS_PERIOD_US     # lengthened only where the quota would be too small
        self.period, self.quota = self._sized(cpu_capacity)

    def __enter__(self) -> CpuQuota:
        super().__enter__()
        (self.path / "cpu.cfs_period_us").write_text(str(self.period))
        (self.path / "cpu.cfs_quota_us").write_text(str(self.quota))
        return self

    def _sized(self, cpu_capacity: float, base: int | None = None) -> tuple[int, int]:
        """(period, quota) in µs for a machine of ``cpu_capacity`` (``base``: the period, default the group's)."""
        period = period_us(cpu_capacity, base or self._base_period)
        return period, quota_us(cpu_capacity, period)

    @property
    def cores(self) -> float:
        """The CPU the group allows, in cores."""
        return self.quota / self.period

    def set_capacity(self, cpu_capacity: float, period: int | None = None) -> None:
        """Change the quota of the running group (it applies from the next CFS period); ``period``: for this
        capacity only (e.g. while a step is judged by its throttled periods), else the group's own."""
        self.period, self.quota = self._sized(cpu_capacity, period)   # period_us checks the period
        (self.path / "cpu.cfs_period_us").write_text(str(self.period))
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
        super().__init__(name, root, "cpuacct")

    def usage_ns(self) -> int:
        return int((self.path / "cpuacct.usage").read_text().strip())


class MemoryLimit(CgroupGroup):
    """A cgroup v1 ``memory`` group: what its processes may hold."""

    def __init__(self, name: str, root: Path = CGROUP_MEMORY) -> None:
        super().__init__(name, root, "memory")

    def __enter__(self) -> MemoryLimit:
        super().__enter__()
        # Charge what a process already holds to the group it joins, so the limit covers all of it.
        # Newer kernels refuse (the knob is deprecated): then the limit covers what it allocates from
        # now on (callers check that it holds less than the limit already).
        try:
            (self.path / "memory.move_charge_at_immigrate").write_text("1")
        except OSError:
            pass
        return self

    def set_limit_mb(self, memory_mb: float) -> None:
        (self.path / "memory.limit_in_bytes").write_text(str(int(memory_mb * 1024 * 1024)))
