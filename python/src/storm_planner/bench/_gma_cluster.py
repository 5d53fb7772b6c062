"""Elastic Allocator's Figures 4 and 5 on the local cluster, over the emulated network (issue #15).

``storm-planner bench gma cluster [--quick]`` (root, iproute2; about 25 minutes, ``--quick`` about 8)
runs the paper's experiment on real daemons instead of the evaluator's model:

1. A local cluster of four supervisors on the emulated network (``cluster/network.py``): each in its
   own network namespace behind a 10 Mbit/s link (both ways), each declaring 50 % CPU (the machine's
   two cores shared out), three slots each. The planner service reads the workers' metrics.
2. Word Count and Join (``topologies/worldcup``) run throughout on a synthetic World Cup 1998 feed
   (``feeds build worldcup --synthetic``, PySpark) at a fixed rate each, placed by ``even`` as
   Storm's EvenScheduler places topologies submitted one after the other.
3. **Profile** (the paper's e_j, an operator's known cost): the three queries run once under ``even``;
   their windows give each component's CPU per tuple and each query's tuple size on the wire. The
   components then *declare* that CPU at each rate (``worldcup.cpu.<component>``, Storm's
   ``topology.component.cpu.pcore.percent``), so a planner sees what an operator costs before the
   metrics of a just-submitted topology exist, and the nodes' ``used.cpu`` counts the running
   queries; links' ``used.bandwidth`` comes from the metrics of the running queries.
4. For every planner and every Top-K rate: Top-K is submitted with ``planner.algorithm`` = that
   planner, runs ``SETTLE_S``, and is measured for ``MEASURE_S``: each node's CPU (every process in
   its namespace: supervisor, workers, Python subprocesses) and its link's bytes both ways; then
   it is killed.

From those, per (planner, rate): CPU and bandwidth utilisation R_utl and deviation R_dev with the
evaluator's formulas (:func:`~storm_planner.core.utilisation.utilisation_and_deviation`; demand =
what was measured), nodes over D_CPU / D_BW (80 %), and the rate Top-K's spout really reached.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from storm_planner.bench.report import pyplot, stamped_progress, write_table
from storm_planner.core.utilisation import utilisation_and_deviation

_progress = stamped_progress("gma cluster bench", sys.stderr)

SUPERVISORS, SUPERVISOR_CPU, SLOTS = 4, 50.0, 3
LINK_MBIT = 10.0
BACKGROUND_RATE = 150.0        # tuples/s into Word Count and into Join while Top-K is placed
PROFILE_RATE = 600.0           # Top-K's rate while the components' costs are measured
WORKLOADS = (200, 400, 600, 800, 1000, 1200)
PLANNERS = ("gma", "gma-repair", "random", "even", "topdown")
D_CPU = D_BW = 0.8
SETTLE_S, MEASURE_S = 20.0, 20.0   # per (planner, rate); --quick: half
FEED_RECORDS = 400_000         # Word Count and Join read ~150/s for the whole run; each Top-K run starts over
TOPOLOGY_DIR = Path("topologies/worldcup")
COMPONENTS = {"worldcup_topk": ("requests", "count", "top"),
              "worldcup_wordcount": ("requests", "tokenize", "words", "counts"),
              "worldcup_join": ("requests", "join", "totals", "sections")}


def bench_cluster(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    from storm_planner.cluster import local_cluster
    from storm_planner.cluster.network import check_available

    check_available()
    rates = (200, 800) if quick else WORKLOADS
    planners = ("gma", "random", "even") if quick else PLANNERS
    with tempfile.TemporaryDirectory(prefix="gma-cluster-") as work:
        work = Path(work)
        feed, catalogue = _build_feed(work / "feeds", seed, 100_000 if quick else FEED_RECORDS)
        with local_cluster(_description(), work / "cluster", free_ports=True, ui=False, dashboard=False,
                           progress=_progress) as cluster:
            run = _Run(cluster, work, feed, catalogue, settle_s=SETTLE_S / (2 if quick else 1),
                       measure_s=MEASURE_S / (2 if quick else 1))
            costs = run.profile()
            run.start_background(costs)
            rows = []
            for planner in planners:
                for rate in rates:
                    rows.append(run.topk(planner, rate, costs))
    write_table(out, "cluster", rows, "Figs. 4-5 on the local cluster: Top-K beside Join and Word Count, "
                f"four supervisors behind {LINK_MBIT:g} Mbit/s emulated links", command)
    (out / "cluster-profile.json").write_text(json.dumps(costs, indent=2) + "\n")
    _plot(out, rows, planners)
    return rows


# -- the setting ---------------------------------------------------------------------------------
def _description():
    from storm_planner.cluster.description import parse_description

    return parse_description({
        "name": "gma-bench",
        "network": {"emulated": True, "link_mbit": LINK_MBIT},
        "planner": {"algorithm": "even", "timeout_ms": 20000},
        "storm": {"nimbus.monitor.freq.secs": 3, "supervisor.worker.timeout.secs": 60,
                  "topology.subprocess.timeout.secs": 60, "topology.message.timeout.secs": 60},
        "supervisors": [{"name": f"n{i}", "cpu": SUPERVISOR_CPU, "memory_mb": 4096, "slots": SLOTS,
                         "meta": {"machine.type": "vm", "speed": "1.0"}} for i in range(SUPERVISORS)],
    })


def _build_feed(root: Path, seed: int, records: int) -> tuple[Path, Path]:
    from storm_planner.feeds.build import build_feeds
    from storm_planner.feeds.spark import spark_session

    _progress(f"building a synthetic World Cup feed of {records:,} requests (PySpark)")
    spark = spark_session(shuffle_partitions=2)
    try:
        build_feeds(spark, "worldcup", root, synthetic=True, records=records, seed=seed, partitions=2,
                    progress=lambda message: None)
    finally:
        spark.stop()
    return root / "requests", root / "catalogue.jsonl"


@dataclasses.dataclass
class _Run:
    cluster: Any
    work: Path
    feed: Path
    catalogue: Path
    settle_s: float = SETTLE_S
    measure_s: float = MEASURE_S

    @property
    def nimbus(self) -> str:
        return self.cluster.addresses.nimbus

    def submit(self, job: str, rate: float, algorithm: str, cpu: dict[str, float] | None = None,
               tuple_bytes: float | None = None) -> Any:
        from storm_planner.submit.operations import submit_project

        options = {
            "worldcup.feed": str(self.feed), "worldcup.catalogue": str(self.catalogue),
            "worldcup.sink": str(self.work / f"{job}.jsonl"), "worldcup.replay_rate": rate,
            "topology.workers": 2, "planner.algorithm": algorithm, "planner.replan": False,
            "planner.metrics.period.secs": 5, "planner.seed": int(rate),
            "planner.max.cpu.utilisation": D_CPU, "planner.max.bandwidth.utilisation": D_BW,
        }
        options.update({f"worldcup.cpu.{component}": round(value, 2) for component, value in (cpu or {}).items()})
        if tuple_bytes:
            options["planner.tuple.bytes"] = round(tuple_bytes, 1)
        return submit_project(TOPOLOGY_DIR, nimbus=self.nimbus, topology=job, name=job, options=options,
                              wait_active=180, progress=lambda message: None)

    def kill(self, job: str) -> None:
        from storm_planner.submit.operations import kill_topology

        kill_topology(self.nimbus, job, wait_secs=0, progress=lambda message: None)

    def windows(self, topology_id: str) -> dict:
        from kazoo.client import KazooClient

        from storm_planner.metrics.windows import read_windows

        zk = KazooClient(hosts=self.cluster.addresses.zookeeper, timeout=5)
        zk.start(timeout=10)
        try:
            return {w.task: w for w in read_windows(zk, topology_id)}
        finally:
            zk.stop()
            zk.close()

    # -- 3. the operators' costs ------------------------------------------------------------------
    def profile(self) -> dict[str, Any]:
        """Each component's CPU (percent of a core, all its executors) per tuple/s of its query, and each
        query's mean tuple size, measured with the three queries running under ``even``."""
        rates = {"worldcup_wordcount": BACKGROUND_RATE, "worldcup_join": BACKGROUND_RATE,
                 "worldcup_topk": PROFILE_RATE}
        rows = {job: self.submit(job, rate, "even") for job, rate in rates.items()}
        _progress(f"profiling: the three queries run under even ({', '.join(f'{j} {r:g} t/s' for j, r in rates.items())})")
        time.sleep(self.settle_s + 25)
        costs: dict[str, Any] = {}
        for job, row in rows.items():
            windows = self.windows(row.id)
            cpu: dict[str, float] = {}
            sent_bytes = sent_tuples = 0
            for w in windows.values():
                if w.duration_ms > 0:
                    cpu[w.component] = cpu.get(w.component, 0.0) + 100.0 * w.cpu_ms / w.duration_ms
                sent_bytes += sum(f.bytes for f in w.sent)
                sent_tuples += sum(f.tuples for f in w.sent)
            costs[job] = {"per_tuple_s": {c: cpu.get(c, 0.0) / rates[job] for c in COMPONENTS[job]},
                          "tuple_bytes": sent_bytes / sent_tuples + 40 if sent_tuples else None}
            _progress(f"  {job}: CPU % per tuple/s " + ", ".join(
                f"{c} {v:.3f}" for c, v in costs[job]["per_tuple_s"].items())
                + f"; {costs[job]['tuple_bytes'] or 0:.0f} B a tuple on the wire")
        for job in rows:
            self.kill(job)
        return costs

    def declared(self, costs: dict[str, Any], job: str, rate: float) -> dict[str, float]:
        """CPU one executor declares at ``rate``: its component's measured cost, shared by its executors
        (every World Cup component but ``count``/``tokenize``/``words``/``join``/``totals`` has one)."""
        executors = {"count": 2, "tokenize": 2, "words": 2, "join": 2, "totals": 2}
        return {c: max(1.0, per * rate / executors.get(c, 1)) for c, per in costs[job]["per_tuple_s"].items()}

    def start_background(self, costs: dict[str, Any]) -> None:
        for job in ("worldcup_wordcount", "worldcup_join"):
            self.submit(job, BACKGROUND_RATE, "even", self.declared(costs, job, BACKGROUND_RATE),
                        costs[job]["tuple_bytes"])
        _progress(f"Word Count and Join run at {BACKGROUND_RATE:g} tuples/s each (placed by even)")
        time.sleep(self.settle_s)

    # -- 4. Top-K placed by each planner ------------------------------------------------------------
    def topk(self, planner: str, rate: float, costs: dict[str, Any]) -> dict[str, Any]:
        from storm_planner.cluster import network

        job = "worldcup_topk"
        row = self.submit(job, rate, planner, self.declared(costs, job, rate), costs[job]["tuple_bytes"])
        placed = sorted({p["node"] for p in self.cluster.assignment(row.id)})
        time.sleep(self.settle_s)
        links = self.cluster.network.links
        cpu_before = {link.supervisor: network.namespace_cpu_seconds(link) for link in links}
        bytes_before = {link.supervisor: network.link_bytes(link) for link in links}
        started = time.monotonic()
        time.sleep(self.measure_s)
        seconds = time.monotonic() - started
        cpu = {link.supervisor: 100.0 * (network.namespace_cpu_seconds(link) - cpu_before[link.supervisor]) / seconds
               for link in links}
        mbit = {}
        for link in links:
            now, before = network.link_bytes(link), bytes_before[link.supervisor]
            mbit[link.supervisor] = (now.sent - before.sent + now.received - before.received) * 8 / 1e6 / seconds
        spout = [w for w in self.windows(row.id).values() if w.component == "requests" and w.duration_ms > 0]
        reached = sum(w.emitted / (w.duration_ms / 1000.0) for w in spout)
        self.kill(job)
        cpu_capacity = {node: SUPERVISOR_CPU for node in cpu}
        link_capacity = {link.supervisor: link.mbit for link in links}
        cpu_utl, cpu_dev = utilisation_and_deviation(cpu, cpu_capacity)
        bw_utl, bw_dev = utilisation_and_deviation(mbit, link_capacity)
        result = {
            "workload": rate, "planner": planner, "topk_rate": round(reached, 1),
            "cpu_utilisation": round(cpu_utl, 2), "cpu_deviation": round(cpu_dev, 2),
            "bandwidth_utilisation": round(bw_utl, 2), "bandwidth_deviation": round(bw_dev, 2),
            "cpu_violations": sum(1 for n in cpu if cpu[n] > D_CPU * cpu_capacity[n]),
            "bandwidth_violations": sum(1 for n in mbit if mbit[n] > D_BW * link_capacity[n]),
            "topk_nodes": " ".join(placed),
            "node_cpu": " ".join(f"{cpu[n]:.0f}" for n in sorted(cpu)),
            "node_mbit": " ".join(f"{mbit[n]:.2f}" for n in sorted(mbit)),
        }
        _progress(f"{planner} at {rate} t/s (reached {reached:.0f}): Top-K on {','.join(placed)}; CPU % "
                  f"{result['node_cpu']} (R_utl {cpu_utl:.1f}, R_dev {cpu_dev:.1f}); Mbit/s {result['node_mbit']} "
                  f"(R_utl {bw_utl:.1f}, R_dev {bw_dev:.1f})")
        return result


def _plot(out: Path, rows: list[dict[str, Any]], planners) -> None:
    plt = pyplot()
    panels = (("cpu_utilisation", "Fig. 4(a) CPU utilisation R_utl (%)"),
              ("bandwidth_utilisation", "Fig. 4(b) bandwidth utilisation R_utl (%)"),
              ("cpu_deviation", "Fig. 5(a) CPU usage deviation R_dev (% points)"),
              ("bandwidth_deviation", "Fig. 5(b) bandwidth usage deviation R_dev (% points)"),
              ("topk_rate", "Top-K tuples/s reached"), ("cpu_violations", "nodes over D_CPU (80 %)"))
    figure, axes = plt.subplots(3, 2, figsize=(11, 11))
    for axis, (metric, title) in zip(axes.flat, panels):
        for k, planner in enumerate(planners):
            mine = [r for r in rows if r["planner"] == planner]
            axis.plot([r["workload"] for r in mine], [r[metric] for r in mine], "o-", color=f"C{k}", label=planner)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("Top-K workload (tuples/s)")
    axes[0][0].legend(fontsize=8)
    figure.suptitle(f"On the local cluster: 4 supervisors x {SUPERVISOR_CPU:g} % CPU, {LINK_MBIT:g} Mbit/s emulated links",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(out / "cluster.png", dpi=110)
    plt.close(figure)

