"""A reliable replay spout.

:class:`ReplaySpout` reads a feed (see :mod:`.feedio`), turns each record into
zero or more tuples, emits them at the chosen speed (see :mod:`.pacing`) with
message ids so that Storm tracks them, re-emits a tuple whenever Storm reports
it failed (timeout or an explicit fail; on its next ``next`` call, ahead of new
records, and even once told to stop), and reports when the feed is exhausted and
every tuple it emitted has been acked:

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
``P.stop_file``       absolute path: once it exists, emit no new record (replays, acks and a resumed
                      task's re-emits of its predecessor's records go on)
``P.checkpoint_dir``  absolute directory: keep each task's committed progress there and resume from it
                      after a restart (default: off; see below)

Resuming after a restart (``P.checkpoint_dir``). Storm restarts a worker whenever the executors it runs change
(a re-plan that moves one in or out), and the spout's task starts again in a new process. Without a checkpoint
it replays its share of the feed from the first record, its message ids starting over, and the tuples its
predecessor had in flight are never acked. With one, each task keeps its *committed record number* ``C`` in
``<checkpoint_dir>/<storm.id>/<component>-<task index>-of-<task count>.checkpoint``: every record of its share
below ``C`` had all its tuples acked (or given up after ``P.max_replays``). The file holds ``C`` and the
*emitted record number* ``E`` (every record below it was emitted by some incarnation) in decimal, separated by
a space (a file of ``C`` alone reads as ``E = C``); it is rewritten atomically at most every ``CHECKPOINT_S``
seconds, when the feed is exhausted, when Storm deactivates the spout and when the process leaves because
Storm went away, only when ``C`` or ``E`` advanced (a process killed by a signal keeps the last save, so its
successor emits up to about a second's records more again). ``E`` is written ahead of the emits: before a
record at or past the ``E`` on file goes out, ``E`` moves a reservation ahead (a batch, doubled while a
reservation lasts under two seconds), so even a killed process leaves an ``E`` past every record it emitted. A
task that finds its checkpoint reads past the records below ``C`` without turning them into tuples, numbers
the rest from ``C`` on, so a record's message ids ``<task index>:<record>:<position>`` are the same in every
incarnation, and emits every record from ``C`` on again: at least once, as Storm's Kafka spout resuming from
its committed offset (records between ``C`` and where the predecessor stopped arrive twice downstream, late
for an event-time consumer). The records from ``C`` to ``E`` are not new: the predecessor's tuples of them
were in flight, so the task emits them again even when the stop file is already set (a worker restarted while
its topology drains), and stops after them. Its watermark (``watermark_stream``) starts again from the first
record it emits; consumers keep the highest watermark per task (:class:`~.watermarks.WatermarkTracker`), so
the older one is ignored. A checkpoint that cannot be read, is not one or two non-negative integers (``E`` not
below ``C``), or is larger than ``MAX_CHECKPOINT_BYTES`` is ignored with a warning naming the file (the task
starts from its first record; the file's keeping is :mod:`.checkpoint`'s); one past the end of the task's
share leaves nothing to emit. With a checkpoint
its time log (``P.times_dir``) says that its ids are stable (:mod:`.timelog`), so an id emitted by one
incarnation and acked by the next counts as acked, not lost. The time log is flushed before every checkpoint
write: a committed record is never emitted again, so the ack its predecessor logged is the only one it has.

A resumed task's exhaustion summary (and so the done marker) counts ``records`` over its whole share,
the committed ones included (a predecessor emitted them and saw them acked), but ``tuples``, ``acked``,
``replays`` and ``given_up`` of its own incarnation only; ``resumed_from`` is the ``C`` it started from
(0 for a task that started at the beginning).
"""
from __future__ import annotations

import atexit
import heapq
import itertools
import json
import math
import os
import time
import weakref
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from storm_planner.streaming._streamparse import Spout
from storm_planner.streaming.checkpoint import CHECKPOINT_S, Checkpoint, file_safe, write_atomically
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
# Most records the emitted record number on file may run ahead of the records emitted (the reservation
# doubles while it is used up faster than every two CHECKPOINT_S, so a fast spout writes its file rarely).
MAX_EMIT_RESERVE = 1_000_000
# Records skipped per ``next`` call while a resumed task reads past its committed ones (the multilang
# protocol wants an answer to every call; a long skip is spread over calls).
SKIP_BATCH = 5000
# Failed tuples re-emitted per ``next`` call (:meth:`ReplaySpout._replay_failed`).
REPLAYS_PER_CALL = 1000

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
        self._init_progress(feed)
        self._init_logs(context)
        self.logger.info("replaying %s (task %d of %d, %s) into %s%s", feed, self.task_index + 1,
                         self.task_count, self.pacer.mode, ", ".join(self.feed_spouts),
                         f", resuming at record {self.resumed_from} ({self.checkpoint.path})"
                         if self.resumed_from else "")
        # Leaving because Storm went away (its pipe closed) saves the last progress (_exit, and this for an
        # exit that skips it); a process killed by a signal keeps the last periodic save.
        atexit.register(_close_at_exit, weakref.ref(self))

    def _init_progress(self, feed: str) -> None:
        """The feed's records, what is pending, the counters, and the checkpoint to resume from."""
        self.feed_stats = FeedStats()
        self._records = self.records(feed, self.task_count, self.task_index)
        self._lookahead: Any = None
        self._has_lookahead = False
        self.exhausted = False
        self.reported = False
        # message id -> (values, stream, record number)
        self.pending: dict[str, tuple[list, str | None, int]] = {}
        # record number -> its tuples not yet acked (nor given up); a heap of those record numbers (entries
        # of finished records are dropped lazily): the committed record number is the heap's least.
        self._open: dict[int, int] = {}
        self._open_heap: list[int] = []
        self.replays: Counter = Counter()
        # failed message ids, oldest first, re-emitted by next_tuple (_replay_failed), not by fail itself
        self._to_replay: dict[str, None] = {}
        self.total_replays = 0
        self.given_up = 0
        self.record_seq = 0
        self.tuples_emitted = 0
        self.tuples_acked = 0
        self.last_watermark: float | None = None
        self.started = time.time()
        self.checkpoint = Checkpoint.of(self.options.path("checkpoint_dir"), self.run_id, self.component_name,
                                        self.task_index, self.task_count, self.logger)
        self.resumed_from, self.emitted_before = self.checkpoint.load() if self.checkpoint else (0, 0)
        self._skip_left = self.resumed_from   # committed records still to read past (next_tuple)
        # The emitted record number on file runs ahead of the records emitted (_reserve_emits).
        self._emit_reserved, self._emit_reserve, self._reserved_at = self.emitted_before, self.batch, -math.inf

    def _init_logs(self, context: dict) -> None:
        """The time log and the stop signal."""
        times_dir = self.options.path("times_dir")
        # One file per incarnation. Without a checkpoint a spout moved to another worker starts its message
        # ids over (each file's ids stand alone); with one its ids are the same in every incarnation, and the
        # file says so, naming the task its incarnations share.
        self.times = TimeLog(os.path.join(times_dir, f"{self.component_name}-{context.get('taskid')}-{os.getpid()}"
                                                     f"{TIMES_SUFFIX}") if times_dir else None,
                             stable_key=f"{file_safe(self.component_name)}-{context.get('taskid')}" if self.checkpoint else None)
        self.stop = StopSignal(self.options.path("stop_file"))

    # -- Storm callbacks -----------------------------------------------------
    def next_tuple(self):
        self.times.maybe_flush()
        self._maybe_checkpoint()
        new_rate = self.rate_file.changed()
        if new_rate is not None:
            self.pacer.set_rate(new_rate / self.task_count)
        if self._to_replay:
            self._replay_failed()
            return
        if self.exhausted:
            self._maybe_report()
            return
        if self._skip_left and not self._skip_committed():
            return
        for _ in range(self.batch):
            if not self._peek():
                self._exhaust()
                return
            if self._stopped():
                time.sleep(0.005)   # told to stop: nothing new, replays and acks go on
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
            self._emit_record(record)

    def _emit_record(self, record: Any) -> None:
        """Emit one record's tuples under ids ``<task index>:<record>:<position>``, its record number first
        reserved in the checkpoint (a successor after the stop re-emits what this incarnation emitted)."""
        emissions = self.tuples_for(record) or []
        seq = self.record_seq
        if self.checkpoint and seq >= self._emit_reserved:
            self._reserve_emits(seq)
        if emissions:
            self._open[seq] = len(emissions)
            heapq.heappush(self._open_heap, seq)
        self.record_seq += 1
        due = self._due_time()
        for position, (values, stream) in enumerate(emissions):
            tup_id = f"{self.task_index}:{seq}:{position}"
            self.pending[tup_id] = (list(values), stream, seq)
            self.times.record("e", tup_id, due)
            self.emit(list(values), tup_id=tup_id, stream=stream)
        self.tuples_emitted += len(emissions)
        self.pacer.emitted(len(emissions))

    def _due_time(self) -> float | None:
        """The record's due time (unix seconds) from the pacer's schedule; None when it is not paced."""
        if self.pacer.due is None or not (self.pacer.rate > 0 or self.pacer.speed > 0):
            return None
        return time.time() - (time.monotonic() - self.pacer.due)

    def _exhaust(self) -> None:
        """The share has no record left: end the watermark and report once every tuple is done."""
        self.exhausted = True
        self._advance_watermark(END)
        self._maybe_report()

    def ack(self, tup_id):
        self.times.record("a", tup_id)
        saved = self.pending.pop(tup_id, None)
        if saved is not None:
            self.tuples_acked += 1
            self.replays.pop(tup_id, None)
            self._tuple_done(saved[2])
        if self.exhausted:
            self._maybe_report()

    def deactivate(self):
        """Storm deactivated the topology (a rebalance, a kill): save the progress now."""
        self.close()

    def close(self) -> None:
        """Write what is buffered: the time log and the committed progress. Safe to call more than once."""
        self.times.flush()
        self._save_checkpoint()

    def _exit(self, status_code):
        """pystorm's way out when Storm went away (or on an error): save first, for it may leave by
        ``os._exit``, which runs no exit handler."""
        _close_at_exit(weakref.ref(self))
        super()._exit(status_code)

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
            self._tuple_done(saved[2])   # given up counts as done for the committed progress
            if self.exhausted:
                self._maybe_report()
            return
        self.replays[tup_id] += 1
        self.total_replays += 1
        if self.total_replays in (1, 10, 100) or self.total_replays % 1000 == 0:
            self.logger.warning("re-emitting failed tuples (%d so far)", self.total_replays)
        self._to_replay[tup_id] = None

    def _replay_failed(self) -> None:
        """Re-emit up to :data:`REPLAYS_PER_CALL` failed tuples, oldest first (one still pending: one given up
        meanwhile is not).

        Not in :meth:`fail`: Storm fails the tuples that timed out one by one on the spout's thread, each a
        round trip over the multilang pipe, and takes no ack meanwhile. Measured, a re-emit in each made
        64,067 timeouts take 15 s on a node with 30 % of a core (benchmarks/reports/drain-3.md). Here a
        failure costs its bookkeeping, and a call re-emits many."""
        for tup_id in list(itertools.islice(self._to_replay, REPLAYS_PER_CALL)):
            del self._to_replay[tup_id]
            saved = self.pending.get(tup_id)
            if saved is None:
                continue
            values, stream, _ = saved
            self.times.record("e", tup_id)
            self.emit(values, tup_id=tup_id, stream=stream)

    # -- internals -----------------------------------------------------------
    def committed(self) -> int:
        """The committed record number: every record of this task's share below it had all its tuples acked
        (or given up). O(log n) amortised."""
        heap = self._open_heap
        if len(heap) > 4 * len(self._open) + 1024:
            # One record held open long (a tuple failing again and again) leaves the entries of every
            # finished record after it in the heap: rebuild it from the open ones (a sorted list is a heap).
            heap[:] = sorted(self._open)
        while heap and heap[0] not in self._open:
            heapq.heappop(heap)
        return heap[0] if heap else self.record_seq

    def _tuple_done(self, seq: int) -> None:
        left = self._open.get(seq, 0) - 1
        if left > 0:
            self._open[seq] = left
        else:
            self._open.pop(seq, None)

    def _stopped(self) -> bool:
        """Told to stop, and past the records a predecessor emitted (those are in flight: emitted again)."""
        return self.record_seq >= self.emitted_before and self.stop.is_set()

    def _reserve_emits(self, seq: int) -> None:
        """Write an emitted record number ahead of ``seq`` before record ``seq`` goes out: a worker killed by
        a signal leaves only its last write, and its successor after the stop must re-emit every record this
        incarnation emitted (a few more are harmless: at least once). The reservation doubles while it lasts
        less than two CHECKPOINT_S, up to MAX_EMIT_RESERVE, so the file is written about once a second or
        less."""
        now = time.monotonic()
        if now - self._reserved_at < 2 * CHECKPOINT_S:
            self._emit_reserve = min(2 * self._emit_reserve, MAX_EMIT_RESERVE)
        self._reserved_at = now
        self._emit_reserved = seq + self._emit_reserve
        self._write_checkpoint()

    def _maybe_checkpoint(self) -> None:
        if self.checkpoint and self.checkpoint.due():
            self._save_checkpoint()

    def _save_checkpoint(self) -> None:
        if not self._skip_left:
            # The reservation starts at the predecessor's E and runs ahead of every record emitted.
            self._write_checkpoint()

    def _write_checkpoint(self) -> None:
        """Save C and E, the time log first: C counts acks, and a worker killed by a signal between the save
        and the log's next flush would leave records its successor never emits again (they are committed)
        whose acks no log holds, which the benchmark would count as lost."""
        if self.checkpoint:
            self.times.flush()
            self.checkpoint.save(self.committed(), self._emit_reserved)

    def _skip_committed(self) -> bool:
        """Read past (up to ``SKIP_BATCH`` of) the records a predecessor committed, without turning them into
        tuples; True once none is left."""
        for _ in range(min(self._skip_left, SKIP_BATCH)):
            if not self._peek():
                self.logger.warning("checkpoint %s says %d records are committed, but this task's share of %s "
                                    "has only %d: nothing left to emit", self.checkpoint.path if self.checkpoint
                                    else "-", self.resumed_from, self.feed, self.record_seq)
                self._skip_left = 0
                return True
            self._has_lookahead = False
            self._lookahead = None
            self.record_seq += 1
            self._skip_left -= 1
        if self._skip_left:
            return False
        self.logger.info("read past %d committed records; emitting from record %d", self.resumed_from,
                         self.record_seq)
        return True

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
            "resumed_from": self.resumed_from,
        }

    def _maybe_report(self) -> None:
        if self.reported or self.pending:
            return
        self.reported = True
        self.close()
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
    write_atomically(part, json.dumps(summary))
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
    write_atomically(sink + DONE_SUFFIX, json.dumps(done))
    return True


def _close_at_exit(ref: Any) -> None:
    spout = ref()
    if spout is not None:
        try:
            spout.close()
        except Exception:   # noqa: BLE001 - at exit, nothing is left to report to
            pass
