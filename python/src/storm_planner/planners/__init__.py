"""Placement planners, found by name, in one family package per algorithm (each cites its paper).

* :mod:`.baselines` — Storm's own schedulers as planners (``even``, ``storm-default``) and
  Elastic Allocator's ``random``;
* :mod:`.topdown` — Chatzistergiou & Viglas (CIKM 2014): ``tasklevel``, ``topdown``,
  ``topdown-ls`` and the exact ``optimal``;
* :mod:`.albic` — Madsen et al.: ``milp``, ``albic``, their comparison baselines ``flux``
  and ``cola``, and ``spread``;
* :mod:`.hetero` — Nasiri et al.: the heterogeneity-aware CPU model, ``hetero`` and
  ``hetero-optimal``;
* :mod:`.gma` — Elastic Allocator (SOSE 2014): ``gma`` and ``gma-repair``.

QEScalor's *scalers* (``qcesa``, ``qcesa-exact``, ``cba``, ``scaling-ip``) are not placement planners:
they are in :mod:`storm_planner.scaling`.

:mod:`.registry` lists every planner explicitly; importing this package enters them into the
look-up table, so :func:`available` and :func:`run` find them by name.
"""
from storm_planner.planners import registry  # noqa: F401  (enters the listed planners)
from storm_planner.planners._parameters import documented_parameters
from storm_planner.planners.base import Planner, available, get_planner, register, run

__all__ = ["Planner", "available", "documented_parameters", "get_planner", "register", "run"]
