"""OOPSer inside a running topology: one extra instance of an operator samples its live stream.

Mu et al. (2020, §2.2) sample an operator's performance under resource provisions with a *sampling
instance* that takes a share of the operator's live input. Here: the component, running fewer
executors than it has tasks, is rebalanced to one executor more; the instance with the highest task
is the sampling instance. For each provision DSA or FSSA choose
(:mod:`storm_planner.scaling.sampling`), that instance alone — the subprocess its
multilang executor runs in — is put under the provision's CPU quota and memory limit
(:mod:`.instances`), the stream settles, and the tuples it executed per second over the next metrics
windows (its own tasks' windows from the metrics hook; acked, as a multilang executor's "executed"
counts hand-offs to its subprocess) are the sample. Afterwards the component goes
back to its executors.

The sampling instance is stressed by the live stream itself: Storm's plain shuffle gives every
instance an equal share, and a sampling instance held to less CPU than its share needs falls behind,
fills its queue and works flat out — what it executes is what its provision sustains (while it is
sampled, backpressure holds the whole component to that pace: the price of sampling live). Storm 2's
default shuffle is *load-aware and locality-aware*: while the executors in the sender's own worker
look unloaded, every tuple stays in that worker — and a multilang bolt always looks unloaded (its
executor hands tuples to the subprocess at once; the backlog waits in the ShellBolt, not in the
receive queue the load is read from), so a sampling instance elsewhere gets nothing (measured: 0
tuples/s). A topology to be sampled live is therefore submitted with
``topology.disable.loadaware.messaging: true`` (:data:`LIVE_SAMPLING_OPTIONS`); the sampler warns
otherwise. Each sample also says how often the instance's CPU group was throttled while measured
(``throttled``, share of CFS periods) and whether that passed ``min_throttled`` (``saturated``): an
unsaturated sample is a lower bound.
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path

from storm_planner.profiling.cgroups import throttled_share
from storm_planner.profiling.errors import ProfilingError
from storm_planner.progress import Progress, print_progress
from storm_planner.scaling.live.instances import Instance, InstanceProvisions, Provision, wait_for_instances
from storm_planner.scaling.live.oopser import SamplerSettings
from storm_planner.scaling.sampling import dsa, fssa

# Topology options under which every executor of a shuffle-grouped component gets an equal share.
LIVE_SAMPLING_OPTIONS = {"topology.disable.loadaware.messaging": True}


@dataclass(frozen=True)
class LiveSample:
    cpu: float
    memory_mb: float
    throughput: float   # tuples/s the sampling instance executed
    throttled: float    # share of CFS periods its CPU group was throttled while measured
    saturated: bool

    def to_dict(self) -> dict:
        return {"cpu": self.cpu, "memory_mb": self.memory_mb, "throughput": round(self.throughput, 3),
                "throttled": round(self.throttled, 3), "saturated": self.saturated}


def sample_live(
    nimbus: str,
    zookeeper: str,
    log_dir: Path,
    name: str,
    component: str,
    settings: SamplerSettings,
    *,
    min_throttled: float = 0.5,
    progress: Progress = print_progress,
) -> tuple[Instance, list[LiveSample]]:
    """Sample ``component`` of the running topology ``name``; returns the sampling instance and its samples."""
    from storm_planner.submit import nimbus as nimbus_api
    from storm_planner.submit.operations import parse_nimbus, rebalance_topology, running_components

    host, port = parse_nimbus(nimbus)
    with nimbus_api.nimbus_client(host, port) as client:
        running = running_components(client, name)
        conf = json.loads(client.getTopologyConf(running.id) or "{}")
    if not conf.get("topology.disable.loadaware.messaging"):
        progress(f"[oopser live] warning: {name} uses Storm's load- and locality-aware shuffle: the sampling instance "
                 "may get no tuples (a multilang bolt never looks loaded); submit with "
                 "topology.disable.loadaware.messaging=true")
    if component not in running.executors:
        raise ProfilingError(f"{name!r} has no component {component!r}; it has {', '.join(sorted(running.executors))}")
    executors, tasks = running.executors[component], running.tasks[component]
    if executors >= tasks:
        raise ProfilingError(f"{name}/{component} runs all its {tasks} task(s) already: no task left for a sampling "
                             "instance (submit it with more tasks than executors)")

    def resize(count: int) -> None:
        # A rebalance while a supervisor still downloads the topology can halt it (Storm 2.8.3: the
        # localizer deletes the files the slot is reading): first let every instance start.
        if len(wait_for_instances(log_dir, running.id, component, executors if count > executors else count + 1,
                                  wait_s=180)) == 0:
            raise ProfilingError(f"no running subprocess of {name}/{component} in {log_dir}/workers-artifacts: "
                                 "a multilang component and its workers' logs are needed")
        rebalance_topology(nimbus, name, {component: count}, wait_secs=0, wait_applied=120, progress=progress)

    progress(f"[oopser live] {name}/{component}: {executors} -> {executors + 1} executors (the sampling instance)")
    resize(executors + 1)
    try:
        with InstanceProvisions(f"storm-planner-oopser-{running.id}") as groups:
            sampler = _LiveInstance(groups, log_dir, running.id, component, executors + 1)
            samples = sampler.sample(zookeeper, settings, min_throttled, progress)
            return sampler.instance, samples
    finally:
        progress(f"[oopser live] {name}/{component}: back to {executors} executors")
        resize(executors)


class _LiveInstance:
    """The sampling instance: the highest-task executor; found again if its worker restarts."""

    def __init__(self, groups: InstanceProvisions, log_dir: Path, topology_id: str, component: str, count: int,
                 wait_s: float = 120.0):
        self.groups, self.log_dir, self.topology_id, self.component = groups, log_dir, topology_id, component
        self.count, self.wait_s = count, wait_s
        self.instance = self._find()

    def _find(self) -> Instance:
        found = wait_for_instances(self.log_dir, self.topology_id, self.component, self.count, self.wait_s)
        if len(found) != self.count:
            raise ProfilingError(f"{self.component!r} runs {len(found)} instance(s) after the rebalance, "
                                 f"expected {self.count} (workers' logs in {self.log_dir})")
        return found[-1]

    def sample(self, zookeeper: str, settings: SamplerSettings, min_throttled: float,
               progress: Progress) -> list[LiveSample]:
        taken: list[LiveSample] = []

        def measure(level: int) -> float:
            cpu, memory = settings.levels[level]
            self.instance = self._find()
            self.groups.apply([self.instance], [Provision(f"sample-{level}", cpu, memory, 0.0)])
            quota = self.groups.cpu_group(self.instance)
            _processed_rate(zookeeper, self.topology_id, self.instance, settings.settle_windows, settings.period_s)
            before = quota.throttled()
            rate = _processed_rate(zookeeper, self.topology_id, self.instance, settings.measure_windows,
                                  settings.period_s)
            throttled = throttled_share(before, quota.throttled())
            taken.append(LiveSample(cpu, memory, rate, throttled, throttled >= min_throttled))
            progress(f"[oopser live] task {self.instance.first_task} at {cpu:g} cores: {rate:.1f} tuples/s "
                     f"(throttled {100 * throttled:.0f} % of periods)")
            return rate

        if settings.method == "dsa":
            visited = dsa(settings.levels, measure, tolerance=settings.tolerance)
        else:
            visited = fssa(settings.levels, measure, settings.step)
        # The sampler may visit a provision twice (DSA re-samples where performance fluctuates): keep
        # the samples it returns, each with what was seen when it was taken last.
        last = {(s.cpu, s.memory_mb): s for s in taken}
        return [dataclasses.replace(last[(cpu, memory)], throughput=throughput) for cpu, memory, throughput in visited]


def _processed_rate(zookeeper: str, topology_id: str, instance: Instance, windows: int, period_s: float) -> float:
    """Tuples/s the instance's tasks processed (acked; executed if it acks none) over their next ``windows``
    metrics windows."""
    from storm_planner.scaling.live.scale_run import EpochRates, processed_rate

    rates = EpochRates(zookeeper, topology_id, instance.component)
    try:
        deadline = time.monotonic() + 60 + 10 * period_s * windows
        seen: dict[int, list] = {}
        tasks = range(instance.first_task, instance.last_task + 1)
        while time.monotonic() < deadline and min((len(seen.get(t, [])) for t in tasks), default=0) < windows:
            time.sleep(min(1.0, period_s / 2))
            rates.poll()
            for window in rates.pending:
                if window.task in tasks:
                    seen.setdefault(window.task, []).append(window)
            rates.pending = []
        if not seen:
            raise ProfilingError(f"no metrics window of task {instance.first_task} ({instance.component}) "
                                 f"in {60 + 10 * period_s * windows:.0f} s: is the metrics hook on?")
        # A multilang executor's "executed" counts tuples handed to its subprocess, up to
        # topology.shellbolt.max.pending ahead of the work; its acks come when the work is done.
        return processed_rate([w for taken in seen.values() for w in taken])
    finally:
        rates.close()
