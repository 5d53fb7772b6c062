"""A component kit shared by every benchmark topology in ``topologies/``.

The topologies are streamparse projects whose Python packages are shipped in
the topology jar; the kit itself is imported from the installed
``storm_planner`` package (the workers run ``streamparse_run`` from the same
virtualenv). It provides:

- :mod:`.conf` — typed, validated reads of topology configuration keys
  (``--option key=value`` at submit time arrives as a string);
- :mod:`.feedio` — reading replay feeds (JSON lines, gzip, or a directory of
  part files as ``storm-planner feeds build`` writes them);
- :mod:`.pacing` — replay speed: × event time, a fixed rate, or as fast as
  possible;
- :mod:`.spout` — :class:`ReplaySpout`, a reliable replay spout (message ids,
  re-emit on fail, a log line and a marker file when the feed is exhausted);
- :mod:`.sink` — JSON-lines output (:class:`JsonLinesWriter`,
  :class:`JsonLinesSinkBolt`);
- :mod:`.ticks` — tick-tuple configuration and emit intervals;
- :mod:`.topology` — submit-time options for parallelism and groupings.
"""
from storm_planner.streaming.conf import ConfError, ConfReader
from storm_planner.streaming.feedio import iter_feed_lines, iter_feed_records
from storm_planner.streaming.pacing import ReplayPacer
from storm_planner.streaming.sink import JsonLinesSinkBolt, JsonLinesWriter
from storm_planner.streaming.spout import ReplaySpout
from storm_planner.streaming.ticks import EmitTimer, tick_config
from storm_planner.streaming.topology import configure_topology

__all__ = [
    "ConfError", "ConfReader", "iter_feed_lines", "iter_feed_records", "ReplayPacer",
    "JsonLinesSinkBolt", "JsonLinesWriter", "ReplaySpout", "EmitTimer", "tick_config",
    "configure_topology",
]
