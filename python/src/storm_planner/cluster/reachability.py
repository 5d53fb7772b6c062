"""Do the emulated network's supervisors reach each other over TCP? Checked before ``cluster up`` says healthy.

Supervisors reach the master through the bridge's own address (iptables ``INPUT``), so a Nimbus that
sees every supervisor proves nothing about supervisor-to-supervisor traffic, which the bridge forwards
(iptables ``FORWARD`` under bridge netfilter). When that is dropped, workers on different supervisors
retry Netty connections forever and no tuple is ever acked, on a cluster that looks healthy.

The probe runs one small Python process inside each supervisor's namespace: it listens on an ephemeral
port of the namespace's address, then connects to every other namespace's listener, each attempt bounded
by ``timeout_s`` (default :data:`DEFAULT_TIMEOUT_S`; ``cluster up --network-probe-timeout SECS``). A
connect that completes has crossed the bridge both ways. Any pair that does not raises a
:class:`ClusterError` naming both supervisors, their addresses and the likely cause.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from . import netfilter
from .errors import ClusterError
from .network import Link, NetworkLayout, enter_command

DEFAULT_TIMEOUT_S = 10.0
# Bounds the probe processes' own start and exit (a Python start on a loaded machine), not the network.
_PROCESS_TIMEOUT_S = 120.0

# argv: address, connect timeout. Prints its port, reads the targets ([[address, port], ...]) as one
# JSON line, prints one JSON list (null: reached, else the error), then listens until stdin closes so
# the peers' connects still find it.
_PROBE = """
import json, socket, sys
from concurrent.futures import ThreadPoolExecutor
server = socket.socket()
server.bind((sys.argv[1], 0))
server.listen(128)
print(server.getsockname()[1], flush=True)
targets = json.loads(sys.stdin.readline())
def reach(target):
    try:
        socket.create_connection(tuple(target), timeout=float(sys.argv[2])).close()
    except OSError as error:
        return f"{type(error).__name__}: {error}"
with ThreadPoolExecutor(max(1, len(targets))) as pool:
    print(json.dumps(list(pool.map(reach, targets))), flush=True)
sys.stdin.read()
"""


@dataclass(frozen=True)
class Blocked:
    """One supervisor that could not open a TCP connection to another's address."""

    source: Link
    target: Link
    error: str

    def describe(self) -> str:
        return (f"supervisor {self.source.supervisor} ({self.source.address}, namespace {self.source.namespace}) "
                f"cannot reach supervisor {self.target.supervisor} ({self.target.address}) over TCP: {self.error}")


def blocked_pairs(layout: NetworkLayout, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[Blocked]:
    """Every ordered pair of supervisors whose TCP connect failed (empty: all reach each other)."""
    links = list(layout.links)
    if len(links) < 2:
        return []
    probes = [_start_probe(link, timeout_s) for link in links]
    try:
        ports = [_read_line(probe, link) for probe, link in zip(probes, links)]
        targets = [[peer for peer in range(len(links)) if peer != index] for index in range(len(links))]
        for probe, peers, link in zip(probes, targets, links):
            _send_targets(probe, link, [[links[p].address, int(ports[p])] for p in peers])
        results = [json.loads(_read_line(probe, link)) for probe, link in zip(probes, links)]
    finally:
        _stop(probes)
    return [Blocked(links[index], links[peer], error)
            for index, peers in enumerate(targets) for peer, error in zip(peers, results[index]) if error]


def check_reachable(layout: NetworkLayout, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Raise a :class:`ClusterError` naming every pair of supervisors that cannot reach each other."""
    blocked = blocked_pairs(layout, timeout_s)
    if blocked:
        raise ClusterError("emulated network: " + "; ".join(b.describe() for b in blocked)
                           + f". The bridge {layout.bridge} does not forward between its namespaces: "
                           + netfilter.likely_cause(layout.bridge))


def _start_probe(link: Link, timeout_s: float) -> subprocess.Popen:
    return subprocess.Popen(enter_command(link) + [sys.executable, "-c", _PROBE, link.address, str(timeout_s)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _send_targets(probe: subprocess.Popen, link: Link, targets: list) -> None:
    try:
        probe.stdin.write(json.dumps(targets) + "\n")
        probe.stdin.flush()
    except OSError:   # it exited; reading its output says why
        _read_line(probe, link)


def _read_line(probe: subprocess.Popen, link: Link) -> str:
    line = probe.stdout.readline()
    if not line:   # it exited: its stderr says why
        raise ClusterError(f"emulated network: the reachability probe in namespace {link.namespace} "
                           f"(supervisor {link.supervisor}) failed: {probe.stderr.read().strip()[-2000:]}")
    return line.strip()


def _stop(probes: list[subprocess.Popen]) -> None:
    for probe in probes:
        try:
            probe.stdin.close()   # the probe's last read ends: it exits
        except OSError:
            pass
    for probe in probes:
        try:
            probe.wait(timeout=_PROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            probe.kill()
            probe.wait()
        for stream in (probe.stdout, probe.stderr):
            stream.close()
