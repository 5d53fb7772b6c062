"""``storm-planner bench capacity``: the highest rate each scheduler sustains on real Storm, to within 5 %
(issue #48).

* :mod:`.experiment` — the command, the run's estimate and its clusters; :mod:`.session` — one cluster's
  pilots, calibrations and searches; :mod:`.order` — the randomised interleaving and the frozen commit;
* :mod:`.runner` — one search on the cluster (one submission, the rate changed step by step);
  :mod:`.search` — which rate comes next (coarse steps, bisection, recovery holds);
* :mod:`.rule` — the one rule that says a window was sustained; :mod:`.latency` — latency from the due time
  in an HdrHistogram, and the spout's lag; :mod:`.disturbance` — CPU used outside the cluster;
* :mod:`.arms` — the arms (``ras+measured``, the A/A copy ``#2``); :mod:`.measured` — the service's measured
  problem: ras+measured's declaration, λ\\* and the model's prediction; :mod:`.workloads` — the workloads;
* :mod:`.report`, :mod:`.verdicts`, :mod:`.plots` — the report, its resolution and verdicts, its plots.

It reuses ``bench e2e``'s machinery (:mod:`storm_planner_bench.e2e`): the cluster, the submission, the
measured window's CPU and links, the scheduler labels and the hetero profiles.
"""
