"""Submit-time options that reshape a topology: parallelism, task counts and groupings.

Storm fixes each component's parallelism hint and input groupings in the
topology structure sent at submission, not in the topology configuration, so
options such as ``--option trends.parallelism.count=4`` must be applied to the
streamparse ``Topology`` class before it is submitted. The submit command calls
:func:`configure_topology` with the options; it recognises, for a topology
class whose ``conf_prefix`` is ``P``:

- ``P.parallelism.<component>=N`` — the component's parallelism hint (executors);
- ``P.tasks.<component>=N`` — the component's task count (Storm's
  ``topology.tasks`` in the component's own configuration; by default the
  parallelism hint). Storm never changes a running topology's task count, but a
  rebalance (``storm-planner rebalance NAME -e <component>=K``) can spread the
  tasks over any K ≤ N executors: submit with more tasks than executors to
  leave room to grow (``docs/rebalance.md``). N must be at least the
  component's parallelism hint (Storm would otherwise run only N executors);
- ``P.grouping.<component>=shuffle|global|all|local_or_shuffle|none|fields:a,b``
  — the grouping of every input of that component (changing it can change what
  the topology computes; the defaults are the ones whose output the oracles
  predict); ``partial_key:a,b`` is Storm's partial key grouping (PoTC: each key
  to the less loaded of two tasks) on those fields and replaces only the
  component's *fields-grouped* inputs (a watermark stream sent to all tasks stays
  so). It names the kit's ``org.stormplanner.grouping.PartialKeyFieldsGrouping``
  (Storm's ``PartialKeyGrouping`` built from a field list), which ``storm-planner
  submit`` bundles with the metrics hook: the hook must be on;
- ``P.cpu.<component>=X`` — the CPU one executor of the component declares, in percent of a core
  (Storm's ``topology.component.cpu.pcore.percent`` in the component's own configuration, what
  the ResourceAwareScheduler accounts and what the planner service takes as an executor's load
  until metrics arrive: an operator's known cost, as Elastic Allocator assumes).

Unknown component names are errors, so a typo does not silently run the
default shape.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from storm_planner.streaming._streamparse import Grouping
from storm_planner.streaming.conf import ConfError

TASKS_KEY = "topology.tasks"  # Storm's key; per component in its ComponentCommon.json_conf
CPU_KEY = "topology.component.cpu.pcore.percent"   # likewise: RAS's declared CPU per executor


def _components(topology_class) -> dict:
    components: dict[str, Any] = {}
    components.update(getattr(topology_class, "thrift_spouts", {}))
    components.update(getattr(topology_class, "thrift_bolts", {}))
    return components


PARTIAL_KEY_CLASS = "org.stormplanner.grouping.PartialKeyFieldsGrouping"


def grouping_from_text(text: str):
    kind, _, args = str(text).partition(":")
    kind = kind.strip().lower()
    if kind in ("fields", "partial_key"):
        fields = [f.strip() for f in args.split(",") if f.strip()]
        if not fields:
            raise ConfError(f"grouping {text!r}: a {kind} grouping needs field names ({kind}:a,b)")
        if kind == "partial_key":
            return Grouping.custom_object(PARTIAL_KEY_CLASS, [",".join(fields)])
        return Grouping.fields(*fields)
    simple = {"shuffle": Grouping.SHUFFLE, "global": Grouping.GLOBAL, "all": Grouping.ALL,
              "local_or_shuffle": Grouping.LOCAL_OR_SHUFFLE, "none": Grouping.NONE}
    if kind not in simple:
        raise ConfError(f"grouping {text!r}: expected one of {sorted(simple)}, fields:a,b or partial_key:a,b")
    return simple[kind]


def _is_fields(grouping) -> bool:
    """A fields grouping (named fields; Storm's global grouping is fields grouping on none)."""
    return bool(getattr(grouping, "fields", None))


def _restore_defaults(topology_class, components: dict) -> None:
    """Undo a previous call's changes: the class is shared by every submit in a process."""
    saved = topology_class.__dict__.get("_declared_shape")
    if saved is None:
        topology_class._declared_shape = {
            name: (c.common.parallelism_hint, dict(c.common.inputs or {}), c.common.json_conf)
            for name, c in components.items()}
        return
    for name, (hint, inputs, json_conf) in saved.items():
        components[name].common.parallelism_hint = hint
        components[name].common.json_conf = json_conf
        if components[name].common.inputs is not None:
            components[name].common.inputs.clear()
            components[name].common.inputs.update(inputs)


def _positive_integer(key: str, value: Any) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        raise ConfError(f"{key}={value!r}: expected a positive integer")
    return int(text)


def _set_component_conf(component, key: str, value: Any) -> None:
    """One key of the component's own configuration (a JSON text in the Thrift struct)."""
    conf = json.loads(component.common.json_conf or "{}")
    conf[key] = value
    component.common.json_conf = json.dumps(conf)


def _positive_number(key: str, value: Any) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = -1.0
    if isinstance(value, bool) or not number > 0:
        raise ConfError(f"{key}={value!r}: expected a positive number")
    return number


def _check_tasks_cover_hints(components: dict, tasks: Mapping[str, int], prefix: str) -> None:
    for name, count in tasks.items():
        hint = components[name].common.parallelism_hint
        if isinstance(hint, int) and count < hint:
            raise ConfError(f"{prefix}.tasks.{name}={count} is below its parallelism hint {hint}: "
                            f"Storm would run only {count} executors")


def configure_topology(topology_class, options: Mapping[str, Any] | None) -> dict:
    """Apply ``<prefix>.parallelism.*``/``<prefix>.tasks.*``/``<prefix>.grouping.*``/``<prefix>.cpu.*``
    options in place.

    Returns what changed, ``{"parallelism": {...}, "tasks": {...}, "grouping": {...}, "cpu": {...}}``,
    for the submit command to print. A class without ``conf_prefix`` is left alone.
    """
    prefix = getattr(topology_class, "conf_prefix", None)
    changed: dict = {"parallelism": {}, "tasks": {}, "grouping": {}, "cpu": {}}
    if not prefix:
        return changed
    components = _components(topology_class)
    _restore_defaults(topology_class, components)
    for key, value in (options or {}).items():
        for kind in ("parallelism", "tasks", "grouping", "cpu"):
            head = f"{prefix}.{kind}."
            if not str(key).startswith(head):
                continue
            name = str(key)[len(head):]
            if name not in components:
                raise ConfError(f"{key}: no component {name!r} in {topology_class.__name__} "
                                f"(components: {', '.join(sorted(components))})")
            component = components[name]
            if kind == "parallelism":
                hint = _positive_integer(key, value)
                component.common.parallelism_hint = hint
                changed["parallelism"][name] = hint
            elif kind == "tasks":
                count = _positive_integer(key, value)
                _set_component_conf(component, TASKS_KEY, count)
                changed["tasks"][name] = count
            elif kind == "cpu":
                cpu = _positive_number(key, value)
                _set_component_conf(component, CPU_KEY, cpu)
                changed["cpu"][name] = cpu
            else:
                if name in getattr(topology_class, "thrift_spouts", {}):
                    raise ConfError(f"{key}: {name!r} is a spout; spouts have no input grouping")
                grouping = grouping_from_text(value)
                inputs = component.common.inputs
                partial = str(value).strip().lower().startswith("partial_key")
                for stream_id in list(inputs):
                    if not partial or _is_fields(inputs[stream_id]):
                        inputs[stream_id] = grouping
                changed["grouping"][name] = str(value)
    _check_tasks_cover_hints(components, changed["tasks"], prefix)
    return changed
