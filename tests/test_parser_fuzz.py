"""Fuzzing the two parsers of untrusted JSON (Hypothesis, bounded to a few seconds): a metrics window
and a plan-log line. Whatever the input, the answer is a record or the project's own corrupt-record
error, never another exception."""
from __future__ import annotations

import json
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent / "metrics"))
from metrics_docs import window_doc  # noqa: E402

from storm_planner.dashboard.planlog_reader import BadPlanLogLine, parse_record  # noqa: E402
from storm_planner.metrics.windows import CorruptWindow, TaskWindow, parse_window  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=12), st.sampled_from([10**30, -1, 0, 2**63]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


def as_bytes(value) -> bytes:
    return json.dumps(value).encode()   # NaN and Infinity included, as Python writes them


@st.composite
def mutated_windows(draw) -> bytes:
    """A real window document with one field (at any depth) replaced by a random value."""
    doc = window_doc("t-1-1", "count", 3, sent=((4, 10),), received=((1, 10),), process_ms=12.0)
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
        path.append((node, key))
        node = node[key]
    if path:
        parent, key = path[-1]
        parent[key] = draw(values)
    return as_bytes(doc)


raw_inputs = st.one_of(st.binary(max_size=64), st.text(max_size=64).map(str.encode), values.map(as_bytes))


@FUZZ
@given(st.one_of(mutated_windows(), raw_inputs))
def test_a_window_parses_or_is_a_corrupt_window(data):
    try:
        window = parse_window(data, where="fuzz")
    except CorruptWindow as error:
        assert str(error).startswith("fuzz: ")
        return
    assert isinstance(window, TaskWindow) and window.period_s > 0
    assert all(f.tuples >= 0 for f in window.sent + window.received)


@st.composite
def mutated_plan_lines(draw) -> bytes:
    record = {"time": 1.0, "event": "plan", "request_id": "r", "topology": "t", "algorithm": "even",
              "assignments": {"[1-1]": "a:1"}, "figures": {"migrations": 0}, "solve_ms": 1.0,
              "notes": ["n"], "error": None}
    record[draw(st.sampled_from(sorted(record) + ["advice", "extra"]))] = draw(values)
    return as_bytes(record)


@FUZZ
@given(st.one_of(mutated_plan_lines(), raw_inputs))
def test_a_plan_log_line_parses_or_is_a_bad_line(data):
    try:
        record = parse_record(data)
    except BadPlanLogLine:
        return
    assert record is None or (isinstance(record, dict) and isinstance(record["event"], str))
