"""``storm-planner dashboard``: clear one-line errors, and nothing on standard output."""
from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "storm_planner", "dashboard", *args],
                          capture_output=True, text=True, timeout=60)


def test_needs_a_source():
    result = run()
    assert result.returncode == 2 and result.stdout == ""
    assert "give --plan-log FILE and/or --nimbus" in result.stderr


def test_bad_nimbus_address(tmp_path):
    result = run("--plan-log", str(tmp_path / "p.jsonl"), "--nimbus", "nohostport")
    assert result.returncode == 2 and "--nimbus 'nohostport': expected HOST:PORT" in result.stderr


def test_plan_log_directory(tmp_path):
    result = run("--plan-log", str(tmp_path))
    assert result.returncode == 2 and "is a directory" in result.stderr


def test_help_lists_the_options():
    result = subprocess.run([sys.executable, "-m", "storm_planner", "dashboard", "--help"],
                            capture_output=True, text=True, timeout=60)
    for option in ("--plan-log", "--nimbus", "--zookeeper", "--port"):
        assert option in result.stdout


def test_serving_prints_nothing_on_standard_output(tmp_path):
    """The address and uvicorn's lines go to standard error; standard output stays empty."""
    from .conftest import DATA, free_port, wait_http

    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "storm_planner", "dashboard", "--port", str(port),
                                "--plan-log", str(DATA / "plan-log.jsonl")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/snapshot", process)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=20)
    assert out == ""
    assert f"dashboard: http://127.0.0.1:{port}/" in err
    assert "line 3 is not JSON" in err
