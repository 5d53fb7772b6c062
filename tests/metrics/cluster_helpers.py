"""Reading a running test cluster for the metrics tests: Storm's own executor stats, the hook's
windows in ZooKeeper, where each task runs, and the traffic that crosses workers."""
from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from storm_planner.metrics.windows import DEFAULT_ROOT, CorruptWindow, TaskWindow, parse_window
from storm_planner.submit.nimbus import nimbus_client

PIPELINE = Path(__file__).resolve().parent / "fixtures" / "pipeline"


# A loaded machine (a CI run beside a CPU hog or builds) slows every daemon and window alike: waits grow
# with the load per core, up to this factor. Waits only bound failures; a passing test never sits them out.
MOST_LOAD_SCALE = 4.0


def load_scale() -> float:
    """The 1-minute load average per core, between 1 and MOST_LOAD_SCALE."""
    return min(MOST_LOAD_SCALE, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def until(condition, timeout_s: float, what: str, every_s: float = 1.0):
    """Poll ``condition`` until truthy; fail after ``timeout_s`` scaled by the machine's load."""
    scale = load_scale()
    deadline = time.monotonic() + timeout_s * scale
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s * scale:.0f} s ({timeout_s:.0f} s x load "
                                 f"{scale:.1f}) waiting for {what}")
        time.sleep(every_s)


def topology_info(cluster, topology_id: str):
    a = cluster.addresses
    with nimbus_client(a.nimbus_host, a.nimbus_port) as client:
        return client.getTopologyInfo(topology_id)


def storm_counts(cluster, topology_id: str) -> dict:
    """Storm's all-time stats summed per component: emitted[(component, stream)], executed[(to, from, stream)]."""
    emitted: dict[tuple[str, str], int] = defaultdict(int)
    executed: dict[tuple[str, str, str], int] = defaultdict(int)
    for e in topology_info(cluster, topology_id).executors or []:
        if e.stats is None:
            continue
        for stream, count in (e.stats.emitted.get(":all-time") or {}).items():
            emitted[(e.component_id, stream)] += count
        bolt = e.stats.specific.bolt if e.stats.specific else None
        if bolt is not None:
            for gsid, count in (bolt.executed.get(":all-time") or {}).items():
                executed[(e.component_id, gsid.componentId, gsid.streamId)] += count
    return {"emitted": dict(emitted), "executed": dict(executed)}


def latest_windows(zk_hosts: str, topology_id: str, root: str = DEFAULT_ROOT) -> dict[int, TaskWindow]:
    """Each task's current window document, straight from ZooKeeper (corrupt ones left out)."""
    zk = KazooClient(hosts=zk_hosts, timeout=5)
    zk.start(timeout=10)
    try:
        path = f"{root}/{topology_id}"
        try:
            children = zk.get_children(path)
        except NoNodeError:
            return {}
        windows = {}
        for child in children:
            try:
                data, stat = zk.get(f"{path}/{child}")
            except NoNodeError:   # deleted since listed: the service removes a killed topology's windows
                continue
            try:
                windows[int(child)] = parse_window(data, znode_version=stat.version)
            except (CorruptWindow, ValueError):
                continue
        return windows
    finally:
        zk.stop()
        zk.close()


def flow_totals(windows: dict[int, TaskWindow], stream: str = "default") -> dict[tuple[str, str], int]:
    """Cumulative tuples per (source component, destination component) on one stream, from the windows."""
    component = {task: w.component for task, w in windows.items()}
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for w in windows.values():
        for flow in w.sent:
            if flow.stream == stream and flow.task in component:
                totals[(w.component, component[flow.task])] += flow.total
    return dict(totals)


def task_slots(cluster, topology_id: str) -> dict[int, str]:
    """Task -> "node:port" as Nimbus has it now."""
    slots = {}
    for row in cluster.assignment(topology_id):
        start, end = (int(x) for x in row["executor"].strip("[]").split("-"))
        for task in range(start, end + 1):
            slots[task] = f"{row['node']}:{row['port']}"
    return slots


class TrafficSampler:
    """Tuples per second crossing workers vs staying inside one, between two samples of the windows' totals.

    Uses the cumulative ``total`` counters, so it needs no window alignment; a restarted worker resets
    its counters, so only tasks whose worker pid did not change between the samples count.
    """

    def __init__(self, zk_hosts: str, topology_id: str) -> None:
        self.zk_hosts, self.topology_id = zk_hosts, topology_id
        self.first: dict[int, TaskWindow] = {}
        self.started = 0.0

    def start(self) -> None:
        self.first = latest_windows(self.zk_hosts, self.topology_id)
        self.started = time.monotonic()

    def rates(self, slots: dict[int, str]) -> tuple[float, float]:
        """(crossing, local) tuples/s over every stream since start()."""
        second = latest_windows(self.zk_hosts, self.topology_id)
        crossing = local = 0.0
        for task, w in second.items():
            before = self.first.get(task)
            if before is None or before.pid != w.pid:
                continue
            seconds = (w.end_ms - before.end_ms) / 1000.0
            if seconds <= 0:
                continue
            earlier = {(f.stream, f.task): f.total for f in before.sent}
            for flow in w.sent:
                rate = (flow.total - earlier.get((flow.stream, flow.task), 0)) / seconds
                if slots.get(task) != slots.get(flow.task):
                    crossing += rate
                else:
                    local += rate
        return crossing, local


def windows_match(windows: dict[int, TaskWindow], slots: dict[int, str], max_age_s: float) -> bool:
    """Every task has a recent window written by the worker the assignment puts it in."""
    now_ms = time.time() * 1000
    return bool(windows) and set(windows) == set(slots) and all(
        f"{w.node}:{w.port}" == slots[task] and now_ms - w.end_ms < max_age_s * 1000 for task, w in windows.items()
    )


def read_ids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []
