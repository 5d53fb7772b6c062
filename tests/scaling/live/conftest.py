"""A stand-in Storm worker: a real process started with a worker JVM's arguments, with real children.

Its command line ends as a worker's does (``org.apache.storm.daemon.worker.Worker <topology id>
<assignment> <supervisor port> <port> <worker id>``), it writes nothing itself: the test writes its
``worker.pid`` and ``worker.log`` where a supervisor's worker would (``<log dir>/workers-artifacts/
<topology id>/<port>/``). Each child prints its pid; a child may run ``child_code`` (it gets the flag
file's path as ``sys.argv[1]``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from storm_planner.scaling.live.instances import WORKER_MAIN

SLEEPER = "import time; time.sleep(120)"
WORKER_CODE = """
import subprocess, sys
children = [subprocess.Popen([sys.executable, '-c', sys.argv[3], sys.argv[2]]) for _ in range(int(sys.argv[1]))]
print(' '.join(str(c.pid) for c in children), flush=True)
for child in children:
    child.wait()
"""


@dataclass
class FakeWorker:
    process: subprocess.Popen
    children: list[int]
    port_dir: Path
    flag: Path
    others: list[int] = field(default_factory=list)  # processes the children started

    @property
    def pid(self) -> int:
        return self.process.pid

    def write_log(self, text: str) -> None:
        (self.port_dir / "worker.pid").write_text(str(self.pid))
        (self.port_dir / "worker.log").write_text(text)

    def kill(self) -> None:
        for pid in self.others + self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.process.kill()
        self.process.wait()


@pytest.fixture
def storm_worker(tmp_path):
    """``storm_worker(children, topology_id, port, child_code)`` starts a fake worker; all are killed after."""
    started: list[FakeWorker] = []

    def start(children: int = 2, topology_id: str = "topo-1-1", port: str = "6700",
              child_code: str = SLEEPER) -> FakeWorker:
        port_dir = tmp_path / "workers-artifacts" / topology_id / port
        port_dir.mkdir(parents=True, exist_ok=True)
        flag = tmp_path / f"flag-{port}"
        process = subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE, str(children), str(flag), child_code,
             WORKER_MAIN, topology_id, "assignment-1", "6627", port, "worker-id-1"],
            stdout=subprocess.PIPE, text=True)
        worker = FakeWorker(process, [int(pid) for pid in process.stdout.readline().split()], port_dir, flag)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()
