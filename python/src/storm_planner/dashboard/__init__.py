"""The web dashboard: the cluster, every plan and why (``storm-planner dashboard``).

``planlog`` reads the plan log (incrementally, within bounds), ``model`` turns its records (and the
live cluster) into what the page shows, ``live`` reads Nimbus and ZooKeeper, ``server`` is the web app,
``commands`` registers the CLI sub-command.
"""
