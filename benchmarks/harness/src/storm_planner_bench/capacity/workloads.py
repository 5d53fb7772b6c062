"""The workloads of ``storm-planner bench capacity``: ``bench e2e``'s ``*-link`` workloads with more tasks than
executors for their bolts that can spread (``<prefix>.tasks.<component>``: 4 tasks over the 2 executors a
shuffle- or fields-grouped bolt starts with; a ``global`` sink stays one task), so that a planner's
parallelism advice can add executors through a rebalance. Storm's schedulers run the same tasks and executors.

The rate a workload's search starts from, without a pilot, is its ``bench e2e`` rate (each spout's). Each
search emits many more tuples than a cell, so the feeds are larger (:data:`FEED_RECORDS`).
"""
from __future__ import annotations

import dataclasses

from storm_planner_bench.e2e.workloads import BARGAINS_LINK, TOPK_LINK, TRENDS_LINK, WORDCOUNT_LINK, Workload
from storm_planner_bench.e2e.workloads import parse_workloads as _parse

TASKS = 4
FEED_RECORDS, QUICK_FEED_RECORDS = 3_000_000, 30_000


def _with_tasks(workload: Workload, *components: str) -> Workload:
    return dataclasses.replace(workload, tasks={c: TASKS for c in components})


WORKLOADS = {w.name: w for w in (
    _with_tasks(TRENDS_LINK, "count", "rank"),
    _with_tasks(TOPK_LINK, "count"),
    _with_tasks(WORDCOUNT_LINK, "tokenize", "words"),
    _with_tasks(BARGAINS_LINK, "vwap", "join", "filter"),
)}
DEFAULT_WORKLOADS = ",".join(WORKLOADS)


def parse_workloads(text: str) -> list[Workload]:
    return _parse(text, WORKLOADS)
