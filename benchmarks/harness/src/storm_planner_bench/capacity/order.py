"""The run's order and its frozen commit.

**Order.** Every arm runs ``--repeat`` times on every workload of every cluster, in rounds: round ``r`` runs
repetition ``r`` of every (workload, arm), in an order drawn afresh for each round and cluster from
``random.Random(f"{seed}:{cluster}:{round}")`` (:func:`round_order`), so no arm always runs first or last
and the baselines are not all measured at one time of day. The order is written to ``<out>/run.json`` with
the seed; the same seed, arms and workloads give the same order, so a resumed run keeps it.

**Commit.** The run records the commit it started on (``git rev-parse``: a tree with changes to tracked files
reads ``<sha>+changes``). A resumed run on another commit is refused unless told ``--allow-other-commit``
(its rows then name the commit that measured them, column ``code``).

**Conditions.** What the machine emulation must keep for the searches to compare, the CPU quotas' CFS period
so far, is recorded too; a resumed run that changes one is refused outright. A run that began before
conditions were recorded takes the ones it is resumed with, marked ``conditions_assumed`` (the report says so).
"""
from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN_FILE = "run.json"


@dataclass(frozen=True)
class Search:
    """One search: (cluster, workload, arm, repetition) and its place in its round (1-based)."""

    cluster: str
    workload: str
    arm: str
    repetition: int
    position: int = 0

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.cluster, self.workload, self.arm, str(self.repetition))


def round_order(seed: int, cluster: str, repetition: int, workloads: Sequence[str],
                arms: Sequence[str]) -> list[Search]:
    """Repetition ``repetition`` of every (workload, arm) on ``cluster``, shuffled by the round's seed."""
    pairs = [(w, a) for w in workloads for a in arms]
    random.Random(f"{seed}:{cluster}:{repetition}").shuffle(pairs)
    return [Search(cluster, w, a, repetition, i) for i, (w, a) in enumerate(pairs, 1)]


def run_order(seed: int, clusters: Sequence[str], repeat: int, workloads: Sequence[str],
              arms: Sequence[str]) -> list[Search]:
    """Every search of the run in order: cluster by cluster, round by round."""
    return [s for cluster in clusters for r in range(1, repeat + 1)
            for s in round_order(seed, cluster, r, workloads, arms)]


class CommitError(ValueError):
    """A resumed run on another commit than the one it started on."""


class ConditionError(ValueError):
    """A resumed run under other conditions than the ones it started with."""


def check_run(out: Path, commit: str, command: str, seed: int, order: Sequence[Search],
              allow_other_commit: bool = False, arms: Sequence[str] = (),
              conditions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Record the run (first time) or check a resumed one: another commit is refused unless allowed (the
    commits that measured are then listed). ``conditions`` (e.g. the CPU quotas' period) are what every
    search must share: a resumed run that changes one is refused, whatever it is told. Returns the run's
    record."""
    path = out / RUN_FILE
    record: dict[str, Any] = {}
    if path.exists():
        try:
            record = json.loads(path.read_text())
        except ValueError as error:
            raise ValueError(f"{path}: not a run record ({error}); move it away to start afresh") from None
        recorded = record.get("conditions")
        if isinstance(recorded, dict):
            _check_conditions(out, recorded, conditions or {})
        elif conditions:
            record["conditions_assumed"] = True     # its searches so far may have run under others
        started = str(record.get("commit", ""))
        if started and started != commit:
            if not allow_other_commit:
                raise CommitError(f"{out} was started on commit {started}, this is {commit}: a run measures one "
                                  "commit (check it out, or give --allow-other-commit to resume on this one)")
            record["commits"] = sorted({*record.get("commits", [started]), commit})
    else:
        record = {"commit": commit, "commits": [commit]}
    record.update({"command": command, "order_seed": seed, "conditions": dict(conditions or {}),
                   "arms": list(arms) or list(dict.fromkeys(s.arm for s in order)),
                   "order": [[s.cluster, s.workload, s.arm, s.repetition, s.position] for s in order]})
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    return record


def _check_conditions(out: Path, recorded: Mapping[str, Any], conditions: Mapping[str, Any]) -> None:
    changed = [f"{key} {recorded[key]!r} -> {value!r}" for key, value in conditions.items()
               if key in recorded and recorded[key] != value]
    if changed:
        raise ConditionError(f"{out} was measured under other conditions ({'; '.join(changed)}): a run keeps "
                             "them; start another --out for these")


def read_run(out: Path) -> dict[str, Any]:
    try:
        record = json.loads((out / RUN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
