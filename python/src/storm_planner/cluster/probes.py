"""Small probes the cluster is started and checked with: addresses, free ports, health, log tails."""
from __future__ import annotations

import random
import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from storm_planner.progress import Progress
from storm_planner.submit import nimbus

from . import daemons
from .description import ClusterDescription
from .errors import ClusterError


def parse_host_port(value: str, *, what: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"{what}: expected HOST:PORT, got {value!r}")
    return host, int(port)


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    # Something may listen on the wildcard address only; a connect finds it.
    return not nimbus.tcp_open(host, port, 0.2)


def free_port_offset(description: ClusterDescription, *, low: int = 10000, high: int = 24000,
                     attempts: int = 200) -> int:
    """An offset that puts every port of the cluster on a free port (below the ephemeral range)."""
    rng = random.Random()
    for _ in range(attempts):
        offset = rng.randrange(low, high, 10)
        ports = [p + offset for p in description.port_list()]
        if max(ports) < 32768 and all(port_free(description.host, p) for p in ports):
            return offset
    raise ClusterError("could not find a free range of ports for a test cluster")


def planner_ok(host: str, port: int) -> bool:
    try:
        from storm_planner.service.transport.client import health
    except ImportError:
        return nimbus.tcp_open(host, port)
    try:
        return health(host, port, timeout_ms=2000).status == "ok"
    except Exception:  # noqa: BLE001 - not up yet
        return False


def http_ok(url: str, timeout_s: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status == 200
    except Exception:  # noqa: BLE001 - not up yet
        return False


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text[-lines:])


def nimbus_leader(host: str, port: int) -> bool:
    """Nimbus answers and one Nimbus is the leader."""
    try:
        summary = nimbus.cluster_summary(host, port, 3000)
    except Exception:  # noqa: BLE001 - not up yet
        return False
    return any(n.isLeader for n in summary.nimbuses or [])


def supervisor_registered(host: str, port: int, supervisor_id: str) -> bool:
    """Nimbus knows the supervisor and its resources."""
    try:
        summary = nimbus.cluster_summary(host, port, 3000)
    except Exception:  # noqa: BLE001 - not up yet
        return False
    return any(s.id == supervisor_id and s.cpu for s in nimbus.supervisors_from_summary(summary))


def wait_healthy(name: str, check: Callable[[], bool], timeout_s: float, *, progress: Progress,
                 record: daemons.DaemonRecord | None = None, log4j_log: Path | None = None,
                 detail: Callable[[], str] | None = None) -> None:
    """Poll ``check`` until it holds, saying so (and every 15 s that it still waits).

    Raises :class:`ClusterError` quoting the daemon's output (``record.log``) and its log4j log when the
    daemon exits first or ``timeout_s`` passes.
    """
    started = time.monotonic()
    next_note = started + 15
    while True:
        if check():
            extra = f"; {detail()}" if detail else ""
            progress(f"  {name:<22} healthy ({time.monotonic() - started:.1f}s{extra})")
            return
        if record is not None and not daemons.is_alive(record):
            raise ClusterError(f"{name} exited during start-up ({daemons.exit_status(record)}):\n"
                               f"{log_tail(Path(record.log))}" + _log4j_tail(log4j_log))
        now = time.monotonic()
        if now - started > timeout_s:
            raise ClusterError(f"{name} not healthy after {timeout_s:.0f}s"
                               + (f":\n{log_tail(Path(record.log))}" if record else "")
                               + _log4j_tail(log4j_log))
        if now >= next_note:
            progress(f"  {name:<22} waiting ({now - started:.0f}s)")
            next_note = now + 15
        time.sleep(0.5)


def _log4j_tail(path: Path | None) -> str:
    return f"\n--- {path}:\n{log_tail(path)}" if path is not None and path.exists() else ""
