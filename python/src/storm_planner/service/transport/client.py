"""A Python client of the planner service (the plugin's twin, for tools and tests)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from thriftpy2.rpc import make_client

from storm_planner.service.transport.contract import planner_thrift as T
from storm_planner.service.transport.contract import wire_factories


@contextlib.contextmanager
def connect(host: str = "127.0.0.1", port: int = 7627, timeout_ms: int = 5000) -> Iterator[Any]:
    proto_factory, trans_factory = wire_factories()
    client = make_client(
        T.PlannerService, host=host, port=port, timeout=timeout_ms,
        proto_factory=proto_factory, trans_factory=trans_factory,
    )
    try:
        yield client
    finally:
        client.close()


def health(host: str = "127.0.0.1", port: int = 7627, timeout_ms: int = 2000) -> Any:
    """The service's Health struct; raises OSError/TTransportException when it is not up."""
    with connect(host, port, timeout_ms) as client:
        return client.health()
