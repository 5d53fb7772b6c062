"""OOPSer on the local cluster: an operator instance's throughput under CPU provisions (Mu et al.
2020, §2.2), for QEScalor's performance model.

One supervisor runs the built-in profiling topology (a rate spout → a ``work`` bolt of fixed SHA-256
rounds per tuple, :mod:`storm_planner.profiling.builtin_project`) inside a cgroup v1 CPU group, so the supervisor, its worker
JVM and the Python subprocesses share the provision. The spout offers far more than the bolt can
take (the stress test); for each provision the sampler visits — DSA or FSSA
(:mod:`storm_planner.scaling.sampling`) choose which — the group's CFS quota is set, the
stream settles for ``settle_windows`` metrics windows, and the ``work`` bolt's executed tuples per
second over ``measure_windows`` windows is the sample.

What differs from the paper's OOPSer: the sampling instance is a topology of its own under stress,
not a share of a running topology's live stream; the provision's memory is recorded, not enforced (a
JVM worker's heap is not an operator's 33 MB); the spout shares the provision with the bolt.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from storm_planner.profiling.builtin_project import RATE_FILE_OPTION, WORK_OPTION, write_builtin_project
from storm_planner.profiling.cgroups import THROTTLE_JUDGED_PERIOD_US, CpuQuota, detect_emulation
from storm_planner.profiling.errors import ProfilingError
from storm_planner.profiling.measurements import measure_component
from storm_planner.profiling.profiler import collect_windows, supervisor_pid
from storm_planner.progress import Progress, print_progress
from storm_planner.scaling.sampling import dsa, fssa

Level = tuple[float, float]   # (cpu cores, memory MB)


@dataclass(frozen=True)
class SamplerSettings:
    levels: Sequence[Level]
    method: str = "dsa"           # dsa | fssa
    step: int = 1                 # FSSA's step (levels)
    work_iterations: int = 2000   # SHA-256 rounds per tuple in the work bolt
    stress_rate: float = 20_000.0  # tuples/s the spout offers: far above what the bolt takes
    period_s: int = 2
    settle_windows: int = 1
    measure_windows: int = 2
    warmup_windows: int = 3       # once, before the first provision: the JVM and Python subprocesses warm up
    tolerance: float = 0.03       # DSA: a fall of throughput within this share is noise, not a fluctuation

    def __post_init__(self):
        if self.method not in ("dsa", "fssa"):
            raise ProfilingError(f"sampling method must be dsa or fssa, got {self.method!r}")
        if not self.levels or any(cpu <= 0 for cpu, _ in self.levels):
            raise ProfilingError("sampling needs at least one provision, every CPU > 0 cores")


def sample_on_cluster(description, settings: SamplerSettings, work_dir: Path,
                      progress: Progress = print_progress) -> list[tuple[float, float, float]]:
    """Samples ``(cpu, memory_mb, throughput)`` of the work bolt, one per provision visited."""
    from storm_planner.cluster.launcher import running_cluster
    from storm_planner.submit.operations import kill_topology, submit_project

    support = detect_emulation()
    if not support.cgroup_quota:
        raise ProfilingError(f"sampling needs a writable cgroup v1 CPU quota: {support.detail}")
    supervisor = description.supervisors[0]
    single = dataclasses.replace(description, supervisors=(supervisor,))
    project = write_builtin_project(work_dir / "project")
    rate_file = work_dir / "rate"
    rate_file.write_text(f"{settings.stress_rate:g}")
    quota = CpuQuota(f"storm-planner-oopser-{os.getpid()}", 100.0 * settings.levels[0][0],
                     period=THROTTLE_JUDGED_PERIOD_US)   # judged by the share of periods throttled
    with running_cluster(work_dir / "cluster", single, plugin=False, planner=False, ui=False,
                         progress=progress) as cluster, quota:
        quota.add(supervisor_pid(cluster, supervisor.name))  # its workers, started later, follow it
        a = cluster.addresses
        row = submit_project(project, nimbus=a.nimbus, name="oopser", wait_active=180, progress=progress, options={
            RATE_FILE_OPTION: str(rate_file), WORK_OPTION: settings.work_iterations, "topology.workers": 1,
            "topology.acker.executors": 0, "planner.metrics.period.secs": settings.period_s,
            "planner.replan": False})
        try:
            quota.set_capacity(100.0 * settings.levels[-1][0])
            collect_windows(a.zookeeper, row.id, settings.warmup_windows, settings.period_s,
                            timeout_s=60 + 10 * settings.period_s * settings.warmup_windows)

            def measure(level: int) -> float:
                cpu = settings.levels[level][0]
                quota.set_capacity(100.0 * cpu)
                collect_windows(a.zookeeper, row.id, settings.settle_windows, settings.period_s,
                                timeout_s=60 + 10 * settings.period_s * settings.settle_windows)
                windows = collect_windows(a.zookeeper, row.id, settings.measure_windows, settings.period_s,
                                          timeout_s=60 + 10 * settings.period_s * settings.measure_windows)
                found = measure_component(windows, "work", "sampled", spout=False)
                throughput = found.input_rate if found else 0.0
                progress(f"[oopser] {cpu:g} cores: {throughput:.1f} tuples/s")
                return throughput

            if settings.method == "dsa":
                return dsa(settings.levels, measure, tolerance=settings.tolerance)
            return fssa(settings.levels, measure, settings.step)
        finally:
            kill_topology(a.nimbus, row.name, wait_secs=0, progress=progress)


def parse_levels(cpus: str, memory_mb: float) -> list[Level]:
    """``"0.25,0.5,1"`` or ``"0.2:2.0:0.2"`` (start:stop:step, stop included) -> levels."""
    text = cpus.strip()
    try:
        if ":" in text:
            start, stop, step = (float(x) for x in text.split(":"))
            count = int(round((stop - start) / step)) + 1
            values = [round(start + i * step, 6) for i in range(count)]
        else:
            values = [float(x) for x in text.split(",")]
    except ValueError:
        raise ProfilingError(f"--cpu {cpus!r}: expected a list 0.25,0.5,1 or a range start:stop:step") from None
    if not values or any(v <= 0 for v in values):
        raise ProfilingError(f"--cpu {cpus!r}: every CPU provision must be > 0 cores")
    return [(v, memory_mb) for v in sorted(values)]
