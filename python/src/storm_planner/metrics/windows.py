"""The znode layout and the window documents the task hook writes.

Layout (``<root>`` is ``planner.metrics.zookeeper.root``, default ``/storm-planner/metrics``)::

    <root>/<topology-id>/<task-id>     one JSON document: the task's latest window

Each document is rewritten in place once per statistics period, so the znode's
version counts windows. Format version 1 (see ``docs/metrics.md`` for every field)::

    {"version": 1, "topology": "...", "component": "count", "task": 3,
     "worker": {"host": "...", "port": 6701, "node": "sup-fast", "pid": 4242, "meta": {"speed": "2.0"}},
     "window": {"seq": 7, "start_ms": ..., "end_ms": ..., "period_s": 10},
     "cpu": {"threads": [{"id": 51, "name": "...", "ms": 12.5}], "thread_cpu_supported": true,
             "subprocess_ms": 80.0, "subprocesses": 1, "process_ms": 140.0},
     "emitted": {"tuples": 100, "total": 900}, "executed": {"tuples": 100, "total": 900,
     "latency_ms_sum": 40, "latency_samples": 5}, "acked": {...}, "failed": {...},
     "sent": [{"stream": "default", "to": 5, "tuples": 100, "bytes": 2000, "total": 900, "bytes_total": 18000}],
     "received": [{"stream": "default", "from": 1, "tuples": 100, "total": 900}],
     "state_mb": null,
     "host_net": {"received_bytes": 123456, "sent_bytes": 654321}}

``cpu.process_ms`` (optional) is the whole worker JVM's CPU in the window, every thread (the same
figure in each of the worker's documents of a window); absent in a worker's first window and when
several workers share one JVM. ``host_net`` (optional) counts the bytes of the worker's host interfaces (loopback excluded)
since they came up: the node's whole link use, Storm's tuples and everything else.

:func:`parse_window` turns bytes into a :class:`TaskWindow` or raises
:class:`CorruptWindow` saying what is wrong; documents that parse but lack
optional parts are kept and list what they lack in ``TaskWindow.missing``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from storm_planner.core.errors import StormPlannerError

FORMAT_VERSION = 1
DEFAULT_ROOT = "/storm-planner/metrics"


class CorruptWindow(StormPlannerError, ValueError):
    """A znode that is not a usable window document; the message says why."""


@dataclass(frozen=True)
class Flow:
    stream: str
    task: int        # destination (sent) or source (received) task
    tuples: int      # in this window
    total: int       # since the task started
    bytes: int = 0
    bytes_total: int = 0


@dataclass(frozen=True)
class ThreadUse:
    id: int
    name: str
    ms: float


@dataclass(frozen=True)
class TaskWindow:
    topology: str
    component: str
    task: int
    seq: int
    start_ms: int
    end_ms: int
    period_s: float
    host: str | None = None
    port: int | None = None
    node: str | None = None
    pid: int | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    threads: tuple[ThreadUse, ...] = ()
    subprocess_ms: float = 0.0
    subprocesses: int = 0
    process_ms: float | None = None  # the whole worker JVM's CPU this window (every thread)
    cpu_known: bool = True
    emitted: int = 0
    emitted_total: int = 0
    executed: int = 0
    executed_total: int = 0
    latency_ms_sum: float = 0.0
    latency_samples: int = 0
    acked: int = 0
    failed: int = 0
    sent: tuple[Flow, ...] = ()
    received: tuple[Flow, ...] = ()
    state_mb: float | None = None
    host_received_bytes: int | None = None   # host_net: cumulative, None when the hook could not read it
    host_sent_bytes: int | None = None
    missing: tuple[str, ...] = ()    # optional parts the document lacks
    version: int = 0                 # the znode's version (one per window written)

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    @property
    def thread_ms(self) -> float:
        return sum(t.ms for t in self.threads)

    @property
    def cpu_ms(self) -> float:
        return self.thread_ms + self.subprocess_ms

    @property
    def worker(self) -> str:
        return f"{self.host}:{self.port}" if self.host else "?"

    @property
    def execute_latency_ms(self) -> float | None:
        return self.latency_ms_sum / self.latency_samples if self.latency_samples else None


def parse_window(data: bytes | str | None, *, where: str = "window", znode_version: int = 0) -> TaskWindow:
    """Parse one znode's data; raise :class:`CorruptWindow` with the reason when unusable."""
    if data is None or (isinstance(data, (bytes, bytearray)) and not data.strip()):
        raise CorruptWindow(f"{where}: empty znode")
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CorruptWindow(f"{where}: not JSON ({error})") from None
    if not isinstance(doc, dict):
        raise CorruptWindow(f"{where}: not a JSON object")
    version = doc.get("version")
    if version != FORMAT_VERSION:
        raise CorruptWindow(f"{where}: format version {version!r}, this service reads {FORMAT_VERSION}")
    window = doc.get("window")
    if not isinstance(window, dict):
        raise CorruptWindow(f"{where}: no 'window' object")
    try:
        start, end = int(window["start_ms"]), int(window["end_ms"])
        task = int(doc["task"])
        topology, component = str(doc["topology"]), str(doc["component"])
    except (KeyError, TypeError, ValueError) as error:
        raise CorruptWindow(f"{where}: missing or bad field {error}") from None
    if end < start:
        raise CorruptWindow(f"{where}: window ends ({end}) before it starts ({start})")
    missing: list[str] = []
    worker = _section(doc, "worker", missing)
    cpu = _section(doc, "cpu", missing)
    emitted = _section(doc, "emitted", missing)
    executed = _section(doc, "executed", missing)
    try:
        threads = tuple(
            ThreadUse(int(t["id"]), str(t.get("name", "")), _non_negative(t.get("ms", 0.0), "cpu ms"))
            for t in cpu.get("threads") or ()
        )
        sent = tuple(_flow(f, "to") for f in _list(doc, "sent", missing))
        received = tuple(_flow(f, "from") for f in _list(doc, "received", missing))
        state = doc.get("state_mb")
        meta = worker.get("meta") or {}
        host_net = doc.get("host_net") if isinstance(doc.get("host_net"), dict) else {}
        return TaskWindow(
            topology=topology,
            component=component,
            task=task,
            seq=int(window.get("seq", 0)),
            start_ms=start,
            end_ms=end,
            period_s=float(window.get("period_s", 0.0)),
            host=worker.get("host"),
            port=int(worker["port"]) if worker.get("port") is not None else None,
            node=worker.get("node"),
            pid=int(worker["pid"]) if worker.get("pid") is not None else None,
            meta={str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {},
            threads=threads,
            subprocess_ms=_non_negative(cpu.get("subprocess_ms", 0.0), "subprocess ms"),
            subprocesses=int(cpu.get("subprocesses", 0)),
            process_ms=(_non_negative(cpu["process_ms"], "process ms")
                        if cpu.get("process_ms") is not None else None),
            cpu_known="cpu" not in missing and cpu.get("thread_cpu_supported", True) is not False,
            emitted=int(emitted.get("tuples", 0)),
            emitted_total=int(emitted.get("total", 0)),
            executed=int(executed.get("tuples", 0)),
            executed_total=int(executed.get("total", 0)),
            latency_ms_sum=float(executed.get("latency_ms_sum", 0.0)),
            latency_samples=int(executed.get("latency_samples", 0)),
            acked=int((doc.get("acked") or {}).get("tuples", 0)),
            failed=int((doc.get("failed") or {}).get("tuples", 0)),
            sent=sent,
            received=received,
            state_mb=float(state) if isinstance(state, (int, float)) else None,
            host_received_bytes=_counter(host_net.get("received_bytes")),
            host_sent_bytes=_counter(host_net.get("sent_bytes")),
            missing=tuple(missing),
            version=znode_version,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CorruptWindow(f"{where}: bad field ({type(error).__name__}: {error})") from None


def _section(doc: Mapping[str, Any], name: str, missing: list[str]) -> Mapping[str, Any]:
    value = doc.get(name)
    if isinstance(value, dict):
        return value
    missing.append(name)
    return {}


def _list(doc: Mapping[str, Any], name: str, missing: list[str]) -> list:
    value = doc.get(name)
    if isinstance(value, list):
        return value
    missing.append(name)
    return []


def _flow(raw: Mapping[str, Any], task_key: str) -> Flow:
    return Flow(
        stream=str(raw.get("stream", "default")),
        task=int(raw[task_key]),
        tuples=int(_non_negative(raw.get("tuples", 0), "tuples")),
        total=int(raw.get("total", 0)),
        bytes=int(raw.get("bytes", 0)),
        bytes_total=int(raw.get("bytes_total", 0)),
    )


def _counter(value: Any) -> int | None:
    return None if value is None else int(_non_negative(value, "host_net bytes"))


def _non_negative(value: Any, what: str) -> float:
    number = float(value)
    if number < 0 or number != number:
        raise ValueError(f"{what} {value!r} is negative")
    return number


def read_windows(zk, topology_id: str, root: str = DEFAULT_ROOT) -> list[TaskWindow]:
    """Every task's current window of ``topology_id``, read with the started kazoo client ``zk``;
    corrupt windows are left out (the metrics store's own reader reports them)."""
    path, found = topology_path(root, topology_id), []
    for child in (zk.get_children(path) if zk.exists(path) else []):
        data, stat = zk.get(f"{path}/{child}")
        try:
            found.append(parse_window(data, znode_version=stat.version))
        except (CorruptWindow, ValueError):
            continue
    return found


def fetch_windows(hosts: str, topology_id: str, root: str = DEFAULT_ROOT) -> dict[int, TaskWindow]:
    """Task -> its current window of ``topology_id``, read with a short-lived kazoo client on ``hosts``
    (for scripts and benchmarks; the service keeps a :class:`~storm_planner.metrics.store.MetricsStore`)."""
    import logging

    from kazoo.client import KazooClient

    # kazoo logs every connect and close at INFO: a poll every few seconds would flood the progress.
    quiet = logging.getLogger("storm_planner.metrics.kazoo")
    quiet.setLevel(logging.WARNING)
    zk = KazooClient(hosts=hosts, timeout=5, logger=quiet)
    zk.start(timeout=10)
    try:
        return {w.task: w for w in read_windows(zk, topology_id, root)}
    finally:
        zk.stop()
        zk.close()


def topology_path(root: str, topology_id: str) -> str:
    return f"{root.rstrip('/')}/{topology_id}"


def task_path(root: str, topology_id: str, task: int | str) -> str:
    return f"{topology_path(root, topology_id)}/{task}"
