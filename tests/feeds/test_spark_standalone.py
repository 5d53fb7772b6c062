"""A replay feed built on a Spark standalone cluster equals the one built on a local Spark.

The cluster is a master and one worker on loopback, started from the installed pyspark's
``bin/spark-class`` (the wheel has no ``sbin`` start scripts), each in its own process group so that
teardown stops them, and the executors the worker started, whatever the test did.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from storm_planner.feeds.build import build_feeds
from storm_planner.streaming.feedio import iter_feed_records

RECORDS, SEED, PARTITIONS = 3000, 11, 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_alive(pgid: int) -> list[int]:
    """The processes still in process group ``pgid``."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(stat.parent.name))
    return alive


def stop_group(process: subprocess.Popen) -> list[int]:
    """Stop a daemon's whole process group (TERM, then KILL); the processes left, if any."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if group_alive(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(1)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
    return group_alive(process.pid)


def wait_for(condition, timeout_s: float, what: str, logs: list[Path]):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            value = condition()
            if value:
                return value
        time.sleep(0.5)
    tails = "\n".join(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
                      for log in logs if log.exists())
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}\n{tails}")


@pytest.fixture
def standalone_cluster(tmp_path):
    """``spark://127.0.0.1:PORT``: a master and one worker (1 core, 1 GB) on loopback."""
    pyspark = pytest.importorskip("pyspark")
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable}
    port, master_ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    commands = {
        "master": [str(spark_class), "org.apache.spark.deploy.master.Master",
                   "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)],
        "worker": [str(spark_class), "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                   "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
                   "--work-dir", str(tmp_path / "worker"), url],
    }
    logs = [tmp_path / f"{name}.log" for name in commands]
    started: list[subprocess.Popen] = []
    try:
        for (name, command), log in zip(commands.items(), logs):
            with open(log, "w") as out:
                started.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                                cwd=tmp_path, start_new_session=True))
            if name == "master":
                wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close() or True,
                         120, "the master to listen", logs)

        def workers_alive() -> int:
            with urllib.request.urlopen(f"http://127.0.0.1:{master_ui}/json/", timeout=2) as answer:
                return json.load(answer)["aliveworkers"]

        wait_for(workers_alive, 120, "the worker to register with the master", logs)
        yield url
    finally:
        left = {process.args[1]: stop_group(process) for process in reversed(started)}
        assert not any(left.values()), f"processes left running: {left}"


@pytest.mark.slow
def test_a_feed_built_on_a_standalone_cluster_equals_the_local_build(standalone_cluster, spark, tmp_path):
    out = tmp_path / "on-cluster"
    run = subprocess.run(
        [sys.executable, "-m", "storm_planner", "feeds", "build", "tweets", "--synthetic",
         "--records", str(RECORDS), "--seed", str(SEED), "--partitions", str(PARTITIONS), "--out", str(out),
         "--master", standalone_cluster],
        capture_output=True, text=True, timeout=600, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"tweets: {RECORDS} records" in run.stdout

    local = tmp_path / "local"
    build_feeds(spark, "tweets", local, synthetic=True, records=RECORDS, seed=SEED, partitions=PARTITIONS,
                progress=lambda message: None)
    # Record for record, in the same order. Where the parts split may differ: Spark samples the range
    # partition bounds with a seed that counts the session's earlier shuffles.
    assert list(iter_feed_records(out)) == list(iter_feed_records(local))
    summaries = [json.loads((feed / "_feed.json").read_text()) for feed in (out, local)]
    for summary in summaries:
        del summary["seconds"], summary["bytes"]
    assert summaries[0] == summaries[1] and summaries[0]["records"] == RECORDS
    assert summaries[0]["parts"] == len(list(out.glob("part-*.jsonl.gz"))) == PARTITIONS


@pytest.mark.parametrize("master, loopback", [
    ("local[*]", True), ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True),
    ("spark://[::1]:7077", True), ("spark://spark-master:7077", False), ("spark://10.1.2.3:7077", False),
    ("yarn", False),
])
def test_a_master_on_loopback_gets_a_driver_on_loopback(master, loopback):
    from storm_planner.feeds.spark import on_loopback
    assert on_loopback(master) is loopback
