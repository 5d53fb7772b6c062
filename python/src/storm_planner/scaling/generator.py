"""Workloads for QEScalor (Mu et al., ICCS 2020, §3): scaling problems, diurnal rates, operator curves.

* :func:`paper_resources` — the provisions r1..r4 of §3.2 (0.6/1.2/1.8/2.4 cores, 33.2–33.8 MB);
* :func:`diurnal_rates` — a day's workload with a night trough, a working-day plateau and bursts
  (the shape of the paper's OriWL-1day, whose data is not public), compressed into any number of epochs;
* :func:`random_problem` — a scaling problem in the JSON shape of docs/formats.md with random provisions,
  concave performance (more CPU gains less per core), prices, switching costs and a diurnal workload;
* :func:`operator_curve` — a synthetic operator's throughput as a function of its provision, for the
  sampler's benchmark (compute-bound ``CO``: saturates with CPU; compute-and-memory ``CMO``: also
  limited by memory), with measurement noise.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

PAPER_PROVISIONS = ((0.6, 33.2), (1.2, 33.3), (1.8, 33.5), (2.4, 33.8))


def paper_resources(price_per_core: float = 1.0) -> list[dict]:
    return [{"id": f"r{i + 1}", "cpu": cpu, "memory_mb": memory, "price": round(cpu * price_per_core, 6)}
            for i, (cpu, memory) in enumerate(PAPER_PROVISIONS)]


def diurnal_rates(epochs: int, peak: float, seed: int = 0, trough: float = 0.15, noise: float = 0.05,
                  bursts: int = 3) -> list[float]:
    """One day in ``epochs`` epochs: low at night, two daytime humps, a few short bursts, noise."""
    rng = random.Random(seed)
    burst_at = {rng.randrange(epochs // 4, epochs) for _ in range(bursts)}
    rates = []
    for t in range(epochs):
        hour = 24.0 * t / epochs
        day = max(0.0, math.sin(math.pi * (hour - 6.0) / 16.0)) if 6.0 <= hour <= 22.0 else 0.0
        hump = 0.15 * math.exp(-((hour - 20.0) ** 2) / 2.0)  # the evening peak
        level = trough + (1.0 - trough) * min(1.0, 0.85 * day + hump)
        if any(0 <= t - b < max(1, epochs // 96) for b in burst_at):
            level = min(1.0, level * 1.35)
        rates.append(round(peak * max(0.0, level * (1.0 + rng.gauss(0.0, noise))), 3))
    return rates


def random_problem(seed: int, epochs: int = 48, provisions: int = 4, peak: float | None = None) -> dict:
    """A random scaling problem: provisions of rising CPU with concave performance, prices between
    proportional to CPU and flat, startup and shutdown costs of a fraction of an epoch's price."""
    rng = random.Random(seed)
    cores = sorted(round(rng.uniform(0.3, 3.0), 2) for _ in range(provisions))
    per_core = rng.uniform(500.0, 1500.0)
    exponent = rng.uniform(0.55, 0.95)  # performance ∝ cores^exponent: more CPU, less per core
    resources: list[dict[str, Any]] = []
    performance: dict[str, float] = {}
    for i, cpu in enumerate(cores):
        rid = f"r{i + 1}"
        resources.append({"id": rid, "cpu": cpu, "memory_mb": round(32.0 + 4.0 * cpu, 1),
                          "price": round(cpu * rng.uniform(0.8, 1.2) + rng.uniform(0.0, 0.3), 4)})
        performance[rid] = round(per_core * cpu ** exponent, 3)
    top = max(performance.values())
    peak = peak if peak is not None else top * rng.uniform(3.0, 10.0)
    mean_price = sum(r["price"] for r in resources) / provisions
    return {
        "operator": f"random-{seed}",
        "epoch_s": 300,
        "resources": resources,
        "performance": performance,
        "startup_cost": round(mean_price * rng.uniform(0.2, 2.0), 4),
        "shutdown_cost": round(mean_price * rng.uniform(0.0, 1.0), 4),
        "current": {resources[rng.randrange(provisions)]["id"]: rng.randrange(0, 4)},
        "workload": diurnal_rates(epochs, peak, seed=seed),
    }


def operator_curve(kind: str, seed: int = 0, noise: float = 0.02) -> Callable[[float, float], float]:
    """Throughput (tuples/s) of one instance of a synthetic operator at (cpu cores, memory MB).

    ``CO``: linear in CPU up to a knee, then saturating (serialisation, I/O); ``CMO``: the same
    shape, its ceiling also rising with memory; both with a step where a second thread starts
    paying off and Gaussian noise of ``noise`` (a stress test's run-to-run spread)."""
    if kind not in ("CO", "CMO"):
        raise ValueError(f"operator kind must be CO or CMO, got {kind!r}")
    rng = random.Random(seed)
    per_core = rng.uniform(800.0, 1600.0)
    knee = rng.uniform(1.2, 2.4)
    step_at = rng.uniform(0.8, 1.6)

    def throughput(cpu: float, memory_mb: float) -> float:
        ceiling = per_core * knee * (1.0 if kind == "CO" else min(1.0, 0.6 + memory_mb / 200.0))
        base = ceiling * (1.0 - math.exp(-cpu / knee * 1.6))
        base *= 1.08 if cpu >= step_at else 1.0
        return max(0.0, base * (1.0 + rng.gauss(0.0, noise)))

    return throughput
