"""The bolts of the three World Cup topologies (Elastic Allocator's workload, §V.A).

- Top-K: :class:`ObjectCountBolt` (fields grouping on the object) counts requests per object and
  every ``worldcup.emit_interval_s`` emits the counts that changed; :class:`TopKSinkBolt` (global)
  keeps every object's latest count and appends the top ``worldcup.top_k`` to the sink when it changed.
- Word Count: :class:`TokenizeBolt` (shuffle) splits each request's URL into words;
  :class:`WordCountBolt` (fields grouping on the word) counts them and emits the changes;
  :class:`CountsSinkBolt` (global) appends every word's latest count when one changed.
- Join: :class:`CatalogueJoinBolt` (fields grouping on the object) looks each request's object up in
  the catalogue (``worldcup.catalogue``; requests of objects outside it are dropped) and emits
  ``(section, size)``; :class:`SectionTotalBolt` (fields grouping on the section) sums requests and
  bytes and emits the changes; :class:`CountsSinkBolt` writes the latest totals.

Tuples from the spout and the tokenizer/join are anchored (Storm's acking covers them); the
aggregates emitted on ticks are absolute values the next tick supersedes, so they are unanchored.
"""
from __future__ import annotations

import json
import time

from streamparse import Bolt

from storm_planner.streaming import ConfReader, EmitTimer, JsonLinesWriter
from worldcup.logic import ChangeCounter, tokens_of, top_k
from worldcup.paths import shipped_catalogue

PREFIX = "worldcup"


class _TickingBolt(Bolt):
    """Reads ``worldcup.*`` options and emits on ticks at most every ``emit_interval_s``."""

    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, PREFIX)
        self.timer = EmitTimer(self.options.float("emit_interval_s", 2.0, minimum=0.0))


class ObjectCountBolt(_TickingBolt):
    outputs = ["object_id", "count"]

    def initialize(self, storm_conf, context):
        super().initialize(storm_conf, context)
        self.counter = ChangeCounter()

    def process(self, tup):
        self.counter.add(int(tup.values[0]))

    def process_tick(self, tup):
        if self.timer.due():
            for obj, count in self.counter.drain_changes():
                self.emit([obj, count], anchors=[])


class TokenizeBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tokens_of(tup.values[2]):
            self.emit([word], anchors=[tup])


class WordCountBolt(_TickingBolt):
    outputs = ["word", "count"]

    def initialize(self, storm_conf, context):
        super().initialize(storm_conf, context)
        self.counter = ChangeCounter()

    def process(self, tup):
        self.counter.add(tup.values[0])

    def process_tick(self, tup):
        if self.timer.due():
            for word, count in self.counter.drain_changes():
                self.emit([word, count], anchors=[])


class CatalogueJoinBolt(Bolt):
    outputs = ["section", "size"]

    def initialize(self, storm_conf, context):
        options = ConfReader(storm_conf, PREFIX)
        path = options.path("catalogue") or str(shipped_catalogue())
        with open(path) as handle:
            entries = [json.loads(line) for line in handle if line.strip()]
        self.sections = {int(e["object_id"]): e["section"] for e in entries}

    def process(self, tup):
        section = self.sections.get(int(tup.values[0]))
        if section is not None:  # an inner join: requests of objects outside the catalogue end here
            self.emit([section, int(tup.values[1])], anchors=[tup])


class SectionTotalBolt(_TickingBolt):
    outputs = ["section", "totals"]

    def initialize(self, storm_conf, context):
        super().initialize(storm_conf, context)
        self.requests, self.bytes = ChangeCounter(), ChangeCounter()

    def process(self, tup):
        section, size = tup.values[0], int(tup.values[1])
        self.requests.add(section)
        self.bytes.add(section, size)

    def process_tick(self, tup):
        if self.timer.due():
            self.bytes.drain_changes()
            for section, requests in self.requests.drain_changes():
                self.emit([section, [requests, self.bytes.counts[section]]], anchors=[])


class _SinkBolt(_TickingBolt):
    """Keeps the latest value per key from its inputs; on a tick, appends a JSON line if any changed."""

    outputs = []

    def initialize(self, storm_conf, context):
        super().initialize(storm_conf, context)
        self.writer = JsonLinesWriter(self.options.required_path("sink"))
        self.latest: dict = {}
        self.dirty = False
        self.written = 0

    def process(self, tup):
        self.latest[tup.values[0]] = tup.values[1]
        self.dirty = True

    def process_tick(self, tup):
        if not (self.dirty and self.timer.due()):
            return
        self.dirty = False
        self.written += 1
        self.writer.write({**self.line(), "seq": self.written, "time": round(time.time(), 3)})

    def line(self) -> dict:
        raise NotImplementedError


class TopKSinkBolt(_SinkBolt):
    def line(self) -> dict:
        k = self.options.int("top_k", 10, minimum=1)
        return {"top": top_k({int(obj): int(n) for obj, n in self.latest.items()}, k), "k": k}


class CountsSinkBolt(_SinkBolt):
    def line(self) -> dict:
        return {"counts": dict(sorted(self.latest.items()))}
