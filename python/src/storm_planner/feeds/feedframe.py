"""The common shape of a feed before it is written: one row per record.

Readers and generators produce a DataFrame with three columns:

- ``ts_ms`` (long): the record's event time, milliseconds since the epoch (UTC);
- ``seq`` (long): a tie-breaker keeping the input order of records with equal times;
- ``json`` (string): the record as one JSON object in the dataset's own field names.

plus a count of malformed input rows that were skipped (:class:`FeedFrame`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

COLUMNS = ("ts_ms", "seq", "json")


@dataclass
class FeedFrame:
    kind: str
    frame: Any  # pyspark.sql.DataFrame with COLUMNS
    malformed: int = 0
    malformed_examples: list[str] = field(default_factory=list)
    inputs: int = 0  # input files read (0 for synthetic feeds)

    def report(self) -> str:
        if not self.malformed:
            return f"{self.kind}: no malformed rows"
        examples = "; ".join(e[:80] for e in self.malformed_examples[:3])
        return f"{self.kind}: skipped {self.malformed} malformed rows (e.g. {examples})"
