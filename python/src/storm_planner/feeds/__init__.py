"""Replay feeds for the benchmark topologies.

- :mod:`.synthetic` — generators producing the real datasets' schemas at any
  size (pure Python, one record per index, so Spark can generate in parallel);
- :mod:`.readers` — PySpark readers for the real datasets' published formats;
- :mod:`.build` — ``storm-planner feeds build``: time-ordered, partitioned,
  compressed replay feeds;
- :mod:`.oracles` — PySpark batch jobs computing what each topology must output;
- :mod:`.commands` — the ``storm-planner feeds`` sub-commands.
"""
