"""Every scaler: the one list the scaling algorithms' names are looked up in.

As :mod:`storm_planner.planners.registry` lists the placement planners, this module lists the
in-tree scalers explicitly; importing :mod:`storm_planner.scaling` enters them into the look-up
table of :mod:`.base`. A scaler module that is not listed here is not found by name: adding a
scaler is writing its module *and* adding its class below.
"""
from __future__ import annotations

from storm_planner.scaling.base import Scaler, register_scaler
from storm_planner.scaling.cba import CBA
from storm_planner.scaling.integer_program import IntegerProgram
from storm_planner.scaling.qcesa import QCESA, ExactQCESA

# The scalers: how many instances with which provision per epoch.
SCALERS: tuple[type[Scaler], ...] = (QCESA, ExactQCESA, CBA, IntegerProgram)

for _scaler in SCALERS:
    register_scaler(_scaler)
