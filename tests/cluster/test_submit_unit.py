"""Topology jar contents, project loading and submit helpers (no cluster needed)."""
from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from storm_planner.submit.jar import build_topology_jar
from storm_planner.submit.operations import (
    SubmitError,
    parse_nimbus,
    parse_options,
    set_shell_command,
    streamparse_run_for,
    topology_options,
)
from storm_planner.submit.project import ProjectError, load_project


def test_jar_holds_only_resources_and_a_manifest(tmp_path, wordcount_project):
    src = tmp_path / "src"
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text("X = 1\n")
    (src / "pkg" / "mod.py").write_text("Y = 2\n")
    (src / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"junk")
    (src / "pkg" / "stale.pyc").write_bytes(b"junk")
    jar = build_topology_jar(src, tmp_path / "out" / "t.jar")
    with zipfile.ZipFile(jar) as z:
        names = z.namelist()
        assert names == ["META-INF/MANIFEST.MF", "resources/pkg/__init__.py", "resources/pkg/mod.py"]
        assert z.read("resources/pkg/mod.py") == b"Y = 2\n"
        assert z.read("META-INF/MANIFEST.MF").startswith(b"Manifest-Version: 1.0")


def test_jar_is_reproducible(tmp_path, wordcount_project):
    a = build_topology_jar(wordcount_project / "src", tmp_path / "a.jar")
    b = build_topology_jar(wordcount_project / "src", tmp_path / "b.jar")
    assert a.read_bytes() == b.read_bytes()


def test_load_project_and_point_shell_components_at_streamparse_run(wordcount_project):
    project = load_project(wordcount_project)
    assert project.topology_name == "wordcount"
    topo = project.topology_class
    assert set(topo.thrift_spouts) == {"words"} and set(topo.thrift_bolts) == {"count"}
    assert set_shell_command(topo, "/abs/bin/streamparse_run") == 2
    for bolt in topo.thrift_bolts.values():
        assert bolt.bolt_object.shell.execution_command == "/abs/bin/streamparse_run"
        assert bolt.bolt_object.shell.script.endswith("wordcount_fixture.counter.CountBolt")
    # Loading again gives a fresh class (streamparse_run not yet replaced).
    again = load_project(wordcount_project)
    assert again.topology_class.thrift_bolts["count"].bolt_object.shell.execution_command == "streamparse_run"


def test_project_errors(tmp_path, wordcount_project):
    with pytest.raises(ProjectError, match="no such directory"):
        load_project(tmp_path / "nope")
    (tmp_path / "topologies").mkdir()
    with pytest.raises(ProjectError, match="no src/ directory"):
        load_project(tmp_path)
    with pytest.raises(ProjectError, match="no such topology file"):
        load_project(wordcount_project, "other")


def test_options_merge_and_parse(wordcount_project):
    project = load_project(wordcount_project)
    parsed = parse_options(["topology.workers=2", "planner.algorithm=even", "flag=true", "path=/tmp/x"])
    assert parsed == {"topology.workers": 2, "planner.algorithm": "even", "flag": True, "path": "/tmp/x"}
    merged = topology_options(project, "wc", parsed)
    assert merged["topology.workers"] == 2
    assert merged["topology.original_name"] == "wordcount"
    with pytest.raises(SubmitError, match="KEY=VALUE"):
        parse_options(["novalue"])


def test_nimbus_address_and_streamparse_run():
    assert parse_nimbus("10.0.0.1:7000") == ("10.0.0.1", 7000)
    assert parse_nimbus("nimbus") == ("nimbus", 6627)
    runner = streamparse_run_for(None)
    assert runner.is_absolute() and runner.name == "streamparse_run"
    assert streamparse_run_for(sys.executable).parent == Path(sys.executable).absolute().parent
    with pytest.raises(SubmitError, match="streamparse_run not found"):
        streamparse_run_for("/nonexistent/bin/python")


def test_structure_options_change_parallelism_and_reject_unknown_components():
    from storm_planner.submit.operations import SubmitError, apply_structure_options

    trends = Path(__file__).resolve().parents[2] / "topologies" / "trends"
    project = load_project(trends)
    summary = apply_structure_options(project, {"trends.parallelism.count": 4, "trends.top_k": 3})
    assert summary == "count x4"
    assert project.topology_class.thrift_bolts["count"].common.parallelism_hint == 4
    with pytest.raises(SubmitError, match="no component 'nope'"):
        apply_structure_options(project, {"trends.parallelism.nope": 2})
    assert apply_structure_options(project, {}) == ""  # defaults restored, nothing reported
    assert project.topology_class.thrift_bolts["count"].common.parallelism_hint == 2


def test_what_streamparse_prints_while_submitting_goes_to_stderr(monkeypatch, capsys, wordcount_project):
    """streamparse's upload and submit helpers print() their progress; a command's standard output carries
    its answer alone, so submit_project sends whatever they print to standard error."""
    import contextlib
    import types

    from storm_planner.submit import operations

    class Client:
        def getClusterInfo(self):
            return types.SimpleNamespace(topologies=[])

    def upload(client, jar):
        print(f"Uploading topology jar {jar}")
        return "/inbox/stormjar.jar"

    def submit_topology(name, *args, **kwargs):
        print(f"Submitting {name} topology to nimbus...done")

    monkeypatch.setattr(operations, "nimbus_client", lambda *a, **k: contextlib.nullcontext(Client()))
    monkeypatch.setattr(operations, "_streamparse_submit",
                        lambda: types.SimpleNamespace(_upload_jar=upload, _submit_topology=submit_topology))
    operations.submit_project(wordcount_project, nimbus="127.0.0.1:1", name="quiet", progress=lambda m: None)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Uploading topology jar" in captured.err and "Submitting quiet topology" in captured.err
