"""What each stream of a workload costs on the wire, fitted from the bytes an e2e grid measured per link.

Every cell of ``bench e2e`` records, per supervisor, the bytes its emulated link carried out and in per
tuple the topology processed (``link_<node>_out_bytes_per_tuple``, ``..._in_...``) and which components'
executors each worker held (``workers``). The kit's traffic model (:mod:`storm_planner.core.traffic`) says
how a stream's tuples split over executor pairs by its grouping, so for a placement the bytes a node sends
are linear in each stream's wire bytes per input tuple ``w_s``:

* uniform groupings (shuffle, fields, direct, a global stream to one task): node ``k`` sends
  ``w_s · c_s(k) · (n_t − c_t(k)) / (n_s · n_t)`` and receives ``w_s · c_t(k) · (n_s − c_s(k)) / (n_s · n_t)``
  (``c(k)``: the component's executors on ``k``, ``n``: all of them);
* ``all`` (every emit to every target task; ``w_s`` per copy): sends ``w_s · c_s(k) · (n_t − c_t(k)) / n_s``,
  receives ``w_s · c_t(k) · (n_s − c_s(k)) / n_s``;

plus a constant per direction for a node that holds a worker of the topology and one for a node that holds
none (heartbeats to Nimbus and ZooKeeper, Netty's own messages). Each cell gives 8 equations (4 nodes, 2
directions); the grid's placements differ enough to fit every ``w_s`` >= 0 by non-negative least squares
(Lawson & Hanson). The weights are per input tuple, so they hold each stream's rate and its size together,
acker messages included, as Storm's wire really carries them: what the prior can only guess (a bolt emits
one tuple per input, a user tuple of unknown size weighs 80 B, an acker message 60 B).

Two streams between the same components whose coefficients are proportional (a fields stream and an
``all`` stream beside it: the first's are the second's over ``n_t``) cannot be told apart: the fit may
split their joint weight between them in any proportion, which changes nothing this module predicts but
makes each one's weight, compared with the prior, meaningless alone. Streams are fitted on the grid's placements only; a placement unlike all of
them is a prediction. O(cells · nodes · streams) to build, NNLS on that small matrix.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from storm_planner.core.elements import Stream
from storm_planner.core.errors import StormPlannerError
from storm_planner.core.problem import Problem

DIRECTIONS = ("out", "in")
OVERHEADS = ("out, a node with a worker", "out, a node without", "in, a node with a worker", "in, a node without")
MIN_CELLS = 3           # below this the equations do not pin the weights down
REQUIRED_COLUMNS = ("workload", "scheduler", "status", "workers")
_WORKER = re.compile(r"([\w.-]+):\d+\[([^\]]*)\]")

Counts = Mapping[str, Mapping[str, float]]   # component -> node -> executors there


def node_counts(workers: str) -> dict[str, Counter[str]]:
    """Component -> node -> executors, from a cell's ``workers`` column
    (``i7-a:6700[__ackerx2,countx1] i7-b:6701[topx1]``); Storm's system component is not placed work."""
    counts: dict[str, Counter[str]] = {}
    for node, inside in _WORKER.findall(workers if isinstance(workers, str) else ""):
        for part in filter(None, inside.split(",")):
            component, _, many = part.rpartition("x")
            if component and component != "__system" and many.isdigit():
                counts.setdefault(component, Counter())[node] += int(many)
    return counts


def stream_label(stream: Stream) -> str:
    return f"{stream.source} > {stream.target} ({stream.stream_id})"


class TooFewCells(StormPlannerError, ValueError):
    """A workload without cells enough to fit its streams' weights."""


def _sides(stream: Stream, executors: Mapping[str, int], counts: Counts, node: str) -> tuple[float, float]:
    """(sent, received) by ``node`` per unit of the stream's weight."""
    n_s, n_t = executors[stream.source], executors[stream.target]
    if stream.grouping == "global" and n_t > 1:
        # Every tuple goes to the target's first task, and which node holds it is not in the counts.
        raise ValueError(f"{stream_label(stream)}: a global stream into {n_t} executors cannot be fitted "
                         "from executors per node")
    c_s, c_t = counts.get(stream.source, {}).get(node, 0), counts.get(stream.target, {}).get(node, 0)
    per_pair = 1.0 / n_s if stream.grouping == "all" else 1.0 / (n_s * n_t)
    return c_s * (n_t - c_t) * per_pair, c_t * (n_s - c_s) * per_pair


def coefficients(problem: Problem, counts: Counts, nodes: Sequence[str]) -> dict[tuple[str, str], list[float]]:
    """Per (node, direction): one coefficient per stream of ``problem``, then the four overheads."""
    executors = {c.id: c.executors for c in problem.components}
    rows: dict[tuple[str, str], list[float]] = {}
    for node in nodes:
        sides = [_sides(s, executors, counts, node) for s in problem.streams]
        hosted = 1.0 if any(node in where and where[node] for where in counts.values()) else 0.0
        rows[(node, "out")] = [sent for sent, _ in sides] + [hosted, 1.0 - hosted, 0.0, 0.0]
        rows[(node, "in")] = [got for _, got in sides] + [0.0, 0.0, hosted, 1.0 - hosted]
    return rows


@dataclass(frozen=True)
class WireFit:
    """Each stream's fitted wire bytes per input tuple, the overheads, and how well they fit."""

    workload: str
    streams: tuple[str, ...]           # stream_label of each of the problem's streams, in order
    weights: tuple[float, ...]         # bytes per input tuple, one per stream
    overheads: tuple[float, ...]       # bytes per tuple, one per OVERHEADS
    rms: float                         # bytes per tuple per link direction
    mean: float                        # the measured figure's mean, for scale
    cells: int

    def streams_bytes(self, problem: Problem, counts: Counts, nodes: Sequence[str]) -> float:
        """Bytes per input tuple the placement ``counts`` sends between nodes, by the fitted weights
        (streams only; a byte between two supervisors counts on both links, as the bench's figure)."""
        w = np.array(self.weights)
        return float(sum(np.dot(row[:len(w)], w) for row in coefficients(problem, counts, nodes).values()))

    def link_bytes(self, problem: Problem, counts: Counts, nodes: Sequence[str]) -> float:
        """The bench's ``link_bytes_per_tuple`` this fit predicts for the placement, overheads included."""
        w = np.array(self.weights + self.overheads)
        return float(sum(np.dot(row, w) for row in coefficients(problem, counts, nodes).values()))

    def weighted(self, problem: Problem) -> Problem:
        """``problem`` with each stream's traffic as fitted: its weight as the rate, one byte a tuple, so a
        planner weighing IMC in tuples and one weighing bytes both optimise the measured wire."""
        weight = dict(zip(self.streams, self.weights))
        streams = tuple(dataclasses.replace(s, rate=max(weight[stream_label(s)], 1e-6), tuple_bytes=1.0)
                        for s in problem.streams)
        return problem.replace(streams=streams)


def fit_wire(workload: str, problem: Problem, cells: Iterable[Mapping[str, str]], nodes: Sequence[str]) -> WireFit:
    """Fit every stream's weight to the cells' per-node link bytes (cells of one workload, ``workers`` and
    ``link_<node>_{out,in}_bytes_per_tuple`` set; others are skipped). ValueError below MIN_CELLS."""
    from scipy.optimize import nnls

    matrix, measured, used = [], [], 0
    for cell in cells:
        figures = link_figures(cell, nodes)
        counts = node_counts(cell.get("workers", ""))
        if figures is None or not counts:
            continue
        used += 1
        for key, row in coefficients(problem, counts, nodes).items():
            matrix.append(row)
            measured.append(figures[key])
    if used < MIN_CELLS:
        raise TooFewCells(f"{workload}: {used} cell(s) with per-link bytes and workers, at least {MIN_CELLS} needed")
    a, b = np.array(matrix), np.array(measured)
    try:
        solution, _ = nnls(a, b)
    except RuntimeError as error:   # its iteration limit
        raise ValueError(f"{workload}: the least-squares fit did not converge ({error})") from None
    residual = b - a @ solution
    k = len(problem.streams)
    return WireFit(workload, tuple(stream_label(s) for s in problem.streams), tuple(float(x) for x in solution[:k]),
                   tuple(float(x) for x in solution[k:]), float(np.sqrt(np.mean(residual ** 2))), float(b.mean()), used)


def link_figures(cell: Mapping[str, str], nodes: Sequence[str]) -> dict[tuple[str, str], float] | None:
    """Per (node, direction) the cell's bytes per tuple, or None when any is missing or not finite."""
    figures = {}
    for node in nodes:
        for direction in DIRECTIONS:
            try:
                value = float(cell.get(f"link_{node}_{direction}_bytes_per_tuple") or "")
            except (TypeError, ValueError):   # a short row's missing field is None
                return None
            if not math.isfinite(value) or value < 0:
                return None
            figures[(node, direction)] = value
    return figures
