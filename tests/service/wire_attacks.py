"""Raw Thrift frames for the service's attack tests: what a hostile or broken client can put on the wire."""
from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.transport import TCyMemoryBuffer

from storm_planner.service.transport.contract import planner_thrift as T

VERSION_1_CALL = 0x80010001
T_STRUCT, T_LIST, T_STOP = 12, 15, 0


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def plan_call_of_empty_executors(count: int) -> bytes:
    """A ``plan`` call whose one topology lists ``count`` executors, each an empty struct: one byte apiece on
    the wire, a Python object of a hundred bytes once decoded."""
    header = struct.pack(">iI", VERSION_1_CALL - 2**32, 4) + b"plan" + struct.pack(">i", 0)
    executors = struct.pack(">bhbi", T_LIST, 5, T_STRUCT, count) + bytes(count)   # count x STOP
    topology = executors + bytes([T_STOP])
    request = struct.pack(">bhbi", T_LIST, 3, T_STRUCT, 1) + topology + bytes([T_STOP])
    args = struct.pack(">bh", T_STRUCT, 1) + request + bytes([T_STOP])
    return header + args + bytes([T_STOP])


def read_plan_reply(sock: socket.socket):
    """The ``plan_result`` the service answered on ``sock``."""
    (size,) = struct.unpack(">i", receive(sock, 4))
    protocol = TCyBinaryProtocolFactory().get_protocol(TCyMemoryBuffer(receive(sock, size)))
    protocol.read_message_begin()
    result = T.PlannerService.plan_result()
    protocol.read_struct(result)
    return result


def receive(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return data


def closed_by_peer(sock: socket.socket) -> bool:
    """True when the service closed the connection (end of file or reset), False on the client's timeout."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def rss_mb() -> float:
    """This process' resident memory (the service under test runs in it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class PeakRss:
    """The most this process' resident memory grew while inside (sampled every 5 ms by a thread: memory
    freed before the end still counts)."""

    def __init__(self) -> None:
        self.grown_mb = 0.0
        self._stop = threading.Event()

    def __enter__(self) -> PeakRss:
        start = rss_mb()

        def sample():
            while not self._stop.wait(0.005):
                self.grown_mb = max(self.grown_mb, rss_mb() - start)

        self._sampler = threading.Thread(target=sample, daemon=True)
        self._sampler.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sampler.join()
