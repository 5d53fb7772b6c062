"""The arms of ``storm-planner bench capacity``: which scheduler runs the topology, and how.

An arm is a scheduler label of ``bench e2e`` (:func:`~storm_planner_bench.e2e.workloads.parse_scheduler`:
``default``, ``ras``, ``planner:NAME``, with ``+nohook`` and the planners' suffixes) or one of two labels
of its own:

* ``ras+measured``: Storm's ResourceAwareScheduler with every component's declared CPU set from what the kit
  measured for it on the same cluster (:mod:`.measured`), exactly what an operator writes into the topology's
  conf (``topology.component.cpu.pcore.percent`` per component, ``topology.acker.cpu.pcore.percent``);
  ``ras+measured+nohook`` as well;
* ``LABEL#2``: a second copy of an arm, run as an arm of its own (the A/A pair: ``--aa ras`` adds
  ``ras#2``). Its difference from the first copy is the run's noise floor.

Every arm submits the workload under the same topology name (:func:`job_name`), so the planner service's
memory of a topology's costs, kept by name, is what any resubmitted topology gets.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storm_planner_bench.e2e.workloads import NO_HOOK, Scheduler, parse_scheduler

MEASURED = "+measured"
COPY = "#"
RAS = "ras"
RAS_MEASURED = "ras+measured"


@dataclass(frozen=True)
class Arm:
    label: str                 # as reported: ras, ras+measured, planner:auto#2
    scheduler: Scheduler       # how the topology is submitted (the first copy's label)
    measured: bool = False     # ras+measured: declared CPU from the measured costs
    copy: int = 1              # 2 for the A/A pair's second copy

    @property
    def base(self) -> str:
        """The label without its copy number: the arm it repeats."""
        return self.label.partition(COPY)[0]

    @property
    def file_name(self) -> str:
        """The label as a file name: ``planner-auto-2``."""
        return "".join(c if c.isalnum() or c in "-_." else "-" for c in self.label)


def parse_arm(text: str) -> Arm:
    """One arm (module docstring); a clear error for anything else."""
    text = text.strip()
    label, _, copy_text = text.partition(COPY)
    copy = 1
    if copy_text:
        if not copy_text.isdigit() or int(copy_text) < 2:
            raise ValueError(f"--arms: {text!r}: a copy is LABEL#2 (or #3, ...)")
        copy = int(copy_text)
    if MEASURED in label:
        rest = label.replace(MEASURED, "", 1)
        if rest.split("+")[0] not in ("ras", "resource-aware"):
            raise ValueError(f"--arms: {text!r}: {MEASURED} is for ras alone (RAS reads the declared CPU)")
        scheduler = parse_scheduler(rest)
        label = RAS_MEASURED + (NO_HOOK if not scheduler.hook else "")
        return Arm(label + (f"{COPY}{copy}" if copy > 1 else ""), scheduler, measured=True, copy=copy)
    scheduler = parse_scheduler(label)
    return Arm(scheduler.label + (f"{COPY}{copy}" if copy > 1 else ""), scheduler, copy=copy)


def parse_arms(text: str, aa: str | None = None) -> list[Arm]:
    """``--arms`` (comma-separated) and ``--aa LABEL``: the A/A pair's second copy joins the arms (the first
    copy too, when ``--arms`` lacks it). Every label once."""
    arms = [parse_arm(part) for part in text.split(",") if part.strip()]
    if aa:
        first = parse_arm(aa)
        if first.copy != 1:
            raise ValueError(f"--aa: {aa!r}: name the arm, not a copy of it")
        if first.label not in [a.label for a in arms]:
            arms.append(first)
        arms.append(parse_arm(f"{first.label}{COPY}2"))
    labels = [a.label for a in arms]
    if twice := sorted({label for label in labels if labels.count(label) > 1}):
        raise ValueError(f"--arms names {', '.join(twice)} more than once")
    if not arms:
        raise ValueError("--arms: give at least one arm")
    return arms


def aa_pair(arms: Sequence[Arm]) -> tuple[str, str] | None:
    """(first, second) labels of the run's A/A pair, if it has one."""
    for arm in arms:
        if arm.copy == 2:
            return arm.base, arm.label
    return None


def job_name(workload: str) -> str:
    """The topology name every arm submits ``workload`` under."""
    return f"cap-{workload}"
