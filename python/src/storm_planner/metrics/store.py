"""``MetricsStore``: the task hook's windows, read from ZooKeeper with kazoo and kept in memory.

One background thread keeps the store in step with ZooKeeper. It re-reads a
znode when its watch fires (a new window), lists the children of the root and
of each topology with watches (new topologies and tasks), and resynchronises
everything after a reconnect (watches do not survive a lost session) and every
``resync_s`` as a safety net. Each task keeps its last ``history`` windows.

What goes wrong is kept, not raised: a corrupt document (not JSON, unknown
format version, beyond the bounds of :mod:`~storm_planner.metrics.windows`, a bad
field, or anything else its parsing raises) is skipped, warned with its znode,
named in :meth:`view`'s ``problems`` and counted (``corrupt_windows``, once per
write of the znode) while the task's earlier windows stay; one task's or one
topology's trouble never stops the others being read; a topology whose znodes are
deleted while it still runs keeps its cached windows (``events`` says so, from the moment
the deletion is seen, or, if the hook re-created the znodes before the store looked, from
their new creation ids, and for ``event_hold_s`` after new windows arrive); with
ZooKeeper unreachable the cache stays as it was and ``connected`` is false.
Kazoo reconnects by itself, for ever, so the store recovers without help.

Killed topologies: when Storm's own ZooKeeper data is in the same ensemble
(``<storm_root>/storms`` lists the active topologies), the metrics of a
topology that is no longer listed are deleted from ZooKeeper and forgotten.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    NotEmptyError,
    SessionExpiredError,
)
from kazoo.retry import KazooRetry

from storm_planner.metrics.windows import (
    DEFAULT_ROOT,
    CorruptWindow,
    TaskWindow,
    WindowLimits,
    default_limits,
    parse_window,
    task_path,
    topology_path,
)

log = logging.getLogger("storm_planner.metrics")

DEFAULT_HISTORY = 12          # windows kept per task
DEFAULT_RESYNC_S = 30.0       # full re-read, in case a watch was missed
DEFAULT_STORM_ROOT = "/storm"  # storm.zookeeper.root
DEFAULT_EVENT_HOLD_S = 30.0   # how long an event stays in the notes after new windows came
_ROOT_LIST_TRIES = 3         # listings of a root that keeps vanishing and coming back, per sync


@dataclass(frozen=True)
class StoreView:
    """What the store knows of one topology, at one instant."""

    topology_id: str
    windows: dict[int, list[TaskWindow]]       # task -> windows, oldest first
    problems: tuple[str, ...] = ()             # corrupt or unreadable znodes, skipped
    corrupt_windows: int = 0                   # corrupt windows skipped since the store started
    events: tuple[str, ...] = ()               # e.g. the topology's znodes were deleted
    connected: bool = True
    disconnected_since: float | None = None    # wall clock, when ZooKeeper went away
    last_sync: float | None = None             # wall clock of the last successful read
    zookeeper: str = ""


@dataclass
class _Topology:
    windows: dict[int, deque] = field(default_factory=dict)
    problems: dict[int, str] = field(default_factory=dict)
    corrupt: int = 0                                          # corrupt windows skipped so far
    corrupt_seen: dict[int, int] = field(default_factory=dict)   # task -> mzxid of its last corrupt one
    created: dict[int, int] = field(default_factory=dict)   # task -> czxid of its znode
    event: str | None = None
    event_at: float = 0.0
    event_cleared: bool = False

    def note(self, event: str) -> None:
        if self.event is None or self.event_cleared:
            self.event, self.event_at, self.event_cleared = event, time.time(), False

    def cleared(self) -> None:
        """New windows came: the event is shown for a while more, then dropped."""
        if not self.event_cleared:
            self.event_cleared, self.event_at = True, time.time()

    def current_event(self, hold_s: float) -> str | None:
        if self.event and (not self.event_cleared or time.time() - self.event_at < hold_s):
            return self.event
        return None


class MetricsStore:
    """Reads and watches ``<root>/<topology-id>/<task-id>`` znodes.

    ``start()`` returns at once: the connection is made (and re-made) in the
    background. ``view(topology_id)`` never blocks on ZooKeeper.
    """

    def __init__(
        self,
        hosts: str,
        root: str = DEFAULT_ROOT,
        *,
        storm_root: str | None = DEFAULT_STORM_ROOT,
        history: int = DEFAULT_HISTORY,
        resync_s: float = DEFAULT_RESYNC_S,
        timeout_s: float = 5.0,
        clean_killed: bool = True,
        event_hold_s: float = DEFAULT_EVENT_HOLD_S,
        client: KazooClient | None = None,
        limits: WindowLimits | None = None,
    ) -> None:
        if not root.startswith("/") or root.endswith("/") or len(root) < 2:
            raise ValueError(f"metrics root must be an absolute znode path like {DEFAULT_ROOT}, not {root!r}")
        self.hosts = hosts
        self.root = root
        self.storm_root = storm_root.rstrip("/") if storm_root else None
        self.history = max(1, history)
        self.resync_s = resync_s
        self.clean_killed = clean_killed
        self.event_hold_s = event_hold_s
        self.limits = limits or default_limits()
        self._client = client or KazooClient(
            hosts=hosts,
            timeout=timeout_s,
            connection_retry=KazooRetry(max_tries=-1, delay=0.5, max_delay=5.0),
            command_retry=KazooRetry(max_tries=2, delay=0.2, max_delay=1.0),
        )
        self._lock = threading.Lock()
        self._topologies: dict[str, _Topology] = {}
        self._dirty: set[str] = set()
        self._full = True
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._connected = False
        self._disconnected_since: float | None = time.time()
        self._last_sync: float | None = None
        self._last_full = 0.0
        self._root_missing = False
        self._root_seen = False
        self._root_created: int | None = None
        self._synced_once = threading.Event()
        self._corrupt_total = 0   # corrupt windows skipped since the store started, every topology's

    # -- life cycle -------------------------------------------------------------
    def start(self) -> MetricsStore:
        self._client.add_listener(self._on_state)
        self._client.start_async()
        self._thread = threading.Thread(target=self._run, name="metrics-store", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self._client.stop()
            self._client.close()
        except Exception:  # noqa: BLE001 - closing a client that never connected
            pass

    def __enter__(self) -> MetricsStore:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait_synced(self, timeout_s: float) -> bool:
        """Wait until the first full read has completed (e.g. for a one-shot CLI read)."""
        return self._synced_once.wait(timeout_s)

    def refresh(self, timeout_s: float = 5.0) -> bool:
        """Ask for a full re-read now and wait for it; false if ZooKeeper did not answer in time."""
        before = self._last_sync or 0.0
        with self._lock:
            self._full = True
        self._wake.set()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (self._last_sync or 0.0) > before:
                return True
            time.sleep(0.05)
        return False

    # -- queries ----------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def corrupt_windows(self) -> int:
        """Corrupt windows skipped since the store started, of every topology (forgotten ones' included)."""
        with self._lock:
            return self._corrupt_total

    def topologies(self) -> list[str]:
        with self._lock:
            return sorted(self._topologies)

    def view(self, topology_id: str) -> StoreView:
        with self._lock:
            known = self._topologies.get(topology_id)
            windows = {task: list(ws) for task, ws in known.windows.items()} if known else {}
            problems = tuple(f"task {task}: {why}" for task, why in sorted(known.problems.items())) if known else ()
            corrupt = known.corrupt if known else 0
            event = known.current_event(self.event_hold_s) if known else None
            events: tuple[str, ...] = (event,) if event else ()
        if self._root_missing and self._connected:
            events += (f"the metrics root {self.root} does not exist in ZooKeeper (deleted?): "
                       f"workers re-create it with their next window",)
        return StoreView(
            topology_id=topology_id,
            windows=windows,
            problems=problems,
            corrupt_windows=corrupt,
            events=events,
            connected=self._connected,
            disconnected_since=None if self._connected else self._disconnected_since,
            last_sync=self._last_sync,
            zookeeper=self.hosts,
        )

    # -- maintenance --------------------------------------------------------------
    def delete(self, topology_id: str) -> None:
        """Remove a topology's metrics from ZooKeeper and from memory."""
        try:
            self._client.delete(topology_path(self.root, topology_id), recursive=True)
        except NoNodeError:
            pass
        except NotEmptyError:  # a worker wrote while we deleted: the next sync tries again
            self._wake.set()
        except NoAuthError:
            # The hook created them with its topology's credentials (ZooKeeper authentication on):
            # only that topology, or a ZooKeeper super user, may delete them.
            log.warning("metrics store: not allowed to delete the metrics of %s (ZooKeeper ACL); "
                        "they stay in ZooKeeper", topology_id)
        self.forget(topology_id)

    def forget(self, topology_id: str) -> None:
        with self._lock:
            self._topologies.pop(topology_id, None)

    # -- the background thread ------------------------------------------------------
    def _on_state(self, state: str) -> None:
        # Runs on kazoo's event thread: no ZooKeeper calls here.
        if state == KazooState.CONNECTED:
            self._connected = True
            self._disconnected_since = None
            with self._lock:
                self._full = True  # a lost session dropped the watches
            log.info("metrics store: connected to ZooKeeper %s", self.hosts)
        else:
            if self._connected and not self._stopping.is_set():  # our own stop() closes the session too
                log.warning("metrics store: ZooKeeper %s %s; planning goes on with the windows already read",
                            self.hosts, "connection lost" if state == KazooState.LOST else "suspended")
            self._connected = False
            self._disconnected_since = self._disconnected_since or time.time()
        self._wake.set()

    def _watch(self, event) -> None:
        with self._lock:
            if event is not None and getattr(event, "type", None) == "CHANGED":
                self._dirty.add(event.path)
            else:
                self._full = True
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(timeout=self.resync_s)
            self._wake.clear()
            if self._stopping.is_set():
                return
            if not self._connected:
                continue
            try:
                self._sync()
            except KazooException as error:
                log.debug("metrics store: sync interrupted: %s", error)
            except Exception:  # noqa: BLE001 - the thread must survive anything
                log.exception("metrics store: sync failed")

    def _sync(self) -> None:
        with self._lock:
            full = self._full or time.monotonic() - self._last_full >= self.resync_s
            dirty, self._dirty = self._dirty, set()
            self._full = False
        if full:
            self._sync_all()
            self._last_full = time.monotonic()
        else:
            for path in sorted(dirty):
                topology, _, task = path[len(self.root) + 1:].partition("/")
                if topology and task:
                    self._read_topology(topology, [task])
        self._last_sync = time.time()
        self._synced_once.set()

    def _sync_all(self) -> None:
        topologies = self._list_root()
        live = self._live_topologies()
        gone: set[str] = set()
        for topology in topologies:
            if live is not None and topology not in live and self.clean_killed:
                log.info("metrics store: %s is no longer running; deleting its metrics", topology)
                self.delete(topology)
                continue
            try:
                tasks = self._client.get_children(topology_path(self.root, topology), watch=self._watch)
            except NoNodeError:
                gone.add(topology)  # deleted while we looked
                continue
            except _CONNECTION_ERRORS:
                raise
            except Exception as error:  # noqa: BLE001 - one topology's trouble stops no other
                log.warning("metrics store: the tasks of %s not readable: %s: %s", topology,
                            type(error).__name__, error)
                continue
            self._read_topology(topology, tasks)
        present = set(topologies) - gone
        with self._lock:
            for topology, known in self._topologies.items():
                if topology not in present and known.windows:
                    known.note(f"its metrics znodes were deleted from ZooKeeper at "
                               f"{time.strftime('%H:%M:%S')}; the last windows read are kept")
            if live is not None:
                for topology in [t for t in self._topologies if t not in live and t not in present]:
                    self._topologies.pop(topology)

    def _list_root(self) -> list[str]:
        """The root's children, with a watch that fires on the next topology, whether or not it exists.

        A missing root is watched with ``exists``. If the root is created between the failed listing and
        that ``exists``, the watch set is a data watch, which a new child never fires: the root is listed
        again, so its child watch is in place before the hook writes a topology under it.
        """
        for _ in range(_ROOT_LIST_TRIES):
            try:
                topologies = self._client.get_children(self.root, watch=self._watch)
            except NoNodeError:
                # Deleted by an operator, or nothing published yet: watch for it to come (back).
                if self._client.exists(self.root, watch=self._watch) is None:
                    self._root_missing = self._root_seen
                    return []
                continue  # created meanwhile: list it, with the child watch
            stat = self._client.exists(self.root, watch=self._watch)
            self._root_missing = False
            self._root_seen = True
            if stat is not None:
                if self._root_created is not None and stat.czxid != self._root_created:
                    self._note_all("the metrics root was deleted and re-created in ZooKeeper")
                self._root_created = stat.czxid
            return topologies
        # The root flapped under every try: look again at once rather than wait for the resync.
        with self._lock:
            self._full = True
        self._wake.set()
        return []

    def _live_topologies(self) -> set[str] | None:
        """Topology ids Storm lists as active, or None when Storm's data is not in this ensemble."""
        if not self.storm_root:
            return None
        try:
            return set(self._client.get_children(f"{self.storm_root}/storms", watch=self._watch))
        except NoNodeError:
            return None

    def _read_topology(self, topology: str, tasks: list[str]) -> None:
        """Every task of one topology; trouble with one task or topology never stops the others."""
        for task in tasks:
            try:
                self._read_task(topology, task)
            except _CONNECTION_ERRORS:
                raise  # ZooKeeper is away: the whole sync stops, the next one starts over
            except Exception as error:  # noqa: BLE001 - e.g. a ZooKeeper ACL refusing one znode
                path = task_path(self.root, topology, task)
                log.warning("metrics store: znode %s not readable: %s: %s", path, type(error).__name__, error)
                self._problem(topology, _task_number(task), f"znode {path} not readable ({type(error).__name__})")

    def _read_task(self, topology: str, task_name: str) -> None:
        path = task_path(self.root, topology, task_name)
        try:
            data, stat = self._client.get(path, watch=self._watch)
        except NoNodeError:
            return
        task = _task_number(task_name)
        if task is None:
            self._problem(topology, -1, f"znode {path}: not a task id", stat.mzxid)
            return
        try:
            window = parse_window(data, where=f"znode {path}", znode_version=stat.version, limits=self.limits)
            if window.task != task or window.topology != topology:
                raise CorruptWindow(f"znode {path}: holds task {window.task} of {window.topology}")
        except CorruptWindow as error:
            self._problem(topology, task, str(error), stat.mzxid)
            return
        with self._lock:
            known = self._topologies.setdefault(topology, _Topology())
            before = known.created.get(task)
            if before is not None and before != stat.czxid:
                # Re-created: someone deleted it since the last read (the hook writes it again).
                known.note(f"its metrics znodes were deleted and re-created in ZooKeeper at "
                           f"{time.strftime('%H:%M:%S')}")
            known.created[task] = stat.czxid
            known.cleared()
            known.problems.pop(task, None)
            history = known.windows.setdefault(task, deque(maxlen=self.history))
            if history and (history[-1].pid, history[-1].seq, history[-1].end_ms) == \
                    (window.pid, window.seq, window.end_ms):
                return  # the same window read twice (a full resync)
            history.append(window)

    def _note_all(self, event: str) -> None:
        with self._lock:
            for known in self._topologies.values():
                known.note(f"{event} at {time.strftime('%H:%M:%S')}")

    def _problem(self, topology: str, task: int | None, message: str, mzxid: int | None = None) -> None:
        """A window skipped: named in the view's problems, counted once per znode write (``mzxid``), and
        warned once per reason. ``message`` starts with the znode's path, which the view leaves out."""
        task = -1 if task is None else task
        why = message.split(": ", 1)[-1]
        with self._lock:
            known = self._topologies.setdefault(topology, _Topology())
            if mzxid is None or known.corrupt_seen.get(task) != mzxid:
                known.corrupt += 1
                self._corrupt_total += 1
                if mzxid is not None:
                    known.corrupt_seen[task] = mzxid
            if known.problems.get(task) != why:
                log.warning("metrics store: topology %s, task %s, window skipped: %s", topology, task, message)
            known.problems[task] = why


_CONNECTION_ERRORS = (ConnectionLoss, SessionExpiredError, ConnectionClosedError)


def _task_number(name: str) -> int | None:
    try:
        return int(name)
    except ValueError:
        return None
