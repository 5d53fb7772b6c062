"""The pure logic of the World Cup topologies, shared by the bolts and the direct-count oracle."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

_SEPARATORS = re.compile(r"[/._]+")


def tokens_of(url: str) -> list[str]:
    """A URL's words: split on "/", "." and "_", numbers (object ids) left out."""
    return [t for t in _SEPARATORS.split(url or "") if t and not t.isdigit()]


def top_k(counts: Mapping[int, int], k: int) -> list[list[int]]:
    """``[[object_id, count], ...]``: count descending, then object id ascending."""
    return [[obj, n] for obj, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:k]]


class ChangeCounter:
    """Counts per key, and the keys whose count changed since :meth:`drain_changes` was last called."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.changed: set = set()

    def add(self, key, amount: int = 1) -> None:
        self.counts[key] += amount
        self.changed.add(key)

    def drain_changes(self) -> list[tuple]:
        changes = [(key, self.counts[key]) for key in sorted(self.changed, key=str)]
        self.changed.clear()
        return changes


def section_totals(requests: Iterable[Mapping], catalogue: Mapping[int, str]) -> dict[str, list[int]]:
    """Requests and bytes per catalogue section (requests of objects outside the catalogue dropped)."""
    totals: dict[str, list[int]] = {}
    for request in requests:
        section = catalogue.get(int(request["object_id"]))
        if section is not None:
            entry = totals.setdefault(section, [0, 0])
            entry[0] += 1
            entry[1] += int(request.get("size") or 0)
    return totals
