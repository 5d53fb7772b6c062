"""Adaptation across rounds: when and how far a running topology is re-planned.

* :mod:`.replan` — when the service re-plans a running topology (metrics changed enough,
  within a migration budget per period);
* :mod:`.budget` — cutting a plan down to a migration budget;
* :mod:`.round` — Madsen et al.'s Algorithm 1 (release drained nodes, plan, decide scaling,
  re-plan);
* :mod:`.scaling` — scaling policies;
* :mod:`.state` — the stores that keep a planner's state (ALBIC's collocated sets, the nodes
  marked for removal) between rounds.

QEScalor's controller (instances per provision, epoch by epoch, on a running topology: ``storm-planner
scale run``) is in :mod:`storm_planner.scaling`.
"""
from storm_planner.adaptation.round import AdaptationController, RoundResult, adaptation_round
from storm_planner.adaptation.scaling import ScalingDecision, ScalingPolicy, ThresholdScaling
from storm_planner.adaptation.state import (
    FileStateStore,
    MemoryStateStore,
    StateStore,
    ZooKeeperStateStore,
    run_with_state_file,
)

__all__ = [
    "AdaptationController", "FileStateStore", "MemoryStateStore", "RoundResult", "ScalingDecision",
    "ScalingPolicy", "StateStore", "ThresholdScaling", "ZooKeeperStateStore", "adaptation_round",
    "run_with_state_file",
]
