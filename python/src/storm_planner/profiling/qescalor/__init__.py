"""QEScalor's OOPSer on a real cluster: an operator instance's throughput under resource provisions
(Mu et al., *QEScalor: Quantitative Elastic Scaling Framework in Distributed Streaming Processing*,
ICCS 2020, §2.2), and the provisions enforced per instance.

* :mod:`.oopser` — sampling the built-in work bolt under stress (``storm-planner scale sample``);
* :mod:`.live_sampler` — sampling inside a running topology with one extra instance
  (``storm-planner scale sample --live``);
* :mod:`.instances` — one CPU quota and memory limit per instance, on the subprocess its multilang
  executor runs in (``storm-planner scale run --enforce-provisions``).

Which provisions to visit (DSA, FSSA) is decided in :mod:`storm_planner.planners.qescalor.sampling`;
the other parts of QEScalor are listed in :mod:`storm_planner.planners.qescalor`.
"""
