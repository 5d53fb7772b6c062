"""Wiring the metrics store and the re-planner into ``storm-planner serve``.

``serve --zookeeper HOST:PORT`` starts a :class:`~.store.MetricsStore` on that
ensemble and gives the service a :class:`~.source.StoreMetricsSource`; without
``--zookeeper`` (and without ``$STORM_PLANNER_ZOOKEEPER``) the service plans on
estimates. The :class:`~.replan.Replanner` is always there: it keeps running
topologies where they are unless metrics say moving pays (``--no-replan``:
never re-plan a running topology).
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Iterator
from typing import NamedTuple

from storm_planner.adaptation.replan import Replanner, Runner
from storm_planner.adaptation.state import (
    FileStateStore,
    StateStore,
    StateStoreError,
    ZooKeeperStateStore,
    stateful_runner,
)
from storm_planner.metrics.source import StoreMetricsSource
from storm_planner.metrics.store import DEFAULT_STORM_ROOT, MetricsStore
from storm_planner.metrics.windows import DEFAULT_ROOT
from storm_planner.planners import run as run_planner

ZOOKEEPER_ENV = "STORM_PLANNER_ZOOKEEPER"
DRAIN_MARKERS_ROOT = "/storm-planner/drains"   # the topologies a drain paused (service/planning/drain.py)

log = logging.getLogger("storm_planner.metrics")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("metrics and re-planning")
    group.add_argument("--zookeeper", metavar="HOST:PORT[,HOST:PORT...]", default=None,
                       help=f"read the workers' metrics from this ZooKeeper (default: ${ZOOKEEPER_ENV}; "
                            f"none: plan on estimates)")
    group.add_argument("--metrics-root", default=DEFAULT_ROOT, metavar="ZNODE",
                       help=f"znode the metrics hook writes under (default {DEFAULT_ROOT}; "
                            f"planner.metrics.zookeeper.root)")
    group.add_argument("--storm-root", default=DEFAULT_STORM_ROOT, metavar="ZNODE",
                       help=f"Storm's storm.zookeeper.root, to notice killed topologies and delete their "
                            f"metrics (default {DEFAULT_STORM_ROOT}; empty: never delete)")
    group.add_argument("--load-memory", metavar="FILE",
                       help="keep each topology name's measured loads in FILE across restarts (default: in "
                            "ZooKeeper with --zookeeper, else beside the plan log)")
    group.add_argument("--no-replan", action="store_true",
                       help="never move the executors of a running topology")


@contextlib.contextmanager
def metrics_for_serve(args: argparse.Namespace, runner: Runner = run_planner
                      ) -> Iterator[tuple[StoreMetricsSource | None, Replanner]]:
    """(metrics source or None, re-planner) for the service; stops the store on exit. The re-planner plans
    with ``runner`` (the service's :class:`~storm_planner.service.planning.runner.PlannerRunner`), through a
    :class:`~storm_planner.adaptation.state.StatefulRunner` when ZooKeeper can keep planner state."""
    enabled = not getattr(args, "no_replan", False)
    hosts = getattr(args, "zookeeper", None) or os.environ.get(ZOOKEEPER_ENV)
    if not hosts:
        log.info("no --zookeeper: planning on estimated loads and rates")
        yield None, Replanner(enabled=enabled, runner=runner)
        return
    store = MetricsStore(hosts, args.metrics_root, storm_root=args.storm_root or None).start()
    log.info("metrics: reading %s%s from ZooKeeper %s", args.metrics_root, "/<topology>/<task>", hosts)
    state_store = _planner_state_store(hosts)
    replanner = Replanner(enabled=enabled,
                          runner=runner if state_store is None else stateful_runner(state_store, run=runner))
    try:
        yield StoreMetricsSource(store), replanner
    finally:
        store.stop()
        if state_store is not None:
            state_store.close()


class ServiceState(NamedTuple):
    """Where the service keeps what must outlive it (None: beside the plan log, else in memory)."""

    drain_markers: StateStore | None    # the topologies a drain paused (service/planning/drain.py)
    load_memory: StateStore | None      # each topology name's measured loads (service/planning/memory_store.py)


@contextlib.contextmanager
def service_state_for_serve(args: argparse.Namespace) -> Iterator[ServiceState]:
    """Where the service keeps its drain markers and its load memory, so that a restarted service resumes
    the topologies a drain paused and plans known names on their loads: in ZooKeeper (under
    :data:`DRAIN_MARKERS_ROOT` and :data:`~storm_planner.service.planning.memory_store.ZOOKEEPER_ROOT`) when the
    service has one; ``--load-memory FILE`` puts the load memory in that file instead (None: beside the plan log)."""
    from storm_planner.service.planning.memory_store import MAX_FILE_BYTES, ZOOKEEPER_ROOT

    hosts = getattr(args, "zookeeper", None) or os.environ.get(ZOOKEEPER_ENV)
    memory_file = getattr(args, "load_memory", None)
    markers = None
    if hosts:
        try:
            markers = ZooKeeperStateStore.connect(hosts, root=DRAIN_MARKERS_ROOT)
        except StateStoreError as error:
            log.warning("service state: %s; the drain markers and the load memory are kept beside the plan log",
                        error)
    if memory_file:
        memory: StateStore | None = FileStateStore(memory_file, max_bytes=MAX_FILE_BYTES)
    else:
        memory = ZooKeeperStateStore(markers.client, root=ZOOKEEPER_ROOT) if markers is not None else None
    try:
        yield ServiceState(markers, memory)
    finally:
        if markers is not None:
            markers.close()


def _planner_state_store(hosts: str) -> ZooKeeperStateStore | None:
    """Where stateful planners (albic's collocated sets) keep their state, so a restarted
    service loses nothing; without it they plan as on a first round."""
    try:
        store = ZooKeeperStateStore.connect(hosts)
    except StateStoreError as error:
        log.warning("planner state: %s; stateful planners start afresh each round", error)
        return None
    log.info("planner state: kept in ZooKeeper %s under %s", hosts, store.root)
    return store
