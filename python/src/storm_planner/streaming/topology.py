"""Submit-time options that reshape a topology: parallelism and groupings.

Storm fixes each component's parallelism hint and input groupings in the
topology structure sent at submission, not in the topology configuration, so
options such as ``--option trends.parallelism.count=4`` must be applied to the
streamparse ``Topology`` class before it is submitted. The submit command calls
:func:`configure_topology` with the options; it recognises, for a topology
class whose ``conf_prefix`` is ``P``:

- ``P.parallelism.<component>=N`` — the component's parallelism hint (executors);
- ``P.grouping.<component>=shuffle|global|all|local_or_shuffle|none|fields:a,b``
  — the grouping of every input of that component (changing it can change what
  the topology computes; the defaults are the ones whose output the oracles
  predict).

Unknown component names are errors, so a typo does not silently run the
default shape.
"""
from __future__ import annotations

from typing import Any, Mapping

from streamparse import Grouping

from storm_planner.streaming.conf import ConfError


def _components(topology_class) -> dict:
    components = {}
    components.update(getattr(topology_class, "thrift_spouts", {}))
    components.update(getattr(topology_class, "thrift_bolts", {}))
    return components


def grouping_from_text(text: str):
    kind, _, args = str(text).partition(":")
    kind = kind.strip().lower()
    if kind == "fields":
        fields = [f.strip() for f in args.split(",") if f.strip()]
        if not fields:
            raise ConfError(f"grouping {text!r}: fields grouping needs field names (fields:a,b)")
        return Grouping.fields(*fields)
    simple = {"shuffle": Grouping.SHUFFLE, "global": Grouping.GLOBAL, "all": Grouping.ALL,
              "local_or_shuffle": Grouping.LOCAL_OR_SHUFFLE, "none": Grouping.NONE}
    if kind not in simple:
        raise ConfError(f"grouping {text!r}: expected one of {sorted(simple)} or fields:a,b")
    return simple[kind]


def _restore_defaults(topology_class, components: dict) -> None:
    """Undo a previous call's changes: the class is shared by every submit in a process."""
    saved = topology_class.__dict__.get("_declared_shape")
    if saved is None:
        topology_class._declared_shape = {
            name: (c.common.parallelism_hint, dict(c.common.inputs or {}))
            for name, c in components.items()}
        return
    for name, (hint, inputs) in saved.items():
        components[name].common.parallelism_hint = hint
        if components[name].common.inputs is not None:
            components[name].common.inputs.clear()
            components[name].common.inputs.update(inputs)


def configure_topology(topology_class, options: Mapping[str, Any] | None) -> dict:
    """Apply ``<prefix>.parallelism.*``/``<prefix>.grouping.*`` options in place.

    Returns what changed, ``{"parallelism": {...}, "grouping": {...}}``, for the
    submit command to print. A class without ``conf_prefix`` is left alone.
    """
    prefix = getattr(topology_class, "conf_prefix", None)
    changed: dict = {"parallelism": {}, "grouping": {}}
    if not prefix:
        return changed
    components = _components(topology_class)
    _restore_defaults(topology_class, components)
    for key, value in (options or {}).items():
        for kind in ("parallelism", "grouping"):
            head = f"{prefix}.{kind}."
            if not str(key).startswith(head):
                continue
            name = str(key)[len(head):]
            if name not in components:
                raise ConfError(f"{key}: no component {name!r} in {topology_class.__name__} "
                                f"(components: {', '.join(sorted(components))})")
            component = components[name]
            if kind == "parallelism":
                text = str(value).strip()
                if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
                    raise ConfError(f"{key}={value!r}: expected a positive integer")
                hint = int(text)
                component.common.parallelism_hint = hint
                changed["parallelism"][name] = hint
            else:
                if name in getattr(topology_class, "thrift_spouts", {}):
                    raise ConfError(f"{key}: {name!r} is a spout; spouts have no input grouping")
                grouping = grouping_from_text(value)
                inputs = component.common.inputs
                for stream_id in list(inputs):
                    inputs[stream_id] = grouping
                changed["grouping"][name] = str(value)
    return changed
