#!/opt/storm-planner/venv/bin/python
"""Store this supervisor's id before Storm starts it: its name in the cluster description.

The entrypoint runs this when ``STORM_PLANNER_SUPERVISOR_ID`` is set (docker/compose.yaml sets it on
each supervisor), the way ``storm-planner cluster up`` seeds the local supervisors: Nimbus, the
plugin and every plan then say ``sup-fast:6700`` instead of a UUID. The directory is the daemon's
``storm.local.dir``, read from its storm.yaml. A supervisor that already has state keeps its id.
"""
import os
import sys
from pathlib import Path

import yaml

from storm_planner.cluster.supervisor_id import seed_supervisor_id


def main() -> int:
    supervisor_id = os.environ.get("STORM_PLANNER_SUPERVISOR_ID", "")
    if not supervisor_id:
        print("STORM_PLANNER_SUPERVISOR_ID is not set: nothing to seed", file=sys.stderr)
        return 2
    conf_file = Path(os.environ.get("STORM_CONF_DIR", "/conf")) / "storm.yaml"
    local_dir = Path((yaml.safe_load(conf_file.read_text()) or {}).get("storm.local.dir", "/data"))
    seeded = seed_supervisor_id(local_dir, supervisor_id)
    print(f"supervisor id {supervisor_id!r}: {'seeded in' if seeded else 'kept the one stored in'} {local_dir}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
