"""Adaptation across rounds: Madsen et al.'s Algorithm 1 (release drained nodes, plan,
decide scaling, re-plan), scaling policies, and the stores that keep a planner's
state (ALBIC's collocated sets, the nodes marked for removal) between rounds."""
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
