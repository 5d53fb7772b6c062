"""Whether a new placement of a running topology pays for its moves: the re-plan's gate.

Pure functions of two sets of figures (:func:`storm_planner.core.evaluate.evaluate` of the current
placement and of the candidate, on the same measured problem); :mod:`.replan` decides when to ask and cuts
the planner's moves to the fewest that pass (its module docstring, step 5, says the rule in full). O(1)
each.
"""
from __future__ import annotations

from collections.abc import Mapping

# A link this busy (percent of its advertised capacity, before or after a move) makes the bytes between
# nodes the first traffic measure of a re-plan; below it, the tuples between workers.
LINK_PRESSURE_PCT = 50.0
# A node this busy (percent of its capacity, measured) is short of CPU: only then, or with a link at
# LINK_PRESSURE_PCT, may a running topology move (planner.replan.cautious).
CPU_PRESSURE_PCT = 90.0
# Overload (measured load over capacity, % of a core) must drop at least this much, and by min_gain,
# before executors move for it: measured loads are noisy, and a move costs restarts and in-flight tuples.
MIN_OVERLOAD_DROP = 5.0
# Under planner.replan.cautious, a move for traffic or balance must also take this many percentage points
# off the busiest node (or link) the topology is short of.
MIN_RELIEF_PCT = 5.0
# A topology short of CPU is re-planned within this share of every node (D_CPU): the placement the gate
# takes for relief (under the pressure line by the relief it asks for), not one that fills a node again.
RELIEF_TARGET_PCT = CPU_PRESSURE_PCT - MIN_RELIEF_PCT
EPSILON = 1e-6

RELIEF = "CPU pressure relieved"
SUSTAINABLE = "predicted sustainable rate raised"


def relieves_overload(verdict: str) -> bool:
    """Whether a verdict is overload's or the CPU pressure's relief: a move for either needs no further
    relief (step 5); only overload's is worth a spout's restart (and the pressure's when the source is
    resumable)."""
    return verdict.startswith(("overload", RELIEF, SUSTAINABLE))


def unrelieved(before: Mapping[str, float], after: Mapping[str, float]) -> str:
    """What a move for traffic or balance leaves as short as it was ('' when it relieves something).

    Under ``planner.replan.cautious`` a topology moves only when it is short of CPU or link; a move
    that cuts traffic elsewhere but leaves the busiest node (or link) where it was buys nothing worth
    its restarts: on the end-to-end bench such a move (inter-worker traffic 655 -> 584 tuples/s,
    busiest node unchanged) restarted two workers and sent p99 from 0.6 to 55 s."""
    short = []
    if short_of_cpu(before):
        if after["max_utilisation"] <= before["max_utilisation"] - MIN_RELIEF_PCT:
            return ""
        short.append(f"the busiest node stays at {after['max_utilisation']:.0f} % of its CPU "
                     f"(from {before['max_utilisation']:.0f} %)")
    if short_of_link(before):
        link_before, link_after = before["max_network_utilisation"], after.get("max_network_utilisation", 0.0)
        if link_after <= link_before - MIN_RELIEF_PCT:
            return ""
        short.append(f"the busiest link stays at {link_after:.0f} % (from {link_before:.0f} %)")
    return " and ".join(short) + " (planner.replan.cautious)" if short else ""


def ends_cpu_pressure(before: Mapping[str, float], after: Mapping[str, float]) -> bool:
    """A node short of CPU before; after, the busiest node ``MIN_RELIEF_PCT`` lower and under the pressure
    line, and no link newly put at ``LINK_PRESSURE_PCT`` (traffic matters where a link is short of it).

    Judged before traffic: measured CPU never exceeds what a node has, so a saturated node (a quota-held
    one at 93-100 %, its queue growing) shows no overload; the gate took no placement for relieving it
    (trends on the end-to-end bench kept a node at 94 % beside an idle one: load distance, pinned by the
    idle node, could not fall, and the spread's extra tuples between workers refused it).
    """
    if "max_utilisation" not in before or not short_of_cpu(before) or after["max_utilisation"] >= CPU_PRESSURE_PCT:
        return False
    if after["max_utilisation"] > before["max_utilisation"] - MIN_RELIEF_PCT:
        return False
    return short_of_link(before) or not short_of_link(after)


def short_of_something(figures: Mapping[str, float]) -> bool:
    """A node at CPU_PRESSURE_PCT of its CPU or over it, or a link at LINK_PRESSURE_PCT or more."""
    return short_of_cpu(figures) or short_of_link(figures)


def short_of_cpu(figures: Mapping[str, float]) -> bool:
    return figures["max_utilisation"] >= CPU_PRESSURE_PCT or figures["over_capacity"] > EPSILON


def short_of_link(figures: Mapping[str, float]) -> bool:
    return figures.get("max_network_utilisation", 0.0) >= LINK_PRESSURE_PCT


def improvement(before: Mapping[str, float], after: Mapping[str, float], min_gain: float,
                 by_bytes: bool = False) -> str | None:
    """Why ``after`` is better than ``before`` (a readable sentence), or None when it is not enough.

    Overload first; then traffic: with every tuple size known (``by_bytes``), the bytes between nodes
    (``network``, Mbit/s) and only then the tuples between workers; without sizes, the tuples between
    workers alone (an ack counts as much as a request there, so a tuple-weighted gate parted a spout
    from its counts to keep small acks off the wire). A placement worse by ``min_gain`` on a traffic
    measure earlier in that order is refused whatever it gains later; last, load distance.

    Where both sets of figures carry ``capacity_factor`` (the capacity planners' gate: the factor of the
    reference rate a placement is predicted to sustain), it comes first: a rise by ``min_gain`` pays, a fall
    by ``min_gain`` is refused whatever the rest gains, and otherwise only overload or the CPU pressure's
    relief pays (such a planner does not restart workers for traffic or balance alone).
    """
    capacity = "capacity_factor" in before and "capacity_factor" in after
    if capacity:
        rate_before, rate_after = before["capacity_factor"], after["capacity_factor"]
        if rate_after >= rate_before * (1 + min_gain) and rate_after > rate_before + EPSILON:
            return f"{SUSTAINABLE}: {rate_before:.3g}x -> {rate_after:.3g}x the measured rate"
        if rate_after < rate_before * (1 - min_gain):
            return None
    over_before, over_after = before["over_capacity"], after["over_capacity"]
    if over_before - over_after >= max(MIN_OVERLOAD_DROP, min_gain * over_before):
        return f"overload {over_before:.1f} -> {over_after:.1f}"
    if over_after < over_before - EPSILON:
        return None  # less overload, but not by enough to pay for the moves
    if over_after > over_before + EPSILON:
        return None
    if ends_cpu_pressure(before, after):
        return (f"{RELIEF}: busiest node {before['max_utilisation']:.0f} -> {after['max_utilisation']:.0f} % "
                f"of its CPU")
    if capacity:
        return None
    # Bytes between nodes count where a link is under pressure (or the move would put one there); below
    # that they cost what the tuples between workers already measure (Storm serialises both alike), and
    # a restart for bytes no link is short of bought nothing on the end-to-end bench.
    links_matter = by_bytes and max(before.get("max_network_utilisation", 0.0),
                                    after.get("max_network_utilisation", 0.0)) >= LINK_PRESSURE_PCT
    measures = ((("network", "inter-node traffic (Mbit/s)", 3),) if links_matter else ()) + \
        (("inter_worker", "inter-worker traffic", 1),)
    for key, label, digits in measures:
        traffic_before, traffic_after = before[key], after[key]
        if traffic_after > traffic_before * (1 + min_gain) + EPSILON:
            return None
        if traffic_before > EPSILON and (traffic_before - traffic_after) / traffic_before >= min_gain:
            return f"{label} {traffic_before:.{digits}f} -> {traffic_after:.{digits}f}"
    distance_before, distance_after = before["load_distance"], after["load_distance"]
    if distance_before > EPSILON and (distance_before - distance_after) / distance_before >= min_gain:
        return f"load distance {distance_before:.1f} -> {distance_after:.1f}"
    return None
