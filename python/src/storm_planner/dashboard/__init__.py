"""A web dashboard: the cluster, every plan the planner service made and why (issue #17).

``storm-planner dashboard --plan-log FILE [--zookeeper HOST:PORT] [--nimbus HOST:PORT]`` serves one
page and a small JSON API (:mod:`.app`). The state comes from the service's plan log
(:mod:`.state`) and, when a cluster is given, from its supervisors (ZooKeeper's heartbeats, else
Nimbus' cluster summary). The page polls the API, so it follows a running cluster.
"""
