"""``storm-planner bench hetero-real``: Nasiri et al. Fig. 8 on the real local cluster.

* :mod:`.experiment` — the command: profile, plan, run every placement, write the outputs;
* :mod:`.driver` — one run (a placement's rate search); :mod:`.search` — the rate search and its verdicts;
* :mod:`.plans` — the plans made before the cluster starts; :mod:`.project` — the benchmark topologies;
* :mod:`.compare`, :mod:`.report` — the comparison and the outputs; :mod:`.resume` — a rerun resumes.
"""
