"""The bolts of Twitter trending topics: ``count`` → ``rank`` → ``total``.

- :class:`CountBolt` (fields grouping on topic): counts each topic, cumulative
  or over a sliding event-time window (``trends.window_s``), and every
  ``trends.emit_interval_s`` emits ``(topic, count)`` for the topics whose
  count changed.
- :class:`RankBolt` (fields grouping on topic): keeps the counts of its
  partition of topics and, when they changed, emits its top-k as one tuple.
- :class:`TotalBolt` (global grouping): merges the latest ranking of every
  ranker task into the total top-k and appends it to the sink
  (``trends.sink``) as one JSON line whenever it changed.

Only the spout → count edge is tracked by Storm's acking: the later tuples
carry aggregates (absolute counts, whole rankings) that the next tick
supersedes, so they are emitted unanchored.
"""
from __future__ import annotations

import time

from streamparse import Bolt

from storm_planner.streaming import ConfReader, EmitTimer, JsonLinesWriter
from trends.ranking import TopicCounter, merge_rankings, top_k

PREFIX = "trends"


def _emit_interval(options: ConfReader) -> float:
    return options.float("emit_interval_s", 2.0, minimum=0.0)


class CountBolt(Bolt):
    outputs = ["topic", "count"]

    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, PREFIX)
        self.counter = TopicCounter(self.options.float("window_s", 0.0, minimum=0.0))
        self.timer = EmitTimer(_emit_interval(self.options))

    def process(self, tup):
        topic, event_time = tup.values[0], tup.values[1]
        self.counter.add(topic, event_time)

    def process_tick(self, tup):
        if not self.timer.due():
            return
        for topic, count in self.counter.drain_changes():
            self.emit([topic, count], anchors=[])


class RankBolt(Bolt):
    outputs = ["ranking"]

    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, PREFIX)
        self.k = self.options.int("top_k", 10, minimum=1)
        self.timer = EmitTimer(_emit_interval(self.options))
        self.counts: dict[str, int] = {}
        self.dirty = False
        self.last: list | None = None

    def process(self, tup):
        topic, count = tup.values[0], int(tup.values[1])
        if count > 0:
            self.counts[topic] = count
        else:
            self.counts.pop(topic, None)
        self.dirty = True

    def process_tick(self, tup):
        if not (self.dirty and self.timer.due()):
            return
        self.dirty = False
        ranking = top_k(self.counts, self.k)
        if ranking != self.last:
            self.last = ranking
            self.emit([ranking], anchors=[])


class TotalBolt(Bolt):
    outputs = []

    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, PREFIX)
        self.k = self.options.int("top_k", 10, minimum=1)
        self.timer = EmitTimer(_emit_interval(self.options))
        self.writer = JsonLinesWriter(self.options.required_path("sink"))
        self.partitions: dict[int, list] = {}
        self.dirty = False
        self.last: list | None = None
        self.written = 0

    def process(self, tup):
        # One latest ranking per ranker task: each holds a disjoint set of topics.
        self.partitions[tup.task] = tup.values[0]
        self.dirty = True

    def process_tick(self, tup):
        if not (self.dirty and self.timer.due()):
            return
        self.dirty = False
        rankings = merge_rankings(self.partitions.values(), self.k)
        if rankings == self.last:
            return
        self.last = rankings
        self.written += 1
        self.writer.write({"rankings": rankings, "k": self.k, "seq": self.written,
                           "partitions": len(self.partitions), "time": round(time.time(), 3)})
