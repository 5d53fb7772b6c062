"""``storm-planner parallelism`` and ``storm-planner simulate``: heterogeneity-aware advice.

``parallelism PROJECT --profiles FILE --cluster SPEC`` reads a streamparse
project's topology, runs ``hetero`` (Nasiri et al.) for the cluster and prints
the parallelism hint (``par=``) each component should get, where its instances
should run, and the predicted gain over the project's current hints placed by
Storm's default scheduler. Storm fixes parallelism at submission; a running
topology can be rebalanced up to each component's task count
(``storm-planner rebalance NAME -e component=N``; submit with
``<prefix>.tasks.<component>=N`` to leave room).

``simulate PROBLEM`` runs planners (default ``hetero`` and ``storm-default`` on
hetero's execution graph, the paper's comparison) or a saved plan through the
simulator and prints per-machine utilisation, throughput and the weighted
utilisation of eq. 9–10. ``--cluster`` and ``--profiles`` replace the
problem's nodes and profiles: "what if" on clusters one does not have.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from storm_planner.cli import CommandError
from storm_planner.core.errors import PlanningError
from storm_planner.core.plan import Plan
from storm_planner.core.problem import Problem
from storm_planner.planners.hetero.model import build_model
from storm_planner.planners.hetero.plans import placement_from_assignments
from storm_planner.planners.hetero.profiles import load_profile
from storm_planner.planners.hetero.simulate import Simulation, gain, simulate
from storm_planner.profiling.project import load_project_topology, parse_cluster


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    advise = subparsers.add_parser(
        "parallelism", help="recommend parallelism hints for a streamparse topology on a heterogeneous cluster")
    advise.add_argument("project", help="streamparse project directory (with config.json, topologies/, src/)")
    advise.add_argument(
        "--profiles", required=True, help="profile file (JSON or YAML; see storm_planner.planners.hetero.profiles)"
    )
    advise.add_argument(
        "--cluster", required=True, help="cluster file, or TYPE:COUNT[:CAPACITY],... e.g. i5:2:400,i3:4"
    )
    advise.add_argument("--topology", help="topology name (file stem) when the project has several")
    advise.add_argument("--env", help="environment whose par= hints are the current ones (for par dicts)")
    advise.add_argument("--input-rate", type=float, help="initial input rate IR0 (default: the profile's)")
    advise.add_argument("--start-from-hints", action="store_true",
                        help="start from the project's hints instead of one instance per component")
    advise.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                        help="hetero parameter (JSON value), repeatable")
    advise.add_argument("--problem-out", help="also write the problem file built for the planner here")
    advise.add_argument("--json", action="store_true", help="print the advice as JSON")
    advise.set_defaults(handler=parallelism_command)

    sim = subparsers.add_parser("simulate", help="simulate plans under the heterogeneity-aware CPU model")
    sim.add_argument("problem", help="problem file (JSON) with profiles, or - for standard input")
    sim.add_argument("--profiles", help="profile file replacing the problem's profiles")
    sim.add_argument("--cluster", help="cluster file or TYPE:COUNT[:CAPACITY],... replacing the problem's nodes")
    sim.add_argument("-a", "--algorithm", action="append", default=[],
                     help="planner to simulate, repeatable (default: hetero and storm-default)")
    sim.add_argument("--plan", action="append", default=[], help="a saved plan (JSON) to simulate, repeatable")
    sim.add_argument("--own-graph", action="store_true",
                     help="storm-default places the problem's own graph, not hetero's")
    sim.add_argument("--input-rate", type=float, help="simulate at this input rate instead of the highest")
    sim.add_argument("--json", action="store_true", help="print the results as JSON")
    sim.set_defaults(handler=simulate_command)

    from storm_planner.profiling.profiler import add_profile_command
    add_profile_command(subparsers)  # storm-planner profile: ET/MET on the real cluster


# -- parallelism -------------------------------------------------------------------------------

def parallelism_command(args: argparse.Namespace) -> int:
    from storm_planner.commands import parse_params
    from storm_planner.planners import run

    try:
        topology = load_project_topology(args.project, args.topology)
        profile = load_profile(args.profiles)
        nodes = parse_cluster(args.cluster)
        options: dict[str, Any] = {"mode": "search"}
        if args.input_rate is not None:
            options["input_rate"] = args.input_rate
        problem_dict = {"nodes": nodes, "topology": topology.problem_topology(args.env, args.start_from_hints),
                        "profiles": profile.to_dict(), "options": options}
        problem = Problem.from_dict(problem_dict)
        plan = run(problem, "hetero", **parse_params(args.param))
        model = build_model(problem)
        advised = simulate(model, placement_from_assignments(problem, model, plan.assignments))
        baseline = _current_hints_with_storm_default(problem_dict, topology.problem_topology(args.env, True))
    except PlanningError as error:
        raise CommandError(str(error)) from None
    if args.problem_out:
        Path(args.problem_out).write_text(json.dumps(problem_dict, indent=2) + "\n")

    per_type = _instances_per_type(problem, plan)
    hints = {c.name: c.hint_for(args.env) for c in topology.components}
    if args.json:
        print(json.dumps({
            "topology": topology.name,
            "parallelism": dict(plan.parallelism),
            "current_hints": hints,
            "placement": per_type,
            "assignments": {e: str(s) for e, s in sorted(plan.assignments.items())},
            "advised": _summary(advised),
            "current": _summary(baseline),
            "throughput_gain_percent": gain(advised.throughput, baseline.throughput),
            "notes": list(plan.notes),
        }, indent=2))
        return 0
    _print_advice(topology, hints, plan, per_type, advised, baseline, nodes)
    return 0


def _current_hints_with_storm_default(problem_dict: dict[str, Any], hinted_topology: dict[str, Any]) -> Simulation:
    """The project as it is: its own hints, placed by Storm's default scheduler."""
    from storm_planner.planners import run

    problem = Problem.from_dict({**problem_dict, "topology": hinted_topology})
    return _simulate_plan(problem, run(problem, "storm-default"))


def _print_advice(topology, hints, plan: Plan, per_type, advised: Simulation, baseline: Simulation, nodes) -> None:
    cluster = ", ".join(f"{t} x{n}" for t, n in Counter(n.get("machine_type", "default") for n in nodes).items())
    print(f"topology {topology.name} ({topology.path}) on {len(nodes)} machines ({cluster})\n")
    width = max(len(c) for c in plan.parallelism) + 2
    print(f"{'component':<{width}}{'hint':>6}{'advised':>9}   instances per machine type")
    for component, count in plan.parallelism.items():
        spread = " ".join(f"{t}:{n}" for t, n in per_type[component].items())
        print(f"{component:<{width}}{hints.get(component, 1):>6}{count:>9}   {spread}")
    print()
    print(f"max input rate   {advised.input_rate:12.1f} tuples/s per spout   "
          f"(current hints, Storm default placement: {baseline.input_rate:.1f})")
    print(f"throughput       {advised.throughput:12.1f} tuples/s            "
          f"({gain(advised.throughput, baseline.throughput):+.1f}%)")
    print(f"weighted util.   {advised.weighted_utilisation:12.1f} %                   "
          f"(current: {baseline.weighted_utilisation:.1f} %)")
    changed = {c: n for c, n in plan.parallelism.items() if n != hints.get(c)}
    if changed:
        print(f"\nset in {topology.path.name}: " + ", ".join(f"{c} par={n}" for c, n in changed.items()))
        print(f"running topology (up to each task count): storm-planner rebalance {topology.name} "
              + " ".join(f"-e {c}={n}" for c, n in changed.items()))
    for note in plan.notes:
        print(f"note: {note}")


def _instances_per_type(problem: Problem, plan: Plan) -> dict[str, dict[str, int]]:
    type_of = {n.id: n.machine_type for n in problem.nodes}
    component_of = {e.id: e.component for e in problem.executors}
    spread: dict[str, Counter] = {c: Counter() for c in plan.parallelism}
    for executor, slot in plan.assignments.items():
        component = component_of.get(executor) or executor.rpartition("/")[0]
        spread[component][type_of[slot.node]] += 1
    return {c: dict(sorted(counts.items())) for c, counts in spread.items()}


# -- simulate -------------------------------------------------------------------------------------

def simulate_command(args: argparse.Namespace) -> int:
    from storm_planner.planners import run

    data = _read_json(args.problem)
    if args.cluster:
        data = {**data, "nodes": parse_cluster(args.cluster)}
        data.pop("current", None)  # placements on the old nodes mean nothing here
    try:
        if args.profiles:
            data = {**data, "profiles": load_profile(args.profiles).to_dict()}
        problem = Problem.from_dict(data)
        model = build_model(problem)
        results: list[tuple[str, Simulation]] = []
        algorithms = args.algorithm or ([] if args.plan else ["hetero", "storm-default"])
        graph: dict[str, int] | None = None
        for name in algorithms:
            params = {}
            if name == "storm-default" and graph and not args.own_graph:
                params["parallelism"] = graph  # the paper's comparison: the same graph, Storm's placement
            plan = run(problem, name, **params)
            if plan.parallelism and name.startswith("hetero"):
                graph = dict(plan.parallelism)
            results.append((name, _simulate_plan(problem, plan, args.input_rate)))
        for path in args.plan:
            plan = Plan.from_dict(_read_json(path))
            results.append((f"{plan.algorithm or 'plan'} ({path})", _simulate_plan(problem, plan, args.input_rate)))
    except PlanningError as error:
        raise CommandError(str(error)) from None

    if args.json:
        print(json.dumps({name: _summary(result) for name, result in results}, indent=2))
        return 0
    _print_simulations(model, results)
    return 0


def _simulate_plan(problem: Problem, plan: Plan, input_rate: float | None = None) -> Simulation:
    model = build_model(problem)
    return simulate(model, placement_from_assignments(problem, model, plan.assignments), input_rate)


def _print_simulations(model, results: list[tuple[str, Simulation]]) -> None:
    base = results[-1][1] if len(results) > 1 else None
    for name, result in results:
        versus = f"  ({gain(result.throughput, base.throughput):+.1f}% vs {results[-1][0]})" if base and result is not base else ""
        print(f"{name}: input rate {result.input_rate:.1f} tuples/s, throughput {result.throughput:.1f} tuples/s"
              f"{versus}, weighted utilisation {result.weighted_utilisation:.1f} %")
        print("  parallelism " + ", ".join(f"{c}={n}" for c, n in result.parallelism.items()))
        by_type: dict[str, list[str]] = {}
        for machine, machine_type in zip(model.machines, model.machine_types):
            by_type.setdefault(machine_type, []).append(f"{machine} {result.utilisation[machine]:.0f}%")
        for machine_type, machines in by_type.items():
            print(f"  {machine_type} (mean {result.type_utilisation[machine_type]:.1f} %, "
                  f"weight {result.type_weights[machine_type]:.2f}): " + ", ".join(machines))


def _summary(result: Simulation) -> dict[str, Any]:
    return {
        "input_rate": result.input_rate,
        "throughput": result.throughput,
        "weighted_utilisation": result.weighted_utilisation,
        "utilisation": result.utilisation,
        "type_utilisation": result.type_utilisation,
        "type_weights": result.type_weights,
        "parallelism": result.parallelism,
    }


def _read_json(path: str) -> dict[str, Any]:
    from storm_planner.commands import read_json_file

    data = read_json_file(path)
    if not isinstance(data, dict):
        raise CommandError(f"{path}: expected a JSON object")
    return data
