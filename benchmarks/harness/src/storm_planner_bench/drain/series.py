"""One forced move's figures, from the spouts' time log and the plan log (pure, no cluster).

The move's time ``t0`` is when the re-planner decided it: the drain's ``pause`` record less its duration
(the pause starts at the decision), or, undrained, its ``move`` record (answered at once). Around it:

* **per-second throughput**: tuples acked (and emitted, failed) in each second from ``t0 - before`` to
  ``t0 + after`` (:func:`per_second`);
* **5 s intervals without an ack**: the same span cut into 5 s intervals from ``t0 - before``, those in which
  no tuple was acked (issue #49's criterion: acks in every 5 s interval around the move), and the longest
  stretch without an ack (:func:`ack_gaps`);
* **latency from the due time** of the tuples due in the minute around the move (``t0 ± 30 s``), acked:
  p50, p99 and max (:func:`move_latency`; a tuple due then and never acked is counted apart, as lost);
* **the drain's phases** (:func:`drain_phases`): each phase's duration and note, the tuples in flight when the
  move was decided (the pause's note) and when the drain ended (its ``in_flight``).

Tuples lost (emitted, never acked once the run drained), failed and replayed are the whole run's.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storm_planner.streaming.timelog import TupleTimes
from storm_planner_bench.capacity.latency import new_histogram, percentile_ms, record_ms, window_latency

PHASES = ("pause", "drain", "move", "start", "resume")
FORCED_NOTE = "forced move ("
MATCH_S = 10.0              # a drain is the forced plan's when decided within this of the plan's answer
INTERVAL_S = 5.0
BEFORE_S, AFTER_S = 30.0, 60.0
LATENCY_HALF_S = 30.0
_BEFORE = re.compile(r"(\d+) tuple\(s\) in flight before")
_SLOT = re.compile(r"([\w.-]+):(\d+) in ([0-9.]+) s")


@dataclass(frozen=True)
class Move:
    """A forced move as the plan log shows it."""

    decided: float                      # t0: the re-planner's decision (epoch s)
    drained: bool
    phases: dict[str, dict[str, Any]]   # phase -> its record (the last of each phase)

    @property
    def moved_at(self) -> float:
        """When the move was answered to the plugin (epoch s)."""
        record = self.phases.get("move")
        return float(record["time"]) if record else math.nan

    @property
    def resumed_at(self) -> float:
        """When the spouts resumed (drained), or the restarted workers were up (undrained)."""
        record = self.phases.get("resume") or self.phases.get("start")
        return float(record["time"]) if record else math.nan


def find_move(records: Sequence[Mapping[str, Any]], topology_id: str) -> Move | None:
    """The forced move of the topology (the plan whose note begins ``forced move (``) with its drain's
    records (or, undrained, its measured ``move`` and ``start``), from the plan log's records (plans and
    ``"drain"`` records alike, oldest first); None without one. The re-planner's own moves are drained too:
    their records are another drain's, told apart by when they were decided."""
    mine = [r for r in records if r.get("topology") == topology_id]
    forced = next((r for r in mine if r.get("event", "plan") == "plan"
                   and any(str(n).startswith(FORCED_NOTE) for n in r.get("notes", ()))), None)
    if forced is None:
        return None
    drains: list[dict[str, dict[str, Any]]] = []
    for record in (r for r in mine if r.get("event") == "drain"):
        if not drains or record["phase"] == "pause" or record["phase"] in drains[-1]:
            drains.append({})
        drains[-1][record["phase"]] = dict(record)
    at = float(forced["time"])
    ours = [d for d in drains if abs(_decided(d) - at) <= MATCH_S]
    if not ours:
        return Move(at, False, {})
    phases = min(ours, key=lambda d: abs(_decided(d) - at))
    first = phases.get("pause") or phases.get("move") or next(iter(phases.values()))
    decided = _decided(phases)
    return Move(decided, bool(first.get("drained")), phases)


def _decided(phases: Mapping[str, Mapping[str, Any]]) -> float:
    """When a drain's move was decided: its first record's time less that record's seconds."""
    first = next(iter(phases.values()))
    return float(first["time"]) - float(first.get("seconds") or 0.0)


def complete(move: Move | None) -> bool:
    """Whether the move went all the way: drained, resumed; undrained, its workers measured up."""
    if move is None or not move.phases:
        return False
    return "resume" in move.phases if move.drained else "start" in move.phases


def per_second(times: TupleTimes, t0: float, before: float = BEFORE_S, after: float = AFTER_S) -> list[dict[str, Any]]:
    """One row per second ``s`` from ``-before`` to ``after`` (exclusive): tuples acked, first emitted and
    failed in ``[t0 + s, t0 + s + 1)``, and emits of ids already emitted (replays)."""
    seconds = int(before + after)
    acked, emitted, failed, emits = ([0] * seconds for _ in range(4))

    def bin_of(at: float) -> int | None:
        k = math.floor(at - (t0 - before))
        return k if 0 <= k < seconds else None

    for values, counts in ((times.acked.values(), acked), (times.emitted.values(), emitted),
                           (times.failed_at, failed), (times.emits_at, emits)):
        for at in values:
            k = bin_of(at)
            if k is not None:
                counts[k] += 1
    return [{"second": k - int(before), "acked": acked[k], "emitted": emitted[k], "failed": failed[k],
             "replayed": emits[k] - emitted[k]} for k in range(seconds)]


def ack_gaps(times: TupleTimes, t0: float, before: float = BEFORE_S, after: float = AFTER_S,
             interval: float = INTERVAL_S) -> dict[str, Any]:
    """The 5 s intervals from ``t0 - before`` to ``t0 + after`` without an ack (their starts, relative to
    ``t0``), and the longest stretch without an ack in that span (s, and where it began)."""
    begin, end = t0 - before, t0 + after
    empty = []
    k = 0
    while begin + k * interval < end - 1e-9:
        start = begin + k * interval
        if not times.acked_between(start, min(end, start + interval)):
            empty.append(round(start - t0, 1))
        k += 1
    acks = sorted(at for at in times.acked.values() if begin <= at < end)
    edges = [begin, *acks, end]
    longest, since = 0.0, begin
    for earlier, later in zip(edges, edges[1:]):
        if later - earlier > longest:
            longest, since = later - earlier, earlier
    return {"intervals": k, "intervals_without_ack": len(empty), "empty_at": empty,
            "longest_gap_s": round(longest, 2), "longest_gap_from_s": round(since - t0, 2)}


def move_latency(times: TupleTimes, t0: float, offered_tps: float, half: float = LATENCY_HALF_S) -> dict[str, Any]:
    """Latency from the due time of the tuples due in ``[t0 - half, t0 + half)`` and acked: p50, p99, max
    (ms); those due then but never acked or never emitted are counted (``due_unacked``, ``due_unemitted``)."""
    begin, end = t0 - half, t0 + half
    latency = window_latency(times, begin, end, offered_tps)
    waits = times.latencies_from_due_s(begin, end)
    # window_latency puts the unfinished at its histogram's top; the percentiles here are of the acked.
    acked = new_histogram()
    for wait in waits:
        record_ms(acked, wait * 1000.0)
    return {"due_p50_ms": _round(percentile_ms(acked, 50.0)), "due_p99_ms": _round(percentile_ms(acked, 99.0)),
            "due_max_ms": _round(max(waits) * 1000.0 if waits else math.nan),
            "due_tuples": latency.due_tuples, "due_unacked": latency.unacked, "due_unemitted": latency.unemitted}


def totals(times: TupleTimes) -> dict[str, int]:
    """The whole run's tuples: emitted, acked, lost (never acked), failed, replayed."""
    return {"emitted": len(times.emitted), "acked": len(times.acked), "lost": times.never_acked(),
            "failed": times.failed, "replayed": times.replayed}


def drain_phases(move: Move | None) -> dict[str, Any]:
    """Each phase's seconds (``<phase>_s``) and note, the tuples in flight at the decision and after the
    drain, the restarted workers' starts as the service measured them (``node:port`` -> s), and the time
    from the decision until the spouts resumed (drained) or the workers were up (undrained)."""
    row: dict[str, Any] = {f"{p}_s": math.nan for p in PHASES}
    if move is None:
        return {**row, "in_flight_before": None, "in_flight_after_drain": None, "starts": {}, "stopped_s": math.nan,
                "notes": ""}
    for phase, record in move.phases.items():
        row[f"{phase}_s"] = round(float(record.get("seconds") or 0.0), 2)
    pause = move.phases.get("pause", {}).get("note", "")
    found = _BEFORE.search(pause)
    drain = move.phases.get("drain")
    start = move.phases.get("start", {}).get("note", "")
    return {**row, "in_flight_before": int(found.group(1)) if found else None,
            "in_flight_after_drain": drain.get("in_flight") if drain else None,
            "starts": {f"{node}:{port}": float(s) for node, port, s in _SLOT.findall(start)},
            "stopped_s": round(move.resumed_at - move.decided, 2),
            "notes": " | ".join(f"{p}: {r.get('note', '')}" for p, r in move.phases.items())}


def _round(value: float) -> float:
    return round(value, 1) if math.isfinite(value) else math.nan
