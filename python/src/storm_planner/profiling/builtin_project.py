"""The built-in profiling topology: a spout whose rate is read from a file, a bolt of fixed work.

:func:`write_builtin_project` writes it as a streamparse project; its spout reads the input rate
from the file named by the topology option ``profiling.rate_file``, so one submission serves every
rate of a profiling run.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

RATE_FILE_OPTION = "profiling.rate_file"
WORK_OPTION = "profiling.work_iterations"




_COMPONENTS = '''\
"""Profiling topology: a spout whose rate is read from a file, and a bolt of fixed CPU work per tuple."""
import hashlib
import time

from streamparse import Bolt, Spout


class RateSpout(Spout):
    outputs = ["id", "payload"]

    def initialize(self, stormconf, context):
        self.rate_file = stormconf["profiling.rate_file"]
        self.rate, self.checked = 0.0, 0.0
        self.sent, self.since = 0, time.time()
        self.next_id = 0

    def _read_rate(self):
        now = time.time()
        if now - self.checked < 0.5:
            return
        self.checked = now
        try:
            rate = float(open(self.rate_file).read().strip() or 0)
        except (OSError, ValueError):
            return
        if rate != self.rate:  # a new step: pace from now on
            self.rate, self.sent, self.since = rate, 0, now

    def next_tuple(self):
        self._read_rate()
        if self.rate <= 0 or self.sent >= (time.time() - self.since) * self.rate:
            time.sleep(0.002)
            return
        self.sent += 1
        self.next_id += 1
        self.emit([self.next_id, "x" * 32])


class WorkBolt(Bolt):
    outputs = []

    def initialize(self, conf, context):
        self.iterations = int(conf.get("profiling.work_iterations", 2000))

    def process(self, tup):
        digest = str(tup.values[0]).encode()
        for _ in range(self.iterations):
            digest = hashlib.sha256(digest).digest()
'''

_TOPOLOGY = '''\
"""rate (spout) -shuffle-> work (bolt): storm-planner's profiling topology."""
from streamparse import Grouping, Topology

from profiling_topology.components import RateSpout, WorkBolt


class Profiling(Topology):
    rate = RateSpout.spec()
    work = WorkBolt.spec(inputs={rate: Grouping.SHUFFLE})
'''

_CONFIG = {
    "serializer": "json", "topology_specs": "topologies/", "virtualenv_specs": "virtualenvs/",
    "envs": {"local": {"nimbus": "127.0.0.1:6627", "workers": [], "use_ssh_for_nimbus": False,
                       "use_virtualenv": False}},
}
BUILTIN_SPOUTS = ("rate",)


def write_builtin_project(directory: Path) -> Path:
    """Write the built-in streamparse project (``rate`` -> ``work``) into ``directory``; return it."""
    return write_generated_project(directory, "profiling_topology", _COMPONENTS, {"profiling": _TOPOLOGY})


def write_generated_project(directory: Path, package_name: str, components: str,
                            topologies: Mapping[str, str]) -> Path:
    """A streamparse project in ``directory``: ``src/<package_name>/components.py`` holding
    ``components`` (Python source), one ``topologies/<name>.py`` per entry of ``topologies``, and a
    ``config.json`` for the local cluster (no virtualenv, no SSH). Used by profiling and by
    ``bench hetero-real``."""
    package = directory / "src" / package_name
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "components.py").write_text(components)
    (directory / "topologies").mkdir(exist_ok=True)
    for name, source in topologies.items():
        (directory / "topologies" / f"{name}.py").write_text(source)
    (directory / "config.json").write_text(json.dumps(_CONFIG, indent=2) + "\n")
    return directory


