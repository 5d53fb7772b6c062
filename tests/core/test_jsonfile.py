"""Files from outside are read within bounds (core.jsonfile, core.limits): hostile or broken problem files
cost one clear line on standard error and exit status 2, never a traceback or a hang.

Each attack below printed a traceback (100,000-deep nesting, a 5000-digit integer) or hung (``executors:
1e9``, a forecast horizon of 10^9 epochs) before. The fuzz tests feed the problem-file parser arbitrary
text and arbitrarily damaged problem files: it returns a Problem or raises ProblemError, nothing else.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storm_planner.cli import main
from storm_planner.core.errors import ProblemError
from storm_planner.core.jsonfile import JsonFileError, loads_bounded, read_json
from storm_planner.core.limits import Limits
from storm_planner.core.problem import Problem
from storm_planner.scaling.generator import paper_resources

SMALL = Path(__file__).resolve().parents[1] / "data" / "small-problem.json"
SMALL_TEXT = SMALL.read_text()


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, tmp_path: Path, text: str, *command: str, culprit_is_the_file: bool = True) -> str:
    """Run ``command FILE`` on ``text``: exit status 2, nothing on stdout, one line (naming the file)."""
    path = tmp_path / "hostile.json"
    path.write_text(text)
    status, out, err = run_cli(capsys, *(command or ("plan",)), str(path))
    assert (status, out) == (2, ""), (status, out, err)
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert (str(path) in err) == culprit_is_the_file, err
    return err


@pytest.mark.parametrize("text, culprit", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep (setting STORM_PLANNER_MAX_JSON_DEPTH)"),
    ('{"a": ' * 70 + "1" + "}" * 70, "nested more than 64 levels deep"),
    (SMALL_TEXT.replace('"capacity": 400', '"capacity": ' + "9" * 5000),
     "nodes[0].capacity: an integer of 5,000 digits, more than 30 (setting STORM_PLANNER_MAX_INT_DIGITS)"),
    (SMALL_TEXT.replace('"seed": 1', '"seed": -' + "1" * 31), "options.seed: an integer of 31 digits"),
    (SMALL_TEXT.replace('"capacity": 400', '"capacity": NaN'), "nodes[0].capacity: a finite number, got nan"),
    (SMALL_TEXT.replace('"rate": 15.0', '"rate": -Infinity'), "topology.streams[0].rate: a finite number, got -inf"),
    (SMALL_TEXT.replace('"speed": 1.0', '"speed": 1e999'), "nodes[0].speed: a finite number, got inf"),
    (SMALL_TEXT.replace('"executors": 4', '"executors": 1e9'),
     "topology.components[1].executors: 1000000002 executors in the problem, more than the limit of 1000000 "
     "(STORM_PLANNER_MAX_EXECUTORS)"),
    ("{\"nodes\": [1, 2", "not JSON (Expecting ',' delimiter: line 1 column 16"),
])
def test_a_hostile_problem_file_is_refused_naming_the_culprit(capsys, tmp_path, text, culprit):
    assert culprit in refused(capsys, tmp_path, text)


def test_a_file_larger_than_the_limit_is_not_read_past_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("STORM_PLANNER_MAX_JSON_BYTES", "100")
    assert "larger than 100 bytes (STORM_PLANNER_MAX_JSON_BYTES)" in refused(capsys, tmp_path, SMALL_TEXT)


def test_each_limit_is_a_setting(capsys, tmp_path, monkeypatch):
    six_executors = SMALL_TEXT  # tweets 2 + count 4
    monkeypatch.setenv("STORM_PLANNER_MAX_EXECUTORS", "5")
    assert "topology.components[1].executors: 6 executors" in refused(capsys, tmp_path, six_executors)
    monkeypatch.setenv("STORM_PLANNER_MAX_EXECUTORS", "6")
    monkeypatch.setenv("STORM_PLANNER_MAX_JSON_DEPTH", "2")
    assert "nested more than 2 levels deep (setting STORM_PLANNER_MAX_JSON_DEPTH)" in refused(
        capsys, tmp_path, six_executors
    )
    monkeypatch.setenv("STORM_PLANNER_MAX_JSON_DEPTH", "lots")
    assert "STORM_PLANNER_MAX_JSON_DEPTH='lots': a whole number >= 1 (default 64)" in refused(
        capsys, tmp_path, six_executors, culprit_is_the_file=False)
    monkeypatch.delenv("STORM_PLANNER_MAX_JSON_DEPTH")
    status, out, _ = run_cli(capsys, "plan", str(SMALL))
    assert status == 0 and json.loads(out)["assignments"]


def test_a_scaling_problem_is_read_within_the_same_bounds(capsys, tmp_path):
    resources = paper_resources()[:2]
    base = {"resources": resources, "performance": {resources[0]["id"]: 10.0, resources[1]["id"]: 18.0}}
    horizon = {**base, "history": {"rates": [100, 200, 150, 120], "horizon": 10 ** 9}}
    err = refused(capsys, tmp_path, json.dumps(horizon), "scale", "plan")
    assert "history.horizon: 1000000000 epochs, more than the limit of 10000 (STORM_PLANNER_MAX_EPOCHS)" in err
    err = refused(capsys, tmp_path, json.dumps({**base, "workload": [100, 1e999]}), "scale", "plan")
    assert "workload[1]: a finite number, got inf" in err


def test_the_reader_names_where_in_a_document_a_value_is_refused(tmp_path):
    limits = Limits(max_json_depth=3, max_int_digits=3)
    assert loads_bounded('{"a": [1, -999, 1.5e3, {"b": null}]}', "x", limits) == {"a": [1, -999, 1500.0, {"b": None}]}
    with pytest.raises(JsonFileError, match=r"^x: a\[1\]: an integer of 4 digits, more than 3"):
        loads_bounded('{"a": [1, -1000]}', "x", limits)
    with pytest.raises(JsonFileError, match=r"^x: nested more than 3 levels deep"):
        loads_bounded('{"a": [[[1]]]}', "x", limits)
    with pytest.raises(JsonFileError, match=r"^x: top level: a finite number, got nan"):
        loads_bounded("NaN", "x", limits)
    (tmp_path / "latin1.json").write_bytes(b'{"name": "\xe9"}')
    with pytest.raises(JsonFileError, match=r"latin1.json: not UTF-8 text at byte 10"):
        read_json(tmp_path / "latin1.json")
    with pytest.raises(JsonFileError, match=r"cannot read .*missing.json: No such file"):
        read_json(tmp_path / "missing.json")


# -- fuzz ---------------------------------------------------------------------------------------------------

FUZZ = settings(max_examples=100, deadline=2000, database=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from([0, 1, -1, 6700, 10 ** 40, "spout", "bolt", "shuffle", "fields", "sup-a", "tweets"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


def parses_or_refuses(text: str) -> None:
    try:
        problem = Problem.from_json(text, "fuzz.json")
    except ProblemError:
        return
    assert isinstance(problem, Problem)


@FUZZ
@given(st.text(max_size=200))
def test_any_text_is_a_problem_or_a_problem_error(text):
    parses_or_refuses(text)


def paths(value, prefix=()):
    """Every place in a JSON document, as a key path."""
    yield prefix
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from paths(item, prefix + (key,))


SMALL_PATHS = list(paths(json.loads(SMALL_TEXT)))[1:]


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(SMALL_PATHS), json_values), min_size=1, max_size=3))
def test_a_damaged_problem_file_is_a_problem_or_a_problem_error(damages):
    document = json.loads(SMALL_TEXT)
    for path, value in damages:
        target = document
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier damage removed that place
    parses_or_refuses(json.dumps(document))
