"""What an hour of faults samples while it runs, each in a thread of its own, a CSV row per sample (so a run
stopped in the middle keeps every sample it took):

* :class:`ServiceSampler`, every ``--sample-s`` (5 s): the planner service's process as /proc shows it (its
  pid from the cluster's record, so a restarted service is followed; state, resident memory, open files,
  processes below it and their memory), whether it answers ``health``, a few of its ``/metrics`` counters
  (they start at 0 with each process), and the sizes of the plan log and the problem log (each with its
  rotated ``.1``) -> ``service.csv``;
* :class:`NimbusProbe`, every 2 s: whether Nimbus' Thrift port accepts a connection, whether a Nimbus
  answers ``getClusterInfo`` as leader, how many supervisors it lists and the topology's status ->
  ``nimbus.csv``.
"""
from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storm_planner_bench.common.report import append_csv
from storm_planner_bench.soak import proc

SERVICE_COLUMNS = ("time", "pid", "state", "rss_kb", "open_files", "children", "children_rss_kb", "answers",
                   "plans_ok", "plans_failed", "fallbacks", "replans_moved", "replans_kept",
                   "plan_log_bytes", "problem_log_bytes")
NIMBUS_COLUMNS = ("time", "port_open", "leader", "supervisors", "topology_status")
# /metrics families summed into service.csv's columns, by column: (family, label filter or None)
COUNTERS = {"plans_ok": ("storm_planner_plans", ("outcome", "ok")),
            "plans_failed": ("storm_planner_plans", ("outcome", "!ok")),
            "fallbacks": ("storm_planner_fallbacks", None),
            "replans_moved": ("storm_planner_replans", ("outcome", "moved")),
            "replans_kept": ("storm_planner_replans", ("outcome", "kept"))}


class Sampler(threading.Thread):
    """Calls ``sample()`` every ``period_s`` until :meth:`stop`, appending each row it returns to ``path``."""

    def __init__(self, name: str, path: Path, columns: tuple[str, ...], period_s: float,
                 sample: Callable[[], dict[str, Any]]) -> None:
        super().__init__(name=name, daemon=True)
        self.path, self.columns, self.period_s, self.sample = path, columns, period_s, sample
        self._stopped = threading.Event()
        self.failures = 0

    def run(self) -> None:
        while not self._stopped.is_set():
            began = time.monotonic()
            try:
                append_csv(self.path, self.columns, self.sample())
            except Exception:  # noqa: BLE001 - a sample lost is a gap in the series, not a failed run
                self.failures += 1
            self._stopped.wait(max(0.0, self.period_s - (time.monotonic() - began)))

    def stop(self) -> None:
        self._stopped.set()
        self.join(timeout=30)


def log_bytes(path: Path) -> int:
    """The log's size on disk with its rotated copy (``<file>.1``): what it holds now."""
    total = 0
    for one in (path, path.with_name(path.name + ".1")):
        try:
            total += one.stat().st_size
        except OSError:
            pass
    return total


class ServiceSampler(Sampler):
    def __init__(self, cluster: Any, path: Path, period_s: float = 5.0) -> None:
        super().__init__("soak-service", path, SERVICE_COLUMNS, period_s, self.take)
        self.cluster = cluster

    def take(self) -> dict[str, Any]:
        from storm_planner.cluster import daemons
        from storm_planner.cluster.probes import planner_ok

        d = self.cluster.description
        row: dict[str, Any] = {"time": round(time.time(), 2)}
        try:
            pid = daemons.DaemonRecord.load(self.cluster.run_dir / "planner.json").pid
        except (OSError, ValueError, TypeError):
            pid = None
        found = proc.stat(pid) if pid else None
        if pid and found is not None and found.state != "Z":
            below = proc.descendants(pid)
            row.update(pid=pid, state=found.state, rss_kb=proc.rss_kb(pid), open_files=proc.open_files(pid),
                       children=len(below), children_rss_kb=sum(proc.rss_kb(p) or 0 for p in below))
        else:
            row.update(pid=pid or "", state="gone")
        row["answers"] = int(planner_ok(d.host, d.ports.planner))
        if row["answers"] and self.cluster.addresses and self.cluster.addresses.planner_metrics_url:
            row.update(scrape_counters(self.cluster.addresses.planner_metrics_url))
        row["plan_log_bytes"] = log_bytes(self.cluster.plan_log)
        row["problem_log_bytes"] = log_bytes(self.cluster.problem_log)
        return row


def scrape_counters(url: str, timeout_s: float = 2.0) -> dict[str, float]:
    """:data:`COUNTERS` from the service's ``/metrics`` (empty when it does not answer)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            text = response.read(4 * 1024 * 1024).decode("utf-8", errors="replace")
    except Exception:  # noqa: BLE001 - not answering now
        return {}
    return counters_in(text)


def counters_in(text: str) -> dict[str, float]:
    """:data:`COUNTERS` summed from Prometheus' text format (``_total`` samples only)."""
    from prometheus_client.parser import text_string_to_metric_families

    found = dict.fromkeys(COUNTERS, 0.0)
    for family in text_string_to_metric_families(text):
        for column, (name, wanted) in COUNTERS.items():
            if family.name != name:
                continue
            for sample in family.samples:
                if sample.name == f"{name}_total" and _matches(sample.labels, wanted):
                    found[column] += sample.value
    return found


def _matches(labels: dict[str, str], wanted: tuple[str, str] | None) -> bool:
    if wanted is None:
        return True
    key, value = wanted
    return labels.get(key) != value[1:] if value.startswith("!") else labels.get(key) == value


class NimbusProbe(Sampler):
    def __init__(self, cluster: Any, path: Path, topology: Callable[[], str | None], period_s: float = 2.0) -> None:
        super().__init__("soak-nimbus", path, NIMBUS_COLUMNS, period_s, self.take)
        self.cluster, self.topology = cluster, topology

    def take(self) -> dict[str, Any]:
        from storm_planner.submit import nimbus

        d = self.cluster.description
        row: dict[str, Any] = {"time": round(time.time(), 2), "port_open": int(nimbus.tcp_open(d.host, d.ports.nimbus))}
        try:
            summary = nimbus.cluster_summary(d.host, d.ports.nimbus, 3000)
        except Exception:  # noqa: BLE001 - not answering: what the probe is for
            return {**row, "leader": 0, "supervisors": "", "topology_status": ""}
        wanted = self.topology()
        status = next((t.status for t in summary.topologies or [] if t.id == wanted), "") if wanted else ""
        return {**row, "leader": int(any(n.isLeader for n in summary.nimbuses or [])),
                "supervisors": len(summary.supervisors or []), "topology_status": status}
