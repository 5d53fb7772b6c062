"""Small probes the cluster is started and checked with: addresses, free ports, health, log tails."""
from __future__ import annotations

import random
import socket
import urllib.request
from pathlib import Path

from storm_planner.submit import nimbus

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
        from storm_planner.service.client import health
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
