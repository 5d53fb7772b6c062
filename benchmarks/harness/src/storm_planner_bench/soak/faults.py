"""The faults of an hour of faults, each injected, undone and waited out on the running local cluster.

Every fault is one call of :meth:`Injector.inject`, which returns its :class:`FaultRecord` (when it was
injected, undone, when the part it hit answered again and when the whole cluster was healthy again):

* ``supervisor-kill``: the supervisor's process group (the daemon, its workers and their Python
  components: a node that crashed) gets SIGKILL; ``supervisor_down_s`` later the supervisor starts again in
  its namespace, joins its CPU quota and account again, and is back when Nimbus lists it;
* ``service-kill``: the planner service's process gets SIGKILL (its own children are left to notice: any of
  them still alive ``service_down_s`` later is an orphan, named in the record and then killed); it starts
  again on its port, plan log and problem log and is back when it answers ``health``;
* ``service-hang``: the service's process gets SIGSTOP for ``hang_s`` (longer than the plugin's deadline,
  ``planner.service.timeout.ms``), then SIGCONT; back when it answers ``health``;
* ``zookeeper-restart`` and ``nimbus-restart``: the daemon is stopped (SIGTERM, as the launcher stops it)
  and started again on its data ``*_down_s`` later; back when ZooKeeper answers and when Nimbus leads;
* ``link-cut``: the supervisor's ``eth0`` goes down in its namespace for ``link_cut_s``, then up (its token
  bucket checked and put back if the kernel dropped it); back when the namespace reaches Nimbus over TCP.

A fault's undo runs in a ``finally``: a run stopped in the middle of one (SIGTERM, an error) continues a
stopped service and raises a cut link before anything else, and the cluster's teardown stops every daemon.
The whole cluster is healthy again when Nimbus leads, sees every supervisor and the service answers.

:meth:`Injector.watch` is the watchdog: a daemon that died when no fault was meant to touch it is recorded
as a ``crash`` (a finding) and started again, so the rest of the hour still runs. It looks between faults
and also while a fault is waited out: Storm's daemons are fail-fast (a supervisor whose ZooKeeper
connection stays lost through a link cut halts itself, as Storm expects a process supervisor to start it
again), and a cluster waiting for a dead supervisor would otherwise never be healthy again.
"""
from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from storm_planner.progress import Progress
from storm_planner_bench.soak import proc
from storm_planner_bench.soak.schedule import (
    LINK_CUT,
    NIMBUS_RESTART,
    SERVICE_HANG,
    SERVICE_KILL,
    SUPERVISOR_KILL,
    ZOOKEEPER_RESTART,
    PlannedFault,
)

CRASH = "crash"          # a daemon found dead by the watchdog (not injected)
POLL_S = 0.5
WATCH_S = 5.0            # the watchdog's period


@dataclass(frozen=True)
class FaultSettings:
    """How long each fault lasts, and how long a recovery may take before it counts as failed."""

    hang_s: float = 30.0
    supervisor_down_s: float = 20.0
    service_down_s: float = 5.0
    zookeeper_down_s: float = 5.0
    nimbus_down_s: float = 5.0
    link_cut_s: float = 20.0
    recover_timeout_s: float = 240.0


@dataclass
class FaultRecord:
    """One fault as it happened (times are Unix seconds; NaN: never)."""

    index: int
    kind: str
    planned_s: float
    target: str = ""
    injected: float = math.nan
    undone: float = math.nan
    recovered: float = math.nan     # the part the fault hit answers again
    healthy: float = math.nan       # Nimbus leads, sees every supervisor, the service answers
    outcome: str = "not run"
    detail: str = ""

    def row(self, start: float) -> dict[str, Any]:
        """The record as a row of ``faults.csv`` (:data:`FAULT_COLUMNS`): its times, then when it was injected
        in seconds after the soak's ``start``, how long it lasted, and how long after its undo its part
        answered and the cluster was healthy."""
        return {**asdict(self), "injected_at_s": _rounded(self.injected - start),
                "down_s": _rounded(self.undone - self.injected), "recover_s": _rounded(self.recovered - self.undone),
                "healthy_s": _rounded(self.healthy - self.undone)}


FAULT_COLUMNS = (*(f.name for f in fields(FaultRecord)), "injected_at_s", "down_s", "recover_s", "healthy_s")


@dataclass
class Injector:
    """Injects faults into ``cluster`` (a running :class:`~storm_planner.cluster.launcher.LocalCluster`)."""

    cluster: Any
    settings: FaultSettings
    progress: Progress
    seed: int = 1
    quotas: dict[str, Any] = field(default_factory=dict)     # supervisor -> CpuQuota (re-joined after a restart)
    accounts: dict[str, Any] = field(default_factory=dict)   # supervisor -> CpuAccount
    topology_id: str | None = None
    clock: Callable[[], float] = time.time
    start: float = 0.0                                        # the soak's start (Unix s): crashes' planned_s
    on_crash: Callable[[FaultRecord], None] = field(default=lambda record: None)   # each crash, when found
    current: FaultRecord | None = field(init=False, default=None)   # the fault under way, or one interrupted
    _rng: random.Random = field(init=False)
    _crashes: int = field(init=False, default=0)
    _next_watch: float = field(init=False, default=0.0)     # time.monotonic() of the watchdog's next look

    def __post_init__(self) -> None:
        self._rng = random.Random(f"soak-targets-{self.seed}")

    # -- a fault ------------------------------------------------------------------------------------------
    def inject(self, planned: PlannedFault) -> FaultRecord:
        """Inject, undo and wait out one fault. A run stopped meanwhile (KeyboardInterrupt, SystemExit) leaves
        the fault undone and its record, outcome ``interrupted``, in :attr:`current`."""
        record = self.current = FaultRecord(planned.index, planned.kind, planned.at_s)
        action = {SUPERVISOR_KILL: self._supervisor_kill, SERVICE_KILL: self._service_kill,
                  SERVICE_HANG: self._service_hang, ZOOKEEPER_RESTART: self._zookeeper_restart,
                  NIMBUS_RESTART: self._nimbus_restart, LINK_CUT: self._link_cut}[planned.kind]
        try:
            check = action(record)
            record.recovered = self._wait(check)
            record.healthy = self._wait(self.cluster_healthy)
            record.outcome = ("recovered" if not math.isnan(record.healthy) else
                              f"not healthy within {self.settings.recover_timeout_s:g} s")
        except Exception as error:  # noqa: BLE001 - a fault that fails is a finding; the hour goes on
            record.outcome = f"failed: {type(error).__name__}: {error}"[:300]
        except BaseException:
            record.outcome = "interrupted (the run stopped; the fault was undone)"
            raise
        self.current = None
        return record

    def _supervisor_kill(self, record: FaultRecord) -> Callable[[], bool]:
        sup = record.target = self._pick_supervisor()
        name = f"supervisor-{sup}"
        pgid = self._record(name).pid
        members = proc.group_members(pgid)
        record.injected = self.clock()
        try:
            _killpg(pgid, signal.SIGKILL)
            _wait_gone(lambda: proc.group_members(pgid), 15.0)
            self._progress_injected(record, f"{sup}'s supervisor and workers ({len(members)} processes) killed "
                                            f"(SIGKILL), restart in {self.settings.supervisor_down_s:g} s")
            time.sleep(self.settings.supervisor_down_s)
        finally:
            record.undone = self.clock()
        self._restart_supervisor(sup)
        record.detail = f"{len(members)} processes killed"
        return lambda: self._registered(sup, since=record.undone)

    def _service_kill(self, record: FaultRecord) -> Callable[[], bool]:
        record.target = "planner"
        pid = self._record("planner").pid
        record.injected = self.clock()
        try:
            os.kill(pid, signal.SIGKILL)
            self._progress_injected(record, f"planner service (pid {pid}) killed (SIGKILL), restart in "
                                            f"{self.settings.service_down_s:g} s")
            time.sleep(self.settings.service_down_s)
            record.detail = self._orphans(pid)
        finally:
            record.undone = self.clock()
        self.cluster.start_daemon("planner", wait=False)
        return self._service_answers

    def _service_hang(self, record: FaultRecord) -> Callable[[], bool]:
        record.target = "planner"
        pid = self._record("planner").pid
        record.injected = self.clock()
        try:
            os.kill(pid, signal.SIGSTOP)
            self._progress_injected(record, f"planner service (pid {pid}) stopped (SIGSTOP) for "
                                            f"{self.settings.hang_s:g} s")
            time.sleep(self.settings.hang_s)
        finally:
            _continue(pid)
            record.undone = self.clock()
        return self._service_answers

    def _zookeeper_restart(self, record: FaultRecord) -> Callable[[], bool]:
        from storm_planner.submit.nimbus import zookeeper_ok

        record.target = "zookeeper"
        self._stop_and_start(record, "zookeeper", self.settings.zookeeper_down_s)
        host, port = self.cluster.zookeeper_address()
        return lambda: zookeeper_ok(host, port)

    def _nimbus_restart(self, record: FaultRecord) -> Callable[[], bool]:
        record.target = "nimbus"
        self._stop_and_start(record, "nimbus", self.settings.nimbus_down_s)
        return self._nimbus_leads

    def _stop_and_start(self, record: FaultRecord, name: str, down_s: float) -> None:
        record.injected = self.clock()
        try:
            record.detail = self.cluster.stop_daemon(name)
            self._progress_injected(record, f"{name} {record.detail} (SIGTERM), start in {down_s:g} s")
            time.sleep(down_s)
        finally:
            record.undone = self.clock()
        self.cluster.start_daemon(name, wait=False)

    def _link_cut(self, record: FaultRecord) -> Callable[[], bool]:
        from storm_planner.cluster import network

        if self.cluster.network is None:
            raise RuntimeError("link-cut needs an emulated network")
        sup = record.target = self._pick_supervisor()
        link = self.cluster.network.link(sup)
        record.injected = self.clock()
        try:
            _ip(["ip", "-n", link.namespace, "link", "set", "eth0", "down"])
            self._progress_injected(record, f"{sup}'s link ({link.namespace} eth0) down for "
                                            f"{self.settings.link_cut_s:g} s")
            time.sleep(self.settings.link_cut_s)
        finally:
            _ip(["ip", "-n", link.namespace, "link", "set", "eth0", "up"])
            record.undone = self.clock()
        queue = _ip(["tc", "-n", link.namespace, "qdisc", "show", "dev", "eth0"])
        if " tbf " not in f" {queue} ":
            _ip(["tc", "-n", link.namespace, "qdisc", "replace", "dev", "eth0", "root",
                 *network.token_bucket(link.mbit)])
            record.detail = f"eth0's token bucket was gone after the cut ({queue.strip()!r}): put back"
        host, port = self.cluster.description.host, self.cluster.description.ports.nimbus
        return lambda: _reaches(link.namespace, host, port)

    # -- the watchdog -------------------------------------------------------------------------------------
    def watch(self) -> list[FaultRecord]:
        """Each daemon of the cluster found dead, recorded as a :data:`CRASH`, started again and handed to
        :attr:`on_crash`."""
        from storm_planner.cluster import daemons

        self._next_watch = time.monotonic() + WATCH_S
        dead = [r for r in daemons.records(self.cluster.run_dir)
                if not daemons.is_alive(r) and r.name not in ("ui", "dashboard")]
        started: list[tuple[FaultRecord, Callable[[], bool]]] = []
        found = []
        # every dead daemon started first: a healthy cluster needs them all
        for record in dead:
            self._crashes += 1
            crash = FaultRecord(-self._crashes, CRASH, round(self.clock() - self.start, 1), target=record.name,
                                injected=self.clock(), undone=self.clock(),
                                detail=f"found dead ({daemons.exit_status(record)})")
            self.progress(f"crash: {record.name} (pid {record.pid}) {crash.detail}; starting it again")
            try:
                started.append((crash, self._start_again(record.name)))
            except Exception as error:  # noqa: BLE001 - recorded; the hour goes on
                crash.outcome = f"failed: {type(error).__name__}: {error}"[:300]
            found.append(crash)
        for crash, check in started:
            crash.recovered = self._wait(check, watching=False)
        healthy = self._wait(self.cluster_healthy, watching=False) if started else math.nan
        for crash, _ in started:
            crash.healthy = healthy
            crash.outcome = "recovered" if not math.isnan(healthy) else "not healthy"
        for crash in found:
            self.on_crash(crash)
        return found

    def watch_if_due(self) -> None:
        """:meth:`watch`, at most every :data:`WATCH_S`."""
        if time.monotonic() >= self._next_watch:
            self.watch()

    def _start_again(self, name: str) -> Callable[[], bool]:
        from storm_planner.submit.nimbus import zookeeper_ok

        if name.startswith("supervisor-"):
            sup, since = name.removeprefix("supervisor-"), self.clock()
            self._restart_supervisor(sup)
            return lambda: self._registered(sup, since)
        self.cluster.start_daemon(name, wait=False)
        if name == "planner":
            return self._service_answers
        if name == "zookeeper":
            host, port = self.cluster.zookeeper_address()
            return lambda: zookeeper_ok(host, port)
        return self._nimbus_leads

    # -- helpers ------------------------------------------------------------------------------------------
    def cluster_healthy(self) -> bool:
        """Nimbus leads and lists every supervisor (one ``getClusterInfo``), and the service answers."""
        summary = self._summary()
        if summary is None or not any(n.isLeader for n in summary.nimbuses or []):
            return False
        return (all(_lists(summary, sup.name) for sup in self.cluster.description.supervisors)
                and self._service_answers())

    def _service_answers(self) -> bool:
        from storm_planner.cluster.probes import planner_ok

        d = self.cluster.description
        return planner_ok(d.host, d.ports.planner)

    def _summary(self):
        from storm_planner.submit import nimbus

        d = self.cluster.description
        try:
            return nimbus.cluster_summary(d.host, d.ports.nimbus, 3000)
        except Exception:  # noqa: BLE001 - not answering now
            return None

    def _registered(self, sup: str, since: float | None = None) -> bool:
        """Nimbus lists the supervisor with its resources; with ``since``, registered since then (a killed
        supervisor stays listed until its ZooKeeper session expires)."""
        summary = self._summary()
        return summary is not None and _lists(summary, sup, since, self.clock())

    def _nimbus_leads(self) -> bool:
        from storm_planner.cluster.probes import nimbus_leader

        d = self.cluster.description
        return nimbus_leader(d.host, d.ports.nimbus)

    def _record(self, name: str):
        from storm_planner.cluster import daemons

        return daemons.DaemonRecord.load(self.cluster.run_dir / f"{name}.json")

    def _restart_supervisor(self, sup: str) -> None:
        """Start the supervisor again and put it back in its CPU quota and account (its workers follow)."""
        record = self.cluster.start_daemon(f"supervisor-{sup}", wait=False)
        for groups in (self.quotas, self.accounts):
            if sup in groups:
                groups[sup].add(record.pid)

    def _pick_supervisor(self) -> str:
        """A supervisor running a worker of the topology (any supervisor when none is known), seeded."""
        names = [sup.name for sup in self.cluster.description.supervisors]
        if self.topology_id:
            try:
                used = sorted({e["node"] for e in self.cluster.assignment(self.topology_id)} & set(names))
            except Exception:  # noqa: BLE001 - Nimbus busy: any supervisor will do
                used = []
            names = used or names
        return self._rng.choice(names)

    def _orphans(self, pid: int) -> str:
        """The killed service's processes still alive (its group): named, then killed."""
        left = [p for p in proc.group_members(pid) if p != pid]
        if not left:
            return ""
        named = "; ".join(f"{p} {proc.command(p)[:80]}" for p in left)
        for p in left:
            _signal(p, signal.SIGKILL)
        return f"{len(left)} orphan(s) of the killed service still alive after it, killed: {named}"

    def _wait(self, check: Callable[[], bool], watching: bool = True) -> float:
        """When ``check`` first held (Unix seconds), or NaN after ``recover_timeout_s``; ``watching``, the
        watchdog keeps looking meanwhile (a daemon that died of the fault would keep ``check`` false)."""
        deadline = time.monotonic() + self.settings.recover_timeout_s
        while time.monotonic() < deadline:
            if check():
                return self.clock()
            if watching:   # the time the watchdog takes does not count against ``check``
                began = time.monotonic()
                self.watch_if_due()
                deadline += time.monotonic() - began
            time.sleep(POLL_S)
        return math.nan

    def _progress_injected(self, record: FaultRecord, what: str) -> None:
        self.progress(f"fault {record.index} ({record.kind}) at {record.planned_s:.0f} s: {what}")


def _lists(summary, sup: str, since: float | None = None, now: float = 0.0) -> bool:
    """Whether a ``ClusterSummary`` lists supervisor ``sup`` with its resources (up since ``since``)."""
    for found in summary.supervisors or []:
        if found.supervisor_id == sup and (found.total_resources or {}).get("cpu.pcore.percent"):
            return since is None or (found.uptime_secs or 0) <= now - since + 5
    return False


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _continue(pid: int) -> None:
    """SIGCONT, whatever happened meanwhile (a stopped process would otherwise stay stopped)."""
    _signal(pid, signal.SIGCONT)


def _wait_gone(members: Callable[[], list[int]], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while members() and time.monotonic() < deadline:
        time.sleep(0.2)


def _ip(command: list[str]) -> str:
    """Run an iproute2 command; its standard output (a failure raises with its standard error)."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def _reaches(namespace: str, host: str, port: int, timeout_s: float = 3.0) -> bool:
    """Whether a TCP connection from inside ``namespace`` to ``host:port`` opens."""
    from storm_planner.cluster import network

    command = [*network.enter_command(network.Link("", namespace, "", "", 1.0)), "timeout", f"{timeout_s:g}",
               "bash", "-c", f"exec 3<>/dev/tcp/{host}/{port}"]
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout_s + 5).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _rounded(value: float) -> float | str:
    return round(value, 1) if math.isfinite(value) else ""
