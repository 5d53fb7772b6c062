"""JSON-lines output for topology sinks.

Each record is written as one line with a single ``write`` on a file opened in
append mode and flushed at once, so a reader polling the file (the tests, the
demo) sees whole lines, and several sink tasks on one host may share a file
(appends of a short line do not interleave on a local file system).
"""
from __future__ import annotations

import json
import os
from typing import Any

from storm_planner.streaming._streamparse import Bolt
from storm_planner.streaming.conf import ConfReader


class JsonLinesWriter:
    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (the sink's life; close() ends it)
        self.lines = 0

    def write(self, record: Any) -> None:
        self._handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._handle.flush()
        self.lines += 1

    def close(self) -> None:
        self._handle.close()


class JsonLinesSinkBolt(Bolt):
    """A bolt writing one JSON line per input tuple to ``<conf_prefix>.sink``.

    Subclasses set ``conf_prefix`` and may override :meth:`record_for` to shape
    the line (default: the tuple's fields by name).
    """

    conf_prefix = ""
    sink_key = "sink"

    def initialize(self, storm_conf, context):
        self.options = ConfReader(storm_conf, self.conf_prefix)
        self.writer = JsonLinesWriter(self.options.required_path(self.sink_key))

    def record_for(self, tup) -> Any:
        values = tup.values
        if hasattr(values, "_asdict"):
            return dict(values._asdict())
        return list(values)

    def process(self, tup):
        record = self.record_for(tup)
        if record is not None:
            self.writer.write(record)
