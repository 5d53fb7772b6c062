"""Problem files: bad ones are rejected with a message naming the field, on every way in."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from storm_planner.cli import main as cli_main
from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Problem

DATA = Path(__file__).resolve().parents[1] / "data"


def good() -> dict:
    return json.loads((DATA / "measured-skewed.json").read_text())


def derived() -> dict:
    return json.loads((DATA / "small-problem.json").read_text())


def edited(base: dict, change) -> dict:
    data = copy.deepcopy(base)
    change(data)
    return data


def _set(path: str, value):
    """A change that sets data[path] (dotted, list indices as numbers) to value."""
    def change(data):
        *parents, last = path.split(".")
        target = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return change


def _drop(path: str):
    def change(data):
        *parents, last = path.split(".")
        target = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        del target[last]
    return change


# (what is wrong, base, change, text the message must contain)
BAD = [
    (
        "unknown component in a stream",
        derived,
        _set("topology.streams.0.to", "nope"),
        "topology.streams[0].to: unknown component 'nope'",
    ),
    (
        "stream end that is not a string",
        derived,
        _set("topology.streams.0.from", ["tweets"]),
        "topology.streams[0].from: unknown component",
    ),
    (
        "negative cost",
        derived,
        _set("topology.components.1.cost", -5),
        "topology.components[1].cost: must not be negative",
    ),
    ("no nodes", derived, _set("nodes", []), "nodes: a problem needs at least one node"),
    ("nodes missing", derived, _drop("nodes"), "nodes: missing"),
    ("duplicate node ids", derived, _set("nodes.1.id", "sup-a"), "nodes: duplicate id 'sup-a'"),
    (
        "duplicate component ids",
        derived,
        _set("topology.components.1.id", "tweets"),
        "topology.components: duplicate id 'tweets'",
    ),
    ("duplicate executor ids", good, _set("executors.1.id", "[1-1]"), "executors: duplicate id '[1-1]'"),
    ("executor too big for any node", derived, _set("topology.components.1.cost", 2000), "cannot fit any node"),
    (
        "measured executor too big (draining node does not count)",
        good,
        _set("executors.0.load", 300),
        "executor '[1-1]' needs 300% CPU but the largest node offers 200%",
    ),
    ("no components", derived, _set("topology.components", []), "topology.components: a topology needs"),
    ("zero capacity", derived, _set("nodes.0.capacity", 0), "nodes[0].capacity: must be positive"),
    ("capacity as text", derived, _set("nodes.0.capacity", "400"), "nodes[0].capacity: a finite number"),
    ("not-a-number load", good, _set("executors.2.load", float("nan")), "executors[2].load: a finite number"),
    (
        "fractional executor count",
        derived,
        _set("topology.components.0.executors", 2.5),
        "topology.components[0].executors: a whole number",
    ),
    ("unknown grouping", derived, _set("topology.streams.0.grouping", "random"), "is not one of"),
    ("bad component type", derived, _set("topology.components.0.type", "sink"), "neither 'spout' nor 'bolt'"),
    ("streams not a list", derived, _set("topology.streams", 5), "topology.streams: expected a list"),
    ("executors not a list", good, _set("executors", {"a": 1}), "executors: expected a list"),
    (
        "executor of an unknown component",
        good,
        _set("executors.0.component", "ghost"),
        "executors[0].component: unknown component 'ghost'",
    ),
    (
        "traffic between unknown executors",
        good,
        _set("traffic.0.to", "[99-99]"),
        "traffic[0].to: unknown executor '[99-99]'",
    ),
    ("draining as text", derived, _set("nodes.0.draining", "false"), "nodes[0].draining: true or false"),
    ("duplicate port", derived, _set("nodes.0.slots", [6700, 6700]), "nodes[0].slots: duplicate port"),
    ("port out of range", derived, _set("nodes.0.slots", [70000]), "nodes[0].slots: a non-empty list of ports"),
    ("current slot without a port", good, _set("current.[1-1]", "sup-a"), "current['[1-1]']"),
    ("current of an unknown executor", good, _set("current.ghost", "sup-a:6700"), "current: unknown executor 'ghost'"),
    ("profiles not an object", derived, _set("profiles", [1, 2]), "profiles: expected an object"),
    ("options not an object", derived, _set("options", [1]), "options: expected an object"),
    ("boolean seed", derived, _set("options.seed", True), "options.seed: a whole number"),
    ("boolean migration budget", derived, _set("options.max_migrations", True), "options.max_migrations"),
    ("non-positive time limit", derived, _set("options.time_limit_s", 0), "options.time_limit_s: must be positive"),
]


@pytest.mark.parametrize("what, base, change, message", BAD, ids=[b[0] for b in BAD])
def test_bad_problem_is_rejected_with_a_clear_message(what, base, change, message):
    with pytest.raises(ProblemError) as error:
        Problem.from_dict(edited(base(), change))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("what, base, change, message", BAD[:8], ids=[b[0] for b in BAD[:8]])
def test_bad_problem_file_on_the_command_line(tmp_path, capsys, what, base, change, message):
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(edited(base(), change)))
    assert cli_main(["plan", "-a", "topdown", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("storm-planner plan: ") and captured.err.count("\n") == 1
    assert message in captured.err


@pytest.mark.parametrize("text", ["{", "[]", "null", '"nodes"'])
def test_not_a_problem_at_all_on_the_command_line(tmp_path, capsys, text):
    path = tmp_path / "problem.json"
    path.write_text(text)
    assert cli_main(["plan", "-a", "topdown", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_infeasible_problem_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "problem.json"
    path.write_text(json.dumps({"nodes": [{"id": "n0", "capacity": 100}],
                                "topology": {"components": [{"id": "a", "executors": 2, "cost": 150}]}}))
    assert cli_main(["plan", "-a", "topdown", str(path)]) == 2
    assert "needs 150% CPU" in capsys.readouterr().err


def test_whole_floats_are_whole_numbers():
    """JSON has one number type: 2.0 executors is 2 executors (as JSON Schema's "integer")."""
    data = edited(derived(), _set("topology.components.0.executors", 2.0))
    data["nodes"][0]["slots"] = [6700.0]
    data["options"]["seed"] = 3.0
    problem = Problem.from_dict(data)
    assert problem.components[0].executors == 2 and problem.nodes[0].slots == (6700,)
    assert problem.options.seed == 3


def test_nulls_mean_absent():
    data = derived()
    data.update({"executors": None, "traffic": None, "current": None, "profiles": None})
    data["topology"]["streams"] = None
    problem = Problem.from_dict(data)
    assert problem.streams == () and len(problem.executors) == 6


def test_current_on_a_node_that_left_is_dropped():
    problem = Problem.from_dict(good())
    assert "[11-11]" not in problem.current  # it was on sup-gone
    assert str(problem.current["[1-1]"]) == "sup-a:6700"


@pytest.mark.parametrize("name", ["small-problem.json", "figure2.json", "measured-skewed.json"])
def test_round_trip(name):
    problem = Problem.from_dict(json.loads((DATA / name).read_text()))
    again = Problem.from_dict(json.loads(json.dumps(problem.to_dict())))
    assert again.to_dict() == problem.to_dict()
    assert again.executors == problem.executors and again.traffic == problem.traffic
