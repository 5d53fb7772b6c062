"""``storm-planner bench soak``: an hour of faults (issue #49, item 4). One topology runs on the local
cluster with re-planning on while its rate changes and supervisors, the planner service, ZooKeeper, Nimbus
and links fail in turn; the report says what was lost, failed and replayed, every stall and its cause, the
service's memory and open files, the logs' growth, Nimbus' outages, and every move, drain and fallback.

* :mod:`.experiment` — the command and the run;
* :mod:`.schedule` — the seeded rate steps and fault timetable; :mod:`.faults` — each fault, its undo and
  its recovery, and the watchdog; :mod:`.monitor` — the samplers; :mod:`.proc` — what /proc says;
* :mod:`.analysis` — the figures from the run's files; :mod:`.report` — the report and its plots.
"""
