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

That pid is what the subprocess itself reported to Storm, and a component's log message can hold a
newline and then anything, so the log is a hint, never trusted: only a whole log line of the
ShellBolt/ShellSpout logger counts, and its pid only if that process descends from the worker JVM
writing the log (the pid in ``worker.pid`` beside it, running Storm's worker main class for that
topology and port) and started after it. It joins its groups only if it still is that process then
(start time, ``/proc/<pid>/stat`` field 22: a reused pid is refused), and pid 1 never does. Each pid
refused is warned about once, naming it and why, and kept in :attr:`InstanceProvisions.refusals`
(``scale run --enforce-provisions`` lists them in its answer). On exit every process goes back to
the cgroups it came from (:class:`~storm_planner.profiling.cgroups.CgroupGroup`).

A memory limit below what an instance already holds would make the kernel kill it (and Storm restart
its worker): such a provision is refused, naming the instance, its resident memory and the limit.
Executors of Java components are threads sharing their worker's JVM: no per-instance provision can be
enforced on them, and :func:`running_instances` finds none.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from storm_planner.profiling.cgroups import (
    CGROUP_CPU,
    CGROUP_MEMORY,
    THROTTLE_JUDGED_PERIOD_US,
    CpuQuota,
    EnrolmentRefused,
    MemoryLimit,
)
from storm_planner.profiling.errors import ProfilingError
from storm_planner.profiling.processes import ProcessId, command_line, refusal
from storm_planner.scaling.scaling_problem import Resource as Provision

_log = logging.getLogger(__name__)

# One whole line of the worker's log4j layout (cluster/log4j2_configs.py: date, abbreviated logger,
# thread, level, message) from ShellBolt's or ShellSpout's logger: text that merely contains the
# message, or a message continued on a line of its own, does not match. A component id is one word here
# (no blank: the thread name cannot then reach into the message).
_LAUNCHED = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} o\.a\.s\.(?:t\.ShellBolt|s\.ShellSpout) "
    r"Thread-\d+-(?P<component>\S+?)-executor\[(?P<first>\d+), (?P<last>\d+)\] "
    r"\[INFO\] Launched subprocess with pid (?P<pid>\d{1,9})$", re.MULTILINE)
WORKER_MAIN = "org.apache.storm.daemon.worker.Worker"
LOG_WRITER_MAIN = "org.apache.storm.LogWriter"
WORKER_ARGUMENTS = 5  # topology id, assignment id, supervisor port, port, worker id


@dataclass(frozen=True, order=True)
class Subprocess:
    """One subprocess of an executor as found: the process, and the worker JVM whose child it must be."""

    process: ProcessId
    worker: ProcessId

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass(frozen=True, order=True)
class Instance:
    """A running executor of a multilang component and its subprocesses (one per task it runs)."""

    first_task: int
    last_task: int
    component: str
    subprocesses: tuple[Subprocess, ...]

    @property
    def key(self) -> str:
        return f"{self.first_task}-{self.last_task}"

    @property
    def pids(self) -> tuple[int, ...]:
        return tuple(s.pid for s in self.subprocesses)


class Refusals:
    """Processes refused a provision: each warned about once (the logs are read again and again), all kept."""

    def __init__(self) -> None:
        self.reasons: dict[ProcessId, str] = {}

    def note(self, process: ProcessId, reason: str, where: str) -> None:
        if process not in self.reasons:
            _log.warning("pid %d (%s) gets no provision: %s", process.pid, where, reason)
            self.reasons[process] = reason

    @property
    def count(self) -> int:
        return len(self.reasons)

    def to_list(self) -> list[dict]:
        return [{"pid": p.pid, "reason": reason} for p, reason in self.reasons.items()]


def storm_worker(port_dir: Path, topology_id: str) -> ProcessId | None:
    """The worker JVM writing ``port_dir/worker.log``: the process its ``worker.pid`` names, if that runs
    Storm's worker main class for this topology and port (not the LogWriter that wraps it)."""
    try:
        with open(port_dir / "worker.pid", encoding="ascii", errors="replace") as pid_file:
            pid = int(pid_file.read(16).strip())
    except (OSError, ValueError):
        return None
    worker, arguments = ProcessId.of(pid), command_line(pid)
    if worker is None or WORKER_MAIN not in arguments or LOG_WRITER_MAIN in arguments:
        return None
    after_main = arguments[arguments.index(WORKER_MAIN) + 1:]
    if len(after_main) != WORKER_ARGUMENTS or after_main[0] != topology_id or after_main[3] != port_dir.name:
        return None
    return worker


def running_instances(log_dir: Path, topology_id: str, component: str,
                      refusals: Refusals | None = None) -> list[Instance]:
    """The live subprocesses of ``component``'s executors, by task, from its workers' logs.

    Each task of an executor runs its own subprocess; an executor started again (its worker
    restarted) logs new pids, and only live ones count. A pid counts only if its process descends
    from the worker JVM writing that log and started after it: the pid in the log is the one the
    subprocess itself reported to Storm, and any text can look like a log line. Others are noted in
    ``refusals`` (and warned about)."""
    refusals = Refusals() if refusals is None else refusals
    launched: dict[tuple[int, int], list[Subprocess]] = {}
    for log in sorted((Path(log_dir) / "workers-artifacts" / topology_id).glob("*/worker.log")):
        worker = storm_worker(log.parent, topology_id)
        text = log.read_text(errors="replace")
        for match in _LAUNCHED.finditer(text):
            process = ProcessId.of(int(match["pid"]))
            if match["component"] != component or process is None:
                continue  # another component's, or exited
            reason = refusal(process, worker) if worker else f"no running worker of {topology_id} writes this log"
            if reason is not None:
                refusals.note(process, reason, f"{log}:{text.count(chr(10), 0, match.start()) + 1}")
                continue
            launched.setdefault((int(match["first"]), int(match["last"])), []).append(Subprocess(process, worker))
    return sorted(Instance(first, last, component, tuple(found)) for (first, last), found in launched.items())


def wait_for_instances(log_dir: Path, topology_id: str, component: str, count: int, wait_s: float,
                       poll_s: float = 1.0, sleep=time.sleep, clock=time.monotonic,
                       refusals: Refusals | None = None) -> list[Instance]:
    """The component's live instances once there are ``count`` of them, or what runs after ``wait_s``."""
    refusals = Refusals() if refusals is None else refusals
    deadline = clock() + wait_s
    found = running_instances(log_dir, topology_id, component, refusals)
    while len(found) != count and clock() < deadline:
        sleep(poll_s)
        found = running_instances(log_dir, topology_id, component, refusals)
    return found


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
    """Per-instance cgroups (cpu quota and memory limit) under one parent group each, removed on exit.

    A subprocess joins its instance's groups only if it still is the process found, in its worker's
    tree (:func:`.processes.refusal`); one refused is left where it is and noted in ``refusals``. On
    exit each process goes back to the groups it came from."""

    def __init__(self, name: str, cpu_root: Path = CGROUP_CPU, memory_root: Path = CGROUP_MEMORY) -> None:
        self.cpu_parent, self.memory_parent = cpu_root / name, memory_root / name
        self.groups: dict[str, tuple[CpuQuota, MemoryLimit]] = {}  # by instance key (its task range)
        self.refusals = Refusals()

    def __enter__(self) -> InstanceProvisions:
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
            memory.set_limit_mb(provision.memory_mb)
            enrolled = [s.pid for s in instance.subprocesses if self._enrol(instance, s, (quota, memory))]
            applied.append({"task": instance.first_task, "pids": enrolled, "provision": provision.id,
                            "cpu": provision.cpu, "memory_mb": provision.memory_mb})
        self._forget({i.key for i in ordered})
        return applied

    def _enrol(self, instance: Instance, subprocess: Subprocess, groups: Sequence[CpuQuota | MemoryLimit]) -> bool:
        try:
            for group in groups:
                group.add(subprocess.process, tree=subprocess.worker)
        except EnrolmentRefused as refused:
            self.refusals.note(subprocess.process, refused.reason, f"{instance.component}[{instance.first_task}]")
            return False
        return True

    def _groups_of(self, key: str) -> tuple[CpuQuota, MemoryLimit]:
        if key not in self.groups:
            self.groups[key] = (CpuQuota(key, 100.0, root=self.cpu_parent,   # min_throttled was set at this period
                                         period=THROTTLE_JUDGED_PERIOD_US).__enter__(),
                                MemoryLimit(key, root=self.memory_parent).__enter__())
        return self.groups[key]

    def quota_of(self, instance: Instance) -> float | None:
        """The CPU (cores) the instance's group allows now (None: the instance has no group)."""
        if instance.key not in self.groups:
            return None
        return self.groups[instance.key][0].cores

    def cpu_group(self, instance: Instance) -> CpuQuota:
        return self._groups_of(instance.key)[0]

    def _forget(self, keep: set[str]) -> None:
        for key in [k for k in self.groups if k not in keep]:
            for group in self.groups.pop(key):
                group.__exit__(None, None, None)

    def __exit__(self, *exc) -> None:
        self._forget(set())
        for parent in (self.cpu_parent, self.memory_parent):
            try:
                parent.rmdir()
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
        running = wait_for_instances(self.log_dir, topology_id, self.component, len(wanted), self.wait_s,
                                     refusals=self.groups.refusals)
        if not running:
            raise ProfilingError(
                f"no running subprocess of {self.component!r} in {self.log_dir}/workers-artifacts/{topology_id}: "
                "per-instance provisions need a multilang (e.g. streamparse) component and its workers' logs")
        if len(running) < len(wanted):
            raise ProfilingError(f"{self.component!r} runs {len(running)} instance(s) after {self.wait_s:g} s, "
                                 f"the decision wants {len(wanted)}: provisions not applied")
        return self.groups.apply(running, wanted)
