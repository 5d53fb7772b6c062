"""Where planner state lives between rounds.

Planners are pure: a stateful one (``albic``) takes its previous state as the
``state`` parameter and returns the next one in ``Plan.state``. A
:class:`StateStore` keeps those states by key (``<topology>/<algorithm>``, or a
round's key) so that a restarted CLI or service loses nothing:

* :class:`FileStateStore`: one JSON file (the CLI's ``-p state_file=PATH``),
  written atomically (temporary file + rename);
* :class:`ZooKeeperStateStore`: one znode per key under a root, with kazoo
  (the service, which already talks to the cluster's ZooKeeper);
* :class:`MemoryStateStore`: a dict, for tests and benchmarks.

States are JSON objects; each store rejects anything else with a clear error.
"""
from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from storm_planner.core.errors import PlanningError, ProblemError
from storm_planner.core.plan import Plan

log = logging.getLogger("storm_planner.state")
MAX_FILE_BYTES = 64 * 2**20   # a state file larger than this is refused unread

# How to plan: planners.run, or the service's runner (solver planners in a worker process it can stop).
PlanFunction = Callable[..., Plan]


class StateStoreError(PlanningError):
    """A state could not be read or written (unreadable file, ZooKeeper down, bad JSON)."""

    kind = "INTERNAL"


class StateStore:
    """The interface: JSON-object states by key."""

    def load(self, key: str) -> dict[str, Any] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def save(self, key: str, state: Mapping[str, Any]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def delete(self, key: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _encode(key: str, state: Mapping[str, Any]) -> str:
    if not isinstance(state, Mapping):
        raise StateStoreError(f"state for {key!r} must be a JSON object, got {type(state).__name__}")
    try:
        return json.dumps(dict(state), sort_keys=True)
    except (TypeError, ValueError) as error:
        raise StateStoreError(f"state for {key!r} is not JSON: {error}") from None


class UnparsableState(StateStoreError):
    """The stored text is no JSON object (corrupt or hostile): it was read, and cannot be used."""


def _decode(key: str, text: str | bytes, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:   # bad JSON or UTF-8, huge numbers, deep nesting
        raise UnparsableState(f"{where}: state for {key!r} is not JSON: {str(error)[:200]}") from None
    if not isinstance(value, dict):
        raise UnparsableState(f"{where}: state for {key!r} is not a JSON object")
    return value


class MemoryStateStore(StateStore):
    def __init__(self) -> None:
        self._states: dict[str, str] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        text = self._states.get(key)
        return None if text is None else _decode(key, text, "memory")

    def save(self, key: str, state: Mapping[str, Any]) -> None:
        self._states[key] = _encode(key, state)

    def delete(self, key: str) -> None:
        self._states.pop(key, None)


class FileStateStore(StateStore):
    """Every key's state in one JSON file: ``{"<key>": {...}, ...}``; a file over ``max_bytes`` is refused
    unread (anyone may have written it)."""

    def __init__(self, path: str | os.PathLike[str], max_bytes: int = MAX_FILE_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes

    def _read(self) -> dict[str, Any]:
        try:
            # Non-blocking: a FIFO put in its place must not hold the caller (the service's start-up).
            descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(descriptor, "rb") as handle:
                if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                    raise StateStoreError(f"state file {self.path} is not a regular file")
                data = handle.read(self.max_bytes + 1)    # bounded whatever the file claims or becomes
            if len(data) > self.max_bytes:
                raise StateStoreError(f"state file {self.path} has more than {self.max_bytes} bytes")
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise StateStoreError(f"cannot read state file {self.path}: {error.strerror}") from None
        if not data.strip():
            return {}
        return _decode("(all)", data, str(self.path))

    def load(self, key: str) -> dict[str, Any] | None:
        state = self._read().get(key)
        if state is not None and not isinstance(state, dict):
            raise StateStoreError(f"{self.path}: state for {key!r} is not a JSON object")
        return state

    def save(self, key: str, state: Mapping[str, Any]) -> None:
        try:
            states = self._read()
        except UnparsableState as error:   # read, and corrupt: kept aside; a failure to read is not
            states = self._set_aside(error)
        states[key] = json.loads(_encode(key, state))
        self._write(states)

    def _set_aside(self, error: StateStoreError) -> dict[str, Any]:
        """A file that cannot be read is renamed ``<name>.unreadable`` (kept, for whoever looks) and a new
        one started: one corrupt write must not block every later one."""
        aside = self.path.with_name(f"{self.path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, aside)
        except OSError as failed:
            raise StateStoreError(f"{error}; and it could not be set aside: {failed.strerror}") from None
        log.warning("%s; set aside as %s, a new state file started", error, aside)
        return {}

    def delete(self, key: str) -> None:
        states = self._read()
        if states.pop(key, None) is not None:
            self._write(states)

    def _write(self, states: dict[str, Any]) -> None:
        folder = self.path.parent if str(self.path.parent) else Path(".")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # Write then rename: a crash mid-write leaves the previous state intact.
            handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=folder)
            with os.fdopen(handle, "w") as out:
                json.dump(states, out, indent=1, sort_keys=True)
                out.write("\n")
            os.replace(temporary, self.path)
        except OSError as error:
            raise StateStoreError(f"cannot write state file {self.path}: {error.strerror}") from None


class ZooKeeperStateStore(StateStore):
    """One znode per key under ``root`` (keys may contain ``/``: they become sub-paths)."""

    DEFAULT_ROOT = "/storm-planner/state"

    def __init__(self, client: Any, root: str = DEFAULT_ROOT) -> None:
        self.client = client
        self.root = "/" + root.strip("/")

    @classmethod
    def connect(cls, hosts: str, root: str = DEFAULT_ROOT, timeout_s: float = 10.0) -> ZooKeeperStateStore:
        """Start a kazoo client on ``hosts`` (``host:port,...``); raises StateStoreError if unreachable."""
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError

        client = KazooClient(hosts=hosts, timeout=timeout_s)
        try:
            client.start(timeout=timeout_s)
        except KazooTimeoutError:
            client.close()
            raise StateStoreError(f"ZooKeeper at {hosts} did not answer within {timeout_s:g} s") from None
        return cls(client, root)

    def close(self) -> None:
        self.client.stop()
        self.client.close()

    def _path(self, key: str) -> str:
        parts = [p for p in str(key).split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            raise ProblemError(f"state key {key!r}: a non-empty path without . or ..")
        return self.root + "/" + "/".join(parts)

    def load(self, key: str) -> dict[str, Any] | None:
        from kazoo.exceptions import KazooException, NoNodeError

        path = self._path(key)
        try:
            data, _ = self.client.get(path)
        except NoNodeError:
            return None
        except KazooException as error:
            raise StateStoreError(f"ZooKeeper read of {path} failed: {error!r}") from None
        return None if not data else _decode(key, data, path)   # bounded by the ensemble's jute.maxbuffer

    def save(self, key: str, state: Mapping[str, Any]) -> None:
        from kazoo.exceptions import KazooException, NodeExistsError

        path = self._path(key)
        data = _encode(key, state).encode("utf-8")
        try:
            try:
                self.client.create(path, data, makepath=True)
            except NodeExistsError:
                self.client.set(path, data)
        except KazooException as error:
            raise StateStoreError(f"ZooKeeper write of {path} failed: {error!r}") from None

    def delete(self, key: str) -> None:
        from kazoo.exceptions import KazooException, NoNodeError

        path = self._path(key)
        try:
            self.client.delete(path)
        except NoNodeError:
            pass
        except KazooException as error:
            raise StateStoreError(f"ZooKeeper delete of {path} failed: {error!r}") from None


def state_key(problem_topology: str, algorithm: str) -> str:
    return f"{problem_topology}/{algorithm}"


def run_with_state(problem: Any, algorithm: str, params: dict[str, Any], store: StateStore,
                   run: PlanFunction | None = None) -> Plan:
    """``run`` with the planner's state kept in ``store`` under ``<topology id>/<algorithm>``.

    The planner gets the previous state as its ``state`` parameter and the plan's ``state``
    replaces it. A store that fails (e.g. ZooKeeper unreachable) costs the planner its memory
    for that round, never the plan: the round runs without state and the plan notes say so.
    """
    from storm_planner.planners import run as run_here
    from storm_planner.planners.base import planner_class

    run = run or run_here  # ``run``: how to plan (the service runs solver planners in a worker process)
    params = dict(params)
    key = state_key(problem.topology_id, algorithm)
    takes_state = "state" in planner_class(algorithm).param_defaults()
    notes: list[str] = []
    try:
        previous = store.load(key)
    except StateStoreError as error:
        previous = None
        notes.append(f"planner state not loaded ({error}): planned without it")
    if previous is not None and "state" not in params and takes_state:
        params["state"] = previous
    plan = run(problem, algorithm, **params)
    if plan.state:
        try:
            store.save(key, plan.state)
        except StateStoreError as error:
            notes.append(f"planner state not saved ({error})")
    return plan.replace(notes=plan.notes + tuple(notes)) if notes else plan


def run_with_state_file(problem: Any, algorithm: str, params: dict[str, Any]) -> Plan:
    """``run`` for the CLI: ``state_file`` in ``params`` loads and saves the planner's state."""
    from storm_planner.planners import run

    params = dict(params)
    path = params.pop("state_file", None)
    if path is None:
        return run(problem, algorithm, **params)
    if not isinstance(path, str) or not path:
        raise ProblemError("state_file: a file path")
    return run_with_state(problem, algorithm, params, FileStateStore(path))


class StatefulRunner:
    """A ``runner(problem, algorithm)`` for the service that keeps planner state in ``store``.

    ``run`` plans (``planners.run`` unless given): the service gives its own runner, which runs the
    solver planners in a worker process it can stop.
    """

    def __init__(self, store: StateStore, run: PlanFunction | None = None) -> None:
        self.store, self.run = store, run

    def __call__(self, problem: Any, algorithm: str) -> Plan:
        return run_with_state(problem, algorithm, {}, self.store, self.run)


def stateful_runner(store: StateStore, run: PlanFunction | None = None) -> StatefulRunner:
    """A runner keeping planner state in ``store``; it plans with ``run`` (default ``planners.run``)."""
    return StatefulRunner(store, run)
