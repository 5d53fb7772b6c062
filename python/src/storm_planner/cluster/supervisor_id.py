"""Give each supervisor a readable id (its name in the cluster description).

Storm's StandaloneSupervisor reads its id from its local state
(``<storm.local.dir>/supervisor/isupervisor``, a VersionedStore holding a
Thrift ``LocalStateData``) and only invents ``<uuid>-<ip>`` when none is
stored. Writing that state before the first start makes Nimbus, the plugin,
the planner and every plan speak of ``sup-fast:6700`` instead of a UUID.

The format: files ``<version>`` (binary-protocol ``LocalStateData`` whose
``serialized_parts["supervisor-id"]`` is a ``ThriftSerializedObject`` naming
``org.apache.storm.generated.LSSupervisorId``) and an empty
``<version>.version`` marker that says the version is complete.
"""
from __future__ import annotations

import time
from pathlib import Path

_LS_ID = "supervisor-id"
_LS_SUPERVISOR_ID_CLASS = "org.apache.storm.generated.LSSupervisorId"


def isupervisor_dir(local_dir: Path) -> Path:
    return Path(local_dir) / "supervisor" / "isupervisor"


def seed_supervisor_id(local_dir: Path, supervisor_id: str) -> bool:
    """Store ``supervisor_id`` unless the supervisor already has state; True if written."""
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.utils import serialize

    from storm_planner.submit.nimbus import _thrift

    store = isupervisor_dir(local_dir)
    if store.is_dir() and any(p.suffix == ".version" for p in store.iterdir()):
        return False
    store.mkdir(parents=True, exist_ok=True)
    thrift = _thrift()
    proto = TBinaryProtocolFactory()
    part = thrift.ThriftSerializedObject(
        name=_LS_SUPERVISOR_ID_CLASS,
        bits=serialize(thrift.LSSupervisorId(supervisor_id=supervisor_id), proto),
    )
    data = serialize(thrift.LocalStateData(serialized_parts={_LS_ID: part}), proto)
    version = str(int(time.time() * 1000))
    (store / version).write_bytes(data)
    (store / f"{version}.version").touch()
    return True


def read_supervisor_id(local_dir: Path) -> str | None:
    """The id stored in a supervisor's local state, if any (for checks and tests)."""
    from thriftpy2.protocol import TBinaryProtocolFactory
    from thriftpy2.utils import deserialize

    from storm_planner.submit.nimbus import _thrift

    store = isupervisor_dir(local_dir)
    if not store.is_dir():
        return None
    versions = sorted(
        int(p.stem) for p in store.glob("*.version") if p.stem.isdigit() and (store / p.stem).exists()
    )
    if not versions:
        return None
    thrift = _thrift()
    proto = TBinaryProtocolFactory()
    data = deserialize(thrift.LocalStateData(), (store / str(versions[-1])).read_bytes(), proto)
    part = (data.serialized_parts or {}).get(_LS_ID)
    if part is None:
        return None
    return deserialize(thrift.LSSupervisorId(), part.bits, proto).supervisor_id
