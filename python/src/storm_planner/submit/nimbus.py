"""Talking to a running cluster: Nimbus over Thrift, supervisors' records in ZooKeeper.

Nimbus is reached with streamparse's thriftpy2 client (framed transport,
binary protocol): the same client ``storm_planner.submit`` uses. Storm 2.8
sends fields that streamparse's older IDL does not know; thriftpy2 skips
them, and everything we read (cluster summary, topology info) is in both.

The cluster summary has each supervisor's capacities but not its
``supervisor.scheduler.meta``; that lives in the ``SupervisorInfo`` each
supervisor writes to ZooKeeper (``<root>/supervisors/<id>``), a gzipped
Thrift struct that :func:`supervisors_in_zookeeper` decodes.
"""
from __future__ import annotations

import gzip
import logging
import socket
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def _thrift():
    # streamparse warns about pkg_resources on import; the warning is not ours to fix.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from streamparse import thrift
    return thrift


def storm_thrift():
    """Storm's Thrift IDL as streamparse loads it: its structs, e.g. ``RebalanceOptions``."""
    return _thrift()


@contextmanager
def nimbus_client(host: str, port: int, timeout_ms: int = 10000) -> Iterator[Any]:
    """A connected Nimbus Thrift client, closed on exit."""
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.rpc import make_client
    from thriftpy2.transport import TFramedTransportFactory

    client = make_client(
        _thrift().Nimbus,
        host=host,
        port=port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
        timeout=timeout_ms,
    )
    try:
        yield client
    finally:
        client.close()


@dataclass(frozen=True)
class SupervisorView:
    """A supervisor as the cluster sees it."""

    id: str
    host: str
    slots: int
    used_slots: int
    cpu: float | None
    memory_mb: float | None
    meta: dict[str, str] = field(default_factory=dict)
    ports: tuple[int, ...] = ()


def cluster_summary(host: str, port: int, timeout_ms: int = 5000):
    """Nimbus' ``getClusterInfo()`` (a thriftpy2 ``ClusterSummary``)."""
    with nimbus_client(host, port, timeout_ms) as client:
        return client.getClusterInfo()


def supervisors_from_summary(summary) -> list[SupervisorView]:
    views = []
    for sup in summary.supervisors or []:
        resources = sup.total_resources or {}
        views.append(
            SupervisorView(
                id=sup.supervisor_id,
                host=sup.host,
                slots=sup.num_workers,
                used_slots=sup.num_used_workers,
                cpu=resources.get("cpu.pcore.percent"),
                memory_mb=resources.get("memory.mb"),
            )
        )
    return sorted(views, key=lambda v: v.id)


def supervisors_in_zookeeper(
    zk_hosts: str, root: str = "/storm", timeout_s: float = 5.0
) -> dict[str, SupervisorView]:
    """Every supervisor's heartbeat record in ZooKeeper, decoded (meta included)."""
    from kazoo.client import KazooClient
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.utils import deserialize

    thrift = _thrift()
    # kazoo logs every connect and close at INFO; a status call should not.
    quiet = logging.getLogger("storm_planner.cluster.kazoo")
    quiet.setLevel(logging.WARNING)
    zk = KazooClient(hosts=zk_hosts, timeout=timeout_s, logger=quiet)
    zk.start(timeout=timeout_s)
    try:
        path = f"{root.rstrip('/')}/supervisors"
        if not zk.exists(path):
            return {}
        views = {}
        for child in zk.get_children(path):
            data, _ = zk.get(f"{path}/{child}")
            info = deserialize(thrift.SupervisorInfo(), _maybe_gunzip(data), TBinaryProtocolFactory())
            resources = info.resources_map or {}
            views[child] = SupervisorView(
                id=child,
                host=info.hostname,
                slots=len(info.meta or []),
                used_slots=len(info.used_ports or []),
                cpu=resources.get("cpu.pcore.percent"),
                memory_mb=resources.get("memory.mb"),
                meta=dict(info.scheduler_meta or {}),
                ports=tuple(int(p) for p in info.meta or []),
            )
        return views
    finally:
        zk.stop()
        zk.close()


def _maybe_gunzip(data: bytes) -> bytes:
    # Storm's default storm.meta.serialization.delegate gzips the Thrift bytes.
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def zookeeper_ok(host: str, port: int, timeout_s: float = 2.0) -> bool:
    """ZooKeeper answers the ``ruok`` four-letter word with ``imok``."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(b"ruok")
            sock.shutdown(socket.SHUT_WR)
            reply = sock.recv(16)
    except OSError:
        return False
    # "ruok is not executed because it is not in the whitelist" still proves life.
    return bool(reply)


def tcp_open(host: str, port: int, timeout_s: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False
