"""``storm-planner bench qescalor``: QEScalor's figures and tables (Mu et al., ICCS 2020).

* :mod:`.experiments` — the experiments in simulation and the command (``add_benchmarks``);
* :mod:`.cluster` — ``cluster`` and ``replay`` on the local cluster;
* :mod:`.live` — ``live``: sampling, the model and scaling on a running topology.
"""
from storm_planner.bench.qescalor.experiments import add_benchmarks

__all__ = ["add_benchmarks"]
