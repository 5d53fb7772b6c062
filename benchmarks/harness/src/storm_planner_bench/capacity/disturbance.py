"""Whether something outside the cluster used the host's CPU during a window: a *disturbed* window.

The local cluster shares the host's cores: its supervisors are held by CPU quotas that add up to most of them
(160 % of the reference machine's two cores), and ZooKeeper, Nimbus and the planner service use a little more.
Anything else that runs (a build, a test suite, another bench) takes CPU the quotas count on, and a step's
verdict then says more about the host than about the scheduler. So every window reads, at its start and end:

* the host's busy CPU from ``/proc/stat`` (user, nice, system and steal time of all cores; interrupt time is
  left out, as the emulated links' packets are handled there on the cluster's behalf);
* the cluster's own: each supervisor's cpuacct group (its workers and their Python subprocesses), the
  daemons the cluster started (ZooKeeper, Nimbus, the planner service: their ``/proc/<pid>/stat`` times),
  and this process with the children it has waited for;

and the difference, in percent of one core over the window, is the CPU used outside the cluster. Above
:data:`DISTURBED_CPU` (25 % of a core: on the reference machine the quotas and the daemons leave about a
quarter of a core free, so more than that eats into the quotas) the window is disturbed and is measured again,
whatever its verdict; the report lists every disturbed window.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

DISTURBED_CPU = 25.0        # % of one core used outside the cluster, averaged over the window
_BUSY_FIELDS = (0, 1, 2, 7)   # user, nice, system, steal (after the "cpu" label)


def clock_ticks() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100.0


def host_busy_s(stat: Path = Path("/proc/stat")) -> float:
    """CPU seconds the whole host has been busy (all cores), by :data:`_BUSY_FIELDS`."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return float("nan")
    if not first or first[0] != "cpu":
        return float("nan")
    values = [int(v) for v in first[1:]]
    return sum(values[i] for i in _BUSY_FIELDS if i < len(values)) / clock_ticks()


def process_cpu_s(pid: int, children: bool = True) -> float:
    """CPU seconds of process ``pid`` (user and system, with its waited-for children's); 0 when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rfind(")") + 2:].split()   # after "pid (comm) "
    try:
        times = [int(v) for v in fields[11:15]]   # utime stime cutime cstime
    except (ValueError, IndexError):
        return 0.0
    return (sum(times) if children else sum(times[:2])) / clock_ticks()


def daemon_pids(run_dir: Path) -> list[int]:
    """The pids of the daemons a local cluster started (its ``run/*.json`` records) but the supervisors,
    whose CPU their cpuacct groups count."""
    from storm_planner.cluster import daemons

    return [r.pid for r in daemons.records(run_dir) if not r.name.startswith("supervisor")]


def own_cpu_s() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@dataclass(frozen=True)
class CpuSnapshot:
    at: float               # monotonic seconds
    host: float
    cluster: float

    def outside_pct(self, later: CpuSnapshot) -> float:
        """CPU used outside the cluster from this snapshot to ``later``, % of one core."""
        seconds = later.at - self.at
        if seconds <= 0:
            return float("nan")
        return 100.0 * ((later.host - self.host) - (later.cluster - self.cluster)) / seconds


def snapshot(groups_cpu_s: Callable[[], Mapping[str, float]], pids: Callable[[], list[int]],
             clock: Callable[[], float]) -> CpuSnapshot:
    """The host's and the cluster's CPU seconds now: ``groups_cpu_s()`` the supervisors' groups, ``pids()``
    the daemons'."""
    cluster = sum(groups_cpu_s().values()) + sum(process_cpu_s(pid) for pid in pids()) + own_cpu_s()
    return CpuSnapshot(clock(), host_busy_s(), cluster)
