"""A reliable replay spout.

:class:`ReplaySpout` reads a feed (see :mod:`.feedio`), turns each record into
zero or more tuples, emits them at the chosen speed (see :mod:`.pacing`) with
message ids so that Storm tracks them, re-emits a tuple whenever Storm reports
it failed (timeout or an explicit fail), and reports when the feed is
exhausted and every tuple it emitted has been acked:

- one log line (``feed exhausted: ...``);
- a marker file ``<sink>.feed-done`` next to the topology's sink, holding a
  JSON summary. With several spout tasks (or several replay spouts, as in the
  bargains topology), each task first writes its own part marker under
  ``<sink>.feed-done.parts/<topology id>/``, and the task completing the set writes
  ``<sink>.feed-done``. So the marker means: the whole feed went in and was
  fully processed by the tuples' trees. (Sinks on other hosts than the spouts
  need a shared file system for the marker; the local cluster has one.)

Parallel spout tasks of one component split the feed by line number: task
``i`` of ``n`` replays lines ``i, i+n, i+2n, ...`` — or, when the subclass
defines :meth:`partition_key`, by a stable hash of that key (so that, e.g.,
each symbol's records stay in order in one task).

A subclass that sets ``watermark_stream`` (see :mod:`.watermarks`) also emits
``[W]`` on that stream whenever the event time advances (no record with an
earlier time follows) and ``[END]`` once the feed is exhausted; the feed must
then be in event-time order.

Subclasses set ``conf_prefix`` and ``outputs`` and implement
:meth:`tuples_for` (and :meth:`event_time` for × event-time pacing); they may
override :meth:`default_feed` and :meth:`records`.

Configuration (``P`` is ``conf_prefix``; a subclass may rename the feed key
with ``feed_key`` when a topology has several feeds):

``P.feed``            absolute path of the feed (default: :meth:`default_feed`)
``P.sink``            absolute path of the topology's sink (the marker goes next to it)
``P.replay_rate``     tuples per second over all tasks of the spout, 0 = as fast as possible
``P.replay_rate_file`` absolute path: a file holding a rate (tuples/s over all tasks) that replaces
                      ``P.replay_rate`` whenever it changes, read every 0.5 s (profiling raises
                      a running topology's rate this way; default: off)
``P.replay_speed``    × event time (overrides the rate when > 0), 0 = off
``P.replay_batch``    most records emitted per ``next`` call (default 50)
``P.max_replays``     re-emits of one failed tuple before giving up on it (default 0 = never give up)
``P.times_dir``       absolute directory: log every emit, ack and fail with its time (default: off;
                      see :mod:`.timelog`)
``P.stop_file``       absolute path: once it exists, emit no new record (replays and acks go on)
"""
from __future__ import annotations

import json
import os
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from streamparse import Spout

from storm_planner.streaming.conf import ConfReader
from storm_planner.streaming.feedio import FeedStats, iter_feed_records
from storm_planner.streaming.pacing import RateFile, ReplayPacer
from storm_planner.streaming.timelog import SUFFIX as TIMES_SUFFIX
from storm_planner.streaming.timelog import StopSignal, TimeLog
from storm_planner.streaming.watermarks import END

# Component configuration key naming every replay spout component of the
# topology that must finish before ``<sink>.feed-done`` is written (a list of
# component ids; default: this spout's component only).
FEED_SPOUTS_KEY = "storm_planner.replay.spouts"
DONE_SUFFIX = ".feed-done"
PARTS_SUFFIX = ".feed-done.parts"

Emission = tuple  # (values, stream-or-None)


def stable_hash(key: Any) -> int:
    """A hash that is the same in every process (Python's ``hash`` of str is salted)."""
    return zlib.crc32(str(key).encode("utf-8"))


def task_split(context: dict) -> tuple[int, int]:
    """(index, count) of this task among its component's tasks."""
    own = int(context["taskid"])
    component = context.get("componentid")
    tasks = sorted(int(t) for t, c in (context.get("task->component") or {}).items() if c == component)
    if own not in tasks:
        return 0, 1
    return tasks.index(own), len(tasks)


def component_task_count(context: dict, components: Iterable[str]) -> int:
    wanted = set(components)
    return sum(1 for c in (context.get("task->component") or {}).values() if c in wanted)


class ReplaySpout(Spout):
    conf_prefix = ""
    feed_key = "feed"
    sink_key = "sink"
    outputs: Sequence = ()

    # -- to override ---------------------------------------------------------
    def default_feed(self) -> str | None:
        """The feed used when ``P.feed`` is not set (None: the key is required)."""
        return None

    def records(self, feed: str, stride: int, offset: int) -> Iterator[Any]:
        """The records this task replays, in order."""
        if stride > 1 and type(self).partition_key is not ReplaySpout.partition_key:
            return (record for record in iter_feed_records(feed, self.feed_stats)
                    if stable_hash(self.partition_key(record)) % stride == offset)
        return iter_feed_records(feed, self.feed_stats, stride=stride, offset=offset)

    def tuples_for(self, record: Any) -> list[Emission]:
        """The tuples of one record: a list of ``(values, stream)`` (stream None = default)."""
        raise NotImplementedError

    def event_time(self, record: Any) -> float | None:
        """The record's event time in seconds (used by × event-time pacing)."""
        return None

    def partition_key(self, record: Any) -> str | None:
        """A key that keeps related records in one task (None: split by line)."""
        return None

    watermark_stream: str | None = None

    # -- life cycle ----------------------------------------------------------
    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, self.conf_prefix)
        feed = self.options.path(self.feed_key) or self.default_feed()
        if feed is None:
            raise ValueError(f"{self.options.key(self.feed_key)} is required")
        if not os.path.exists(feed):
            raise FileNotFoundError(f"feed {feed} ({self.options.key(self.feed_key)}) does not exist")
        self.feed = feed
        self.sink = self.options.required_path(self.sink_key)
        self.task_index, self.task_count = task_split(context)
        rate = self.options.float("replay_rate", 0.0, minimum=0.0) / self.task_count
        speed = self.options.float("replay_speed", 0.0, minimum=0.0)
        self.pacer = ReplayPacer(rate=rate, speed=speed)
        self.rate_file = RateFile(self.options.path("replay_rate_file"))
        self.batch = self.options.int("replay_batch", 50, minimum=1)
        self.max_replays = self.options.int("max_replays", 0, minimum=0)
        self.feed_spouts = list(storm_conf.get(FEED_SPOUTS_KEY) or [self.component_name])
        self.expected_parts = max(1, component_task_count(context, self.feed_spouts))
        # Part markers are kept per run so that a rerun with the same sink is
        # not declared done by the previous run's parts.
        self.run_id = str(storm_conf.get("storm.id") or storm_conf.get("topology.name") or "run")

        self.feed_stats = FeedStats()
        self._records = self.records(feed, self.task_count, self.task_index)
        self._lookahead: Any = None
        self._has_lookahead = False
        self.exhausted = False
        self.reported = False
        self.pending: dict[str, tuple[list, str | None]] = {}
        self.replays: Counter = Counter()
        self.total_replays = 0
        self.given_up = 0
        self.record_seq = 0
        self.tuples_emitted = 0
        self.tuples_acked = 0
        self.last_watermark: float | None = None
        self.started = time.time()
        times_dir = self.options.path("times_dir")
        # One file per incarnation: a spout moved to another worker starts its message ids over.
        self.times = TimeLog(os.path.join(times_dir, f"{self.component_name}-{context.get('taskid')}-{os.getpid()}"
                                                     f"{TIMES_SUFFIX}") if times_dir else None)
        self.stop = StopSignal(self.options.path("stop_file"))
        self.logger.info("replaying %s (task %d of %d, %s) into %s", feed, self.task_index + 1,
                         self.task_count, self.pacer.mode, ", ".join(self.feed_spouts))

    # -- Storm callbacks -----------------------------------------------------
    def next_tuple(self):
        self.times.maybe_flush()
        new_rate = self.rate_file.changed()
        if new_rate is not None:
            self.pacer.set_rate(new_rate / self.task_count)
        if self.exhausted:
            self._maybe_report()
            return
        if self.stop.is_set():
            time.sleep(0.005)   # told to stop: nothing new, replays and acks go on
            return
        for _ in range(self.batch):
            if not self._peek():
                self.exhausted = True
                self._advance_watermark(END)
                self._maybe_report()
                return
            record = self._lookahead
            when = self.event_time(record)
            wait = self.pacer.wait_for(when)
            if wait > 0:
                # Not due yet: give the worker back its thread (a multilang
                # spout must not block); a short nap keeps an idle spout cheap.
                time.sleep(min(wait, 0.005))
                return
            self._has_lookahead = False
            if when is not None:
                self._advance_watermark(when)
            emissions = self.tuples_for(record) or []
            seq = self.record_seq
            self.record_seq += 1
            for position, (values, stream) in enumerate(emissions):
                tup_id = f"{self.task_index}:{seq}:{position}"
                self.pending[tup_id] = (list(values), stream)
                self.times.record("e", tup_id)
                self.emit(list(values), tup_id=tup_id, stream=stream)
            self.tuples_emitted += len(emissions)
            self.pacer.emitted(len(emissions))

    def ack(self, tup_id):
        self.times.record("a", tup_id)
        if self.pending.pop(tup_id, None) is not None:
            self.tuples_acked += 1
            self.replays.pop(tup_id, None)
        if self.exhausted:
            self._maybe_report()

    def fail(self, tup_id):
        self.times.record("f", tup_id)
        saved = self.pending.get(tup_id)
        if saved is None:
            return  # already acked (a late duplicate) or given up
        if self.max_replays and self.replays[tup_id] >= self.max_replays:
            self.logger.warning("giving up on tuple %s after %d replays", tup_id, self.replays[tup_id])
            self.pending.pop(tup_id)
            self.replays.pop(tup_id, None)
            self.given_up += 1
            if self.exhausted:
                self._maybe_report()
            return
        self.replays[tup_id] += 1
        self.total_replays += 1
        if self.total_replays in (1, 10, 100) or self.total_replays % 1000 == 0:
            self.logger.warning("re-emitting failed tuples (%d so far)", self.total_replays)
        values, stream = saved
        self.times.record("e", tup_id)
        self.emit(values, tup_id=tup_id, stream=stream)

    # -- internals -----------------------------------------------------------
    def _advance_watermark(self, event_time: float) -> None:
        """Everything before ``event_time`` went out: say so downstream."""
        if not self.watermark_stream:
            return
        if self.last_watermark is not None and event_time < self.last_watermark:
            # An out-of-order record: it is late for the consumers. Say it once.
            if not getattr(self, "_warned_disorder", False):
                self._warned_disorder = True
                self.logger.warning("feed %s is not in event-time order (%s after %s); "
                                    "out-of-order records arrive late", self.feed, event_time, self.last_watermark)
            return
        if self.last_watermark is None or event_time > self.last_watermark:
            self.last_watermark = event_time
            self.emit([event_time], stream=self.watermark_stream)

    def _peek(self) -> bool:
        if self._has_lookahead:
            return True
        try:
            self._lookahead = next(self._records)
        except StopIteration:
            return False
        self._has_lookahead = True
        return True

    def summary(self) -> dict:
        return {
            "component": self.component_name, "task": self.task_id,
            "task_index": self.task_index, "task_count": self.task_count,
            "feed": self.feed, "records": self.record_seq,
            "malformed": self.feed_stats.malformed, "tuples": self.tuples_emitted,
            "acked": self.tuples_acked, "replays": self.total_replays,
            "given_up": self.given_up, "seconds": round(time.time() - self.started, 3),
        }

    def _maybe_report(self) -> None:
        if self.reported or self.pending:
            return
        self.reported = True
        self.times.flush()
        summary = self.summary()
        self.logger.info(
            "feed exhausted: %(records)d records (%(malformed)d malformed skipped), "
            "%(tuples)d tuples emitted and acked, %(replays)d replays, in %(seconds).1f s", summary)
        write_done_marker(self.sink, summary, self.expected_parts, self.run_id)


def write_done_marker(sink: str, summary: dict, expected_parts: int, run_id: str = "run") -> bool:
    """Write this task's part marker; write ``<sink>.feed-done`` once all parts exist.

    Returns True when this call wrote (or found) the final marker.
    """
    parts_dir = os.path.join(sink + PARTS_SUFFIX, run_id.replace(os.sep, "_"))
    os.makedirs(parts_dir, exist_ok=True)
    part = os.path.join(parts_dir, f"{summary['component']}-{summary['task']}.json")
    _write_atomically(part, json.dumps(summary))
    parts = sorted(p for p in os.listdir(parts_dir) if p.endswith(".json"))
    if len(parts) < expected_parts:
        return False
    summaries = []
    for name in parts:
        try:
            with open(os.path.join(parts_dir, name), encoding="utf-8") as handle:
                summaries.append(json.load(handle))
        except (OSError, ValueError):
            return False  # a part being written right now; its writer will finish the set
    done = {
        "records": sum(s["records"] for s in summaries),
        "tuples": sum(s["tuples"] for s in summaries),
        "malformed": sum(s["malformed"] for s in summaries),
        "replays": sum(s["replays"] for s in summaries),
        "given_up": sum(s["given_up"] for s in summaries),
        "run": run_id,
        "tasks": summaries,
        "finished": time.time(),
    }
    _write_atomically(sink + DONE_SUFFIX, json.dumps(done))
    return True


def _write_atomically(path: str, text: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(tmp, path)
