"""Fixtures for the metrics tests: per-test znode paths and a kazoo client on the shared real
ZooKeeper (``zookeeper`` and ``own_zookeeper`` live in ``tests/conftest.py``), and window documents.
"""
from __future__ import annotations

import pytest


@pytest.fixture
def zk_paths(request):
    """(metrics root, storm root) unique to the test."""
    base = "/" + request.node.name.replace("[", "-").replace("]", "")
    return f"{base}/metrics", f"{base}/storm"


@pytest.fixture
def kazoo(zookeeper):
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zookeeper.hosts, timeout=5)
    client.start(timeout=15)
    try:
        yield client
    finally:
        client.stop()
        client.close()
