"""``storm-planner metrics <topology> [--json]``: what the workers' hooks measured, live.

Reads the windows from ZooKeeper (``--zookeeper``, else ``$STORM_PLANNER_ZOOKEEPER``,
else the local cluster started by ``storm-planner cluster up``, else
127.0.0.1:2181) and prints, per executor, CPU percent, load (CPU percent x node
speed), executed and emitted tuples per second and execute latency, then the
traffic between components and the busiest executor pairs, then the notes
(stale, partial or corrupt windows). With ``--nimbus`` (or the local
cluster's Nimbus) the executors are Nimbus' (task ranges, names); without,
one row per task. ``--json`` prints the same as one JSON object. Read-only: it
never deletes anything.
"""
from __future__ import annotations

import argparse
import json
import os
from types import SimpleNamespace
from typing import Any

from storm_planner.cli import CommandError
from storm_planner.metrics.loads_and_traffic import measure
from storm_planner.metrics.store import MetricsStore
from storm_planner.metrics.windows import DEFAULT_ROOT
from storm_planner.service.metrics import ZOOKEEPER_ENV

NIMBUS_ENV = "STORM_PLANNER_NIMBUS"
TOP_PAIRS = 15


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "metrics", help="show a running topology's measured loads and traffic (from ZooKeeper)",
        description="Executor loads and traffic as the metrics hook publishes them to ZooKeeper.",
    )
    parser.add_argument("topology", help="topology name or id")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--zookeeper", metavar="HOST:PORT", help=f"default: ${ZOOKEEPER_ENV}, else the local "
                                                                 f"cluster's, else 127.0.0.1:2181")
    parser.add_argument("--root", default=DEFAULT_ROOT, metavar="ZNODE", help=f"metrics root (default {DEFAULT_ROOT})")
    parser.add_argument("--nimbus", metavar="HOST:PORT", help=f"for executor ranges (default: ${NIMBUS_ENV}, else "
                                                              f"the local cluster's; optional)")
    parser.add_argument("--windows", type=int, default=3, help="average the last N windows (default 3)")
    parser.add_argument("--bytes", action="store_true", help="traffic in estimated bytes/s instead of tuples/s")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECS", help="ZooKeeper wait (default 10)")
    parser.set_defaults(handler=cmd_metrics)


def _local_cluster() -> Any | None:
    try:
        from storm_planner.cluster.description import default_description
        from storm_planner.cluster.launcher import LocalCluster

        return LocalCluster(default_description()).saved_addresses()
    except Exception:  # noqa: BLE001 - no local cluster is fine
        return None


def cmd_metrics(args: argparse.Namespace) -> int:
    local = _local_cluster()
    hosts = args.zookeeper or os.environ.get(ZOOKEEPER_ENV) or (local.zookeeper if local else "127.0.0.1:2181")
    nimbus = args.nimbus or os.environ.get(NIMBUS_ENV) or (local.nimbus if local else None)
    store = MetricsStore(hosts, args.root, storm_root=None, clean_killed=False, timeout_s=min(5.0, args.timeout))
    store.start()
    try:
        if not store.wait_synced(args.timeout):
            raise CommandError(f"ZooKeeper {hosts} did not answer within {args.timeout:g} s")
        topology_id = _resolve(args.topology, store.topologies())
        view = store.view(topology_id)
    finally:
        store.stop()
    executors, speeds = _executors(topology_id, view, nimbus)
    m = measure(topology_id, view.windows, executors, node_speed=speeds, last=args.windows,
                unit="bytes" if args.bytes else "tuples")
    report = _report(topology_id, hosts, args.root, m, view)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(_table(report))
    return 0


def _resolve(wanted: str, known: list[str]) -> str:
    if wanted in known:
        return wanted
    matches = [t for t in known if t.startswith(wanted + "-")]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        listed = ", ".join(known) or "none"
        raise CommandError(f"no metrics for {wanted!r} in ZooKeeper (topologies with metrics: {listed})")
    raise CommandError(f"{wanted!r} matches several topologies: {', '.join(matches)}")


def _executors(topology_id: str, view, nimbus: str | None) -> tuple[list[tuple[str, str]], dict[str, float]]:
    """(executor id, component) from Nimbus when it answers, else one per task seen in the windows."""
    if nimbus:
        try:
            from storm_planner.submit.nimbus import nimbus_client
            from storm_planner.submit.operations import parse_nimbus

            host, port = parse_nimbus(nimbus)
            with nimbus_client(host, port, 5000) as client:
                info = client.getTopologyInfo(topology_id)
            executors = sorted({(f"[{e.executor_info.task_start}-{e.executor_info.task_end}]", e.component_id)
                                for e in info.executors or []}, key=lambda x: int(x[0][1:].split("-")[0]))
            if executors:
                return executors, {}
        except Exception:  # noqa: BLE001 - Nimbus is optional here
            pass
    tasks = sorted({(task, ws[-1].component) for task, ws in view.windows.items() if ws})
    return [(f"[{task}-{task}]", component) for task, component in tasks], {}


def _report(topology_id: str, hosts: str, root: str, m, view) -> dict:
    return {
        "topology": topology_id,
        "zookeeper": hosts,
        "root": root,
        "unit": m.unit,
        "period_s": m.period_s,
        "newest_age_s": None if m.newest_age_s is None else round(m.newest_age_s, 1),
        "executors": [
            {"executor": f.executor, "component": f.component, "measured": f.measured, "node": f.node,
             "worker": f.worker, "cpu_percent": round(f.cpu_percent, 2),
             "worker_cpu_percent": round(f.worker_cpu_percent, 2), "load": round(f.load, 2),
             "speed": f.speed, "executed_per_s": round(f.executed_per_s, 2),
             "emitted_per_s": round(f.emitted_per_s, 2),
             "execute_latency_ms": None if f.execute_latency_ms is None else round(f.execute_latency_ms, 3),
             "state_mb": f.state_mb, "windows": f.windows, "subprocesses": f.subprocesses}
            for f in sorted(m.executors.values(), key=lambda f: int(f.executor[1:].split("-")[0]))
        ],
        "component_traffic": [{"from": a, "to": b, "rate": round(r, 3)}
                              for (a, b), r in sorted(m.component_traffic.items(), key=lambda x: -x[1])],
        "traffic": [{"from": a, "to": b, "rate": round(r, 3)}
                    for (a, b), r in sorted(m.traffic.items(), key=lambda x: -x[1])],
        "notes": list(m.notes) + [f"skipped corrupt znode, {p}" for p in view.problems] + list(view.events),
    }


def _table(report: dict) -> str:
    r = SimpleNamespace(**report)
    age = f", newest window {r.newest_age_s:.0f} s old" if r.newest_age_s is not None else ""
    lines = [f"{r.topology}: windows of {r.period_s or '?'} s{age} (ZooKeeper {r.zookeeper}{r.root})", ""]
    lines.append(f"{'EXECUTOR':<10} {'COMPONENT':<16} {'NODE':<12} {'WORKER':<16} {'CPU%':>6} {'WRK%':>5} {'LOAD':>7} "
                 f"{'EXEC/S':>8} {'EMIT/S':>8} {'LAT ms':>7}")
    for e in r.executors:
        latency = "-" if e["execute_latency_ms"] is None else f"{e['execute_latency_ms']:.2f}"
        mark = "" if e["measured"] else "  (estimated)"
        lines.append(f"{e['executor']:<10} {e['component'][:16]:<16} {str(e['node'] or '-')[:12]:<12} "
                     f"{str(e['worker'] or '-')[:16]:<16} {e['cpu_percent']:>6.1f} {e['worker_cpu_percent']:>5.1f} {e['load']:>7.1f} "
                     f"{e['executed_per_s']:>8.1f} {e['emitted_per_s']:>8.1f} {latency:>7}{mark}")
    lines += ["", "CPU% includes WRK%: the executor's share of its worker's own CPU (netty, serialisation, GC)"]
    lines += ["", f"traffic between components ({r.unit}):"]
    lines += [f"  {t['from']:<16} -> {t['to']:<16} {t['rate']:>10.1f}" for t in r.component_traffic] or ["  none"]
    lines += ["", f"busiest executor pairs ({r.unit}):"]
    lines += [f"  {t['from']:<10} -> {t['to']:<10} {t['rate']:>10.1f}" for t in r.traffic[:TOP_PAIRS]] or ["  none"]
    if r.notes:
        lines += ["", "notes:"] + [f"  - {n}" for n in r.notes]
    return "\n".join(lines)
