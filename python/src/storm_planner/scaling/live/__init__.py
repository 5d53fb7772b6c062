"""QEScalor on a real cluster: OOPSer's sampling, the provisions enforced per instance, and QECer's
controller run on a running topology (Mu et al., *QEScalor: Quantitative Elastic Scaling Framework in
Distributed Streaming Processing*, ICCS 2020, §2.2 and §2.4).

* :mod:`.oopser` — sampling the built-in work bolt under stress (``storm-planner scale sample``);
* :mod:`.live_sampler` — sampling inside a running topology with one extra instance
  (``storm-planner scale sample --live``);
* :mod:`.instances` — one CPU quota and memory limit per instance, on the subprocess its multilang
  executor runs in (``storm-planner scale run --enforce-provisions``);
* :mod:`.scale_run` — :func:`~.scale_run.run_scaling`: measuring, deciding and rebalancing every
  epoch (``storm-planner scale run``).

What these modules measure and apply is decided in the pure part of :mod:`storm_planner.scaling`:
which provisions to visit (DSA, FSSA) in :mod:`storm_planner.scaling.sampling`, each epoch's
instances in :mod:`storm_planner.scaling.controller`.
"""
