"""Every planner, by family: the one list the names are looked up in.

As the Kubernetes scheduler lists its in-tree plugins in one ``registry.go``, this module lists the
in-tree planners explicitly; importing :mod:`storm_planner.planners` enters them into the look-up
table of :mod:`.base`. A planner module that is not listed here is not found by name: adding a
planner is writing its module *and* adding its class below.
:func:`~storm_planner.planners.base.register` stays for planners from outside the tree (tests).

The families, one package each, named by algorithm (each package's docstring cites its paper):

* :mod:`.capacity` — the kit's own: the highest sustainable rate on measured costs (``auto``, the
  recommended planner, and ``capacity``);
* :mod:`.baselines` — Storm's own schedulers and Elastic Allocator's Random, for comparison;
* :mod:`.topdown` — Chatzistergiou & Viglas, *Fast Heuristics for Near-Optimal Task
  Allocation in Data Stream Processing over Clusters* (CIKM 2014);
* :mod:`.albic` — Madsen, Zhou & Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream
  Processing Engine*, with its baselines Flux and COLA;
* :mod:`.hetero` — Nasiri, Nasehi, Divband & Goudarzi, *A Scheduling Algorithm to Maximize Storm
  Throughput in Heterogeneous Cluster*;
* :mod:`.gma` — *Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud*
  (SOSE 2014).

QEScalor's scalers (Mu et al., ICCS 2020) are not placement planners: they are listed in
:mod:`storm_planner.scaling.scaler_registry`.
"""
from __future__ import annotations

from storm_planner.planners.albic.albic import AlbicPlanner
from storm_planner.planners.albic.cola import ColaPlanner
from storm_planner.planners.albic.flux import FluxPlanner
from storm_planner.planners.albic.milp import MilpPlanner
from storm_planner.planners.albic.spread import SpreadPlanner
from storm_planner.planners.base import Planner, register
from storm_planner.planners.baselines.even import EvenPlanner
from storm_planner.planners.baselines.random import RandomPlanner
from storm_planner.planners.baselines.storm_default import StormDefaultPlanner
from storm_planner.planners.capacity.planner import AutoPlanner, CapacityPlanner
from storm_planner.planners.gma.greedy import GmaPlanner
from storm_planner.planners.gma.repair import GmaRepairPlanner
from storm_planner.planners.hetero.hetero import HeteroPlanner
from storm_planner.planners.hetero.hetero_optimal import HeteroOptimalPlanner
from storm_planner.planners.topdown.optimal import OptimalPlanner
from storm_planner.planners.topdown.tasklevel import TaskLevelPlanner
from storm_planner.planners.topdown.topdown import TopDownPlanner
from storm_planner.planners.topdown.topdown_ls import TopDownLocalSearchPlanner

# Family package -> its planners, in the order `storm-planner algorithms` documents them.
PLANNER_FAMILIES: dict[str, tuple[type[Planner], ...]] = {
    "capacity": (AutoPlanner, CapacityPlanner),
    "baselines": (EvenPlanner, StormDefaultPlanner, RandomPlanner),
    "topdown": (TaskLevelPlanner, TopDownPlanner, TopDownLocalSearchPlanner, OptimalPlanner),
    "albic": (MilpPlanner, AlbicPlanner, FluxPlanner, ColaPlanner, SpreadPlanner),
    "hetero": (HeteroPlanner, HeteroOptimalPlanner),
    "gma": (GmaPlanner, GmaRepairPlanner),
}

PLANNERS: tuple[type[Planner], ...] = tuple(cls for family in PLANNER_FAMILIES.values() for cls in family)

for _planner in PLANNERS:
    register(_planner)  # also checks each __init__ against the parameter contract
