"""``storm-planner parallelism`` on a streamparse project and ``storm-planner simulate``."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from storm_planner.cli import CommandError
from storm_planner.generators.hetero import micro_problem
from storm_planner.profiling.commands import add_commands
from storm_planner.profiling.project import load_project_topology, parse_cluster

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "data" / "wordcount"


def invoke(capsys, *argv: str):
    parser = argparse.ArgumentParser(prog="storm-planner")
    add_commands(parser.add_subparsers(dest="command"))
    args = parser.parse_args([str(a) for a in argv])
    status = args.handler(args)
    return status, capsys.readouterr().out


def test_the_project_reader_sees_what_streamparse_would_submit():
    topology = load_project_topology(PROJECT)
    shape = {c.name: (c.kind, c.hint_for("prod"), c.inputs) for c in topology.components}
    assert shape == {
        "sentences": ("spout", 1, ()),
        "split": ("bolt", 2, (("sentences", "default", "shuffle"),)),
        "count": ("bolt", 4, (("split", "default", "fields"),)),
        "report": ("bolt", 1, (("count", "default", "global"),)),
    }
    assert topology.components[2].hint_for("dev") == 1


def test_parallelism_recommends_hints_that_beat_the_projects_own(capsys, repo):
    status, out = invoke(capsys, "parallelism", PROJECT, "--profiles", repo / "tests/data/profiles/wordcount.json",
                         "--cluster", "i5:2,i3:2", "--env", "prod", "--json")
    advice = json.loads(out)
    assert status == 0
    assert set(advice["parallelism"]) == {"sentences", "split", "count", "report"}
    assert advice["current_hints"] == {"sentences": 1, "split": 2, "count": 4, "report": 1}
    assert advice["advised"]["throughput"] > advice["current"]["throughput"]
    assert advice["parallelism"]["report"] == 1  # fed by a global grouping: more instances would idle
    assert sum(advice["parallelism"].values()) == len(advice["assignments"])


def test_parallelism_prints_a_table_and_the_rebalance_command(capsys, repo, tmp_path):
    problem_out = tmp_path / "problem.json"
    status, out = invoke(capsys, "parallelism", PROJECT, "--profiles", repo / "tests/data/profiles/wordcount.json",
                         "--cluster", "i5:1:400,i3:3", "--problem-out", problem_out)
    assert status == 0
    assert "advised" in out and "storm-planner rebalance wordcount" in out and "max input rate" in out
    assert json.loads(problem_out.read_text())["profiles"]["components"]["split"]["alpha"] == 4


def test_parallelism_explains_a_profile_that_misses_a_machine_type(capsys, repo):
    with pytest.raises(CommandError, match="no times for machine type 'xeon'"):
        invoke(capsys, "parallelism", PROJECT, "--profiles", repo / "tests/data/profiles/wordcount.json",
               "--cluster", "xeon:2")


def test_simulate_compares_hetero_with_storm_default_on_the_same_graph(capsys, tmp_path):
    path = tmp_path / "linear.json"
    path.write_text(json.dumps(micro_problem("linear", "paper")))
    status, out = invoke(capsys, "simulate", path, "--json")
    results = json.loads(out)
    assert status == 0 and set(results) == {"hetero", "storm-default"}
    assert results["hetero"]["parallelism"] == results["storm-default"]["parallelism"]
    assert results["hetero"]["throughput"] > results["storm-default"]["throughput"]
    assert max(results["hetero"]["utilisation"].values()) == pytest.approx(100)


def test_simulate_answers_what_if_on_another_cluster_and_a_saved_plan(capsys, tmp_path):
    path = tmp_path / "star.json"
    path.write_text(json.dumps(micro_problem("star", "paper")))
    _, out = invoke(capsys, "simulate", path, "--cluster", "i5:4", "-a", "hetero", "--json")
    on_i5 = json.loads(out)["hetero"]
    assert set(on_i5["utilisation"]) == {f"i5-{k}" for k in range(4)}

    from storm_planner import plan as make_plan
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps(make_plan(micro_problem("star", "paper"), algorithm="even")))
    status, out = invoke(capsys, "simulate", path, "--plan", saved)
    assert status == 0 and "even" in out and "weighted utilisation" in out


def test_cluster_specs_inline_and_from_a_file(tmp_path):
    assert [n["id"] for n in parse_cluster("i5:2:400,i3:1")] == ["i5-0", "i5-1", "i3-0"]
    assert parse_cluster("i5:2:400")[0]["capacity"] == 400
    nodes = tmp_path / "cluster.yaml"
    nodes.write_text("nodes:\n  - {id: a, machine_type: i5}\n")
    assert parse_cluster(str(nodes)) == [{"id": "a", "machine_type": "i5"}]
    for bad in ("i5", "i5:x", "i5:0", ":3", ""):
        with pytest.raises(Exception, match="--cluster"):
            parse_cluster(bad)


@pytest.mark.parametrize("fixture, message", [
    ("negative-times.json", r"negative-times.json.component_types.split.i5.met: must not be negative, got -0.05"),
    ("missing-machine-type.json", r"component 'count' has no times for machine type 'i3' \(used by node 'i3-0'\)"),
])
def test_bad_profile_files_are_rejected_with_clear_errors(capsys, repo, fixture, message):
    with pytest.raises(CommandError, match=message):
        invoke(capsys, "parallelism", PROJECT, "--profiles", repo / "tests/data/profiles" / fixture,
               "--cluster", "i5:1,i3:1")
