"""``storm-planner submit|kill|rebalance|list``: topologies on a Storm cluster, over Nimbus Thrift."""
from __future__ import annotations

import argparse
import json
import os

from storm_planner.cli import CommandError

from .operations import (
    SubmitError,
    kill_topology,
    list_topologies,
    parse_options,
    rebalance_topology,
    submit_project,
)
from .project import ProjectError

NIMBUS_ENV = "STORM_PLANNER_NIMBUS"


def _default_nimbus() -> str:
    return os.environ.get(NIMBUS_ENV, "127.0.0.1:6627")


def _nimbus_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nimbus", default=None, metavar="HOST:PORT",
                        help=f"Nimbus Thrift address (default: ${NIMBUS_ENV}, else 127.0.0.1:6627)")


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    submit = subparsers.add_parser(
        "submit", help="build, upload and submit a streamparse project (no Leiningen, no ssh)",
        description="Submit a streamparse project directory to Nimbus over Thrift.",
    )
    submit.add_argument("project", help="streamparse project dir (config.json, topologies/, src/)")
    submit.add_argument("--name", help="topology name in Storm (default: the topology file's name)")
    submit.add_argument("--topology", help="which topologies/<NAME>.py (default: the only one)")
    _nimbus_arg(submit)
    submit.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="topology conf, e.g. planner.algorithm=even, topology.workers=2 (repeatable)")
    submit.add_argument("--python", metavar="PATH",
                        help="Python whose environment has the project's dependencies; its "
                             "streamparse_run runs the components (default: this environment's)")
    submit.add_argument("--wait-active", nargs="?", type=float, const=120.0, default=None, metavar="SECS",
                        help="wait until the topology is ACTIVE with workers assigned (default 120 s)")
    submit.set_defaults(handler=cmd_submit)

    kill = subparsers.add_parser("kill", help="kill a topology and wait until it is gone")
    kill.add_argument("name")
    _nimbus_arg(kill)
    kill.add_argument("--wait", type=int, default=None, metavar="SECS",
                      help="seconds Storm deactivates before killing (default: topology.message.timeout.secs)")
    kill.set_defaults(handler=cmd_kill)

    rebalance = subparsers.add_parser(
        "rebalance", help="change a running topology's executors per component (up to each task count)",
        description="Ask Nimbus to spread a running topology's tasks over a new number of executors per "
                    "component (Storm's `storm rebalance NAME -e component=N`). A component cannot get "
                    "more executors than it has tasks (set at submission: <prefix>.tasks.<component>=N).")
    rebalance.add_argument("name", help="topology name (as `storm-planner list` shows it)")
    rebalance.add_argument("-e", "--executors", action="append", default=[], metavar="COMPONENT=N",
                           dest="executors", required=True, help="new executor count of a component (repeatable)")
    rebalance.add_argument("--wait-secs", type=int, default=None, metavar="S",
                           help="seconds Storm deactivates the topology first (default: topology.message.timeout.secs)")
    rebalance.add_argument("--wait-applied", nargs="?", type=float, const=120.0, default=None, metavar="SECS",
                           help="wait until Nimbus runs the new executors, asking once more if Storm lost the "
                                "request (default 120 s after the wait)")
    _nimbus_arg(rebalance)
    rebalance.set_defaults(handler=cmd_rebalance)

    lst = subparsers.add_parser("list", help="topologies on the cluster: name, id, status, workers, executors")
    _nimbus_arg(lst)
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.set_defaults(handler=cmd_list)


def cmd_submit(args: argparse.Namespace) -> int:
    try:
        submit_project(
            args.project,
            nimbus=args.nimbus or _default_nimbus(),
            name=args.name,
            topology=args.topology,
            options=parse_options(args.option),
            python=args.python,
            wait_active=args.wait_active,
        )
    except (SubmitError, ProjectError) as error:
        raise CommandError(str(error)) from None
    return 0


def cmd_kill(args: argparse.Namespace) -> int:
    try:
        kill_topology(args.nimbus or _default_nimbus(), args.name, wait_secs=args.wait)
    except SubmitError as error:
        raise CommandError(str(error)) from None
    return 0


def parse_executor_counts(pairs: list[str]) -> dict[str, int]:
    """``["count=4", "split=2"]`` -> ``{"count": 4, "split": 2}``; each component once, counts ≥ 1."""
    counts: dict[str, int] = {}
    for pair in pairs:
        component, sep, value = pair.partition("=")
        component, value = component.strip(), value.strip()
        if not sep or not component:
            raise CommandError(f"-e expects COMPONENT=N, got {pair!r}")
        if not value.isdigit() or int(value) < 1:
            raise CommandError(f"-e {pair}: N must be a positive integer (executors)")
        if component in counts:
            raise CommandError(f"-e {pair}: {component!r} is given twice")
        counts[component] = int(value)
    return counts


def cmd_rebalance(args: argparse.Namespace) -> int:
    counts = parse_executor_counts(args.executors)
    try:
        request = rebalance_topology(args.nimbus or _default_nimbus(), args.name, counts, wait_secs=args.wait_secs,
                                     wait_applied=None if args.wait_applied is None
                                     else args.wait_applied + (args.wait_secs or 0))
    except SubmitError as error:
        raise CommandError(str(error)) from None
    print(request.describe())
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    try:
        rows = list_topologies(args.nimbus or _default_nimbus())
    except SubmitError as error:
        raise CommandError(str(error)) from None
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=2))
        return 0
    if not rows:
        print("no topologies")
        return 0
    print(f"{'NAME':<24} {'ID':<36} {'STATUS':<12} {'WORKERS':>7} {'EXECUTORS':>9}")
    for row in rows:
        print(f"{row.name:<24} {row.id:<36} {row.status:<12} {row.workers:>7} {row.executors:>9}")
    return 0
