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
import importlib

# Names resolve lazily: feed readers and oracles import ``.feedio`` without
# pulling in streamparse, which the component modules need.
_EXPORTS = {
    "ConfError": "conf", "ConfReader": "conf",
    "iter_feed_lines": "feedio", "iter_feed_records": "feedio",
    "ReplayPacer": "pacing",
    "JsonLinesSinkBolt": "sink", "JsonLinesWriter": "sink",
    "ReplaySpout": "spout",
    "EmitTimer": "ticks", "tick_config": "ticks",
    "configure_topology": "topology",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
