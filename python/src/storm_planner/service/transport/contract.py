"""The Thrift contract, loaded at run time from ``planner.thrift`` with thriftpy2."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import thriftpy2
from thriftpy2 import protocol, transport

IDL_PATH = Path(__file__).with_name("planner.thrift")

# thriftpy2 needs the module name to end in "_thrift" to register it for pickling.
planner_thrift = thriftpy2.load(str(IDL_PATH), module_name="planner_thrift")


def wire_factories() -> tuple[Any, Any]:
    """(protocol, transport) factories of the wire: binary protocol, framed transport, as Storm's Thrift.

    thriftpy2's Cython implementations of both speak the same bytes as the pure
    Python ones, about ten times faster: a 52,000-executor request and its answer
    are millions of fields. The pure Python ones serve where the extension is not built.
    """
    proto = getattr(protocol, "TCyBinaryProtocolFactory", None) or protocol.TBinaryProtocolFactory
    trans = getattr(transport, "TCyFramedTransportFactory", None) or transport.TFramedTransportFactory
    return proto(), trans()
