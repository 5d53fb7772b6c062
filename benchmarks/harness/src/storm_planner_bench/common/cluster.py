"""What the cluster benchmarks share (``gma/cluster.py``, ``e2e/cells.py``): the supervisors held to
their declared CPU by cgroup quotas with a CPU account each, a synthetic World Cup feed, and killing a
topology until its workers are gone."""
from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storm_planner.progress import Progress


def run_reporting(command: str, run: Callable[[], int], progress: Progress) -> int:
    """A cluster benchmark's command: ``run()``'s status, a ``ValueError`` (a bad option) as status 2 with
    its message on standard error, and the run's wall time as the last progress line either way."""
    started = time.perf_counter()
    try:
        return run()
    except ValueError as error:
        print(f"storm-planner {command}: {error}", file=sys.stderr)
        return 2
    finally:
        progress(f"done in {time.perf_counter() - started:.0f} s")


def bench_cluster_missing() -> str | None:
    """Why this host cannot run a bench's local cluster, or None when it can: the plugin's and the metrics
    hook's jars built, root with iproute2 and nsenter (the emulated links), a writable cgroup v1 CPU hierarchy
    (the quotas). The cluster tests skip on it."""
    import os
    import shutil

    from storm_planner.cluster.locations import default_plugin_jar
    from storm_planner.metrics.hookjar import default_hook_jar
    from storm_planner.profiling.cgroups import detect_emulation

    plugin, hook = default_plugin_jar(), default_hook_jar()
    if not (plugin and plugin.is_file() and hook and hook.is_file()):
        return "plugin or metrics jar not built (mvn package)"
    if not (os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc", "nsenter"))):
        return "the emulated network needs root, iproute2 and nsenter"
    if not detect_emulation().cgroup_quota:
        return "needs a writable cgroup v1 CPU hierarchy"
    return None


def processes_of(topology_id: str) -> list[int]:
    """Processes whose command line names the topology (its workers: ``-Dstorm.id=<id>``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if topology_id.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def kill_and_wait(nimbus: str, job: str, topology_id: str | None = None, timeout_s: float = 60.0) -> None:
    """Kill ``job`` and wait until its workers are gone: a topology of the same name submitted while the
    supervisors still tear the old one down may not start (seen once in 30 runs before this wait)."""
    from storm_planner.submit.operations import kill_topology

    kill_topology(nimbus, job, wait_secs=0, progress=lambda message: None)
    deadline = time.monotonic() + timeout_s
    while topology_id and processes_of(topology_id) and time.monotonic() < deadline:
        time.sleep(1)


def node_quotas(cluster, stack: contextlib.ExitStack, label: str, progress: Progress,
                quotas: dict[str, Any] | None = None, period_us: int | None = None) -> dict[str, Any]:
    """Each supervisor in a CPU quota of what it is held to (``held_cpu``: its declared capacity unless a
    bench declares more or less) and a cpuacct group to read its CPU from
    (its workers and their Python subprocesses inherit both); the groups go when ``stack`` closes.
    ``period_us``: the quotas' CFS period (default: Linux's 100 ms, ``cgroups.CFS_PERIOD_US``).
    Returns the cpuacct groups by supervisor; ``quotas``, when given, receives the quota groups."""
    from storm_planner.profiling.cgroups import CpuAccount, CpuQuota
    from storm_planner.profiling.profiler import supervisor_pid

    accounts = {}
    periods: set[int] = set()
    for sup in cluster.description.supervisors:
        pid = supervisor_pid(cluster, sup.name)
        quota = stack.enter_context(CpuQuota(f"storm-planner-{label}-{sup.name}-{pid}", sup.held_cpu,
                                             period=period_us))
        quota.add(pid)
        periods.add(quota.period)
        if quotas is not None:
            quotas[sup.name] = quota
        account = stack.enter_context(CpuAccount(f"storm-planner-{label}-{sup.name}-{pid}"))
        account.add(pid)
        accounts[sup.name] = account
    progress(f"supervisors held to their CPU (cgroup v1 quotas per {_periods(periods)}, inherited by their "
             "workers): " + ", ".join(_held(sup) for sup in cluster.description.supervisors))
    return accounts


def _periods(periods: set[int]) -> str:
    return "CFS period of " + " and ".join(f"{p / 1000:g} ms" for p in sorted(periods)) if periods else "CFS period"


def _held(sup) -> str:
    held = f"{sup.name} {sup.held_cpu:g} %"
    return held if sup.held_cpu == sup.cpu else f"{held} (declares {sup.cpu:g} %)"


def cpu_seconds(accounts: dict[str, Any]) -> dict[str, float]:
    """CPU seconds each node's group has used so far."""
    return {name: account.usage_ns() / 1e9 for name, account in accounts.items()}


def build_feed(root: Path, seed: int, records: int, progress: Progress) -> tuple[Path, Path]:
    """A synthetic World Cup 1998 feed of ``records`` requests (PySpark): (requests dir, catalogue)."""
    build_synthetic_feeds(root, "worldcup", seed, records, progress)
    return root / "requests", root / "catalogue.jsonl"


def build_synthetic_feeds(root: Path, kind: str, seed: int, records: int, progress: Progress,
                          drift_every: int = 0) -> Path:
    """The synthetic feeds of ``kind`` (see :mod:`storm_planner.feeds.build`) under ``root``, by PySpark;
    ``drift_every``: the airline feed's hot planes and airports change every that many flights."""
    from storm_planner.feeds.build import build_feeds
    from storm_planner.feeds.spark import spark_session

    progress(f"building a synthetic {kind} feed of {records:,} records (PySpark)")
    spark = spark_session(shuffle_partitions=2)
    try:
        build_feeds(spark, kind, root, synthetic=True, records=records, seed=seed, partitions=2,
                    progress=lambda message: None, drift_every=drift_every)
    finally:
        spark.stop()
    (root / ".complete").write_text("")   # a build cut short is not taken for a feed next time
    return root
