"""Every planner and every scaler, by family: the one list the names are looked up in.

As the Kubernetes scheduler lists its in-tree plugins in one ``registry.go``, this module lists the
in-tree planners and scalers explicitly; importing :mod:`storm_planner.planners` enters them into
the look-up tables of :mod:`.base` and :mod:`.qescalor.base`. A planner module that is not listed
here is not found by name: adding a planner is writing its module *and* adding its class below.
:func:`~storm_planner.planners.base.register` stays for planners from outside the tree (tests).

The families, one package each, named by algorithm (each package's docstring cites its paper):

* :mod:`.baselines` — Storm's own schedulers and Elastic Allocator's Random, for comparison;
* :mod:`.topdown` — Chatzistergiou & Viglas, *Fast Heuristics for Near-Optimal Task
  Allocation in Data Stream Processing over Clusters* (CIKM 2014);
* :mod:`.albic` — Madsen, Zhou & Cao, *Integrative Dynamic Reconfiguration in a Parallel Stream
  Processing Engine*, with its baselines Flux and COLA;
* :mod:`.hetero` — Nasiri, Nasehi, Divband & Goudarzi, *A Scheduling Algorithm to Maximize Storm
  Throughput in Heterogeneous Cluster*;
* :mod:`.gma` — *Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud*
  (SOSE 2014);
* :mod:`.qescalor` — Mu et al., QEScalor (ICCS 2020): scalers, not placement planners.
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
from storm_planner.planners.gma.greedy import GmaPlanner
from storm_planner.planners.gma.repair import GmaRepairPlanner
from storm_planner.planners.hetero.hetero import HeteroPlanner
from storm_planner.planners.hetero.hetero_optimal import HeteroOptimalPlanner
from storm_planner.planners.qescalor.base import Scaler, register_scaler
from storm_planner.planners.qescalor.cba import CBA
from storm_planner.planners.qescalor.integer_program import IntegerProgram
from storm_planner.planners.qescalor.qcesa import QCESA, ExactQCESA
from storm_planner.planners.topdown.optimal import OptimalPlanner
from storm_planner.planners.topdown.tasklevel import TaskLevelPlanner
from storm_planner.planners.topdown.topdown import TopDownPlanner
from storm_planner.planners.topdown.topdown_ls import TopDownLocalSearchPlanner

# Family package -> its planners, in the order `storm-planner algorithms` documents them.
PLANNER_FAMILIES: dict[str, tuple[type[Planner], ...]] = {
    "baselines": (EvenPlanner, StormDefaultPlanner, RandomPlanner),
    "topdown": (TaskLevelPlanner, TopDownPlanner, TopDownLocalSearchPlanner, OptimalPlanner),
    "albic": (MilpPlanner, AlbicPlanner, FluxPlanner, ColaPlanner, SpreadPlanner),
    "hetero": (HeteroPlanner, HeteroOptimalPlanner),
    "gma": (GmaPlanner, GmaRepairPlanner),
}

# Family package -> its scalers (how many instances with which provision per epoch).
SCALER_FAMILIES: dict[str, tuple[type[Scaler], ...]] = {
    "qescalor": (QCESA, ExactQCESA, CBA, IntegerProgram),
}

PLANNERS: tuple[type[Planner], ...] = tuple(cls for family in PLANNER_FAMILIES.values() for cls in family)
SCALERS: tuple[type[Scaler], ...] = tuple(cls for family in SCALER_FAMILIES.values() for cls in family)

for _planner in PLANNERS:
    register(_planner)  # also checks each __init__ against the parameter contract
for _scaler in SCALERS:
    register_scaler(_scaler)
