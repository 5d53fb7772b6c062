"""Elastic Allocator's Figures 4 and 5 on the local cluster, over the emulated network (issue #15).

``storm-planner bench gma cluster [--quick]`` (root, iproute2; about 25 minutes, ``--quick`` about 8)
runs the paper's experiment on real daemons instead of the evaluator's model:

1. A local cluster of four supervisors on the emulated network (``cluster/network.py``): each in its
   own network namespace behind a 10 Mbit/s link (both ways), each declaring 50 % CPU (the machine's
   two cores shared out) and held to it by a cgroup v1 CPU quota (its workers and their Python
   subprocesses inherit the group), three slots each. The planner service reads the workers' metrics.
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
   planner; once its spout's tuples flow it runs ``SETTLE_S`` and is measured for ``MEASURE_S``:
   each node's CPU (its cgroup's cpuacct: supervisor, workers, Python subprocesses) and its link's
   bytes both ways; then it is killed.

From those, per (planner, rate): CPU and bandwidth utilisation R_utl and deviation R_dev with the
evaluator's formulas (:func:`~storm_planner.core.utilisation.utilisation_and_deviation`; demand =
what was measured), nodes over D_CPU / D_BW (80 %), and the rate Top-K's spout really reached.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from storm_planner.core.utilisation import utilisation_and_deviation
from storm_planner_bench.common.cluster import build_feed, cpu_seconds, kill_and_wait, node_quotas
from storm_planner_bench.common.report import plot_by_planner, stamped_progress, write_table

_progress = stamped_progress("gma cluster bench")

SUPERVISORS, SUPERVISOR_CPU, SLOTS = 4, 50.0, 3
LINK_MBIT = 10.0
BACKGROUND_RATE = 100.0        # tuples/s into Word Count and into Join while Top-K is placed
PROFILE_RATE = 600.0           # Top-K's rate while the components' costs are measured
WORKLOADS = (200, 400, 600, 800, 1000, 1200)
PLANNERS = ("gma", "random", "even", "gma-repair", "topdown")
D_CPU = D_BW = 0.8
SETTLE_S, MEASURE_S = 20.0, 20.0   # per (planner, rate); --quick: half
FEED_RECORDS = 400_000         # Word Count and Join read ~150/s for the whole run; each Top-K run starts over
TOPOLOGY_DIR = Path("topologies/worldcup")
# The panels of Figs. 4 and 5 and the limits, here and in the simulation's plot (gma.py).
FIGURE_PANELS = (("cpu_utilisation", "Fig. 4(a) CPU utilisation R_utl (%)"),
                 ("bandwidth_utilisation", "Fig. 4(b) bandwidth utilisation R_utl (%)"),
                 ("cpu_deviation", "Fig. 5(a) CPU usage deviation R_dev (% points)"),
                 ("bandwidth_deviation", "Fig. 5(b) bandwidth usage deviation R_dev (% points)"),
                 ("cpu_violations", "nodes over D_CPU (80 %)"), ("bandwidth_violations", "nodes over D_BW (80 %)"))
COMPONENTS = {"worldcup_topk": ("requests", "count", "top"),
              "worldcup_wordcount": ("requests", "tokenize", "words", "counts"),
              "worldcup_join": ("requests", "join", "totals", "sections")}


def bench_cluster(out: Path, seed: int, quick: bool, command: str,
                  planners: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    from storm_planner.cluster import local_cluster
    from storm_planner.cluster.network import check_available

    check_available()
    # Killed (SIGTERM): leave through the context managers, so the namespaces and cgroups go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rates = (200, 800) if quick else WORKLOADS
    planners = planners or (("gma", "random", "even") if quick else PLANNERS)
    with tempfile.TemporaryDirectory(prefix="gma-cluster-") as work_name:
        work = Path(work_name)
        feed, catalogue = build_feed(work / "feeds", seed, 100_000 if quick else FEED_RECORDS, _progress)
        with contextlib.ExitStack() as stack:
            cluster = stack.enter_context(local_cluster(_description(), work / "cluster", free_ports=True, ui=False,
                                                        dashboard=False, progress=_progress))
            run = _Run(
                cluster,
                work,
                feed,
                catalogue,
                settle_s=SETTLE_S / (2 if quick else 1),
                measure_s=MEASURE_S / (2 if quick else 1),
                accounts=node_quotas(cluster, stack, "gma", _progress),
            )
            costs = run.profile()
            run.start_background(costs)
            rows = []
            for planner in planners:
                for rate in rates:
                    rows.append(run.topk(planner, rate, costs))
                    _write_partial(out, rows)
    write_cluster_report(out, rows, costs, planners, command)
    return rows


def write_cluster_report(out: Path, rows: list[dict[str, Any]], costs: dict[str, Any], planners: tuple[str, ...],
                         command: str) -> None:
    """``cluster.csv``, ``cluster.md``, ``cluster-profile.json`` (the measured costs) and ``cluster.png``
    from the rows of every (planner, rate); the partial record of an unfinished run goes."""
    (out / "cluster-partial.json").unlink(missing_ok=True)
    write_table(out, "cluster", rows, "Figs. 4-5 on the local cluster: Top-K beside Join and Word Count, "
                f"four supervisors behind {LINK_MBIT:g} Mbit/s emulated links", command)
    (out / "cluster-profile.json").write_text(json.dumps(costs, indent=2) + "\n")
    _plot(out, rows, planners)


def _write_partial(out: Path, rows: list[dict[str, Any]]) -> None:
    """What was measured so far, in case a later run fails: ``cluster-partial.json``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster-partial.json").write_text(json.dumps(rows, indent=1) + "\n")


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


@dataclasses.dataclass
class _Run:
    cluster: Any
    work: Path
    feed: Path
    catalogue: Path
    settle_s: float = SETTLE_S
    measure_s: float = MEASURE_S
    accounts: dict[str, Any] = dataclasses.field(default_factory=dict)   # supervisor -> CpuAccount

    @property
    def nimbus(self) -> str:
        return self.cluster.addresses.nimbus

    def submit(self, job: str, rate: float, algorithm: str, cpu: dict[str, float] | None = None,
               tuple_bytes: float | None = None, workers: int = 2, wait_active: float = 180) -> Any:
        from storm_planner.submit.operations import submit_project

        options = {
            "worldcup.feed": str(self.feed), "worldcup.catalogue": str(self.catalogue),
            "worldcup.sink": str(self.work / f"{job}.jsonl"), "worldcup.replay_rate": rate,
            "topology.workers": workers, "planner.algorithm": algorithm, "planner.replan": False,
            "planner.metrics.period.secs": 5, "planner.seed": int(rate),
            "planner.max.cpu.utilisation": D_CPU, "planner.max.bandwidth.utilisation": D_BW,
        }
        options.update({f"worldcup.cpu.{component}": round(value, 2) for component, value in (cpu or {}).items()})
        if tuple_bytes:
            options["planner.tuple.bytes"] = round(tuple_bytes, 1)
        return submit_project(TOPOLOGY_DIR, nimbus=self.nimbus, topology=job, name=job, options=options,
                              wait_active=wait_active, progress=lambda message: None)

    def kill(self, job: str, topology_id: str | None = None) -> None:
        kill_and_wait(self.nimbus, job, topology_id)

    def spout_sent(self, topology_id: str, component: str = "requests") -> tuple[int, float]:
        """(tuples the spout has sent on its data stream so far, when: newest window end, s)."""
        spouts = [w for w in self.windows(topology_id).values() if w.component == component]
        total = sum(f.total for w in spouts for f in w.sent if f.stream == "default")
        return total, max((w.end_ms for w in spouts), default=0) / 1000.0

    def wait_flowing(self, topology_id: str, timeout_s: float = 150.0, component: str = "requests") -> bool:
        """Whether the spout's tuples flow within ``timeout_s`` (on an overloaded node a multilang
        subprocess can miss its heartbeats and be restarted again and again)."""
        deadline = time.monotonic() + timeout_s
        while self.spout_sent(topology_id, component)[0] == 0:
            if time.monotonic() > deadline:
                return False
            time.sleep(2)
        return True

    def must_flow(self, topology_id: str, component: str = "requests") -> None:
        if not self.wait_flowing(topology_id, component=component):
            raise RuntimeError(f"{topology_id}: no tuple from its {component} spout after 150 s")

    def scheduler_status(self, topology_id: str) -> str:
        from storm_planner.submit.nimbus import nimbus_client

        host, port = self.nimbus.rsplit(":", 1)
        with nimbus_client(host, int(port)) as client:
            return client.getTopologyInfo(topology_id).sched_status or "(no status)"

    def node_cpu_seconds(self) -> dict[str, float]:
        return cpu_seconds(self.accounts)

    def windows(self, topology_id: str) -> dict:
        from storm_planner.metrics.windows import fetch_windows

        return fetch_windows(self.cluster.addresses.zookeeper, topology_id)

    # -- 3. the operators' costs ------------------------------------------------------------------
    def profile(self) -> dict[str, Any]:
        """Each component's CPU (percent of a core, all its executors) per tuple/s of its query, and each
        query's mean tuple size, measured with the three queries running under ``even``."""
        rates = {"worldcup_wordcount": BACKGROUND_RATE, "worldcup_join": BACKGROUND_RATE,
                 "worldcup_topk": PROFILE_RATE}
        rows = {job: self.submit(job, rate, "even") for job, rate in rates.items()}
        _progress(f"profiling: the three queries run under even ({', '.join(f'{j} {r:g} t/s' for j, r in rates.items())})")
        for row in rows.values():
            self.must_flow(row.id)
        time.sleep(self.settle_s + 15)
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
            row = self.submit(job, BACKGROUND_RATE, "even", self.declared(costs, job, BACKGROUND_RATE),
                              costs[job]["tuple_bytes"], workers=1)
            self.must_flow(row.id)
        time.sleep(self.settle_s)
        before, started = self.node_cpu_seconds(), time.monotonic()
        time.sleep(self.measure_s)
        used = {n: 100 * (v - before[n]) / (time.monotonic() - started) for n, v in self.node_cpu_seconds().items()}
        _progress(f"Word Count and Join run at {BACKGROUND_RATE:g} tuples/s each (placed by even); node CPU % "
                  + " ".join(f"{n} {used[n]:.0f}" for n in sorted(used)))

    # -- 4. Top-K placed by each planner ------------------------------------------------------------
    def topk(self, planner: str, rate: float, costs: dict[str, Any]) -> dict[str, Any]:
        from storm_planner.cluster import network
        from storm_planner.submit.operations import SubmitError, list_topologies

        job = "worldcup_topk"
        # As many workers as nodes: a planner may use them all (even does) or leave nodes out (gma).
        try:
            row = self.submit(job, rate, planner, self.declared(costs, job, rate), costs[job]["tuple_bytes"],
                              workers=SUPERVISORS, wait_active=120)
            status = "placed"
        except SubmitError:   # not scheduled: measured all the same, and the scheduler's status kept
            row = next(t for t in list_topologies(self.nimbus) if t.name == job)
            status = f"not scheduled: {self.scheduler_status(row.id)}"
            _progress(f"{planner} at {rate} t/s: Top-K {status}")
        placed = sorted({p["node"] for p in self.cluster.assignment(row.id)})
        flowing = bool(placed) and self.wait_flowing(row.id, timeout_s=120)
        if placed and not flowing:   # measured all the same: what this placement does to the nodes is the result
            status = "placed; its spout sent nothing within 120 s"
            _progress(f"{planner} at {rate} t/s: Top-K's spout sent nothing within 120 s (placed on {','.join(placed)})")
        time.sleep(self.settle_s)
        links = self.cluster.network.links
        # The spout's count first: it is read over a fresh ZooKeeper connection, which would otherwise fall
        # between the counters and the clock and inflate every node's CPU and Mbit/s alike.
        sent_before = self.spout_sent(row.id)
        cpu_before = self.node_cpu_seconds()
        bytes_before = {link.supervisor: network.link_bytes(link) for link in links}
        started = time.monotonic()
        time.sleep(self.measure_s)
        seconds = time.monotonic() - started
        cpu = {name: 100.0 * (used - cpu_before[name]) / seconds for name, used in self.node_cpu_seconds().items()}
        mbit = {}
        for link in links:
            now, before = network.link_bytes(link), bytes_before[link.supervisor]
            mbit[link.supervisor] = (now.sent - before.sent + now.received - before.received) * 8 / 1e6 / seconds
        sent_after = self.spout_sent(row.id)
        reached = ((sent_after[0] - sent_before[0]) / (sent_after[1] - sent_before[1])
                   if sent_after[1] > sent_before[1] else 0.0)
        self.kill(job, row.id)
        cpu_capacity = {node: SUPERVISOR_CPU for node in cpu}
        link_capacity = {link.supervisor: link.mbit for link in links}
        cpu_utl, cpu_dev = utilisation_and_deviation(cpu, cpu_capacity)
        bw_utl, bw_dev = utilisation_and_deviation(mbit, link_capacity)
        result = {
            "workload": rate, "planner": planner, "topk_rate": round(reached, 1), "status": status,
            "cpu_utilisation": round(cpu_utl, 2), "cpu_deviation": round(cpu_dev, 2),
            "bandwidth_utilisation": round(bw_utl, 2), "bandwidth_deviation": round(bw_dev, 2),
            "cpu_violations": sum(1 for n in cpu if cpu[n] > D_CPU * cpu_capacity[n]),
            # Those that Top-K helped over (the others are over by the running queries alone).
            "topk_nodes_over_d_cpu": sum(1 for n in placed if cpu[n] > D_CPU * cpu_capacity[n]),
            "bandwidth_violations": sum(1 for n in mbit if mbit[n] > D_BW * link_capacity[n]),
            "topk_nodes": " ".join(placed),
            "node_cpu": " ".join(f"{cpu[n]:.0f}" for n in sorted(cpu)),
            "node_mbit": " ".join(f"{mbit[n]:.2f}" for n in sorted(mbit)),
        }
        _progress(f"{planner} at {rate} t/s (reached {reached:.0f}): Top-K on {','.join(placed)}; CPU % "
                  f"{result['node_cpu']} (R_utl {cpu_utl:.1f}, R_dev {cpu_dev:.1f}); Mbit/s {result['node_mbit']} "
                  f"(R_utl {bw_utl:.1f}, R_dev {bw_dev:.1f})")
        return result


# -- the wire overhead of a tuple ------------------------------------------------------------------
OVERHEAD_PAYLOADS = (32, 400, 1500)
OVERHEAD_RATE = 800.0


def bench_overhead(out: Path, seed: int, quick: bool, command: str) -> list[dict[str, Any]]:
    """Bytes a tuple costs on the wire beyond the hook's payload estimate (the default of
    ``planner.network.tuple.overhead.bytes``): the metrics tests' pipeline at ``OVERHEAD_RATE`` tuples/s
    with payloads of 32-1,500 B on two supervisors behind 40 Mbit/s emulated links; per link, the bytes
    it sent less the payload the hook counted for the flows leaving it, per tuple leaving it."""
    from storm_planner.cluster import local_cluster, network
    from storm_planner.cluster.description import parse_description
    from storm_planner.submit.operations import kill_topology, submit_project

    network.check_available()
    pipeline = Path(__file__).resolve().parents[5] / "tests" / "metrics" / "fixtures" / "pipeline"
    description = parse_description({"name": "overhead-bench", "network": {"emulated": True, "link_mbit": 40},
                                     "supervisors": [{"name": "a", "slots": 1}, {"name": "b", "slots": 1}]})
    rows = []
    with tempfile.TemporaryDirectory(prefix="overhead-") as work, \
            local_cluster(description, Path(work) / "cluster", free_ports=True, ui=False, dashboard=False,
                          progress=_progress) as cluster:
        run = _Run(cluster, Path(work), Path(work), Path(work))
        for payload in OVERHEAD_PAYLOADS[:2] if quick else OVERHEAD_PAYLOADS:
            data = Path(work) / f"p{payload}"
            data.mkdir()
            row = submit_project(pipeline, nimbus=run.nimbus, name=f"p{payload}", wait_active=180,
                                 progress=lambda message: None, options={
                                     "pipeline.dir": str(data), "pipeline.rate": OVERHEAD_RATE,
                                     "pipeline.payload_bytes": payload, "topology.workers": 2,
                                     "planner.algorithm": "even", "planner.metrics.period.secs": 3,
                                     "topology.max.spout.pending": 500, "planner.replan": False})
            run.must_flow(row.id, component="numbers")
            time.sleep(run.settle_s)
            rows.extend(_overhead_rows(run, row.id, payload))
            kill_topology(run.nimbus, f"p{payload}", wait_secs=0, progress=lambda message: None)
    write_overhead_report(out, rows, command)
    return rows


def write_overhead_report(out: Path, rows: list[dict[str, Any]], command: str) -> None:
    """``overhead.csv`` and ``overhead.md``: per payload and link, the wire bytes beyond the hook's count."""
    write_table(out, "overhead", rows, "Wire bytes per tuple beyond the hook's payload estimate", command)


def _overhead_rows(run: _Run, topology_id: str, payload: int) -> list[dict[str, Any]]:
    from storm_planner.cluster import network

    links = run.cluster.network.links
    first, first_at = {link.supervisor: network.link_bytes(link) for link in links}, time.monotonic()
    before = run.windows(topology_id)
    time.sleep(run.measure_s)
    last, seconds = {link.supervisor: network.link_bytes(link) for link in links}, time.monotonic() - first_at
    after = run.windows(topology_id)
    node_of = {task: w.node for task, w in after.items()}
    rows = []
    for link in links:
        tuples = payload_bytes = 0.0
        for task, w in after.items():
            if w.node != link.supervisor or task not in before or w.end_ms <= before[task].end_ms:
                continue
            span = (w.end_ms - before[task].end_ms) / 1000.0
            earlier = {(f.stream, f.task): (f.total, f.bytes_total) for f in before[task].sent}
            for flow in w.sent:
                if node_of.get(flow.task) not in (None, link.supervisor):
                    total, sent = earlier.get((flow.stream, flow.task), (0, 0))
                    tuples += (flow.total - total) / span
                    payload_bytes += (flow.bytes_total - sent) / span
        wire = (last[link.supervisor].sent - first[link.supervisor].sent) / seconds
        rows.append({"payload_bytes": payload, "supervisor": link.supervisor, "tuples_per_s": round(tuples, 1),
                     "wire_bytes_per_s": round(wire), "hook_payload_bytes_per_s": round(payload_bytes),
                     "overhead_bytes_per_tuple": round((wire - payload_bytes) / tuples, 1) if tuples else None})
        _progress(f"payload {payload} B, {link.supervisor}: {tuples:.0f} tuples/s leave it, wire {wire:.0f} B/s, "
                  f"hook payload {payload_bytes:.0f} B/s: {rows[-1]['overhead_bytes_per_tuple']} B a tuple more")
    return rows


def _plot(out: Path, rows: list[dict[str, Any]], planners) -> None:
    panels = (*FIGURE_PANELS[:4], ("topk_rate", "Top-K tuples/s reached"),
              ("topk_nodes_over_d_cpu", "nodes holding Top-K over D_CPU (80 % of 50 %)"))
    # A row not placed or silent measured the background alone; rows from before the status column were placed.
    placed = [r for r in rows if r.get("status", "placed") == "placed"]
    plot_by_planner(out / "cluster.png", placed, planners, panels, xlabel="Top-K workload (tuples/s)",
                    suptitle=f"On the local cluster: {SUPERVISORS} supervisors x {SUPERVISOR_CPU:g} % CPU, "
                             f"{LINK_MBIT:g} Mbit/s emulated links")
