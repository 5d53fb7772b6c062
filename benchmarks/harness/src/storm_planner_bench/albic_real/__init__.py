"""``storm-planner bench albic-real``: Madsen et al. §5.4 on real Storm.

* :mod:`.experiment` — the command and the runs; :mod:`.series` — each adaptation period's figures;
* :mod:`.report` — the report; :mod:`.claims` — the paper's claims set beside the measurements.
"""
