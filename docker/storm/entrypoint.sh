#!/bin/sh
# Entrypoint of the storm-planner Storm containers: `storm-planner-entrypoint zookeeper|nimbus|supervisor`.
#
# As root: seed a supervisor's id first (STORM_PLANNER_SUPERVISOR_ID), so Nimbus and every plan call it
# by its name in the cluster description, as in the local cluster; give the data, log and results
# directories (volumes) to the `storm` user. Then run the daemon as that user: the JVM command line the
# local launcher builds (python -m storm_planner.cluster.container).
set -eu

if [ "$(id -u)" = 0 ]; then
    if [ -n "${STORM_PLANNER_SUPERVISOR_ID:-}" ]; then
        storm-planner-seed-supervisor-id
    fi
    chown -R storm:storm /data /logs /results
    export HOME=/home/storm
    exec setpriv --reuid=storm --regid=storm --init-groups \
        /opt/storm-planner/venv/bin/python -m storm_planner.cluster.container "$@"
fi
exec /opt/storm-planner/venv/bin/python -m storm_planner.cluster.container "$@"
