"""``storm-planner bench qescalor``: QEScalor's figures and tables (Mu et al., ICCS 2020).

* :mod:`.experiments` — the experiments in simulation and the command (``BENCHMARKS``);
* :mod:`.cluster` — ``cluster`` and ``replay`` on the local cluster;
* :mod:`.live` — ``live``: sampling, the model and scaling on a running topology.
"""
