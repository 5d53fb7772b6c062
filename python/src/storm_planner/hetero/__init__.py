"""Nasiri et al.'s planner on a real cluster: profiles measured, topologies read, the commands.

* :mod:`~storm_planner.hetero.profiling` — measure a profile on a real cluster;
* :mod:`~storm_planner.hetero.project` — a streamparse project's topology as a problem;
* :mod:`~storm_planner.hetero.commands` — ``storm-planner simulate``, ``advise``, ``profile``;
* ``examples/`` — profile files (Table III of the paper, a word count).

The model (profiles, eq. 7–10, bounds) and the planners ``hetero`` and ``hetero-optimal``
are in :mod:`storm_planner.planners.nasiri`; the paper's topologies, clusters and profile
in :mod:`storm_planner.generators.nasiri`. The names below are re-exported from there.
"""
from storm_planner.planners.nasiri.model import HeteroModel, build_model, tcu
from storm_planner.planners.nasiri.profiles import Profile, ProfileError, load_profile, parse_profile
from storm_planner.planners.nasiri.rates import propagate
from storm_planner.planners.nasiri.simulate import Placement, Simulation, max_input_rate, simulate

__all__ = [
    "HeteroModel", "Placement", "Profile", "ProfileError", "Simulation", "build_model", "load_profile",
    "max_input_rate", "parse_profile", "propagate", "simulate", "tcu",
]
