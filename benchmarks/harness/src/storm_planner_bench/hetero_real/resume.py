"""``bench hetero-real`` resumes: the runs an earlier sitting finished, read back from its ``run.json``.

The bench writes every run as it ends (:func:`~storm_planner_bench.hetero_real.report.write_outputs`):
``run.json`` holds each run's row, its steps' unrounded records and what a row leaves out (the applied
placement, the prediction, the rates at the highest sustained step); it is replaced whole, never
written in place. A rerun of the same command into the same
folder reads those runs back (:func:`saved_runs`) and runs only the others, as ``bench e2e`` skips its
finished cells.

Runs are comparable only under the same settings and the same profile (the plans are made from it), so
a folder written under other ones is refused, naming what differs. ``run.json`` is read as input from
outside: within the JSON limits, and a run record that does not read back is run again, with a warning,
without hiding the records that do.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from storm_planner.core.jsonfile import read_json
from storm_planner_bench.hetero_real.driver import MOVED, BenchSettings, Run, Step
from storm_planner_bench.hetero_real.report import jsonable
from storm_planner_bench.hetero_real.search import BenchError, Verdict

# A step row's per-component and per-machine columns, by prefix ("task_cpu_" before "cpu_": it ends in it).
_STEP_COLUMNS = (("rate_", "rates"), ("throttled_", "throttled"), ("task_cpu_", "task_cpu"), ("cpu_", "machine_cpu"))


@dataclasses.dataclass
class SavedRuns:
    """What an earlier sitting left in ``--out``: its report (settings, profile) and its finished runs."""

    report: dict[str, Any]
    runs: list[Run]

    def done(self) -> set[tuple[str, str, int]]:
        """(shape, placement, repetition) of every finished run; one whose executors Nimbus moved while it
        ran (:data:`MOVED`) is to run again."""
        return {(r.shape, r.placement, r.repetition) for r in self.runs if not r.status.startswith(MOVED)}

    def kept(self) -> list[Run]:
        """The saved runs a resumed bench keeps (the others it runs again and replaces)."""
        done = self.done()
        return [r for r in self.runs if (r.shape, r.placement, r.repetition) in done]

    def ras_start(self, shares: Sequence[float]) -> dict[str, int]:
        """Per shape, the index in ``shares`` of the share the last RAS run was placed at: where the next RAS
        repetition starts, as within one sitting (:meth:`Bench._submit_ras`)."""
        start: dict[str, int] = {}
        for run in self.runs:
            share = run.ras_share
            if run.placement == "ras" and share is not None and share in shares:
                start[run.shape] = max(start.get(run.shape, 0), list(shares).index(share))
        return start


def saved_runs(out: Path, settings: BenchSettings, warn: Callable[[str], Any]) -> SavedRuns | None:
    """The runs an earlier sitting finished in ``out`` (None when it holds none).

    :class:`BenchError` when they were made under other settings: they could not stand beside new ones.
    """
    if not (out / "runs.csv").exists():
        return None
    if not (out / "run.json").exists():
        raise BenchError(f"{out} holds runs.csv but no run.json, from which runs are read back: give another "
                         "--out, or --overwrite to replace them")
    report = read_json(out / "run.json")
    if not isinstance(report, dict) or not isinstance(report.get("runs"), list):
        raise BenchError(f"{out / 'run.json'}: not a hetero-real report (no list of runs)")
    differ = _differences(report.get("settings"), jsonable(dataclasses.asdict(settings)))
    if differ:
        raise BenchError(f"{out} holds runs made with other settings ({', '.join(differ)}): give another --out, "
                         "or --overwrite to replace them")
    runs = []
    for index, record in enumerate(report["runs"]):
        try:
            runs.append(run_from_record(record))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            warn(f"warning: {out / 'run.json'}: run {index} does not read back ({type(error).__name__}: {error}); "
                 "it runs again")
    if report["runs"] and not runs:
        # Running them all again would rewrite run.json over records that might yet be read (another version).
        raise BenchError(f"{out / 'run.json'}: none of its {len(report['runs'])} runs reads back: give another "
                         "--out, or --overwrite to replace them")
    return SavedRuns(report, runs)


def check_profile(saved: SavedRuns, profile: Mapping[str, Any]) -> None:
    """Refuse to resume on another profile than the saved runs': the plans are made from it."""
    if jsonable(dict(profile)) != saved.report.get("profile"):
        raise BenchError("the profile differs from the one the saved runs were planned with: resume with "
                         "--profile <out>/profile.json, or give another --out")


def _differences(saved: Any, current: Mapping[str, Any]) -> list[str]:
    """The settings that differ; one a folder does not name counts as its default, which a setting added
    since is given to keep the bench's earlier behaviour."""
    if not isinstance(saved, dict):
        return ["no settings saved"]
    defaults = _setting_defaults()
    differ = []
    for key, value in current.items():
        there = saved.get(key, defaults.get(key))
        if there != value:
            differ.append(f"{key}: {there!r} there, {value!r} now")
    return differ


def _setting_defaults() -> dict[str, Any]:
    defaults = {}
    for setting in dataclasses.fields(BenchSettings):
        if setting.default is not dataclasses.MISSING:
            defaults[setting.name] = jsonable(setting.default)
        elif setting.default_factory is not dataclasses.MISSING:
            defaults[setting.name] = jsonable(setting.default_factory())
    return defaults


def run_from_record(record: Mapping[str, Any]) -> Run:
    """A :class:`Run` from its record in ``run.json`` (its row, with the fields a row leaves out)."""
    measured = record["status"] == "ran"
    run = Run(shape=str(record["topology"]), placement=str(record["placement"]),
              repetition=int(record["repetition"]) - 1, status=str(record["status"]),
              declared_cpu=_numbers(record.get("declared_cpu") or {}, float),
              ras_share=None if record.get("ras_share") in ("", None) else float(record["ras_share"]),
              parallelism=_pairs(record.get("parallelism") or "", int),
              applied=list(record.get("applied") or []), plan_check=str(record.get("plan_check") or ""),
              counts=_pairs(record.get("placement_counts") or "", int), predicted=dict(record.get("predicted") or {}),
              sustained_offered=float(record["sustained_offered"]) if measured else 0.0,
              sustained_rates=_numbers(record.get("sustained_rates") or {}, float),
              load_avg=[float(x) for x in record.get("load_avg") or []], seconds=float(record.get("seconds") or 0),
              notes=[str(n) for n in record.get("notes") or []])
    if run.repetition < 0:
        raise ValueError(f"repetition {run.repetition + 1}: at least 1")
    exact = record.get("step_records")
    run.steps = ([step_from_record(step) for step in exact] if exact is not None
                 else [step_from_row(row) for row in record.get("steps") or []])   # a folder from before them
    return run


def step_from_record(record: Mapping[str, Any]) -> Step:
    """A :class:`Step` from its unrounded record (``dataclasses.asdict``)."""
    verdict = record["verdict"]
    if not isinstance(verdict["sustained"], bool):
        raise ValueError(f"sustained {verdict['sustained']!r}: true or false")
    return Step(run=str(record["run"]), offered=float(record["offered"]), index=int(record["index"]),
                verdict=Verdict(sustained=verdict["sustained"], worst_component=str(verdict["worst_component"]),
                                worst_share=float(verdict["worst_share"]), last_share=float(verdict["last_share"]),
                                rates=_numbers(verdict["rates"], float)),
                load_avg=float(record["load_avg"]), throttled=_numbers(record["throttled"], float),
                machine_cpu=_numbers(record.get("machine_cpu") or {}, float),
                task_cpu=_numbers(record.get("task_cpu") or {}, float))


def step_from_row(row: Mapping[str, Any]) -> Step:
    """A :class:`Step` from its row (:meth:`Step.row`, rounded): for a folder written before step records."""
    columns: dict[str, dict[str, float]] = {name: {} for _, name in _STEP_COLUMNS}
    for key, value in row.items():
        prefix = next((p for p, _ in _STEP_COLUMNS if key.startswith(p)), None)
        if prefix is not None:
            columns[dict(_STEP_COLUMNS)[prefix]][key[len(prefix):]] = float(value)
    if not isinstance(row["sustained"], bool):
        raise ValueError(f"sustained {row['sustained']!r}: true or false")
    verdict = Verdict(sustained=row["sustained"], worst_component=str(row["worst_component"]),
                      worst_share=float(row["worst_share"]), last_share=float(row["last_share"]),
                      rates=columns["rates"])
    return Step(run=str(row["run"]), offered=float(row["offered"]), index=int(row["grid_index"]), verdict=verdict,
                load_avg=float(row["load_avg_1m"]), throttled=columns["throttled"],
                machine_cpu=columns["machine_cpu"], task_cpu=columns["task_cpu"])


def _numbers(values: Mapping[str, Any], kind: Callable[[Any], Any]) -> dict[str, Any]:
    return {str(k): kind(v) for k, v in values.items()}


def _pairs(text: str, kind: Callable[[str], Any]) -> dict[str, Any]:
    """``"a=1 b=2"`` (a row's parallelism or placement counts) as ``{"a": 1, "b": 2}``."""
    pairs = {}
    for item in str(text).split():
        key, _, value = item.rpartition("=")
        if not key:
            raise ValueError(f"{item!r}: not key=value")
        pairs[key] = kind(value)
    return pairs
