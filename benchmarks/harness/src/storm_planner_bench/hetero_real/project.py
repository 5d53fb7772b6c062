"""``bench hetero-real``'s topology: the reference profile and the streamparse project it runs.

The Micro-benchmark's components as Python shell components doing a fixed number of SHA-256
rounds per tuple (compute classes as in the paper), one project per shape, generated into a work
directory; the profile the planners use is built from reference times measured on this host.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner.generators.hetero import TOPOLOGIES
from storm_planner.profiling.builtin_project import write_generated_project

WORK_PREFIX = "realbench.work."            # realbench.work.<component> = SHA-256 rounds per tuple
CONF_PREFIX = "realbench"                  # realbench.parallelism.<component> at submission
PARK = {
    "topology.bolt.wait.strategy": "org.apache.storm.policy.WaitStrategyPark",
    "topology.bolt.wait.park.microsec": 1000,
    "topology.spout.wait.strategy": "org.apache.storm.policy.WaitStrategyPark",
    "topology.spout.wait.park.microsec": 1000,
}
# Compute classes as in the paper's Micro-benchmark (hetero/micro.py), as SHA-256 rounds per tuple.
COMPONENT_TYPES = {
    "spout": "source", "spout1": "source", "spout2": "source",
    "low": "lowCompute", "sink": "lowCompute",
    "mid": "midCompute", "sink1": "midCompute", "sink2": "midCompute",
    "high": "highCompute", "center": "highCompute",
}
# Storm's defaults.yaml: the on-heap memory an executor declares unless told otherwise (MB).
STORM_DEFAULT_ONHEAP_MB = 128.0
STORM_DEFAULT_WORKER_MAX_HEAP_MB = 768.0
MIN_DECLARED_CPU = 0.1   # percent of a core: the least a RAS run declares for an executor
DEFAULT_ROUNDS = {"lowCompute": 300, "midCompute": 1500, "highCompute": 4000}
PROFILED = {"spout": "source", "sink": "lowCompute", "mid": "midCompute", "high": "highCompute"}  # Linear


def real_profile(reference: Mapping[str, Mapping[str, float]], machine_types: Sequence[str],
                 input_rate: float = 10.0) -> dict[str, Any]:
    """A profile for the benchmark shapes from times measured once (``reference``: component type ->
    ``{"et", "met"}``): the same times on every machine type, since a CPU quota caps a machine's
    capacity without changing what one tuple costs."""
    return {
        "format": "storm-planner-profile/1",
        "time_unit": "ms",
        "input_rate": input_rate,
        "source": "measured once on an unthrottled supervisor; the same times on every machine type",
        "component_types": {kind: {mt: dict(times) for mt in machine_types} for kind, times in reference.items()},
        "components": {name: {"type": kind} for name, kind in COMPONENT_TYPES.items()},
    }


def reference_times(profile_dict: Mapping[str, Any], machine_type: str) -> dict[str, dict[str, float]]:
    """Component type -> times, from a fitted profile of the Linear topology on ``machine_type``."""
    components = profile_dict["components"]
    found = {}
    for component, kind in PROFILED.items():
        times = components[component]["times"][machine_type]
        found[kind] = {"et": float(times.get("et", 0.0)), "met": float(times.get("met", 0.0))}
    return found


# -- the streamparse project ------------------------------------------------------------------------------

_COMPONENTS = '''\
"""storm-planner bench hetero-real: a rate-file spout and bolts of calibrated CPU work per tuple."""
import hashlib
import time

from streamparse import Bolt, Spout


def _component(context):
    return context.get("componentid") or context["task->component"][str(context["taskid"])]


class RateSpout(Spout):
    """Emits the rate in the file ``profiling.rate_file`` (tuples/s for the whole component,
    shared by its tasks), re-read every 0.5 s.

    It sleeps until its next tuple is due (at most 50 ms) and emits every due tuple in one call
    (at most 20), so an idle or slow spout costs next to nothing: a spout that polled every few
    milliseconds would burn a fixed few percent of a core per instance, a floor eq. 7 cannot see."""

    outputs = ["id", "payload"]
    most_per_call = 20

    def initialize(self, stormconf, context):
        me = _component(context)
        self.tasks = max(1, sum(1 for c in context["task->component"].values() if c == me))
        self.rate_file = stormconf["profiling.rate_file"]
        self.rate, self.checked = 0.0, 0.0
        self.sent, self.since = 0, time.time()
        self.next_id = 0

    def _read_rate(self, now):
        if now - self.checked < 0.5:
            return
        self.checked = now
        try:
            rate = float(open(self.rate_file).read().strip() or 0) / self.tasks
        except (OSError, ValueError):
            return
        if rate != self.rate:  # a new step: pace from now on
            self.rate, self.sent, self.since = rate, 0, now

    def next_tuple(self):
        now = time.time()
        self._read_rate(now)
        due = int((now - self.since) * self.rate) if self.rate > 0 else 0
        if due <= self.sent:
            wait = (self.sent + 1) / self.rate - (now - self.since) if self.rate > 0 else 0.05
            time.sleep(min(max(wait, 0.0), 0.05))
            return
        for _ in range(min(due - self.sent, self.most_per_call)):
            self.sent += 1
            self.next_id += 1
            self.emit([self.next_id, "x" * 32])


class WorkBolt(Bolt):
    """SHA-256 rounds per tuple (``realbench.work.<component>``), then pass the tuple on."""

    outputs = ["id", "payload"]
    auto_ack = False      # acking is off: no ack messages over the multilang pipe
    auto_anchor = False
    forward = True

    def initialize(self, conf, context):
        self.rounds = int(conf.get("realbench.work." + _component(context), 0))

    def process(self, tup):
        digest = str(tup.values[0]).encode()
        for _ in range(self.rounds):
            digest = hashlib.sha256(digest).digest()
        if self.forward:
            self.emit(tup.values)


class SinkBolt(WorkBolt):
    forward = False


# One class per component: the metrics hook attributes a subprocess's CPU to the component whose
# script is on its command line, so two components running one class would share their CPU.
class Spout(RateSpout): pass
class Spout1(RateSpout): pass
class Spout2(RateSpout): pass
class Low(WorkBolt): pass
class Mid(WorkBolt): pass
class High(WorkBolt): pass
class Center(WorkBolt): pass
class Sink(SinkBolt): pass
class Sink1(SinkBolt): pass
class Sink2(SinkBolt): pass
'''

def topology_source(shape: str) -> str:
    """The streamparse topology module of one of Nasiri et al.'s shapes (:mod:`storm_planner.generators.hetero`),
    every stream shuffle-grouped, each component running its own class (``Spout1`` for ``spout1``)."""
    spec = TOPOLOGIES[shape]
    names = [name for name, _ in spec["components"]]  # listed in topological order
    lines = [f'"""Nasiri et al.\'s {shape} topology (storm-planner bench hetero-real)."""',
             "from streamparse import Grouping, Topology", "",
             f"from realbench_topology.components import {', '.join(sorted(map(_class_of, names)))}", "", "",
             f"class {shape.title()}(Topology):", '    conf_prefix = "realbench"']
    for name in names:
        inputs = ", ".join(f"{source}: Grouping.SHUFFLE" for source, target in spec["streams"] if target == name)
        lines.append(f"    {name} = {_class_of(name)}.spec({f'inputs={{{inputs}}}' if inputs else ''})")
    return "\n".join(lines) + "\n"


def _class_of(component: str) -> str:
    return component[:1].upper() + component[1:]


def write_project(directory: Path, shape: str) -> Path:
    """A streamparse project holding the one topology ``shape`` (submission takes the only one)."""
    return write_generated_project(directory, "realbench_topology", _COMPONENTS, {shape: topology_source(shape)})


def work_options(rounds: Mapping[str, int]) -> dict[str, int]:
    """``realbench.work.<component>`` for every component of every shape."""
    return {f"{WORK_PREFIX}{name}": int(rounds.get(kind, 0))
            for name, kind in COMPONENT_TYPES.items() if kind in rounds}


def base_options(period_s: int, rounds: Mapping[str, int], load_aware: bool = False) -> dict[str, Any]:
    """Topology conf shared by the profiling run and every benchmark run.

    Storm 2's shuffle grouping is load- and locality-aware: it keeps tuples in the sending worker
    while that worker's tasks are not too busy, and steers them away from loaded tasks. The
    paper's Storm 0.9.5 shuffled uniformly, as eq. 8 assumes; ``load_aware=False`` (the default
    here) switches Storm 2 back to that (``topology.disable.loadaware.messaging``)."""
    return {"topology.acker.executors": 0, "topology.stats.sample.rate": 0.05,
            "planner.metrics.period.secs": period_s, "planner.replan": False,
            "topology.disable.loadaware.messaging": not load_aware,
            **PARK, **work_options(rounds)}


def ras_options(declared: Mapping[str, float], share: float, parallelism: Mapping[str, int]) -> dict[str, Any]:
    """The topology options of a RAS run: each component's declared CPU per executor, ``declared`` times
    ``share`` (``realbench.cpu.<component>``, :mod:`storm_planner.streaming.topology`), and a worker heap
    limit (``topology.worker.max.heap.size.mb``, read by RAS alone) that lets one worker hold every
    executor at Storm's default memory per executor, so RAS packs by CPU: at its default, 768 MB, a
    worker holds six executors and three one-slot supervisors no graph of more than 18. The memory the
    executors declare, from which Storm sizes every worker's heap whatever the scheduler, is unchanged."""
    executors = sum(int(n) for n in parallelism.values())
    return {**{f"{CONF_PREFIX}.cpu.{c}": max(MIN_DECLARED_CPU, round(cpu * share, 1)) for c, cpu in declared.items()
               if c in parallelism},
            "topology.worker.max.heap.size.mb": max(STORM_DEFAULT_WORKER_MAX_HEAP_MB, STORM_DEFAULT_ONHEAP_MB * executors)}
