"""The published JSON Schema of the problem file agrees with the codec.

Every fixture and generated problem validates against both; every *shape*
mutation (wrong type, out of range, missing required field) of a valid file is
rejected by both; what the schema cannot say (references between ids, unique
ids, an executor larger than every node) the codec alone rejects.
"""
from __future__ import annotations

import copy
import json
import random
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from storm_planner.core.errors import ProblemError
from storm_planner.core.problem import Problem
from storm_planner.generators.topdown import mixed_job, pipeline_job, priority_job, random_job, task_count_job

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMA = json.loads(resources.files("storm_planner.core").joinpath("problem.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def schema_accepts(data) -> bool:
    return VALIDATOR.is_valid(data)


def codec_accepts(data) -> bool:
    try:
        Problem.from_dict(data)
    except ProblemError:
        return False
    return True


def problem_files() -> list[Path]:
    """Every JSON file under tests/data that looks like a problem file."""
    files = []
    for path in sorted(DATA.rglob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "nodes" in data and "topology" in data:
            files.append(path)
    return files


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", problem_files(), ids=lambda p: p.name)
def test_fixture_problems_validate(path):
    data = json.loads(path.read_text())
    VALIDATOR.validate(data)
    problem = Problem.from_dict(data)
    VALIDATOR.validate(json.loads(json.dumps(problem.to_dict())))  # what we write, we read


def generated() -> list[dict]:
    return ([random_job(random.Random(s), seed=s) for s in range(5)] + [mixed_job(s) for s in range(5)]
            + [pipeline_job(tasks=5), priority_job(15.0), task_count_job(2)])


@pytest.mark.parametrize("index", range(13))
def test_generated_problems_validate(index):
    data = generated()[index]
    VALIDATOR.validate(json.loads(json.dumps(data)))
    Problem.from_dict(data)


# -- shape mutations ------------------------------------------------------------------------

BASE = DATA / "measured-skewed.json"

# field kind -> values of the wrong shape for it
WRONG = {
    "id": ["", 5, None, ["a"], True],
    "positive": [0, -1, "1", None, True, [1]],
    "non_negative": [-0.5, "1", None, False, {}],
    "whole>=1": [0, 1.5, "2", None, True],
    "boolean": ["false", 0, 1, None],
    "string": [5, None, ["x"], True],
    "ports": [[], [0], [70000], [6700, 6700], ["6700"], [6700.5], 6700, None],
    "list_or_null": [{}, "x", 5, True],
    "object_or_null": [[], "x", 5, True],
    "slot": ["sup-a", "sup-a:", ":6700", 6700, None, ["sup-a:6700"]],
    "grouping": ["random", None, 5],
    "type": ["sink", None, 5],
}

FIELDS = [  # (path in the base problem, kind)
    ("nodes.0.id", "id"), ("nodes.0.capacity", "positive"), ("nodes.0.speed", "positive"),
    ("nodes.0.machine_type", "string"), ("nodes.0.slots", "ports"), ("nodes.0.draining", "boolean"),
    ("nodes.0.memory", "non_negative_or_null"), ("nodes.0.host", "string_or_null"),
    ("topology.id", "string"), ("topology.components.0.id", "id"), ("topology.components.0.type", "type"),
    ("topology.components.0.executors", "whole>=1"), ("topology.components.0.cost", "non_negative"),
    ("topology.components.0.system", "boolean"), ("topology.components.0.memory", "non_negative"),
    ("topology.streams", "list_or_null"), ("topology.streams.0.from", "id"), ("topology.streams.0.to", "id"),
    ("topology.streams.0.grouping", "grouping"), ("topology.streams.0.rate", "non_negative"),
    ("topology.streams.0.stream", "string"),
    ("executors", "list_or_null"), ("executors.0.id", "id"), ("executors.0.component", "id"),
    ("executors.0.load", "non_negative"), ("executors.0.state_size", "non_negative"),
    ("executors.0.memory", "non_negative"),
    ("traffic", "list_or_null"), ("traffic.0.from", "id"), ("traffic.0.to", "id"),
    ("traffic.0.rate", "non_negative"),
    ("current", "object_or_null"), ("current.[1-1]", "slot"),
    ("options", "object_or_null"), ("options.seed", "whole"), ("options.max_migrations", "whole>=0_or_null"),
    ("options.max_migration_cost", "non_negative_or_null"), ("options.time_limit_s", "positive"),
    ("profiles", "object_or_null"),
]
WRONG["non_negative_or_null"] = [v for v in WRONG["non_negative"] if v is not None]
WRONG["string_or_null"] = [v for v in WRONG["string"] if v is not None]
WRONG["whole"] = [1.5, "2", None, True]
WRONG["whole>=0_or_null"] = [-1, 1.5, "2", True]


def mutations():
    for path, kind in FIELDS:
        for value in WRONG[kind]:
            yield f"{path}={value!r}", path, value
    for required in ("nodes", "topology", "topology.components", "nodes.0.id", "topology.components.0.id",
                     "topology.streams.0.from", "executors.0.component", "traffic.0.to"):
        yield f"{required} missing", required, KeyError


def apply(data: dict, path: str, value) -> dict:
    data = copy.deepcopy(data)
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


MUTATIONS = list(mutations())


@pytest.mark.parametrize("name, path, value", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_codec_and_schema_reject_the_same_shapes(name, path, value):
    data = apply(json.loads(BASE.read_text()), path, value)
    assert not schema_accepts(data), "the schema accepts it"
    assert not codec_accepts(data), "the codec accepts it"


SEMANTIC = [  # shape-valid, rejected by the codec only
    ("topology.streams.0.to", "ghost"), ("executors.0.component", "ghost"), ("traffic.0.from", "ghost"),
    ("nodes.1.id", "sup-a"), ("topology.components.1.id", "tweets"), ("executors.1.id", "[1-1]"),
    ("executors.0.load", 500.0), ("current.ghost", "sup-a:6700"),
]


@pytest.mark.parametrize("path, value", SEMANTIC, ids=[f"{p}={v!r}" for p, v in SEMANTIC])
def test_references_and_uniqueness_are_the_codecs_job(path, value):
    data = apply(json.loads(BASE.read_text()), path, value)
    assert schema_accepts(data)
    assert not codec_accepts(data)


@pytest.mark.parametrize("path, value", [("topology.components.0.executors", 2.0), ("nodes.0.slots", [6700.0]),
                                         ("options.seed", 7.0), ("options.extra_knob", {"any": "thing"}),
                                         ("nodes.0.unknown_field", 1), ("executors", []), ("traffic", None)])
def test_codec_and_schema_accept_the_same_variations(path, value):
    data = apply(json.loads(BASE.read_text()), path, value)
    if path in ("topology.components.0.executors", "executors"):  # derived executors: drop measured ids
        data["executors"] = None
        data["traffic"] = None
        data["current"] = None
    assert schema_accepts(data)
    assert codec_accepts(data)
