"""The znode layout and the window documents the task hook writes.

Layout (``<root>`` is ``planner.metrics.zookeeper.root``, default ``/storm-planner/metrics``)::

    <root>/<topology-id>/<task-id>     one JSON document: the task's latest window

Each document is rewritten in place once per statistics period, so the znode's
version counts windows. Format version 1 (see ``docs/metrics.md`` for every field)::

    {"version": 1, "topology": "...", "component": "count", "task": 3,
     "worker": {"host": "...", "port": 6701, "node": "sup-fast", "pid": 4242, "meta": {"speed": "2.0"},
                "waits": {"bolt": "WaitStrategyProgressive", "spout": "WaitStrategyProgressive"}},
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
several workers share one JVM. ``worker.waits`` (optional) names the topology's wait strategies (``bolt``,
``spout``, ``backpressure``) by simple class name: Storm's default spins an idle bolt. ``host_net``
(optional) counts the bytes of the worker's host interfaces (loopback excluded) since they came up:
the node's whole link use, Storm's tuples and everything else.

:func:`parse_window` turns bytes into a :class:`TaskWindow` or raises
:class:`CorruptWindow` naming the window and the field that is wrong; documents that parse but lack
optional parts are kept and list what they lack in ``TaskWindow.missing``.

Windows come from workers, which run whatever code a topology ships, so nothing in them is trusted.
A document is read within bounds (environment variable, default): at most
``STORM_PLANNER_WINDOW_MAX_BYTES`` bytes (1,048,576, ZooKeeper's own znode limit), nested at most
``STORM_PLANNER_WINDOW_MAX_DEPTH`` levels (16; the hook's nest 4), integers of at most
``STORM_PLANNER_WINDOW_MAX_DIGITS`` digits (20; the hook's counters are Java longs). Every number
must be finite (no NaN, Infinity or 1e999), counts (tuples, totals, bytes, seq, times, ports, pids)
whole and >= 0, ``window.period_s`` > 0, CPU milliseconds, latencies and ``state_mb`` >= 0, and
``worker.meta.speed`` a positive number; ``worker.waits`` values are text of at most ``MAX_WAIT_CHARS``.
A null reads as absent (the hook writes null for a figure it could not compute).
"""
from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from storm_planner.core.boundedjson import JSONLimitError, JSONLimits, loads_bounded
from storm_planner.core.errors import StormPlannerError

FORMAT_VERSION = 1
MAX_WAIT_CHARS = 200   # a wait strategy's name in ``worker.waits`` (the hook cuts them to 120)
WAIT_KINDS = ("bolt", "spout", "backpressure")   # the wait strategies ``worker.waits`` names
DEFAULT_ROOT = "/storm-planner/metrics"

# Bounds of one window document (see the module docstring); each has an environment variable.
DEFAULT_MAX_WINDOW_BYTES = 1_048_576   # ZooKeeper's own default znode limit (jute.maxbuffer)
DEFAULT_MAX_WINDOW_DEPTH = 16          # the hook's documents nest 4 deep
DEFAULT_MAX_WINDOW_INT_DIGITS = 20     # the hook's counters are Java longs (19 digits)
MAX_BYTES_ENV = "STORM_PLANNER_WINDOW_MAX_BYTES"
MAX_DEPTH_ENV = "STORM_PLANNER_WINDOW_MAX_DEPTH"
MAX_DIGITS_ENV = "STORM_PLANNER_WINDOW_MAX_DIGITS"


class CorruptWindow(StormPlannerError, ValueError):
    """A znode that is not a usable window document; the message says why."""


@dataclass(frozen=True)
class WindowLimits:
    """Bounds of one window document; :func:`default_limits` reads them from the environment."""

    max_bytes: int = DEFAULT_MAX_WINDOW_BYTES
    max_depth: int = DEFAULT_MAX_WINDOW_DEPTH
    max_int_digits: int = DEFAULT_MAX_WINDOW_INT_DIGITS

    @property
    def json(self) -> JSONLimits:
        return JSONLimits(self.max_bytes, self.max_depth, self.max_int_digits, bytes_setting=MAX_BYTES_ENV,
                          depth_setting=MAX_DEPTH_ENV, digits_setting=MAX_DIGITS_ENV)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> WindowLimits:
        return cls(_positive_setting(environ, MAX_BYTES_ENV, DEFAULT_MAX_WINDOW_BYTES),
                   _positive_setting(environ, MAX_DEPTH_ENV, DEFAULT_MAX_WINDOW_DEPTH),
                   _positive_setting(environ, MAX_DIGITS_ENV, DEFAULT_MAX_WINDOW_INT_DIGITS))


@functools.cache
def default_limits() -> WindowLimits:
    """The limits of this process (read once from the environment)."""
    return WindowLimits.from_environment()


def _positive_setting(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"${name}={raw!r}: expected a positive whole number (default {default})")
    return int(raw)


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
    waits: Mapping[str, str] = field(default_factory=dict)   # wait strategy by kind: bolt, spout, backpressure
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
    acked_total: int = 0
    failed_total: int = 0
    complete_latency_ms_sum: float = 0.0     # spouts: tuple trees completed this window (sampled)
    complete_latency_samples: int = 0
    # Spouts: this window's sampled complete latencies by bucket, ((upper bound ms, count), ...), the last
    # bound None (longer than every other); empty when the hook sent none (an older hook, no samples).
    complete_latency_buckets: tuple[tuple[float | None, int], ...] = ()
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
    def data_emitted(self) -> int:
        """Emits on the topology's own streams: ``emitted`` without Storm's (``__ack_ack``, ``__ack_init``,
        ``__metrics``: streams whose names begin with ``__``), which the hook counts too; with acking on,
        each acked tuple is an emit of its bolt on ``__ack_ack``. As counted when no flow is known."""
        return max(0, self.emitted - sum(f.tuples for f in self.sent if f.stream.startswith("__")))

    @property
    def data_executed(self) -> int:
        """Executes of tuples of the topology's own streams: ``executed`` without ticks (``__tick``) and
        other streams of Storm's."""
        return max(0, self.executed - sum(f.tuples for f in self.received if f.stream.startswith("__")))

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


def parse_window(data: bytes | str | None, *, where: str = "window", znode_version: int = 0,
                 limits: WindowLimits | None = None) -> TaskWindow:
    """Parse one znode's data; raise :class:`CorruptWindow` naming ``where`` and the field when unusable.

    Nothing else escapes: an unexpected error while reading one window makes it a corrupt window too,
    so one bad document never stops the others from being read."""
    try:
        return _parse(data, where, znode_version, limits or default_limits())
    except CorruptWindow:
        raise
    except Exception as error:  # noqa: BLE001 - a window that breaks the parser is a corrupt window
        raise CorruptWindow(f"{where}: unreadable ({type(error).__name__}: {error})") from None


def _parse(data: bytes | str | None, where: str, znode_version: int, limits: WindowLimits) -> TaskWindow:
    doc = _document(data, where, limits)
    fields = _Fields(where)
    missing: list[str] = []   # sections absent from the document, in the order they are read
    window = doc["window"]
    start, end = fields.count(window, "start_ms", "window.start_ms"), fields.count(window, "end_ms", "window.end_ms")
    if end < start:
        raise CorruptWindow(f"{where}: window ends ({end}) before it starts ({start})")
    worker = fields.section(doc, "worker", missing)
    cpu = fields.section(doc, "cpu", missing)
    emitted = fields.section(doc, "emitted", missing)
    executed = fields.section(doc, "executed", missing)
    host_net = fields.section(doc, "host_net", [])
    # Read in the document's order: the first bad field is the one an error names.
    identity = {
        "topology": fields.text(doc, "topology", "topology"),
        "component": fields.text(doc, "component", "component"),
        "task": fields.integer(doc, "task", "task"),
        "seq": fields.count(window, "seq", "window.seq", default=0),
        "start_ms": start,
        "end_ms": end,
        "period_s": fields.number(window, "period_s", "window.period_s", positive=True),
    }
    placement = _worker_fields(fields, worker)
    cpu_use = _cpu_fields(fields, cpu, cpu_known="cpu" not in missing)
    tuples = _tuple_fields(fields, doc, emitted, executed)
    return TaskWindow(
        **identity, **placement, **cpu_use, **tuples,
        sent=tuple(_flow(fields, at, f, "to") for at, f in fields.objects(doc, "sent", "sent", missing)),
        received=tuple(_flow(fields, at, f, "from") for at, f in fields.objects(doc, "received", "received", missing)),
        state_mb=fields.number(doc, "state_mb", "state_mb", default=None),
        host_received_bytes=fields.count(host_net, "received_bytes", "host_net.received_bytes", default=None),
        host_sent_bytes=fields.count(host_net, "sent_bytes", "host_net.sent_bytes", default=None),
        missing=tuple(missing),
        version=znode_version,
    )


def _document(data: bytes | str | None, where: str, limits: WindowLimits) -> dict:
    """The znode's JSON object, of this format version and with a ``window`` object."""
    if data is None or not (data.strip() if isinstance(data, (bytes, bytearray, str)) else True):
        raise CorruptWindow(f"{where}: empty znode")
    try:
        doc = loads_bounded(data, limits.json)
    except JSONLimitError as error:
        raise CorruptWindow(f"{where}: {error}") from None
    if not isinstance(doc, dict):
        raise CorruptWindow(f"{where}: not a JSON object")
    version = doc.get("version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise CorruptWindow(f"{where}: format version {version!r}, this service reads {FORMAT_VERSION}")
    if not isinstance(doc.get("window"), dict):
        raise CorruptWindow(f"{where}: no 'window' object")
    return doc


def _worker_fields(fields: _Fields, worker: Mapping[str, Any]) -> dict[str, Any]:
    """Where the task ran: the worker's host, port, node, pid, scheduler meta and wait strategies."""
    return {
        "host": fields.text(worker, "host", "worker.host", default=None),
        "port": fields.count(worker, "port", "worker.port", default=None),
        "node": fields.text(worker, "node", "worker.node", default=None),
        "pid": fields.count(worker, "pid", "worker.pid", default=None),
        "meta": fields.meta(worker),
        "waits": fields.waits(worker),
    }


def _cpu_fields(fields: _Fields, cpu: Mapping[str, Any], *, cpu_known: bool) -> dict[str, Any]:
    """The task's threads' CPU, its subprocesses' and its worker process's; ``cpu_known``: the section is there."""
    return {
        "threads": tuple(ThreadUse(fields.integer(t, "id", f"{at}.id"), fields.text(t, "name", f"{at}.name", default=""),
                                fields.number(t, "ms", f"{at}.ms", default=0.0))
                      for at, t in fields.objects(cpu, "threads", "cpu.threads")),
        "subprocess_ms": fields.number(cpu, "subprocess_ms", "cpu.subprocess_ms", default=0.0),
        "subprocesses": fields.count(cpu, "subprocesses", "cpu.subprocesses", default=0),
        "process_ms": fields.number(cpu, "process_ms", "cpu.process_ms", default=None),
        "cpu_known": cpu_known and fields.flag(cpu, "thread_cpu_supported", "cpu.thread_cpu_supported"),
    }


def _tuple_fields(fields: _Fields, doc: Mapping[str, Any], emitted: Mapping[str, Any],
                  executed: Mapping[str, Any]) -> dict[str, Any]:
    """Tuples emitted, executed (with their latency), acked and failed."""
    return {
        "emitted": fields.count(emitted, "tuples", "emitted.tuples", default=0),
        "emitted_total": fields.count(emitted, "total", "emitted.total", default=0),
        "executed": fields.count(executed, "tuples", "executed.tuples", default=0),
        "executed_total": fields.count(executed, "total", "executed.total", default=0),
        "latency_ms_sum": fields.number(executed, "latency_ms_sum", "executed.latency_ms_sum", default=0.0),
        "latency_samples": fields.count(executed, "latency_samples", "executed.latency_samples", default=0),
        **_acked_fields(fields, fields.section(doc, "acked", [])),
        **_failed_fields(fields, fields.section(doc, "failed", [])),
    }


def _failed_fields(fields: _Fields, failed: Mapping[str, Any]) -> dict[str, Any]:
    return {"failed": fields.count(failed, "tuples", "failed.tuples", default=0),
            "failed_total": fields.count(failed, "total", "failed.total", default=0)}


def _acked_fields(fields: _Fields, acked: Mapping[str, Any]) -> dict[str, Any]:
    """Tuple trees completed in the window, their complete latency (sum, samples, buckets) and the running total."""
    return {
        "acked": fields.count(acked, "tuples", "acked.tuples", default=0),
        "complete_latency_ms_sum": fields.number(acked, "complete_latency_ms_sum", "acked.complete_latency_ms_sum",
                                                 default=0.0),
        "complete_latency_samples": fields.count(acked, "complete_latency_samples", "acked.complete_latency_samples",
                                                 default=0),
        "complete_latency_buckets": _buckets(fields, acked.get("complete_latency_buckets"),
                                             "acked.complete_latency_buckets"),
        "acked_total": fields.count(acked, "total", "acked.total", default=0),
    }


def _flow(fields: _Fields, at: str, raw: Mapping[str, Any], task_key: str) -> Flow:
    return Flow(
        stream=fields.text(raw, "stream", f"{at}.stream", default="default"),
        task=fields.integer(raw, task_key, f"{at}.{task_key}"),
        tuples=fields.count(raw, "tuples", f"{at}.tuples", default=0),
        total=fields.count(raw, "total", f"{at}.total", default=0),
        bytes=fields.count(raw, "bytes", f"{at}.bytes", default=0),
        bytes_total=fields.count(raw, "bytes_total", f"{at}.bytes_total", default=0),
    )


MAX_LATENCY_BUCKETS = 64   # the hook sends 29


def _buckets(fields: _Fields, raw: Any, field: str) -> tuple[tuple[float | None, int], ...]:
    """``{"le_ms": [b1, b2, ...], "counts": [c1, c2, ..., c_longer]}`` as ((b1, c1), ..., (None, c_longer)):
    bounds positive, finite, increasing; one count more than bounds, each whole and >= 0."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise fields.fail(field, f"expected an object, got {_shown(raw)}")
    bounds, counts = raw.get("le_ms"), raw.get("counts")
    if not isinstance(bounds, list) or not isinstance(counts, list):
        raise fields.fail(field, "expected lists le_ms and counts")
    if len(counts) != len(bounds) + 1 or len(counts) > MAX_LATENCY_BUCKETS:
        raise fields.fail(field, f"{len(bounds)} bounds and {len(counts)} counts (expected one count more than "
                                 f"bounds, at most {MAX_LATENCY_BUCKETS})")
    previous = 0.0
    for i, bound in enumerate(bounds):
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not math.isfinite(bound) \
                or bound <= previous:
            raise fields.fail(f"{field}.le_ms[{i}]", f"expected a finite bound above {previous:g}, got {_shown(bound)}")
        previous = float(bound)
    for i, count in enumerate(counts):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise fields.fail(f"{field}.counts[{i}]", f"expected a whole number >= 0, got {_shown(count)}")
    return tuple(zip([float(b) for b in bounds] + [None], counts))


_REQUIRED = object()


class _Fields:
    """Typed reads of a window's fields; each failure is a :class:`CorruptWindow` naming the window and
    the field (``sent[2].tuples``). A null reads as absent: the hook writes null for a figure it could
    not compute (a NaN or infinite double)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field: str, why: str) -> CorruptWindow:
        return CorruptWindow(f"{self.where}: bad field {field}: {why}")

    def _get(self, obj: Mapping[str, Any], key: str, field: str, default: Any) -> Any:
        value = obj.get(key)
        if value is None and default is _REQUIRED:
            raise self.fail(field, "missing")
        return value

    def integer(self, obj: Mapping[str, Any], key: str, field: str, *, default: Any = _REQUIRED) -> Any:
        value = self._get(obj, key, field, default)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {_shown(value)}")
        return value

    def count(self, obj: Mapping[str, Any], key: str, field: str, *, default: Any = _REQUIRED) -> Any:
        value = self.integer(obj, key, field, default=default)
        if value is not None and value < 0:
            raise self.fail(field, f"{value} is negative")
        return value

    def number(self, obj: Mapping[str, Any], key: str, field: str, *, default: Any = _REQUIRED,
               positive: bool = False) -> Any:
        value = self._get(obj, key, field, default)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(field, f"expected a finite number, got {_shown(value)}")
        if value < 0 or (positive and value == 0):
            raise self.fail(field, f"{value} is {'negative' if value < 0 else 'not positive'}")
        return float(value)

    def text(self, obj: Mapping[str, Any], key: str, field: str, *, default: Any = _REQUIRED) -> Any:
        value = self._get(obj, key, field, default)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {_shown(value)}")
        return value

    def flag(self, obj: Mapping[str, Any], key: str, field: str) -> bool:
        value = obj.get(key, True)
        if not isinstance(value, bool) and value is not None:
            raise self.fail(field, f"expected true or false, got {_shown(value)}")
        return value is not False

    def section(self, doc: Mapping[str, Any], name: str, missing: list[str]) -> Mapping[str, Any]:
        value = doc.get(name)
        if isinstance(value, dict):
            return value
        if value is not None:
            raise self.fail(name, f"expected an object, got {_shown(value)}")
        missing.append(name)
        return {}

    def objects(self, obj: Mapping[str, Any], key: str, field: str,
                missing: list[str] | None = None) -> list[tuple[str, Mapping[str, Any]]]:
        """(``field[i]``, object) for each item of the list ``obj[key]``."""
        value = obj.get(key)
        if value is None:
            if missing is not None:
                missing.append(key)
            return []
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {_shown(value)}")
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{field}[{i}]", f"expected an object, got {_shown(item)}")
        return [(f"{field}[{i}]", item) for i, item in enumerate(value)]

    def meta(self, worker: Mapping[str, Any]) -> dict[str, str]:
        """The supervisor's ``supervisor.scheduler.meta``: text values; a ``speed`` must be a positive number."""
        value = worker.get("meta")
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail("worker.meta", f"expected an object, got {_shown(value)}")
        meta = {}
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                raise self.fail(f"worker.meta.{key}", f"expected a value, got {_shown(item)}")
            meta[key] = str(item)
        if "speed" in meta and not _positive_number(meta["speed"]):
            raise self.fail("worker.meta.speed", f"expected a positive number, got {meta['speed'][:40]!r}")
        return meta

    def waits(self, worker: Mapping[str, Any]) -> dict[str, str]:
        """The topology's wait strategies, ``{"bolt": "WaitStrategyPark", ...}``: short text values of the
        known kinds (``WAIT_KINDS``); other keys are ignored."""
        value = worker.get("waits")
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail("worker.waits", f"expected an object, got {_shown(value)}")
        waits = {}
        for kind in WAIT_KINDS:
            item = value.get(kind)
            if item is None:
                continue
            if not isinstance(item, str) or len(item) > MAX_WAIT_CHARS:
                raise self.fail(f"worker.waits.{kind}", f"expected a class name, got {_shown(item)}")
            waits[kind] = item
        return waits


def _positive_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return math.isfinite(value) and value > 0


def _shown(value: Any) -> str:
    """A value for an error message, cut short (an oversized field must not flood the log)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
