#!/bin/bash
# Entrypoint of the storm-planner Storm containers.
#
# It stands in for the official image's /docker-entrypoint.sh, which chowns all of /conf: that fails
# on the read-only storm.yaml docker/compose.yaml mounts there. What it keeps: as root, give the data
# and log directories (and the shared results volume) to the `storm` user, then run the daemon as
# that user. What it adds: a supervisor's id is seeded first (STORM_PLANNER_SUPERVISOR_ID), so Nimbus
# and every plan call it by its name in the cluster description, as in the local cluster.
set -euo pipefail

if [ "$(id -u)" = 0 ]; then
    if [ -n "${STORM_PLANNER_SUPERVISOR_ID:-}" ]; then
        storm-planner-seed-supervisor-id
    fi
    chown -R storm:storm "$STORM_DATA_DIR" "$STORM_LOG_DIR" /results
    exec gosu storm "$@"
fi
exec "$@"
