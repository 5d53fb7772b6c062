"""The service's TCP side: framed calls read under the limits of :mod:`storm_planner.service.transport.caller_limits`.

thriftpy2's own server starts a thread per connection and its framed transport allocates whatever length
a frame header claims. Here:

* a pool of ``max_connections`` workers serves the connections; one more is closed at once (counted);
* a frame's 4-byte length is read first and refused over ``max_frame_mb`` (the connection is closed: its
  body is never read), and frames being read share a budget of one maximal frame across connections;
* the whole frame must arrive within the read timeout (not each read: a client dripping a byte at a time
  cannot hold a worker longer), and a connection idle that long is closed;
* the call is decoded from its frame's bytes alone (a call running past its frame does not parse) and
  counts the structs it builds (:class:`~storm_planner.service.transport.caller_limits.DecodeBudget`).

The wire itself is unchanged: binary protocol in frames, as Storm's Thrift services and the plugin speak.
"""
from __future__ import annotations

import concurrent.futures
import logging
import socket
import threading
import time
from typing import Any

from thriftpy2 import transport as thrift_transport

from storm_planner.core.errors import StormPlannerError
from storm_planner.service.transport.caller_limits import DecodeBudget, FrameRoom, ServiceLimits
from storm_planner.service.transport.counters import ServiceCounters

log = logging.getLogger("storm_planner.service")

HEADER_BYTES = 4
_FRAME_SOURCE = getattr(thrift_transport, "TCyBufferedTransport", None) or thrift_transport.TBufferedTransport


class FrameRefused(StormPlannerError):
    """A frame the service does not read (the message says why; ``reason``, counted as
    ``frames_refused.<reason>``: ``frame_size`` over the cap, ``frame_room`` no room among the frames being
    read, ``malformed`` a length that is no length); the connection is closed."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class _FrameBytes:
    """One frame's body as the transport the decoder reads from: past its end there is nothing."""

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._position = 0

    def read(self, size: int) -> bytes:
        chunk = self._body[self._position:self._position + size]
        self._position += len(chunk)
        return chunk

    def is_open(self) -> bool:
        return True

    def close(self) -> None:
        pass


class _SocketWriter:
    """The transport a reply's frame is written to (the framed transport adds the length)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)  # with the socket's timeout for the whole reply (Python >= 3.5)

    def flush(self) -> None:
        pass

    def is_open(self) -> bool:
        return True

    def close(self) -> None:
        pass


class FrameReader:
    """Frames from one connection: the header within the idle timeout, the body within the read timeout."""

    def __init__(self, sock: socket.socket, limits: ServiceLimits) -> None:
        self.sock = sock
        self.limits = limits

    def next_size(self) -> int | None:
        """The next frame's length (checked against the cap), or None when the client closed cleanly."""
        header = self._receive(HEADER_BYTES, time.monotonic() + self.limits.read_timeout_s, eof_ok=True)
        if header is None:
            return None
        size = int.from_bytes(header, "big", signed=True)
        if size <= 0:
            raise FrameRefused(f"a frame of {size} bytes", "malformed")
        if size > self.limits.max_frame_bytes:
            raise FrameRefused(f"a frame of {size / 2**20:.1f} MB, over the {self.limits.max_frame_mb:g} MB cap "
                               f"(serve --max-frame-mb)", "frame_size")
        return size

    def body(self, size: int) -> bytes:
        data = self._receive(size, time.monotonic() + self.limits.read_timeout_s)
        assert data is not None  # None only with eof_ok
        return data

    def _receive(self, size: int, deadline: float, eof_ok: bool = False) -> bytes | None:
        """Exactly ``size`` bytes by ``deadline`` (socket.timeout past it); the timeout is what is left of
        the deadline before each read, so it bounds the whole frame, not one read."""
        parts, missing = [], size
        while missing:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{size - missing} of {size} bytes in {self.limits.read_timeout_s:g} s")
            self.sock.settimeout(left)
            chunk = self.sock.recv(min(missing, 1 << 20))
            if not chunk:
                if eof_ok and missing == size:
                    return None
                raise ConnectionError(f"connection closed after {size - missing} of {size} bytes")
            parts.append(chunk)
            missing -= len(chunk)
        return b"".join(parts)


class LimitedThriftServer:
    """Serves ``processor`` on ``host:port`` with the limits given; bound at construction."""

    def __init__(self, processor: Any, host: str, port: int, limits: ServiceLimits, counters: ServiceCounters,
                 proto_factory: Any, trans_factory: Any) -> None:
        self.processor = processor
        self.limits = limits
        self.counters = counters
        self.proto_factory = proto_factory
        self.trans_factory = trans_factory
        self.room = FrameRoom(limits.max_frame_bytes)
        self._listener = socket.create_server((host, port), backlog=128)
        self._slots = threading.BoundedSemaphore(limits.max_connections)
        self._pool = concurrent.futures.ThreadPoolExecutor(limits.max_connections, thread_name_prefix="thrift")
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def serve(self) -> None:
        while not self._closed:
            try:
                conn, peer = self._listener.accept()
            except OSError:
                if self._closed:
                    return
                log.exception("accept failed")
                time.sleep(0.1)  # out of descriptors, say: do not spin
                continue
            if not self._slots.acquire(blocking=False):
                self._refuse(conn, peer)
                continue
            with self._lock:
                self._open.add(conn)
            self._pool.submit(self._serve_connection, conn, peer)

    def close(self) -> None:
        """Stop accepting and end every open connection."""
        self._closed = True
        for sock in [self._listener, *self._open_connections()]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._listener.close()
        self._pool.shutdown(wait=False)

    def _open_connections(self) -> list[socket.socket]:
        with self._lock:
            return list(self._open)

    def _refuse(self, conn: socket.socket, peer: Any) -> None:
        conn.close()
        self.counters.note("connections_refused", log, "refused a connection from %s: all %d workers are busy "
                           "(serve --max-connections)", _address(peer), self.limits.max_connections)

    def _serve_connection(self, conn: socket.socket, peer: Any) -> None:
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._serve_calls(conn, FrameReader(conn, self.limits))
        except FrameRefused as refused:
            self.counters.note("frames_refused", log, "refused %s from %s; connection closed", refused,
                               _address(peer))
            self.counters.add(f"frames_refused.{refused.reason}")
        except TimeoutError as slow:
            self.counters.note("connections_timed_out", log, "closed the connection from %s: nothing or too "
                               "little within %g s (%s; serve --read-timeout-secs)", _address(peer),
                               self.limits.read_timeout_s, slow, level=logging.INFO)
        except Exception as error:  # noqa: BLE001 - one connection's failure ends that connection only
            if not self._closed:
                self.counters.note("calls_failed", log, "call from %s failed (%s: %s); connection closed",
                                   _address(peer), type(error).__name__, error)
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()
            self._slots.release()

    def _serve_calls(self, conn: socket.socket, frames: FrameReader) -> None:
        while not self._closed:
            size = frames.next_size()
            if size is None:
                return
            if not self.room.reserve(size, self.limits.read_timeout_s):
                raise FrameRefused(f"a frame of {size / 2**20:.1f} MB: other connections' frames fill the "
                                   f"{self.limits.max_frame_mb:g} MB the service reads at once", "frame_room")
            try:
                self._call(frames.body(size), conn)
            finally:
                self.room.release(size)

    def _call(self, body: bytes, conn: socket.socket) -> None:
        conn.settimeout(self.limits.read_timeout_s)  # for the reply: a client that stops reading is dropped
        iprot = self.proto_factory.get_protocol(_FRAME_SOURCE(_FrameBytes(body)))
        oprot = self.proto_factory.get_protocol(self.trans_factory.get_transport(_SocketWriter(conn)))
        with DecodeBudget(self.limits):
            self.processor.process(iprot, oprot)


def _address(peer: Any) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else str(peer)
