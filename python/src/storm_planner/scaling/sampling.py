"""OOPSer's sampling algorithms (Mu et al. 2020, §2.2, Alg. 1 and §3.3): DSA and the fixed-step FSSA.

The sampler walks a path of provisions (``levels``: (cpu cores, memory MB), in increasing order) and
stress-tests one sampling instance at each level it visits until its throughput converges
(``measure(level) -> throughput``: on the cluster a real run, in the benchmark a curve). FSSA(k)
measures every k-th level. DSA, reconstructed from the prose (the extracted text lost Alg. 1):

* the step follows the gradient: after a step, the relative change of throughput per level ``g``
  sets the next step to ``round(target_change / g)`` levels, within [1, ``max_step``] — small steps
  where performance changes fast, long ones where it is flat;
* re-sampling: where performance fluctuates — a step whose change per level exceeds
  ``fluctuation``, or throughput that falls by more than ``tolerance`` (a stress test's run-to-run
  spread) while resources grow — every level inside the step is measured as well;
* it stops when performance no longer grows with resources: ``patience`` steps in a row gaining
  less than ``plateau_gain`` per level.

Both return samples ``(cpu, memory_mb, throughput)`` for :class:`.performance.PerformanceModel`.
Complexity: at most one measurement per level.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

Level = tuple[float, float]
Sample = tuple[float, float, float]


def fssa(levels: Sequence[Level], measure: Callable[[int], float], step: int) -> list[Sample]:
    """Fixed-step sampling: levels 0, step, 2·step, ... (and the last one)."""
    if step < 1:
        raise ValueError(f"fssa: step must be >= 1, got {step}")
    visited = list(range(0, len(levels), step))
    if visited[-1] != len(levels) - 1:
        visited.append(len(levels) - 1)
    return [(*levels[i], measure(i)) for i in visited]


def dsa(levels: Sequence[Level], measure: Callable[[int], float], *, target_change: float = 0.1,
        max_step: int = 5, fluctuation: float = 0.15, tolerance: float = 0.03, plateau_gain: float = 0.01,
        patience: int = 2) -> list[Sample]:
    """Dynamic sampling: gradient-sized steps, re-sampling where performance fluctuates."""
    measured: dict[int, float] = {0: measure(0)}
    here, step, flat = 0, 1, 0
    last = len(levels) - 1
    while here < last and flat < patience:
        there = min(here + step, last)
        measured[there] = measure(there)
        before, after = measured[here], measured[there]
        change = (after - before) / max(abs(before), 1e-9) / (there - here)
        if change > fluctuation or after < before * (1 - tolerance):
            for inside in range(here + 1, there):  # re-sample inside the step
                measured[inside] = measure(inside)
        flat = flat + 1 if change < plateau_gain else 0
        step = max(1, min(max_step, round(target_change / change) if change > 0 else max_step))
        here = there
    return [(*levels[i], measured[i]) for i in sorted(measured)]
