"""``storm-planner plan``, ``algorithms`` and ``scale plan``: planning from the command line."""
from __future__ import annotations

import argparse
import contextlib
import json
import textwrap
from pathlib import Path
from typing import Any

from storm_planner.adaptation.state import run_with_state_file
from storm_planner.cli import CommandError
from storm_planner.core.errors import PlanningError, ProblemError, StormPlannerError
from storm_planner.core.jsonfile import read_json
from storm_planner.core.problem import Problem
from storm_planner.planners import available, documented_parameters
from storm_planner.scaling import run_scaler, scalers


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """The planning commands: plan, algorithms, scale (plan, algorithms, run, sample)."""
    _add_plan(subparsers)
    _add_algorithms(subparsers)
    _add_scale(subparsers)


def _add_plan(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser("plan", help="plan a problem file and print the plan as JSON")
    plan.add_argument("problem", help="problem file (JSON), or - for standard input")
    _algorithm_arguments(plan, "even", "planner", "`algorithms`")
    plan.set_defaults(handler=plan_command)


def _add_algorithms(subparsers: argparse._SubParsersAction) -> None:
    algorithms = subparsers.add_parser("algorithms", help="list the registered planners")
    algorithms.add_argument("--params", action="store_true",
                            help="also list each planner's parameters and defaults (set with -p KEY=VALUE "
                                 "or the topology option planner.<algorithm>.<key>)")
    algorithms.set_defaults(handler=algorithms_command)


def _add_scale(subparsers: argparse._SubParsersAction) -> None:
    """``scale`` and its actions: plan, algorithms, run, sample."""
    scale = subparsers.add_parser("scale", help="scaling advice (QEScalor): instances and provisions per epoch")
    scale_commands = scale.add_subparsers(dest="scale_command", metavar="ACTION")
    scale_commands.required = True
    scale_plan = scale_commands.add_parser("plan", help="schedule a scaling problem file and print it as JSON")
    scale_plan.add_argument("problem", help="scaling problem (JSON, docs/formats.md: Scaling problem), or -")
    _algorithm_arguments(scale_plan, "qcesa", "scaling algorithm", "`scale algorithms`")
    scale_plan.set_defaults(handler=scale_plan_command)
    scale_list = scale_commands.add_parser("algorithms", help="list the scaling algorithms and their parameters")
    scale_list.set_defaults(handler=scale_algorithms_command)
    _add_scale_run(scale_commands)
    _add_scale_sample(scale_commands)


def _add_scale_run(scale_commands: argparse._SubParsersAction) -> None:
    scale_run = scale_commands.add_parser(
        "run", help="scale a running topology's component epoch by epoch (QEScalor's controller, via rebalance)")
    scale_run.add_argument("topology", help="the running topology's name")
    scale_run.add_argument("--component", required=True, help="the component (operator) to scale")
    scale_run.add_argument("--problem", required=True, metavar="FILE",
                           help="scaling template: resources, performance or samples, costs (no workload/current)")
    scale_run.add_argument("-a", "--algorithm", default="qcesa-exact", help="scaling algorithm (default %(default)s)")
    scale_run.add_argument("--epoch-s", type=float, default=60.0, help="seconds per epoch (default %(default)s)")
    scale_run.add_argument("--epochs", type=int, default=0, help="epochs to run (default: until interrupted)")
    scale_run.add_argument(
        "--horizon", type=int, default=6, help="epochs each decision plans ahead (default %(default)s)"
    )
    scale_run.add_argument("--season", type=int, default=0,
                           help="epochs per season for the Holt-Winters forecast (0: hold the recent peak)")
    scale_run.add_argument("--quantile", type=float, help="raise the forecast by this quantile of its residuals")
    scale_run.add_argument("--log", type=Path, metavar="FILE", help="append each decision as a JSON line")
    scale_run.add_argument("--offered-rate-file", type=Path, metavar="FILE",
                           help="a file holding the source's offered rate (tuples/s), e.g. a replay feed's: the "
                                "workload when the component is saturated, and calibration of its instances")
    scale_run.add_argument("--rebalance-wait-secs", type=int, default=1,
                           help="seconds Storm deactivates the topology before redistributing (default %(default)s)")
    scale_run.add_argument("--enforce-provisions", action="store_true",
                           help="give each instance its provision's CPU quota and memory limit (cgroup v1, root; "
                                "the component must be multilang, e.g. streamparse, its workers on this host)")
    scale_run.add_argument("--worker-logs", type=Path, metavar="DIR",
                           help="storm.log.dir of the supervisors (default: the local cluster's)")
    scale_run.add_argument("--nimbus", metavar="HOST:PORT", help="default: $STORM_PLANNER_NIMBUS, else 127.0.0.1:6627")
    scale_run.add_argument(
        "--zookeeper", metavar="HOST:PORT", help="default: $STORM_PLANNER_ZOOKEEPER, else 127.0.0.1:2181"
    )
    scale_run.set_defaults(handler=scale_run_command)


def _add_scale_sample(scale_commands: argparse._SubParsersAction) -> None:
    sample = scale_commands.add_parser(
        "sample", help="measure an operator instance's throughput under CPU provisions on a local cluster (OOPSer)")
    sample.add_argument(
        "--cpu",
        default="0.25:2.0:0.25",
        help="CPU provisions in cores: a list 0.25,0.5,1 or a range start:stop:step (default %(default)s)",
    )
    sample.add_argument("--memory-mb", type=float, default=33.5,
                        help="memory of each provision: recorded; with --live also enforced (default %(default)s)")
    sample.add_argument("--method", choices=("dsa", "fssa"), default="dsa", help="DSA or fixed-step FSSA")
    sample.add_argument("--step", type=int, default=1, help="FSSA's step, in provisions (default %(default)s)")
    sample.add_argument("--work-iterations", type=int, default=2000, help="SHA-256 rounds per tuple in the bolt")
    sample.add_argument("--period-s", type=int, default=2, help="metrics window (default %(default)s s)")
    sample.add_argument("--work-dir", type=Path, default=Path("oopser-run"), help="cluster state and logs")
    sample.add_argument("-o", "--output", help="write the samples here instead of standard output")
    live = sample.add_argument_group(
        "sampling a running topology", "--live NAME --component C: one extra instance of C takes a share of its "
        "live stream under each provision (C multilang, with more tasks than executors; root for cgroups)")
    live.add_argument("--live", metavar="TOPOLOGY", help="the running topology to sample instead of a stress topology")
    live.add_argument("--component", help="the component (operator) to sample")
    live.add_argument("--worker-logs", type=Path, metavar="DIR",
                      help="storm.log.dir of the supervisors (default: the local cluster's)")
    live.add_argument("--nimbus", metavar="HOST:PORT", help="default: $STORM_PLANNER_NIMBUS, else 127.0.0.1:6627")
    live.add_argument("--zookeeper", metavar="HOST:PORT", help="default: $STORM_PLANNER_ZOOKEEPER, else 127.0.0.1:2181")
    sample.set_defaults(handler=scale_sample_command)


def _algorithm_arguments(parser: argparse.ArgumentParser, default: str, what: str, listing: str) -> None:
    """``-a ALGORITHM``, ``-p KEY=VALUE`` (repeatable) and ``-o FILE``, shared by ``plan`` and ``scale plan``."""
    parser.add_argument("-a", "--algorithm", default=default, help=f"{what} name (see {listing})")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help=f"{what} parameter (JSON value), repeatable")
    parser.add_argument("-o", "--output", help="write the answer here instead of standard output")


def read_json_file(path: str) -> Any:
    """A JSON file (``-`` = standard input) within the limits of :mod:`storm_planner.core.limits`, or a
    one-line CommandError saying what is wrong."""
    try:
        return read_json(path)
    except ProblemError as error:
        raise CommandError(str(error)) from None


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
    write_answer(plan.to_dict(), args.output)
    return 0


def write_answer(answer: Any, output: str | None) -> None:
    """The answer as JSON, to ``output`` or standard output."""
    text = json.dumps(answer, indent=2)
    if output:
        Path(output).write_text(text + "\n")
    else:
        print(text)


def scale_plan_command(args: argparse.Namespace) -> int:
    data = read_json_file(args.problem)
    try:
        schedule = run_scaler(data, args.algorithm, **parse_params(args.param))
    except PlanningError as error:
        raise CommandError(f"{args.problem}: {error}") from None
    write_answer(schedule, args.output)
    return 0


def scale_run_command(args: argparse.Namespace) -> int:
    from storm_planner.scaling import ScalingController
    from storm_planner.scaling.live.scale_run import run_scaling

    template = read_json_file(args.problem)
    try:
        controller = ScalingController(template, algorithm=args.algorithm, horizon=args.horizon,
                                       season=args.season, quantile=args.quantile)
        with contextlib.ExitStack() as stack:
            enforce = stack.enter_context(_enforcer(args, controller)) if args.enforce_provisions else None
            decisions = run_scaling(*_storm_addresses(args),
                                    args.topology, args.component, controller, args.epoch_s, args.epochs, args.log,
                                    rebalance_wait_secs=args.rebalance_wait_secs,
                                    offered=_rate_reader(args.offered_rate_file) if args.offered_rate_file else None,
                                    enforce=enforce)
    except StormPlannerError as error:
        raise CommandError(str(error)) from None
    answer = {"topology": args.topology, "component": args.component, "decisions": decisions}
    if enforce is not None:
        answer["refused_pids"] = enforce.groups.refusals.to_list()  # pids named in the logs but not its subprocesses
    write_answer(answer, None)
    return 0


@contextlib.contextmanager
def _enforcer(args: argparse.Namespace, controller):
    """Per-instance provisions for ``scale run``; the instances' cgroups are removed when the run ends."""
    import os

    from storm_planner.scaling.live.instances import (
        InstanceProvisions,
        ProvisionEnforcer,
        provisions_from_template,
    )

    with InstanceProvisions(f"storm-planner-scale-{os.getpid()}") as groups:
        yield ProvisionEnforcer(groups, _worker_logs(args), args.component,
                                provisions_from_template(controller.template))


def _storm_addresses(args: argparse.Namespace) -> tuple[str, str]:
    """(Nimbus, ZooKeeper) from ``--nimbus``/``--zookeeper``, else the environment, else the local defaults."""
    import os

    from storm_planner.service.metrics import ZOOKEEPER_ENV
    from storm_planner.submit.commands import _default_nimbus

    return args.nimbus or _default_nimbus(), args.zookeeper or os.environ.get(ZOOKEEPER_ENV, "127.0.0.1:2181")


def _worker_logs(args: argparse.Namespace) -> Path:
    """``--worker-logs``, else the local cluster's storm.log.dir."""
    from storm_planner.cluster import default_description
    from storm_planner.cluster.locations import default_state_root

    return args.worker_logs or default_state_root() / default_description().name / "logs"


def _rate_reader(path: Path):
    def offered() -> float:
        try:
            return float(path.read_text().strip() or 0)
        except (OSError, ValueError) as error:
            raise CommandError(f"--offered-rate-file {path}: {error}") from None
    return offered


def scale_sample_command(args: argparse.Namespace) -> int:
    from storm_planner.cluster import default_description
    from storm_planner.scaling.live.oopser import SamplerSettings, parse_levels, sample_on_cluster

    try:
        settings = SamplerSettings(levels=parse_levels(args.cpu, args.memory_mb), method=args.method, step=args.step,
                                   work_iterations=args.work_iterations, period_s=args.period_s)
        if args.live:
            return _sample_live(args, settings)
        args.work_dir.mkdir(parents=True, exist_ok=True)
        samples = sample_on_cluster(default_description(), settings, args.work_dir.resolve())
    except StormPlannerError as error:
        raise CommandError(str(error)) from None
    write_answer({"method": args.method, "samples": [{"cpu": c, "memory_mb": m, "throughput": round(t, 3)}
                                                     for c, m, t in samples]}, args.output)
    return 0


def _sample_live(args: argparse.Namespace, settings) -> int:
    from storm_planner.scaling.live.live_sampler import sample_live

    if not args.component:
        raise CommandError("--live needs --component: the operator to sample")
    instance, samples = sample_live(*_storm_addresses(args), _worker_logs(args), args.live, args.component, settings)
    write_answer({"method": args.method, "topology": args.live, "component": args.component,
                  "sampling_task": instance.first_task, "samples": [s.to_dict() for s in samples]}, args.output)
    return 0


def scale_algorithms_command(args: argparse.Namespace) -> int:
    for name, cls in scalers().items():
        tag = " (baseline)" if cls.baseline else ""
        print(f"{name:<12} {cls.summary}{tag}")
        _print_parameters(cls)
    return 0


def algorithms_command(args: argparse.Namespace) -> int:
    for name, cls in available().items():
        tag = " (baseline)" if cls.baseline else ""
        print(f"{name:<12} {cls.summary}{tag}")
        if getattr(args, "params", False):
            _print_parameters(cls)
    return 0


def _print_parameters(cls) -> None:
    """Each parameter with its default (as JSON, the spelling of ``-p``), its kind and its description,
    from the ``Parameters`` section of the class docstring."""
    documented = documented_parameters(cls)
    for parameter, default in cls.param_defaults().items():
        doc = documented.get(parameter)
        print(f"{'':<14}{parameter} = {json.dumps(default)}" + (f"  ({doc.kind})" if doc else ""))
        if doc:
            print(textwrap.fill(doc.description, width=100, initial_indent=" " * 18, subsequent_indent=" " * 18))
