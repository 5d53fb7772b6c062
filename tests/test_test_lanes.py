"""``scripts/test-lanes.sh`` (make test's pytest in two lanes): both lanes run, each lane's report is shown,
and the exit status fails when either lane fails. Run on a tiny project of its own (its own pytest.ini)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "test-lanes.sh"


def project(tmp_path: Path, cluster_passes: bool, other_passes: bool, compose_passes: bool = True) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    cluster: a cluster test\n"
                                         "    compose: a compose test\n")
    (tmp_path / "test_lanes_example.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.cluster\n"
        f"def test_in_the_cluster_lane():\n    assert {cluster_passes}\n\n"
        f"def test_in_the_other_lane():\n    assert {other_passes}\n\n"
        "@pytest.mark.cluster\n@pytest.mark.compose\n"
        f"def test_in_lane_one_after_the_others():\n    assert {compose_passes}\n")
    return tmp_path


def lanes(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), sys.executable, "-c", str(root / "pytest.ini"), "-q", "-rA", str(root)],
                          cwd=root, capture_output=True, text=True, timeout=120)


def test_both_lanes_pass_and_both_reports_are_shown(tmp_path):
    run = lanes(project(tmp_path, cluster_passes=True, other_passes=True))
    assert run.returncode == 0, run.stdout + run.stderr
    # One test in each of the three runs: each report says one passed and two deselected; the compose test
    # runs in lane 1, after the others.
    assert run.stdout.count("1 passed, 2 deselected") == 3, run.stdout
    lane_one, lane_two = run.stdout.split("the tests with a Storm cluster (lane 2")
    compose = "PASSED test_lanes_example.py::test_in_lane_one_after_the_others"
    assert compose in lane_one.split("the docker-compose cluster's tests")[1] and compose not in lane_two
    assert "lanes: other tests exit 0, cluster tests exit 0" in run.stdout


@pytest.mark.parametrize("failing", ["test_in_the_cluster_lane", "test_in_the_other_lane",
                                     "test_in_lane_one_after_the_others"])
def test_a_failure_in_any_run_fails_the_whole(tmp_path, failing):
    run = lanes(project(tmp_path, cluster_passes=failing != "test_in_the_cluster_lane",
                        other_passes=failing != "test_in_the_other_lane",
                        compose_passes=failing != "test_in_lane_one_after_the_others"))
    assert run.returncode != 0, run.stdout
    assert f"FAILED test_lanes_example.py::{failing}" in run.stdout, run.stdout


def test_an_interrupt_stops_both_lanes_and_their_teardown_runs(tmp_path):
    """SIGINT (Ctrl-C) or SIGTERM to the script reaches the cluster lane's pytest, whose fixtures tear down
    (a real cluster test stops its cluster there), instead of the lane running on to its end."""
    root = project(tmp_path, cluster_passes=True, other_passes=True)
    torn_down = tmp_path / "torn-down"
    (root / "test_lanes_example.py").write_text(
        "import time\nimport pytest\n\n"
        "@pytest.fixture\ndef cluster():\n    try:\n        yield\n    finally:\n"
        f"        open({str(torn_down)!r}, 'w').close()\n\n"
        "@pytest.mark.cluster\ndef test_in_the_cluster_lane(cluster):\n    time.sleep(120)\n\n"
        "def test_in_the_other_lane():\n    pass\n")
    for signal_number in (signal.SIGINT, signal.SIGTERM):
        torn_down.unlink(missing_ok=True)
        script = subprocess.Popen(["bash", str(SCRIPT), sys.executable, "-c", str(root / "pytest.ini"), "-q",
                                   str(root)], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(6)   # both lanes collected and the cluster lane's test asleep
        script.send_signal(signal_number)
        output, _ = script.communicate(timeout=60)
        assert torn_down.exists(), output
        assert script.returncode != 0, output
