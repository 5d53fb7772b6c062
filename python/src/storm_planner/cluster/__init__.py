"""A Storm cluster described once and run as local processes.

- :mod:`.description`: the YAML cluster description (``default-cluster.yaml``).
- :mod:`.storm_yaml`: storm.yaml per daemon, as pure functions.
- :mod:`.storm_home`: the Storm home built from Maven artifacts, cached.
- :mod:`.launcher`: ``up``/``down``/``status`` and ``local_cluster(...)``.
- :mod:`.commands`: ``storm-planner cluster ...``.

For tests::

    from storm_planner.cluster import running_cluster
    with running_cluster(tmp_path, plugin=False, planner=False) as cluster:
        nimbus = cluster.addresses.nimbus      # "127.0.0.1:<free port>"
"""
from .description import ClusterDescription, DescriptionError, Supervisor, default_description, load_description
from .errors import ClusterError
from .launcher import ClusterOptions, LocalCluster, local_cluster, running_cluster

__all__ = [
    "ClusterDescription",
    "ClusterError",
    "ClusterOptions",
    "DescriptionError",
    "LocalCluster",
    "Supervisor",
    "default_description",
    "load_description",
    "local_cluster",
    "running_cluster",
]
