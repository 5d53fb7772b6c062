"""``storm-planner plan`` and ``storm-planner algorithms``: planning from the command line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from storm_planner.adaptation.state import run_with_state_file
from storm_planner.cli import CommandError
from storm_planner.core.errors import PlanningError
from storm_planner.core.problem import Problem
from storm_planner.planners import available


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser("plan", help="plan a problem file and print the plan as JSON")
    plan.add_argument("problem", help="problem file (JSON), or - for standard input")
    plan.add_argument("-a", "--algorithm", default="even", help="planner name (see `algorithms`)")
    plan.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                      help="planner parameter (JSON value), repeatable")
    plan.add_argument("-o", "--output", help="write the plan here instead of standard output")
    plan.set_defaults(handler=plan_command)

    algorithms = subparsers.add_parser("algorithms", help="list the registered planners")
    algorithms.add_argument("--params", action="store_true",
                            help="also list each planner's parameters and defaults (set with -p KEY=VALUE "
                                 "or the topology option planner.<algorithm>.<key>)")
    algorithms.set_defaults(handler=algorithms_command)


def read_json_file(path: str) -> Any:
    """A JSON file (``-`` = standard input), or a one-line CommandError saying what is wrong."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"{path} is not UTF-8 text (expected JSON)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"{path} is not JSON: {error}") from None


def load_problem(path: str) -> Problem:
    data = read_json_file(path)
    try:
        return Problem.from_dict(data)
    except PlanningError as error:
        raise CommandError(f"{path}: {error}") from None


def parse_params(pairs: list[str]) -> dict:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise CommandError(f"--param {pair!r}: expected KEY=VALUE")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def plan_command(args: argparse.Namespace) -> int:
    problem = load_problem(args.problem)
    try:
        # -p state_file=PATH keeps a stateful planner's state (e.g. albic) between runs.
        plan = run_with_state_file(problem, args.algorithm, parse_params(args.param))
    except PlanningError as error:
        raise CommandError(str(error)) from None
    text = json.dumps(plan.to_dict(), indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n")
    else:
        print(text)
    return 0


def algorithms_command(args: argparse.Namespace) -> int:
    for name, cls in available().items():
        tag = " (baseline)" if cls.baseline else ""
        print(f"{name:<12} {cls.summary}{tag}")
        if getattr(args, "params", False):
            for parameter, default in cls.param_defaults().items():
                print(f"{'':<14}{parameter} = {json.dumps(default)}")
    return 0
