"""Synthetic records in the real datasets' schemas, generated per index.

Every generator is a pure function of ``(seed, index)`` (plus size parameters),
so any slice of a feed can be produced independently — Spark partitions
generate their own ranges — and a feed is reproducible from its seed.
"""
from __future__ import annotations

import random
import zlib


def rng_for(seed: int, *keys) -> random.Random:
    """A random generator determined by the seed and the keys (stable across runs)."""
    text = ":".join(str(k) for k in (seed, *keys)).encode()
    return random.Random(zlib.crc32(text) * 1_000_003 + len(text))


def zipf_cdf(size: int, exponent: float) -> list[float]:
    """Cumulative Zipf weights of ranks 1..size, normalised to end at 1."""
    weights = [1.0 / (rank ** exponent) for rank in range(1, size + 1)]
    total = sum(weights)
    cdf, running = [], 0.0
    for weight in weights:
        running += weight / total
        cdf.append(running)
    cdf[-1] = 1.0
    return cdf


def sample_cdf(cdf: list[float], u: float) -> int:
    """Index i with cdf[i-1] < u <= cdf[i] (binary search)."""
    lo, hi = 0, len(cdf) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cdf[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo
