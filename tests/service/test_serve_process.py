"""``storm-planner serve`` as Nimbus' plugin runs it: a process that stops on SIGTERM, worker process and all."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from storm_planner.service.transport.client import connect, health
from storm_planner.service.transport.server import free_port
from storm_planner_bench.sim.scale import plan_request


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds} s")


def children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(line) for line in out.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_the_service_stops_on_sigterm_with_its_worker_process_after_a_solver_plan(tmp_path):
    port = free_port()
    with open(tmp_path / "serve.log", "w") as log:  # the child keeps its own descriptor
        service = subprocess.Popen([sys.executable, "-m", "storm_planner", "serve", "--port", str(port)],
                                   stdout=subprocess.DEVNULL, stderr=log)
    try:
        def up() -> bool:
            try:
                return health(port=port).status == "ok"
            except Exception:
                return False

        wait_for(up, 30, "the service answers health")
        with connect(port=port, timeout_ms=60_000) as client:
            (plan,) = client.plan(plan_request(40, 4, 2, "milp", deadline_ms=30_000)).plans
        assert plan.error is None and len(plan.assignments) == 40
        helpers = children(service.pid)  # the forkserver and its resource tracker (the worker is the forkserver's)
        assert helpers

        service.send_signal(signal.SIGTERM)
        service.wait(timeout=20)
        wait_for(lambda: not any(alive(pid) for pid in helpers), 20, "the worker's processes exit")
        assert "planner service stopping (SIGTERM)" in (tmp_path / "serve.log").read_text()
    finally:
        if service.poll() is None:
            service.kill()
