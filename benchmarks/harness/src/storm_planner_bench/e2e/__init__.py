"""``storm-planner bench e2e`` and ``bench e2e-wire``: every planner against Storm's own schedulers on real
Storm (issue #27).

* :mod:`.experiment` — the command and the grid's run (workload × rate × scheduler × repetition);
* :mod:`.cells` — one cell, measured; :mod:`.ramp` — a stepped ramp of rates in one submission;
* :mod:`.workloads` — the workloads and the scheduler labels; :mod:`.submission` — a workload as the plugin
  sends it; :mod:`.profiles` — the hetero planners' profiles;
* :mod:`.report`, :mod:`.figures`, :mod:`.papers` — the report (with its plots), the figures over
  the cells and each paper's planner on its own metric;
* :mod:`.wire`, :mod:`.wire_fit` — ``bench e2e-wire``: each stream's wire bytes fitted from a grid.
"""
