"""The ``storm-planner`` command line.

Each area of the kit contributes its own sub-commands through an
``add_commands(subparsers)`` function, so this module stays a table of
contents: planning (``plan``, ``algorithms``), the service (``serve``), the
local cluster (``cluster ...``), topology submission (``submit``, ``kill``,
``rebalance``, ``list``) and the later areas (metrics, feeds, the dashboard).
Other distributions add theirs through the entry-point group ``storm_planner.commands``
(:data:`COMMAND_GROUP`): each entry point names an ``add_commands(subparsers)`` function. The
benchmark harness (``benchmarks/harness``, ``storm-planner bench ...``) is one.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
from importlib.metadata import entry_points

from storm_planner.core.errors import StormPlannerError
from storm_planner.core.quiet import answer_only_stdout, stdout_to_devnull

# Modules that contribute sub-commands, in help order. A module listed here
# that is not importable (an optional area) is skipped with a debug line.
COMMAND_MODULES = (
    "storm_planner.commands",
    "storm_planner.service.commands",
    "storm_planner.cluster.commands",
    "storm_planner.compose_commands",
    "storm_planner.submit.commands",
    "storm_planner.metrics.commands",
    "storm_planner.feeds.commands",
    "storm_planner.profiling.commands",
    "storm_planner.dashboard.commands",
    "storm_planner.demo",
)
# Sub-command contributors of other installed distributions (the benchmark harness: ``bench``), after
# the library's own. One that cannot be imported (its distribution gone, its metadata left) is skipped
# with a debug line, as an optional module above is.
COMMAND_GROUP = "storm_planner.commands"


# A process whose reader went away ends as if killed by SIGPIPE, as Unix tools do (the shell's 128 + 13).
BROKEN_PIPE_STATUS = 141


class CommandError(StormPlannerError):
    """A user-facing failure: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storm-planner",
        description="Placement planning for Apache Storm.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not error.name or not name.startswith(error.name):
                raise  # a real import error inside an existing module
            logging.getLogger(__name__).debug("no commands from %s", name)
            continue
        module.add_commands(subparsers)
    for entry_point in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        try:
            add_commands = entry_point.load()
        except ModuleNotFoundError as error:
            if not error.name or not entry_point.module.startswith(error.name):
                raise  # a real import error inside an installed contributor
            logging.getLogger(__name__).debug("no commands from %s (%s)", entry_point.name, entry_point.value)
            continue
        add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        # Standard output carries the command's answer alone: what a library or a
        # child process writes to descriptor 1 goes to standard error instead.
        with answer_only_stdout():
            return args.handler(args) or 0
    except CommandError as error:
        print(f"storm-planner {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # standard output's reader is gone (`storm-planner ... | head`): nothing more to say, no traceback
        stdout_to_devnull()
        return BROKEN_PIPE_STATUS


if __name__ == "__main__":
    sys.exit(main())
