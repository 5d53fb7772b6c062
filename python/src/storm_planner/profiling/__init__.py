"""Measuring on a real cluster what the models need: how much CPU work a component's tuples cost.

Shared machinery:

* :mod:`.cgroups` — cgroup v1 CPU quotas and memory limits (a machine type on one host, a provision);
* :mod:`.processes` — which process a pid names, checked before it joins a group;
* :mod:`.builtin_project` — the built-in profiling topology (a rate-controlled spout, a bolt of fixed work);
* :mod:`.measurements` — metrics-hook windows turned into measurements, and how well a fit predicts them;
* :mod:`.errors` — :class:`~.errors.ProfilingError`.

Nasiri et al.'s profiles (*A Scheduling Algorithm to Maximize Storm Throughput in Heterogeneous
Cluster*, §5.2):

* :mod:`.profiler` — fit base, ET and MET per component and machine type on the local cluster
  (``storm-planner profile``);
* :mod:`.project` — a streamparse project's topology as a problem;
* :mod:`.commands` — ``storm-planner parallelism``, ``simulate`` and ``profile``.

The model these measurements feed (profiles, eq. 7–10) and the planners ``hetero`` and
``hetero-optimal`` are in :mod:`storm_planner.planners.hetero`. What an operator instance sustains
under a resource provision (QEScalor's samples, Mu et al., ICCS 2020, §2.2) is measured by
:mod:`storm_planner.scaling.live`, with the shared machinery above.
"""
