"""Each paper's planner on its own metric, in the e2e report (issue #27's verdict).

Every seed paper optimises one thing and measured it on its own jobs. This module sets each paper's
planners beside Storm's DefaultScheduler and ResourceAwareScheduler on that metric, on the grid's workloads
that are the paper's jobs (or all of them, for a paper whose jobs are not in the grid), and says whether
the planner beat both beyond the repetitions' spread (every one of its cells better than every cell of
both, at least two repetitions each, nothing lost: :func:`~storm_planner_bench.e2e.figures.beats_both`).

=============================================  =========================================  ==================
paper (its experiment)                         metric here                                workloads
=============================================  =========================================  ==================
Chatzistergiou & Viglas, §7.4 (Figs. 6–9)      p99 complete latency; bytes over the links  trends, bargains
                                               per input tuple (what topDown minimises)
Madsen et al., §5.4 (Real Job 3)               CPU load distance (ALBIC's max_ld measure)  airline
Elastic Allocator (GMA), its Fig. 5            R_dev of CPU and of link utilisation        every workload
=============================================  =========================================  ==================

R_dev is the Elastic Allocator's deviation: the population standard deviation over the supervisors of
their use as a percentage of their capacity (their CPU quota, their link's rate; the run's cluster
description gives both, saved beside its cells as ``capacities.json``). A link's use is its traffic both
ways over its rate one way (the core's network model), so a busy node can pass 100 %. The load distance is
ALBIC's: the largest distance of a supervisor's CPU utilisation from the cluster's (all CPU over all
capacity), in percentage points. Without the capacities both fall back to the spread of CPU in percent of
a core, which favours spreading executors evenly over nodes of different size, and say so.

Nasiri et al.'s metric is the highest throughput a placement sustains on machines that differ in
per-tuple speed, which a fixed offered rate below saturation cannot show: ``bench hetero-real`` measures
it (``benchmarks/reports/hetero.md``), and the grid's ramps give each scheduler's highest sustained rate.
QEScalor advises parallelism rather than placing: ``benchmarks/reports/qescalor.md``.
"""
from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storm_planner.core.utilisation import utilisation_and_deviation
from storm_planner_bench.common.report import markdown_table
from storm_planner_bench.e2e.figures import BASELINES, beats_both, numbers, ran, spread
from storm_planner_bench.e2e.workloads import rate_heading

Cell = dict[str, Any]


@dataclass(frozen=True)
class Claim:
    """What one paper's planners should win on: a figure per cell, which way is better, on which workloads
    (empty: every workload)."""

    paper: str
    planners: tuple[str, ...]
    metric: str
    column: str                      # a cells.csv column, or a derived one (DERIVED)
    higher: bool
    workloads: tuple[str, ...] = ()


def claims(capacities_known: bool = True) -> tuple[Claim, ...]:
    chatzistergiou = "Chatzistergiou & Viglas §7.4"
    topdown = ("planner:topdown", "planner:tasklevel")
    gma = ("planner:gma", "planner:gma-repair")
    cpu = ("CPU R_dev % points", "cpu_rdev") if capacities_known else ("CPU sd % of a core", "cpu_sd")
    link = ("link R_dev % points", "link_rdev") if capacities_known else ("link sd Mbit/s", "link_sd")
    distance = ("CPU load distance % points", "cpu_ld") if capacities_known else ("CPU sd % of a core", "cpu_sd")
    return (
        Claim(chatzistergiou, topdown, "p99 latency ms", "latency_p99_ms", False, ("trends-link", "bargains-link")),
        Claim(chatzistergiou, topdown, "link B per input tuple", "link_bytes_per_tuple", False,
              ("trends-link", "bargains-link")),
        Claim("Madsen et al. §5.4 (ALBIC, MILP)", ("planner:albic", "planner:milp"), *distance, False,
              ("airline-link",)),
        Claim("Elastic Allocator (GMA) Fig. 5", gma, *cpu, False),
        Claim("Elastic Allocator (GMA) Fig. 5", gma, *link, False),
    )


def node_figures(cell: Cell, prefix: str, suffix: str) -> dict[str, float]:
    """The finite figures of a cell's columns ``<prefix><node><suffix>``, by node."""
    found = {}
    for column, given in cell.items():
        if not isinstance(column, str):
            continue   # csv's key for the extra fields of a malformed row
        if column.startswith(prefix) and column.endswith(suffix) and given not in (None, ""):
            try:
                value = float(given)
            except (TypeError, ValueError):
                continue
            if math.isfinite(value):
                found[column[len(prefix):len(column) - len(suffix)]] = value
    return found


def node_deviation(prefix: str, suffix: str) -> Callable[[Cell], float]:
    """The population standard deviation over a cell's supervisors of the columns ``<prefix><node><suffix>``
    (nan with fewer than two figures)."""
    def deviation(cell: Cell) -> float:
        values = list(node_figures(cell, prefix, suffix).values())
        return statistics.pstdev(values) if len(values) > 1 else math.nan
    return deviation


def _with_capacity(cell: Cell, prefix: str, suffix: str,
                   capacity: Mapping[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """(figure, capacity) by node, of the nodes of ``capacity`` with a positive capacity and a figure."""
    figures = node_figures(cell, prefix, suffix)
    known = {n: c for n, c in capacity.items() if n in figures and c > 0}
    return {n: figures[n] for n in known}, known


def utilisation_deviation(cell: Cell, prefix: str, suffix: str, capacity: Mapping[str, float]) -> float:
    """The Elastic Allocator's R_dev of the nodes of ``capacity`` that have a figure (nan with fewer than
    two)."""
    used, known = _with_capacity(cell, prefix, suffix, capacity)
    return utilisation_and_deviation(used, known)[1] if len(known) > 1 else math.nan


def load_distance(cell: Cell, capacity: Mapping[str, float]) -> float:
    """ALBIC's load distance over the nodes of ``capacity`` with a CPU figure: the largest distance, in
    percentage points, of a node's utilisation from the cluster's (nan with fewer than two nodes)."""
    used, known = _with_capacity(cell, "cpu_", "_pct", capacity)
    if len(known) < 2:
        return math.nan
    average = 100.0 * sum(used.values()) / sum(known.values())
    return max(abs(100.0 * used[n] / c - average) for n, c in known.items())


# The Elastic Allocator's balance measure (its Fig. 5): the spread of the supervisors' CPU (% of a core,
# cgroup cpuacct) and of their links' traffic (Mbit/s both ways) over the measured window.
DERIVED: dict[str, Callable[[Cell], float]] = {
    "cpu_sd": node_deviation("cpu_", "_pct"),
    "link_sd": node_deviation("link_", "_mbit"),
}


@dataclass(frozen=True)
class Capacities:
    """Each supervisor's CPU (% of a core, its quota) and link (Mbit/s), as the run held them."""

    cpu: Mapping[str, float]
    link_mbit: Mapping[str, float]

    def to_json(self) -> str:
        return json.dumps({"cpu": dict(self.cpu), "link_mbit": dict(self.link_mbit)}, indent=1, sort_keys=True)

    @classmethod
    def read(cls, path: Path) -> Capacities:
        """Capacities saved by a run (untrusted: at most MAX_CAPACITIES_BYTES, names and positive finite
        numbers only; anything else raises ValueError naming the file)."""
        with path.open("rb") as handle:
            data = handle.read(MAX_CAPACITIES_BYTES + 1)
        if len(data) > MAX_CAPACITIES_BYTES:
            raise ValueError(f"{path}: larger than {MAX_CAPACITIES_BYTES} bytes")
        try:
            raw = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: not JSON ({error})") from None
        if not isinstance(raw, dict) or set(raw) != {"cpu", "link_mbit"}:
            raise ValueError(f"{path}: expected an object with 'cpu' and 'link_mbit'")
        return cls(cpu=_per_node(raw["cpu"], f"{path}: cpu"), link_mbit=_per_node(raw["link_mbit"], f"{path}: link_mbit"))


MAX_CAPACITIES_BYTES = 1 << 20


def _per_node(raw: Any, where: str) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object of node: number")
    found = {}
    for node, value in raw.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not (0 < value < 1e9):
            raise ValueError(f"{where}: {node!r} has {value!r}, not a positive finite number")
        found[str(node)] = float(value)
    return found


def with_derived(cell: Cell, capacities: Capacities | None = None) -> Cell:
    derived = {name: figure(cell) for name, figure in DERIVED.items()}
    if capacities is not None:
        derived["cpu_rdev"] = utilisation_deviation(cell, "cpu_", "_pct", capacities.cpu)
        derived["link_rdev"] = utilisation_deviation(cell, "link_", "_mbit", capacities.link_mbit)
        derived["cpu_ld"] = load_distance(cell, capacities.cpu)
    return {**cell, **derived}


def papers_section(groups: dict[tuple[str, str], list[Cell]], capacities: Capacities | None = None) -> str:
    """The report's section: a row per claim, planner and workload (at each of its rates) the run has
    cells of; empty when it has none."""
    derived = {key: [with_derived(c, capacities) for c in cells] for key, cells in groups.items()}
    rows = []
    for claim in claims(capacities is not None):
        for (workload, rate), cells in derived.items():
            if claim.workloads and workload not in claim.workloads:
                continue
            for planner in claim.planners:
                mine = [c for c in cells if c["scheduler"] == planner]
                if not mine:
                    continue
                rows.append([claim.paper, planner, claim.metric, f"{workload} at {rate_heading(workload, rate)}",
                             spread([c for c in mine if ran(c)], claim.column),
                             *(spread([c for c in cells if c["scheduler"] == b and ran(c)], claim.column)
                               for b in BASELINES),
                             verdict(mine, cells, claim.column, claim.higher)])
    if not rows:
        return ""
    header = ["paper", "planner", "metric", "workload (t/s)", "planner", *BASELINES, "verdict"]
    return ("## Each paper's planner on its own metric\n\nMedian [min–max] over repetitions; ✓: better than "
            "both of Storm's schedulers in every repetition (at least two each, each run as asked), nothing lost. "
            "Nasiri et al.'s "
            "metric (the highest sustained throughput on machines of different speed) is measured by `bench "
            "hetero-real` (`benchmarks/reports/hetero.md`) and the ramps; QEScalor's by "
            "`benchmarks/reports/qescalor.md`.\n\n"
            + markdown_table(header, rows, right=range(4, 7)) + "\n")


def verdict(mine: list[Cell], cells: list[Cell], column: str, higher: bool) -> str:
    """Whether ``mine`` beat Storm's two schedulers among ``cells`` on ``column``: beyond the spread, by
    the median only, not (naming which), or too few repetitions to say."""
    if beats_both(mine, cells, column, higher):
        return "✓ beats both beyond the spread"
    lost = sum(numbers(mine, "lost"))
    if lost > 0:
        return f"lost {lost:,.0f} tuples"
    other = [c["status"] for c in mine if not ran(c)]
    if other:
        return f"{len(other)} of {len(mine)} repetitions did not run as asked ({other[0][:60]})"
    missing = len(mine) - min(len(numbers(mine, column)), len(numbers(mine, "lost")))
    if missing:
        return f"{missing} of {len(mine)} repetitions without a figure"
    theirs = {b: numbers([c for c in cells if c["scheduler"] == b and ran(c)], column) for b in BASELINES}
    if len(numbers(mine, column)) < 2 or any(len(values) < 2 for values in theirs.values()):
        return "fewer than two repetitions"
    mine_median = statistics.median(numbers(mine, column))
    behind = [b for b, values in theirs.items()
              if not (mine_median > statistics.median(values) if higher
                      else mine_median < statistics.median(values))]
    if behind:
        return f"not better than {' and '.join(behind)} (median)"
    return "better by the median, inside the spread"
