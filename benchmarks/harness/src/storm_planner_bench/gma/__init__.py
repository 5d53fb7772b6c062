"""``storm-planner bench gma``: the Elastic Allocator's figures (issue #15).

* :mod:`.experiments` — the experiments in simulation and the command (``BENCHMARKS``);
* :mod:`.cluster` — ``cluster`` and ``overhead`` on the local cluster, over the emulated network.
"""
