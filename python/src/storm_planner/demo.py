"""``storm-planner demo``: the main job of the README.

Brings the default local cluster up (or reuses it when it already runs),
submits Twitter trending topics with a planner, and prints the plan exactly as
Nimbus applied it (executor -> supervisor:port, next to what the planner
answered) and the top-k once the replay feed has drained. The cluster keeps
running afterwards so it can be explored; ``storm-planner cluster down`` stops it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from storm_planner.cli import CommandError

TOPOLOGY_NAME = "trends"
# The shipped feed replays as 400 spout tuples: at 4 a second the topology runs for about 100 s, long
# enough for the dashboard's 10 s steps to show its throughput, latency and capacity live.
DEFAULT_RATE = 4.0


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rate {text!r} is not a number") from None
    if not (0.0 <= rate < 1e6):
        raise argparse.ArgumentTypeError(f"--rate {text!r}: tuples/s from 0 (as fast as it can) to 1e6")
    return rate


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    demo = subparsers.add_parser("demo", help="local cluster + Twitter trends, planned; prints plan and top-k")
    demo.add_argument("--algorithm", default=None,
                      help="planner for the topology (default: auto, the recommended planner)")
    demo.add_argument("--top-k", type=int, default=10, help="k of the top-k (default 10)")
    demo.add_argument("--rate", type=_rate, default=DEFAULT_RATE,
                      help=f"tuples/s the tweets spout replays its feed at, 0 = as fast as it can (default "
                           f"{DEFAULT_RATE:g}: about 100 s of live figures on the dashboard)")
    demo.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the feed to drain")
    demo.add_argument("--project", type=Path, default=None,
                      help="the trends project directory (default: topologies/trends of this checkout)")
    demo.set_defaults(handler=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    from storm_planner.cluster.description import default_description
    from storm_planner.cluster.errors import ClusterError
    from storm_planner.cluster.launcher import LocalCluster
    from storm_planner.cluster.locations import repo_root
    from storm_planner.cluster.storm_home import StormHomeError
    from storm_planner.planners import available

    algorithm = args.algorithm or "auto"
    if algorithm not in available():
        raise CommandError(f"unknown algorithm {algorithm!r}; known: {', '.join(available())}")
    project = args.project or (repo_root() or Path.cwd()) / "topologies" / "trends"
    if not (project / "topologies").is_dir():
        raise CommandError(f"no streamparse project at {project} (pass --project)")

    cluster = LocalCluster(default_description())
    try:
        addresses = cluster.saved_addresses() if _running(cluster) else None
        if addresses:
            say(f"reusing the running cluster {addresses.name!r} ({cluster.state_dir})")
            cluster.addresses = addresses
        else:
            addresses = cluster.up()
    except (ClusterError, StormHomeError) as error:
        raise CommandError(str(error)) from None

    sink = cluster.state_dir / "demo" / "trends.jsonl"
    topology_id = submit_trends(addresses.nimbus, project, sink, algorithm, args.top_k, args.rate)
    print_plan(cluster, topology_id)
    print_dashboard(addresses, topology_id)
    print_top_k(sink, project, args.top_k, args.timeout)
    say("\nThe cluster keeps running. Try: storm-planner cluster status | storm-planner list | "
        "storm-planner cluster logs planner\nStop it with: storm-planner cluster down  (or make demo-down)")
    return 0


def _running(cluster) -> bool:
    from storm_planner.cluster import daemons

    records = daemons.records(cluster.run_dir)
    return bool(records) and all(daemons.is_alive(r) for r in records)


def submit_trends(nimbus: str, project: Path, sink: Path, algorithm: str, top_k: int, rate: float = 0.0) -> str:
    from storm_planner.submit.operations import SubmitError, kill_topology, list_topologies, submit_project

    try:
        if any(t.name == TOPOLOGY_NAME for t in list_topologies(nimbus)):
            kill_topology(nimbus, TOPOLOGY_NAME, wait_secs=0, progress=say)
        sink.parent.mkdir(parents=True, exist_ok=True)
        for stale in (sink, Path(f"{sink}.feed-done")):
            stale.unlink(missing_ok=True)
        row = submit_project(project, nimbus=nimbus, name=TOPOLOGY_NAME, wait_active=180, progress=say, options={
            "trends.sink": str(sink), "trends.top_k": top_k,
            "planner.algorithm": algorithm, "topology.workers": 2, "trends.replay_rate": rate,
        })
    except SubmitError as error:
        raise CommandError(str(error)) from None
    return row.id


def print_dashboard(addresses, topology_id: str | None = None) -> None:
    """Where to look at the running cluster: the dashboard shows what the table above shows, live, and the
    topology's own page its throughput, latency and capacity with its plans on a timeline; beside it, the
    planner service's ``/metrics`` for Prometheus."""
    url = getattr(addresses, "dashboard_url", None)
    if url:
        print(f"\nthe cluster, every plan and why, live: {url}  (storm-planner dashboard)")
        if topology_id:
            print(f"trends' throughput, latency and capacity, live: {url.rstrip('/')}/topology?id={topology_id}")
    metrics = getattr(addresses, "planner_metrics_url", None)
    if metrics:
        print(f"the planner service's metrics for Prometheus: {metrics}  (docs/monitoring.md)")


def print_plan(cluster, topology_id: str) -> None:
    from storm_planner.service.planning.planlog import read_plan_log

    plans = _wait(lambda: [r for r in read_plan_log(cluster.plan_log) if r["topology"] == topology_id],
                  30) or []
    print_plan_table(cluster.description, topology_id, plans[-1] if plans else None,
                     cluster.assignment(topology_id))


def print_plan_table(description, topology_id: str, planned: dict | None, applied: list[dict]) -> None:
    """The plan as Nimbus applied it (``applied``: rows of ``LocalCluster.assignment``), next to ``planned``,
    the planner's last answer for the topology (a plan-log record), when there is one."""
    supervisors = {s.name: s for s in description.supervisors}
    title = f"plan for {topology_id}"
    if planned:
        title += f" by {planned['algorithm']} (solve {planned['solve_ms'] or 0:.1f} ms)"
    print(f"\n{title}, as Nimbus applied it:")
    print(f"  {'EXECUTOR':<10} {'COMPONENT':<12} {'SLOT':<22} {'MACHINE':<8} {'PLANNED':<8}")
    for row in applied:
        slot = f"{row['node']}:{row['port']}"
        sup = supervisors.get(row["node"])
        machine = sup.meta.get("machine.type", "") if sup else ""
        same = "-" if not planned else ("yes" if planned["assignments"].get(row["executor"]) == slot else "NO")
        print(f"  {row['executor']:<10} {row['component']:<12} {slot:<22} {machine:<8} {same:<8}")
    if planned and planned.get("error"):
        print(f"  the planner failed ({planned['error']['message']}); Storm's DefaultScheduler placed it")
    elif planned:
        figures = planned["figures"]
        print(f"  collocated traffic {figures.get('imc_gain', 0):.2f} of {figures.get('imc_total', 0):.2f}; "
              f"max node utilisation {figures.get('max_utilisation', 0):.0f}%; notes: "
              + ("; ".join(planned["notes"]) or "none"))
    else:
        print("  (the planner service answered no plan for it: see `storm-planner cluster logs planner`)")


def print_top_k(sink: Path, project: Path, k: int, timeout_s: float) -> None:
    say(f"waiting for the replay feed to drain (sink {sink}) ...")
    print_top_k_from(lambda: sink.read_text() if sink.exists() else "",
                     lambda: Path(f"{sink}.feed-done").exists(), project, k, timeout_s,
                     hint="see `storm-planner cluster logs`", where=str(sink))


def print_top_k_from(read_sink, feed_done, project: Path, k: int, timeout_s: float, *, hint: str,
                     where: str) -> None:
    """Wait for ``feed_done()``, then print the last ranking of ``read_sink()`` and check it against a
    direct count over the replay feed (the topology's oracle)."""
    done = _wait(feed_done, timeout_s, progress="feed still replaying")
    time.sleep(4)  # the last counts reach the total ranker on the next emit interval
    lines = read_sink().splitlines()
    if not lines:
        raise CommandError(f"no ranking written to {where} ({hint})")
    rankings = json.loads(lines[-1])["rankings"]
    print(f"\ntop-{k} trending topics{'' if done else ' so far (feed not drained yet)'}:")
    for rank, (topic, count) in enumerate(rankings, start=1):
        print(f"  {rank:>2}. #{topic:<20} {count}")
    expected = _expected(project, k)
    if done and expected is not None:
        verdict = "equals" if rankings == expected else "DIFFERS FROM"
        print(f"  this {verdict} a direct count over the replay feed")


def _expected(project: Path, k: int):
    sys.path.insert(0, str(project / "src"))
    try:
        from trends.oracle import expected_top_k
        from trends.paths import shipped_feed
    except ImportError:
        return None
    finally:
        sys.path.remove(str(project / "src"))
    return expected_top_k(shipped_feed(), k)


def _wait(condition, timeout_s: float, progress: str | None = None):
    started = time.monotonic()
    next_note = started + 15
    while time.monotonic() - started < timeout_s:
        value = condition()
        if value:
            return value
        if progress and time.monotonic() >= next_note:
            say(f"  {progress} ({time.monotonic() - started:.0f}s)")
            next_note += 15
        time.sleep(1)
    return None


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
