"""The Storm lines the kit supports: 2.8.3 (the default), 2.7.1 and 2.6.4.

Maven builds and tests the plugin and the metrics hook on each line (``make java-test``); here: the
lines named in one place agree, ``cluster up --storm-version`` picks the plugin built for the line, and
(marked ``cluster``) the demo's topology runs planned on a local cluster of the oldest line.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storm_planner import demo
from storm_planner.cli import main
from storm_planner.cluster import storm_lines
from storm_planner.cluster.description import DescriptionError, default_description
from storm_planner.cluster.locations import PLUGIN_JAR_ENV, default_plugin_jar
from storm_planner.cluster.storm_home import DEFAULT_STORM_VERSION

REPO = Path(__file__).resolve().parents[2]
OLDEST = "2.6.4"


def other_lines() -> list[str]:
    """The lines ``make java-test`` builds beside the default one."""
    makefile = (REPO / "Makefile").read_text()
    return re.search(r"^OTHER_STORM_LINES\s*:=\s*(.+)$", makefile, re.M).group(1).split()


def test_the_lines_tested_are_the_lines_the_compatibility_table_names():
    pom = re.search(r"<storm.version>([^<]+)</storm.version>", (REPO / "pom.xml").read_text()).group(1)
    assert pom == DEFAULT_STORM_VERSION
    assert OLDEST in other_lines() and DEFAULT_STORM_VERSION not in other_lines()
    readme = (REPO / "storm-scheduler" / "README.md").read_text()
    table = readme.split("## Storm versions", 1)[1].split("\n## ", 1)[0]
    rows = [m.group(1) for m in (re.match(r"\|\s*(\d+\.\d+\.\d+)", line) for line in table.splitlines()) if m]
    assert sorted(rows) == sorted([DEFAULT_STORM_VERSION, *other_lines()])


def test_each_line_builds_beside_the_default_lines_jars():
    assert storm_lines.build_dir(DEFAULT_STORM_VERSION) == "target"
    assert storm_lines.build_dir("2.6.4") == "target/storm-2.6.4"
    assert storm_lines.line_jar(REPO, "storm-scheduler", "p.jar", "2.7.1") == \
        REPO / "storm-scheduler" / "target" / "storm-2.7.1" / "p.jar"


def test_the_default_line_and_a_jar_named_in_the_environment_keep_the_default_plugin(monkeypatch):
    monkeypatch.delenv(PLUGIN_JAR_ENV, raising=False)
    assert storm_lines.plugin_jar_for(DEFAULT_STORM_VERSION) == default_plugin_jar()
    monkeypatch.setenv(PLUGIN_JAR_ENV, "/opt/plugin.jar")
    assert storm_lines.plugin_jar_for(OLDEST) == Path("/opt/plugin.jar")


def test_another_line_gets_the_plugin_built_for_it_built_the_first_time(monkeypatch, tmp_path):
    monkeypatch.delenv(PLUGIN_JAR_ENV, raising=False)
    monkeypatch.setattr(storm_lines, "repo_root", lambda: tmp_path)
    commands = []

    def fake_maven(command, **kwargs):
        commands.append(command)
        jar = tmp_path / "storm-scheduler" / "target" / "storm-2.7.1" / "storm-planner-scheduler.jar"
        jar.parent.mkdir(parents=True)
        jar.write_bytes(b"jar")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(storm_lines.shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(storm_lines.subprocess, "run", fake_maven)
    said = []
    jar = storm_lines.plugin_jar_for("2.7.1", said.append)
    assert jar == tmp_path / "storm-scheduler" / "target" / "storm-2.7.1" / "storm-planner-scheduler.jar"
    assert commands == [["/usr/bin/mvn", "-B", "-q", "-f", str(tmp_path / "pom.xml"),
                         "-pl", "storm-scheduler,storm-metrics", "-Dstorm.version=2.7.1",
                         "-Dstorm.build.dir=target/storm-2.7.1", "-DskipTests", "package"]]
    assert storm_lines.plugin_jar_for("2.7.1", said.append) == jar and len(commands) == 1   # built once
    assert any("STORM_PLANNER_METRICS_JAR=" in line and "storm-2.7.1" in line for line in said)


def test_a_failed_line_build_says_what_maven_said(monkeypatch, tmp_path):
    monkeypatch.delenv(PLUGIN_JAR_ENV, raising=False)
    monkeypatch.setattr(storm_lines, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(storm_lines.shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(storm_lines.subprocess, "run", lambda command, **kw: subprocess.CompletedProcess(
        command, 1, "", "[ERROR] storm-server:jar:9.9.9 was not found"))
    with pytest.raises(storm_lines.ClusterError, match="Storm 9.9.9:\n.*9.9.9 was not found"):
        storm_lines.plugin_jar_for("9.9.9", lambda message: None)


def test_storm_version_changes_the_line_and_refuses_what_is_not_a_version():
    assert default_description().with_storm_version("2.6.4").storm_version == "2.6.4"
    with pytest.raises(DescriptionError, match="not a Storm version"):
        default_description().with_storm_version("2.6.4/../x")


def test_cluster_up_refuses_a_storm_version_that_is_not_one_before_starting_anything(capsys, tmp_path):
    assert main(["cluster", "up", "--state-dir", str(tmp_path), "--storm-version", "2.6;rm"]) == 2
    assert "storm_version: '2.6;rm' is not a Storm version" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.cluster
@pytest.mark.slow
def test_the_demo_runs_planned_on_a_cluster_of_the_oldest_line(tmp_path, monkeypatch, capsys):
    """``cluster up --storm-version 2.6.4`` (the Storm home from Maven for 2.6.4, Nimbus with the plugin
    built for it) and ``make demo``'s topology, Twitter trends, with the metrics hook built for 2.6.4."""
    from storm_planner.cluster.launcher import LocalCluster
    from storm_planner.cluster.probes import free_port_offset
    from storm_planner.metrics.hookjar import JAR_ENV
    from storm_planner.metrics.windows import fetch_windows
    from storm_planner.planners import available
    from storm_planner.submit import nimbus

    base = default_description()
    offset = free_port_offset(base)
    name = f"storm-{OLDEST}-{offset}"
    state = tmp_path / "cluster"
    command = [sys.executable, "-m", "storm_planner", "cluster"]
    where = ["--state-dir", str(state), "--name", name]
    try:
        up = subprocess.run([*command, "up", *where, "--port-offset", str(offset), "--storm-version", OLDEST,
                             "--no-dashboard"], capture_output=True, text=True, timeout=900)
        assert up.returncode == 0, up.stdout + up.stderr
        cluster = LocalCluster(base.with_offset(offset).with_name(name).with_storm_version(OLDEST), state)
        addresses = cluster.saved_addresses()
        assert addresses is not None and addresses.storm_home.endswith(f"storm-{OLDEST}")
        summary = nimbus.cluster_summary(addresses.nimbus_host, addresses.nimbus_port)
        assert {n.version for n in summary.nimbuses} == {OLDEST}
        assert {s.version for s in summary.supervisors} == {OLDEST}

        monkeypatch.setenv(JAR_ENV, str(storm_lines.line_jar(REPO, storm_lines.METRICS_MODULE,
                                                             storm_lines.METRICS_JAR, OLDEST)))
        algorithm = "topdown" if "topdown" in available() else "even"
        sink = state / "demo" / "trends.jsonl"
        project = REPO / "topologies" / "trends"
        topology_id = demo.submit_trends(addresses.nimbus, project, sink, algorithm, 10, rate=0.0)
        demo.print_plan(cluster, topology_id)
        demo.print_top_k(sink, project, 10, timeout_s=240)
        shown = capsys.readouterr().out
        assert f"by {algorithm}" in shown and " NO " not in shown, shown
        assert "this equals a direct count over the replay feed" in shown, shown
        with nimbus.nimbus_client(addresses.nimbus_host, addresses.nimbus_port) as client:
            status = client.getTopologyInfo(topology_id).sched_status
        assert status.startswith(f"Planned by storm-planner (algorithm {algorithm}"), status
        windows = {}
        deadline = time.monotonic() + 90
        while not windows and time.monotonic() < deadline:
            windows = fetch_windows(addresses.zookeeper, topology_id)
            time.sleep(2)
        assert windows, "the metrics hook built for 2.6.4 published no window"
    finally:
        down = subprocess.run([*command, "down", *where], capture_output=True, text=True, timeout=180)
        assert down.returncode == 0, down.stdout + down.stderr
