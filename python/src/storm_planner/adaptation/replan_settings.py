"""A topology's re-planning settings, read once per offer from its options (``planner.replan.*``).

The re-planner (:mod:`.replan`) and its gate (:mod:`.decision`) read every setting from here; the
catalogue of keys, their types and bounds is :mod:`storm_planner.core.settings`.
"""
from __future__ import annotations

from dataclasses import dataclass

from storm_planner.core import settings
from storm_planner.core.problem import Problem

DEFAULT_THRESHOLD = 0.25
DEFAULT_PERIOD_S = 60.0
DEFAULT_MIN_GAIN = 0.10
# After a re-plan moved executors, their workers restart and their first windows describe the move, not
# the placement: no re-plan is compared with them for this long (three default metrics periods).
DEFAULT_SETTLE_S = 30.0
# Planners whose re-plans are gated on the sustainable rate the capacity model predicts.
CAPACITY_PLANNERS = frozenset({"auto", "capacity"})
# Their first correction waits while the placement is predicted to sustain this many times the rate served.
CALIBRATION_HEADROOM = 2.0


@dataclass(frozen=True)
class ReplanSettings:
    enabled: bool = True
    threshold: float = DEFAULT_THRESHOLD
    period_s: float = DEFAULT_PERIOD_S
    min_gain: float = DEFAULT_MIN_GAIN
    budget: int | None = None
    settle_s: float = DEFAULT_SETTLE_S
    cautious: bool = True
    trust: bool = False
    resumable: bool = False   # planner.source.resumable: the spouts lose nothing when their worker restarts
    first_correction: bool = False   # planner.replan.first.correction (module docstring, step 5)
    capacity: bool = False    # the gate weighs the predicted sustainable rate first (auto, capacity)
    force: str | None = None         # planner.replan.force: a move to make once, past every gate (.forced)
    force_after_s: float = 0.0       # planner.replan.force.after.secs

    @classmethod
    def of(cls, problem: Problem, algorithm: str | None = None) -> ReplanSettings:
        """From the problem's options through the settings catalogue (an unusable value raises
        :class:`~storm_planner.core.settings.SettingError` naming the key; the service checks them all
        before it plans). ``auto`` corrects its first placement once unless told not to (its calibration:
        docs/capacity.md), and ``auto`` and ``capacity`` are gated on the sustainable rate they predict."""
        extra = problem.options.extra
        correction = (settings.REPLAN_FIRST_CORRECTION.read(extra)
                      if settings.REPLAN_FIRST_CORRECTION.is_set(extra) else algorithm == "auto")
        return cls(
            enabled=settings.REPLAN.read(extra),
            threshold=settings.REPLAN_THRESHOLD.read(extra),
            period_s=settings.REPLAN_PERIOD_SECS.read(extra),
            min_gain=settings.REPLAN_MIN_GAIN.read(extra),
            budget=problem.options.max_migrations,
            settle_s=settings.REPLAN_SETTLE_SECS.read(extra),
            cautious=settings.REPLAN_CAUTIOUS.read(extra),
            trust=settings.REPLAN_TRUST.read(extra),
            resumable=settings.SOURCE_RESUMABLE.read(extra),
            first_correction=correction,
            capacity=algorithm in CAPACITY_PLANNERS,
            force=settings.REPLAN_FORCE.read(extra),
            force_after_s=settings.REPLAN_FORCE_AFTER_SECS.read(extra),
        )
