"""``storm-planner bench topdown-real``: topDown §7.4 on real Storm.

* :mod:`.experiment` — the command: node capacity (e2e's cells per CPU scale) and the rate schedule;
* :mod:`.report` — the report.
"""
