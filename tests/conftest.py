"""Shared fixtures. Tests that start real daemons are marked ``cluster``.

``zookeeper`` starts a real ZooKeeper from the Storm home's jars (the same server the local
cluster runs: Storm's shaded ``ZooKeeperServerMain``) on a free port, with its data in the
test's tmp dir; ``own_zookeeper.stop()`` / ``.start()`` simulate an outage and a recovery on
the same address and data.
"""
from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def small_problem() -> dict:
    """The small problem file (docs/formats.md), as a dict."""
    return json.loads((REPO / "tests" / "data" / "small-problem.json").read_text())


ZK_MAIN = "org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            sock.shutdown(socket.SHUT_WR)
            return sock.recv(4) == b"imok"
    except OSError:
        return False


class ZooKeeperServer:
    def __init__(self, directory: Path) -> None:
        from storm_planner.cluster.storm_home import ensure_storm_home

        self.home = ensure_storm_home()
        self.port = _free_port()
        self.directory = directory
        (directory / "data").mkdir(parents=True, exist_ok=True)
        self.config = directory / "zoo.cfg"
        self.config.write_text(
            f"tickTime=500\ndataDir={directory / 'data'}\nclientPort={self.port}\n"
            f"clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n"
            # No fsync per write: a test's ZooKeeper needs no durability beyond the page cache (an outage
            # here is a killed process, not a lost machine), and a CI machine's busy disk stalled a fsync
            # long enough that a new session was not answered in 30 s.
            f"maxSessionTimeout=10000\nforceSync=no\n"
        )
        self.process: subprocess.Popen | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 90.0) -> ZooKeeperServer:
        # The child holds its own copy of the descriptor; ours closes once it has started.
        with open(self.directory / "zookeeper.out", "ab") as log:
            self.process = subprocess.Popen(
                ["java", "-Xmx128m", "-cp", f"{self.home.lib}/*", ZK_MAIN, str(self.config)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        # Ready means a client session opens, not only that "ruok" is answered: on a loaded machine the
        # first session took longer than a test's connect allows, and that wait belongs to the fixture.
        while not (_answers(self.port) and _session_opens(self.hosts, deadline - time.monotonic())):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ZooKeeper did not start: {(self.directory / 'zookeeper.out').read_text()[-2000:]}")
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None


def _session_opens(hosts: str, timeout_s: float) -> bool:
    """Whether a kazoo session to ``hosts`` opens within ``timeout_s`` (closed again at once)."""
    from kazoo.client import KazooClient
    from kazoo.handlers.threading import KazooTimeoutError

    client = KazooClient(hosts=hosts, timeout=max(1.0, timeout_s))
    try:
        client.start(timeout=max(1.0, timeout_s))
        return True
    except KazooTimeoutError:
        return False
    finally:
        client.stop()
        client.close()


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """One ZooKeeper for the session (tests keep apart by using their own paths, see ``zk_paths``)."""
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_zookeeper(tmp_path):
    """A ZooKeeper of this test alone: it may stop and start it."""
    server = ZooKeeperServer(tmp_path / "zookeeper").start()
    try:
        yield server
    finally:
        server.stop()
