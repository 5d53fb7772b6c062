"""``storm-planner bench drain``: a forced move of a running Top-K at 80 % of its capacity on the quota cluster,
with the service's drain and without it (issue #49).

* :mod:`.experiment` — the command, the runs (one submission each, the arms interleaved);
* :mod:`.series` — one move's figures from the spouts' time log and the plan log: acks per second, the 5 s
  intervals without an ack, latency from the due time, the drain's phases;
* :mod:`.workerstart` — what a restarted worker's start is made of, from the supervisors' and workers' logs;
* :mod:`.report` — the report and its plot.

It reuses ``bench e2e``'s and ``bench capacity``'s machinery: the cluster, the submission with resumable replay
spouts and their rate file, the time logs with due times, the capacity workloads and latency histograms.
"""
