"""What the planner service sees when an end-to-end workload is submitted: the plugin's request, offline.

The plugin sends the service a ``TopologySpec`` (the streamparse topology's graph, the workload's ackers,
each executor's declared 10 % of a core) and the supervisors' ``Node`` records; the service converts them
(:func:`~storm_planner.service.planning.convert.problem_from_thrift`) into the problem a first plan is made on,
before any metrics. Built here without a cluster, the same problem lets a study ask what a planner does
and what a placement costs by the planner's own model (:mod:`storm_planner_bench.e2e.wire`, the tests of
the IMC prior).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner.cluster.description import ClusterDescription, Supervisor
from storm_planner.core.problem import Problem
from storm_planner.core.system_streams import ACKER
from storm_planner.profiling.project import load_project_topology
from storm_planner.service.planning.convert import problem_from_thrift
from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner_bench.e2e.workloads import WORKLOADS

# The Thrift records (T.TopologySpec, T.Node) are classes thriftpy2 builds at import: typed Any here.
DECLARED_CPU = 10.0        # % of a core: Storm's default topology.component.cpu.pcore.percent
DECLARED_MEMORY_MB = 128.0
WORKER_MAX_HEAP_MB = 768.0


def submission_spec(workload: str, repo: Path, options: Mapping[str, str] | None = None) -> Any:
    """The workload's TopologySpec as the plugin sends it at submission (executors numbered as Storm does:
    components in name order, 1-based task ids). ``repo``: the checkout holding the workload's project."""
    spec = WORKLOADS[workload]
    topology = load_project_topology(repo / spec.project, spec.topology)
    parallelism = {c.name: c.hint_for(None) for c in topology.components} | {ACKER: spec.ackers}
    kinds = {c.name: c.kind for c in topology.components}
    components = [T.Component(id=c, type=kinds.get(c, "bolt"), parallelism=n, system=c.startswith("__"))
                  for c, n in sorted(parallelism.items())]
    streams = [T.Stream(from_component=source, to_component=c.name, grouping=grouping, stream_id=stream)
               for c in topology.components for source, stream, grouping in c.inputs]
    executors = [T.Executor(id=f"[{k}-{k}]", component=c, cpu=DECLARED_CPU, memory_mb=DECLARED_MEMORY_MB)
                 for k, c in enumerate((c.id for c in components for _ in range(c.parallelism)), 1)]
    return T.TopologySpec(id=f"e2e-{workload}-1", name=f"e2e-{workload}", components=components, streams=streams,
                          executors=executors, num_workers=spec.workers, worker_max_heap_mb=WORKER_MAX_HEAP_MB,
                          options=dict(options or {}))


def supervisor_node(supervisor: Supervisor, link_mbit: float | None) -> Any:
    """A supervisor as the plugin describes it: its declared CPU and memory, free slots, machine meta."""
    meta = dict(supervisor.meta)
    link = supervisor.link_mbit or link_mbit
    if link:
        meta.setdefault("network.bandwidth.mbit", f"{link:g}")
    return T.Node(id=supervisor.name, host=supervisor.name, cpu_capacity=supervisor.cpu,
                  memory_mb=supervisor.memory_mb, free_ports=list(supervisor.slot_ports), used_ports=[], meta=meta)


def cluster_nodes(description: ClusterDescription) -> list[Any]:
    """Every supervisor of the description as a ``Node`` record."""
    link = description.network.link_mbit if description.network.emulated else None
    return [supervisor_node(s, link) for s in description.supervisors]


def submission_problem(workload: str, repo: Path, nodes: Sequence[Any],
                       options: Mapping[str, str] | None = None) -> Problem:
    """The problem of the workload's first plan: its submission on ``nodes``, with no metrics."""
    return problem_from_thrift(submission_spec(workload, repo, options), list(nodes))
