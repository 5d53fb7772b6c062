"""Heterogeneity-aware planning (Nasiri et al.): profiles, the CPU model, rates, the simulator.

* :mod:`~storm_planner.hetero.profiles` — the profile format, loading and validation;
* :mod:`~storm_planner.hetero.model` — eq. 7 (TCU = IR · (ET + MET)) over a problem;
* :mod:`~storm_planner.hetero.rates` — eq. 8, the input rate of every task;
* :mod:`~storm_planner.hetero.simulate` — per-machine utilisation, throughput, eq. 9–10;
* :mod:`~storm_planner.hetero.bounds` — the fluid upper bound on the input rate;
* :mod:`~storm_planner.hetero.micro` — the paper's topologies, clusters and profile.

The planners are ``hetero``, ``hetero-optimal`` and the baseline ``storm-default``
in :mod:`storm_planner.planners`.
"""
from storm_planner.hetero.model import HeteroModel, build_model, tcu
from storm_planner.hetero.profiles import Profile, ProfileError, load_profile, parse_profile
from storm_planner.hetero.rates import propagate
from storm_planner.hetero.simulate import Placement, Simulation, max_input_rate, simulate

__all__ = [
    "HeteroModel", "Placement", "Profile", "ProfileError", "Simulation", "build_model", "load_profile",
    "max_input_rate", "parse_profile", "propagate", "simulate", "tcu",
]
