"""Storm's own schedulers as planners: the baselines every other planner is compared with.

No paper of their own: Storm's schedulers as Storm 2.8.3 implements them, and the baselines of
two papers, H. Nasiri, S. Nasehi, A. Divband, M. Goudarzi, *A Scheduling Algorithm to Maximize
Storm Throughput in Heterogeneous Cluster* (§6.2–6.3), and Z. Han, R. Chu, H. Mi, H. Wang,
*Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud*, SOSE 2014 (§V).

* :mod:`.even` — ``even``: Storm's EvenScheduler (``org.apache.storm.scheduler.EvenScheduler``,
  Storm 2.8.3) placing one topology, resource-unaware;
* :mod:`.storm_default` — ``storm-default``: Storm's DefaultScheduler on a given execution graph,
  the comparison point of Nasiri et al., *A Scheduling Algorithm to Maximize Storm Throughput in
  Heterogeneous Cluster*, §6.2–6.3;
* :mod:`.random` — ``random``: every executor on a node drawn at random, the *Random* baseline of
  *Elastic Allocator: An Adaptive Task Scheduler for Streaming Query in the Cloud* (SOSE 2014), §V.
"""
