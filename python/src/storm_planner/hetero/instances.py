"""One operator instance, one provision: CPU and memory enforced per executor of a multilang component.

QEScalor (Mu et al. 2020) gives each instance of an operator its own resource provision (CPU and
memory). In Storm an instance is an executor, a thread of a worker JVM — but the executor of a
multilang component (a streamparse spout or bolt) does its work in a subprocess of its own, so its
provision can be enforced on that process: a cgroup v1 ``cpu`` group with a CFS quota of the
provision's cores and a ``memory`` group limited to its MB, one pair per instance.

Which process is which executor: Storm's ``ShellBolt``/``ShellSpout`` log the subprocess' pid at
launch from the executor's thread, ``Thread-N-<component>-executor[<first>, <last>]``, in the
worker's log (``<storm.log.dir>/workers-artifacts/<topology id>/<port>/worker.log``). After a
rebalance the new executors log new pids; only live processes count.

A memory limit below what an instance already holds would make the kernel kill it (and Storm restart
its worker): such a provision is refused, naming the instance, its resident memory and the limit.
Executors of Java components are threads sharing their worker's JVM: no per-instance provision can be
enforced on them, and :func:`running_instances` finds none.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from storm_planner.planners.qescalor.problem import Resource as Provision

from .cgroups import CGROUP_CPU, CpuQuota
from .errors import ProfilingError

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
_LAUNCHED = re.compile(r"Thread-\d+-(?P<component>.+?)-executor\[(?P<first>\d+), (?P<last>\d+)\] "
                       r"\[INFO\] Launched subprocess with pid (?P<pid>\d+)")


@dataclass(frozen=True, order=True)
class Instance:
    """A running executor of a multilang component and its subprocesses (one per task it runs)."""

    first_task: int
    last_task: int
    component: str
    pids: tuple[int, ...]

    @property
    def key(self) -> str:
        return f"{self.first_task}-{self.last_task}"


def running_instances(log_dir: Path, topology_id: str, component: str) -> list[Instance]:
    """The live subprocesses of ``component``'s executors, by task, from its workers' logs.

    Each task of an executor runs its own subprocess; an executor started again (its worker
    restarted) logs new pids, and only live ones count."""
    launched: dict[tuple[int, int], list[int]] = {}
    for log in sorted((Path(log_dir) / "workers-artifacts" / topology_id).glob("*/worker.log")):
        for match in _LAUNCHED.finditer(log.read_text(errors="replace")):
            if match["component"] == component:
                launched.setdefault((int(match["first"]), int(match["last"])), []).append(int(match["pid"]))
    instances = [Instance(first, last, component, tuple(p for p in pids if _alive(p)))
                 for (first, last), pids in launched.items()]
    return sorted(i for i in instances if i.pids)


def wait_for_instances(log_dir: Path, topology_id: str, component: str, count: int, wait_s: float,
                       poll_s: float = 1.0, sleep=time.sleep, clock=time.monotonic) -> list[Instance]:
    """The component's live instances once there are ``count`` of them, or what runs after ``wait_s``."""
    deadline = clock() + wait_s
    found = running_instances(log_dir, topology_id, component)
    while len(found) != count and clock() < deadline:
        sleep(poll_s)
        found = running_instances(log_dir, topology_id, component)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def resident_mb(pid: int) -> float:
    """Resident memory of a process in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def provisions_in_order(counts: Mapping[str, int], provisions: Sequence[Provision]) -> list[Provision]:
    """A decision's instance counts (provision id → count) as one provision per instance, in the order
    the provisions are listed (the instances, ordered by task, take them in that order)."""
    by_id = {p.id: p for p in provisions}
    unknown = sorted(set(counts) - set(by_id))
    if unknown:
        raise ProfilingError(f"provision(s) {', '.join(unknown)} not among {', '.join(by_id)}")
    return [p for p in provisions for _ in range(counts.get(p.id, 0))]


def provisions_from_template(template: Mapping) -> list[Provision]:
    """The provisions of a scaling problem (its ``resources``), in their order."""
    return [Provision(r["id"], float(r["cpu"]), float(r["memory_mb"]), float(r.get("price", 0.0)))
            for r in template["resources"]]


class InstanceProvisions:
    """Per-instance cgroups (cpu quota and memory limit) under one parent group each, removed on exit."""

    def __init__(self, name: str, cpu_root: Path = CGROUP_CPU, memory_root: Path = CGROUP_MEMORY) -> None:
        self.cpu_parent, self.memory_parent = cpu_root / name, memory_root / name
        self.groups: dict[str, tuple[CpuQuota, Path]] = {}  # by instance key (its task range)

    def __enter__(self) -> "InstanceProvisions":
        for parent in (self.cpu_parent, self.memory_parent):
            try:
                parent.mkdir(exist_ok=True)
            except OSError as error:
                raise ProfilingError(f"per-instance provisions need a writable cgroup v1 hierarchy: cannot "
                                     f"create {parent} ({error.strerror or error})") from None
        return self

    def apply(self, instances: Sequence[Instance], provisions: Sequence[Provision]) -> list[dict]:
        """Put each instance (ordered by task) under its provision; returns what was applied, per instance.

        ``provisions`` has one entry per instance; instances beyond it keep their last provision (a
        rebalance that has not yet stopped an executor). Groups of instances gone are removed.
        """
        ordered = sorted(instances)
        for instance, provision in zip(ordered, provisions):
            held = sum(map(resident_mb, instance.pids))
            if provision.memory_mb < held:
                raise ProfilingError(
                    f"provision {provision.id} allows {provision.memory_mb:g} MB but instance "
                    f"{instance.component}[{instance.first_task}] (pid {', '.join(map(str, instance.pids))}) already "
                    f"holds {held:.1f} MB: the kernel would kill it; give the provision more memory")
        applied = []
        for instance, provision in zip(ordered, provisions):
            quota, memory = self._groups_of(instance.key)
            quota.set_capacity(100.0 * provision.cpu)
            (memory / "memory.limit_in_bytes").write_text(str(int(provision.memory_mb * 1024 * 1024)))
            for pid in instance.pids:
                quota.add(pid)
                (memory / "cgroup.procs").write_text(str(pid))  # its pages move along (see _groups_of)
            applied.append({"task": instance.first_task, "pids": list(instance.pids), "provision": provision.id,
                            "cpu": provision.cpu, "memory_mb": provision.memory_mb})
        self._forget({i.key for i in ordered})
        return applied

    def _groups_of(self, key: str) -> tuple[CpuQuota, Path]:
        if key not in self.groups:
            quota = CpuQuota(key, 100.0, root=self.cpu_parent).__enter__()
            memory = self.memory_parent / key
            memory.mkdir(exist_ok=True)
            # Charge what the process already holds to its new group, so the limit covers all of it.
            # Newer kernels refuse (the knob is deprecated): then the limit covers what it allocates
            # from now on, and apply() has checked that it holds less than the limit already.
            try:
                (memory / "memory.move_charge_at_immigrate").write_text("1")
            except OSError:
                pass
            self.groups[key] = (quota, memory)
        return self.groups[key]

    def quota_of(self, instance: Instance) -> float | None:
        """The CPU (cores) the instance's group allows now (None: the instance has no group)."""
        if instance.key not in self.groups:
            return None
        return int((self.groups[instance.key][0].path / "cpu.cfs_quota_us").read_text()) / 100_000.0

    def cpu_group(self, instance: Instance) -> CpuQuota:
        return self._groups_of(instance.key)[0]

    def _forget(self, keep: set[str]) -> None:
        for key in [k for k in self.groups if k not in keep]:
            quota, memory = self.groups.pop(key)
            _remove_group(quota.path)
            _remove_group(memory)

    def __exit__(self, *exc) -> None:
        self._forget(set())
        for parent in (self.cpu_parent, self.memory_parent):
            _remove_group(parent)


def _remove_group(path: Path) -> None:
    """Back to the root group whatever still runs in ``path``, then remove it (gone already: fine)."""
    root = path
    while root.parent.name and (root.parent / "cgroup.procs").exists() and root.parent != root:
        root = root.parent
    try:
        for pid in (path / "cgroup.procs").read_text().split():
            try:
                (root / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        path.rmdir()
    except OSError:
        pass


class ProvisionEnforcer:
    """What ``scale run --enforce-provisions`` calls after each decision: waits (up to ``wait_s``) until
    the component runs as many instances as the decision wants, then gives each its provision.

    Returns the provisions applied, one entry per instance (task, pid, provision, cpu, memory_mb)."""

    def __init__(self, groups: InstanceProvisions, log_dir: Path, component: str,
                 provisions: Sequence[Provision], wait_s: float = 90.0) -> None:
        self.groups, self.log_dir, self.component = groups, Path(log_dir), component
        self.provisions, self.wait_s = list(provisions), wait_s

    def __call__(self, topology_id: str, counts: Mapping[str, int], instances: int) -> list[dict]:
        """``counts``: instances per provision; ``instances``: how many run (the counts' sum, or fewer when
        the component has fewer tasks: the first provisions in order are applied)."""
        wanted = provisions_in_order(counts, self.provisions)[:instances]
        running = wait_for_instances(self.log_dir, topology_id, self.component, len(wanted), self.wait_s)
        if not running:
            raise ProfilingError(
                f"no running subprocess of {self.component!r} in {self.log_dir}/workers-artifacts/{topology_id}: "
                "per-instance provisions need a multilang (e.g. streamparse) component and its workers' logs")
        if len(running) < len(wanted):
            raise ProfilingError(f"{self.component!r} runs {len(running)} instance(s) after {self.wait_s:g} s, "
                                 f"the decision wants {len(wanted)}: provisions not applied")
        return self.groups.apply(running, wanted)
