"""Storm's own schedulers as planners: the baselines every other planner is compared with.

* :mod:`.even` — ``even``: Storm's EvenScheduler (``org.apache.storm.scheduler.EvenScheduler``,
  Storm 2.8.3) placing one topology, resource-unaware;
* :mod:`.storm_default` — ``storm-default``: Storm's DefaultScheduler on a given execution graph,
  the comparison point of Nasiri et al. §6.2–6.3 (``heterogeneity-aware-scheduler.txt``).

Elastic Allocator's *Random* baseline (``elastic-allocator-gma.txt``) belongs here too.
"""
