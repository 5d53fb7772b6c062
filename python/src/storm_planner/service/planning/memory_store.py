"""The load memory kept across service restarts: a restarted service plans a known name as the old one would.

:class:`~storm_planner.service.planning.memory.LoadMemory` lives in the service's process. A service that
restarts (an upgrade, a crash, a benchmark resumed in another sitting) forgot every topology's measured
loads, so its first plan of a resubmitted topology fell back to the declared 10 % per executor: a resumed
capacity run put Word Count's ackers alone on the 70 % node and sustained 1,860 t/s where RAS on measured
loads sustained 2,853. :class:`MemoryKeeper` writes the memory to a
:class:`~storm_planner.adaptation.state.StateStore` and restores it when the service starts:

* ``serve --load-memory FILE``: a JSON file (written whole, by rename);
* else, with ``--zookeeper``: one znode, ``/storm-planner/load-memory/topologies``;
* else, with ``--plan-log``: a file beside it, ``<plan log>.loads.json``;
* else in memory only, as before.

Writes are throttled: after an answer whose plans changed the memory (once the plugin has it, never inside
its scheduling round), at most once every ``write_every_s`` (30 s), and once more when the service stops. A
service killed outright loses at most that much.

What is read back is untrusted (a file anyone may have edited, a znode any ZooKeeper client may have set):
the stored text is bounded (written within :data:`MAX_STORED_BYTES`, below ZooKeeper's default 1 MB znode
limit, which bounds a znode read; a file over :data:`MAX_FILE_BYTES` or not a regular one is refused unread;
text that does not parse restores nothing), and each topology's record is checked as
:meth:`LoadMemory.remember` checks a measurement: a name Storm could give, finite non-negative figures, at most
``MAX_ENTRIES`` components and pairs. Only the most recently used ``max_topologies`` records are read. A bad
record, whatever it holds, is refused with a log line naming it and counted (``load_memory_records_refused``);
the good ones are kept. A write that fails is logged and counted (``load_memory_write_failures``) and tried
again when the next write is due; planning goes on.

Record (format 1), the least recently used topology first::

    {"format": 1, "saved_at": <Unix s>, "topologies": [
        {"name": "wc", "topology_id": "wc-3-1700000000", "age_s": 12.5, "peak_rate": 900.0,
         "loads": {"count": [14.2, 4]},                       # component: [per executor %, executors]
         "tuple_bytes": [["split", "count", 90.0]], "rates": [["split", "count", 2400.0]],
         "costs": {"source_rate": 900.0, "components": {"count": [2.0, 0.01, 2.7, true]}}}]}

``costs`` components are ``[fixed, per_tuple, per_source, fitted]`` (:class:`~storm_planner.metrics.per_tuple.
ComponentCost`). ``age_s`` is how long before ``saved_at`` the figures were measured; the restored entry's age
counts the time the service was down.

Cost: O(S) per write and per restore, for S the entries stored (bounded as above).
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from storm_planner.adaptation.state import StateStore, StateStoreError
from storm_planner.core.errors import ProblemError
from storm_planner.metrics.per_tuple import ComponentCost, TupleCosts
from storm_planner.service.planning.memory import (
    MAX_ENTRIES,
    MAX_KEY_CHARS,
    ComponentLoad,
    LoadMemory,
    RememberedLoads,
    storm_name_of,
)
from storm_planner.service.transport.counters import ServiceCounters

FORMAT = 1
STORE_KEY = "topologies"
ZOOKEEPER_ROOT = "/storm-planner/load-memory"
WRITE_EVERY_S = 30.0
MAX_STORED_BYTES = 900_000     # under ZooKeeper's default jute.maxbuffer (1 MB) for one znode
MAX_FILE_BYTES = 4 * MAX_STORED_BYTES   # the same as a file, indented: a larger one is refused unread
MAX_AGE_S = 10 * 365 * 86_400.0

log = logging.getLogger("storm_planner.service")


class BadRecord(ProblemError):
    """One topology's stored record cannot be restored; the message names what is wrong."""


# -- encoding ------------------------------------------------------------------------------------------
def to_record(name: str, entry: RememberedLoads, age_s: float) -> dict[str, Any]:
    """``entry`` of topology ``name`` as a JSON-ready record, measured ``age_s`` seconds before it is saved."""
    costs = None
    if entry.costs is not None:
        costs = {"source_rate": entry.costs.source_rate,
                 "components": {c: [k.fixed, k.per_tuple, k.per_source, k.fitted]
                                for c, k in entry.costs.components.items()}}
    return {"name": name, "topology_id": entry.topology_id, "age_s": max(0.0, age_s), "peak_rate": entry.peak_rate,
            "loads": {c: [load.per_executor, load.executors] for c, load in entry.loads.items()},
            "tuple_bytes": [[s, t, v] for (s, t), v in entry.tuple_bytes.items()],
            "rates": [[s, t, v] for (s, t), v in entry.rates.items()],
            "costs": costs}


def _figure(value: object, what: str) -> float:
    try:
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:   # an integer too large for a float
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise BadRecord(f"{what} must be a finite non-negative number, not {str(value)[:40]}")
    return number


def _key(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_KEY_CHARS:
        raise BadRecord(f"{what} must be a non-empty string of at most {MAX_KEY_CHARS} characters")
    return value


def _mapping(record: Mapping[str, Any], field: str, kind: type) -> Any:
    value = record.get(field)
    if not isinstance(value, (dict, list)) or not isinstance(value, kind):
        raise BadRecord(f"{field} must be a JSON {'object' if kind is dict else 'array'}")
    if len(value) > MAX_ENTRIES:
        raise BadRecord(f"{field} has {len(value)} entries, more than {MAX_ENTRIES}")
    return value


def _loads(record: Mapping[str, Any]) -> dict[str, ComponentLoad]:
    loads = {}
    for component, value in _mapping(record, "loads", dict).items():
        if not isinstance(value, list) or len(value) != 2:
            raise BadRecord(f"loads of {component[:80]!r} must be [per executor, executors]")
        executors = value[1]
        if isinstance(executors, bool) or not isinstance(executors, int) or not 0 < executors <= 1_000_000:
            raise BadRecord(f"loads of {component!r}: executors must be a positive integer, not {executors!r}")
        loads[_key(component, "a component")] = ComponentLoad(_figure(value[0], f"load of {component!r}"), executors)
    return loads


def _pairs(record: Mapping[str, Any], field: str) -> dict[tuple[str, str], float]:
    pairs = {}
    for value in _mapping(record, field, list):
        if not isinstance(value, list) or len(value) != 3:
            raise BadRecord(f"{field}: each entry must be [source, target, value]")
        source, target = _key(value[0], f"{field}' source"), _key(value[1], f"{field}' target")
        pairs[source, target] = _figure(value[2], f"{field} of {source!r} -> {target!r}")
    return pairs


def _costs(record: Mapping[str, Any]) -> TupleCosts | None:
    value = record.get("costs")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRecord("costs must be a JSON object or null")
    components = {}
    for component, cost in _mapping(value, "components", dict).items():
        if not isinstance(cost, list) or len(cost) != 4 or not isinstance(cost[3], bool):
            raise BadRecord(f"costs of {component!r} must be [fixed, per_tuple, per_source, fitted]")
        fixed, per_tuple, per_source = (_figure(v, f"costs of {component!r}") for v in cost[:3])
        components[_key(component, "a component")] = ComponentCost(fixed, per_tuple, per_source, cost[3])
    rate = _figure(value.get("source_rate"), "costs' source_rate")
    return TupleCosts(rate, components) if rate > 0 and components else None


def from_record(record: object, measured_at: Callable[[float], float]) -> tuple[str, RememberedLoads]:
    """(name, entry) from a stored record; ``measured_at(age_s)`` turns the age into the memory's clock.
    Raises :class:`BadRecord` naming the first thing wrong."""
    if not isinstance(record, dict):
        raise BadRecord("a topology's record must be a JSON object")
    name = _key(record.get("name"), "name")
    topology_id = _key(record.get("topology_id"), "topology_id")
    if not storm_name_of(topology_id, name):
        raise BadRecord(f"topology_id {topology_id!r} is not an id Storm gives a topology named {name!r}")
    age = _figure(record.get("age_s"), "age_s")
    entry = RememberedLoads(topology_id, _loads(record), _pairs(record, "tuple_bytes"),
                            measured_at(min(age, MAX_AGE_S)), _pairs(record, "rates"), _costs(record),
                            _figure(record.get("peak_rate", 0.0), "peak_rate"))
    return name, entry


# -- the keeper ----------------------------------------------------------------------------------------
class MemoryKeeper:
    """Restores ``memory`` from ``store`` and writes it back, throttled (see the module docstring)."""

    def __init__(self, memory: LoadMemory, store: StateStore, counters: ServiceCounters | None = None,
                 write_every_s: float = WRITE_EVERY_S, wall: Callable[[], float] = time.time) -> None:
        self.memory, self.store = memory, store
        self.counters = counters or ServiceCounters()
        self.write_every_s = write_every_s
        self.wall = wall
        self._written_version = 0          # a memory with anything in it has changes to write
        self._written_at = -math.inf
        self._writing = threading.Lock()

    def restore(self) -> int:
        """Read the store into the memory; returns how many topologies were restored. A store that cannot be
        read, or holds no memory of this format, restores nothing (logged); a bad record is skipped (logged,
        counted)."""
        try:
            state = self.store.load(STORE_KEY)
        except StateStoreError as error:
            self.counters.note("load_memory_read_failures", log, "load memory: not restored: %s", error)
            return 0
        if state is None:
            return 0
        if state.get("format") != FORMAT or not isinstance(state.get("topologies"), list):
            self.counters.note("load_memory_read_failures", log,
                               "load memory: the stored memory is not of format %d; not restored", FORMAT)
            return 0
        down_s = _down_for(state.get("saved_at"), self.wall())
        now = self.memory.clock()
        restored = []
        records = state["topologies"]
        first = max(0, len(records) - self.memory.max_topologies)   # the most recently used are kept
        for index, record in enumerate(records[first:], first):
            try:
                restored.append(from_record(record, lambda age: now - age - down_s))
            except Exception as error:  # noqa: BLE001 - whatever a record holds, it costs that record alone
                name = record.get("name") if isinstance(record, dict) else None
                self.counters.add("load_memory_records_refused")
                log.warning("load memory: record %d (%r) refused: %s", index,   # once, at start-up
                            name[:80] if isinstance(name, str) else None, str(error)[:300])
        self.memory.restore(restored)
        self._written_version = self.memory.version
        log.info("load memory: %d topologies restored", len(self.memory))
        return len(self.memory)

    def write_if_due(self, force: bool = False) -> bool:
        """Write the memory if it changed since the last write and ``write_every_s`` has passed (``force``: if it
        changed at all). Returns whether it wrote; a failed write is logged and counted, and tried again later."""
        if not self._writing.acquire(blocking=force):
            return False                     # another thread is writing it now
        try:
            version = self.memory.version
            now = self.memory.clock()
            if version == self._written_version or (not force and now - self._written_at < self.write_every_s):
                return False
            self._written_at = now
            try:
                self.store.save(STORE_KEY, self._state(now))
            except StateStoreError as error:
                self.counters.note("load_memory_write_failures", log, "load memory: not written: %s", error)
                return False
            self._written_version = version
            return True
        finally:
            self._writing.release()

    def _state(self, now: float) -> dict[str, Any]:
        """The stored state: every topology, least recently used first, the oldest dropped until it fits."""
        records = [to_record(name, entry, now - entry.measured_at) for name, entry in self.memory.entries()]
        sizes = [len(json.dumps(record)) + 2 for record in records]
        total, first = sum(sizes) + 100, 0
        while total > MAX_STORED_BYTES and first < len(records):
            total -= sizes[first]
            first += 1
        if first:
            self.counters.note("load_memory_topologies_dropped", log, "load memory: %d least recently used "
                               "topologies not stored, to stay within %d bytes", first, MAX_STORED_BYTES)
        return {"format": FORMAT, "saved_at": self.wall(), "topologies": records[first:]}


def _down_for(saved_at: object, now: float) -> float:
    """Seconds between a write and now (0 when the stored time is unusable or in the future)."""
    try:
        return min(max(0.0, now - _figure(saved_at, "saved_at")), MAX_AGE_S)
    except BadRecord:
        return 0.0


__all__ = ["FORMAT", "MAX_FILE_BYTES", "MAX_STORED_BYTES", "STORE_KEY", "WRITE_EVERY_S", "ZOOKEEPER_ROOT", "BadRecord", "MemoryKeeper",
           "from_record", "to_record"]
