"""``storm-planner scale run``: QEScalor's controller applied to a running topology, epoch by epoch.

Every ``epoch_s`` seconds: the component's input rate over the epoch is read from the metrics hook's
windows in ZooKeeper (tuples processed — acked, or executed if it acks none — per second, summed over
its tasks), the controller
(:class:`~storm_planner.scaling.ScalingController`) decides the instances for the next
epoch, and when their number differs from the executors Nimbus runs, Nimbus is asked to rebalance the
component (within its task count) and the outcome is checked. Every decision is one JSON line in the
log, whatever happened (``action``: ``rebalance``, ``hold``, ``no-metrics``, ``failed``).

A saturated component executes what it can, not what arrives (backpressure holds the rest at the
spout), so its measured rate hides the demand. When the source's offered rate is known (``offered``:
e.g. a replay feed's rate), the workload is the larger of the two, and an epoch in which the component
executed less than 90 % of what was offered while running at 80 % or more of what its instances are
believed to sustain calibrates the performance of its instances to what they did (:meth:`~storm_planner.scaling.ScalingController.calibrate`).

An instance is an executor. Given ``enforce`` (``--enforce-provisions``:
:class:`storm_planner.scaling.live.instances.ProvisionEnforcer`), each decision's provisions are enforced
per instance — the CPU quota and memory limit of the subprocess a multilang executor runs in — and
logged under ``provisions``; without it they are logged only (``counts``).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from storm_planner.core.errors import StormPlannerError
from storm_planner.progress import Progress, print_progress
from storm_planner.scaling.controller import ScalingController

_log = logging.getLogger(__name__)

# (topology id, instances per provision, instances running) -> the provision applied to each instance.
Enforce = Callable[[str, Mapping[str, int], int], list[dict]]


class EpochRates:
    """The input rate of one component per epoch, from the windows its tasks publish.

    ZooKeeper holds each task's latest window only, so :meth:`poll` is called several times an epoch
    and keeps every window it has not seen (by its end time: a task restarted by a rebalance starts
    its sequence numbers again)."""

    def __init__(self, zookeeper: str, topology_id: str, component: str):
        from kazoo.client import KazooClient

        logging.getLogger("kazoo").setLevel(logging.WARNING)
        self.topology_id, self.component = topology_id, component
        self.zk = KazooClient(hosts=zookeeper, timeout=10)
        self.zk.start(timeout=15)
        self.seen_end: dict[int, int] = {w.task: w.end_ms for w in self._windows()}
        self.pending: list = []

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()

    def _windows(self) -> list:
        from storm_planner.metrics.windows import read_windows

        return [w for w in read_windows(self.zk, self.topology_id) if w.component == self.component]

    def poll(self) -> None:
        """Keep the windows not seen yet; a ZooKeeper hiccup (a loaded machine) skips this poll."""
        from kazoo.exceptions import KazooException

        try:
            windows = self._windows()
        except KazooException as error:
            _log.warning("metrics windows of %s/%s not read this time: %r", self.topology_id, self.component, error)
            return
        for window in windows:
            if window.end_ms > self.seen_end.get(window.task, -1) and window.end_ms > window.start_ms:
                self.seen_end[window.task] = window.end_ms
                self.pending.append(window)

    def next_rate(self) -> float | None:
        """Tuples/s the component processed in the windows seen since the last call (None: none).

        Processed is acked when the component acks (a multilang executor's "executed" counts tuples
        handed to its subprocess, up to ``topology.shellbolt.max.pending`` ahead: after a rebalance the
        new instances' buffers fill at once), else executed."""
        self.poll()
        windows, self.pending = self.pending, []
        return processed_rate(windows) if windows else None


def run_scaling(nimbus: str, zookeeper: str, name: str, component: str, controller: ScalingController,
                epoch_s: float, epochs: int, log_path: Path | None, *, rebalance_wait_secs: int = 1,
                offered: Callable[[], float] | None = None, progress: Progress = print_progress,
                sleep: Callable[[float], None] = time.sleep,
                enforce: Enforce | None = None) -> list[dict]:
    """Run ``epochs`` epochs (0: until interrupted); returns the decisions logged."""
    from storm_planner.submit import nimbus as nimbus_api
    from storm_planner.submit.operations import parse_nimbus, rebalance_topology, running_components

    host, port = parse_nimbus(nimbus)

    def topology():
        with nimbus_api.nimbus_client(host, port) as client:
            return running_components(client, name)

    running = topology()
    if component not in running.executors:
        raise StormPlannerError(
            f"{name!r} has no component {component!r}; it has {', '.join(sorted(running.executors))}"
        )
    controller.max_instances = running.tasks[component]
    # What runs now is taken as instances of the first provision (Storm does not know provisions).
    current = {controller.provisions[0]: running.executors[component]}
    rates = EpochRates(zookeeper, running.id, component)
    history: list[float] = []
    decisions = []
    try:
        epoch = 0
        while not epochs or epoch < epochs:
            epoch += 1
            _wait_polling(rates, epoch_s, sleep)
            record = _one_epoch(
                epoch,
                rates,
                offered,
                history,
                current,
                controller,
                name,
                component,
                topology,
                lambda n: rebalance_topology(
                    nimbus, name, {component: n}, wait_secs=rebalance_wait_secs, wait_applied=120, progress=progress
                ),
            )
            if enforce is not None and "counts" in record and record["action"] != "failed":
                record.update(_enforced(enforce, running.id, record["counts"], record["instances"]))
            decisions.append(record)
            if log_path is not None:
                with log_path.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
            progress(f"scale run {name}/{component} epoch {epoch}: {record['action']} — {record['message']}")
    finally:
        rates.close()
    return decisions


def _enforced(enforce: Enforce, topology_id: str, counts: Mapping[str, int], instances: int) -> dict[str, Any]:
    """The provisions applied per instance, or why they could not be (the run goes on either way)."""
    try:
        return {"provisions": enforce(topology_id, counts, instances)}
    except StormPlannerError as error:
        _log.warning("scale run: provisions not enforced: %s", error)
        return {"provisions_error": str(error)}


def processed_rate(windows: list) -> float:
    """Tuples/s processed over ``windows`` of some tasks: acked when they ack, else executed, per second
    of window time per task."""
    tasks = {w.task for w in windows}
    seconds_per_task = sum(w.end_ms - w.start_ms for w in windows) / 1000.0 / len(tasks)
    processed = sum(w.acked for w in windows) or sum(w.executed for w in windows)
    return processed / seconds_per_task if seconds_per_task > 0 else 0.0


def _wait_polling(rates: EpochRates, seconds: float, sleep: Callable[[float], None], every_s: float = 2.0) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        sleep(min(every_s, left))
        rates.poll()


def _saturated(executed: float, offered: float, believed_capacity: float) -> bool:
    """Executed clearly less than was offered while working near what its instances are believed to
    sustain (a shortfall at low load is the windows' lag or noise, not saturation)."""
    return executed < 0.9 * offered and executed >= 0.8 * believed_capacity


def _one_epoch(epoch, rates, offered, history, current, controller, name, component, topology,
               rebalance) -> dict[str, Any]:
    record: dict[str, Any] = {"epoch": epoch, "time": round(time.time(), 3), "topology": name, "component": component}
    rate = rates.next_rate()
    record["rate"] = None if rate is None else round(rate, 3)
    if rate is None:
        return {**record, "action": "no-metrics", "message": "no new metrics window of the component this epoch"}
    demand = rate
    if offered is not None:
        record["offered"] = round(offered(), 3)
        demand = max(rate, record["offered"])
        running = sum(current.values())
        if len(current) == 1 and running and _saturated(rate, record["offered"], running * controller.performance(*current)):
            (provision,) = current
            controller.calibrate(provision, rate / running)
            record["calibrated"] = {provision: round(rate / running, 3)}
    history.append(demand)
    decision = controller.decide(history, current)
    before = topology().executors[component]
    record.update(decision.to_dict(), executors_before=before)
    if decision.instances == before:
        current.clear()
        current.update(decision.counts)
        return {**record, "executors_after": before, "action": "hold", "message": f"{before} instances cover {demand:.1f} tuples/s"}
    try:
        request = rebalance(decision.instances)
    except StormPlannerError as error:  # Nimbus refused or the rebalance was lost: logged, the next epoch retries
        _log.warning("scale run %s/%s: rebalance failed: %s", name, component, error)
        return {**record, "executors_after": before, "action": "failed", "message": str(error)}
    current.clear()
    current.update(decision.counts)
    after = topology().executors[component]
    return {**record, "executors_after": after, "action": "rebalance", "applied": bool(request.applied),
            "message": f"{before}->{decision.instances} instances for {demand:.1f} tuples/s (forecast "
                       f"{max(decision.workload):.1f}); {request.describe()}"}
