"""QEScalor's QECer on a running topology (Mu et al., ICCS 2020, §2.4): epoch by epoch, how many
instances of a component run with which provision.

* :mod:`.controller` — :class:`ScalingController`: one epoch's decision from measured rates (no I/O);
* :mod:`.scale_run` — :func:`run_scaling`: measuring, deciding and rebalancing every epoch
  (``storm-planner scale run``).

The other parts of QEScalor are listed in :mod:`storm_planner.planners.qescalor`.
"""
from storm_planner.adaptation.qescalor.controller import ScalingController

__all__ = ["ScalingController"]
