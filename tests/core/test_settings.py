"""The settings catalogue (storm_planner.core.settings): one reader and one error policy for every
``planner.*`` key, the same keys and defaults as the Java plugin and hook, and the committed table."""
from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

import pytest

from storm_planner.cli import main
from storm_planner.core import settings
from storm_planner.core.settings import CATALOGUE, HOOK, PLUGIN, SettingError

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "python" / "src" / "storm_planner"
PLANNER_CONFIG = ROOT / "storm-scheduler/src/main/java/org/stormplanner/scheduler/PlannerConfig.java"
METRICS_CONFIG = ROOT / "storm-metrics/src/main/java/org/stormplanner/metrics/MetricsConfig.java"
PUBLISHER = ROOT / "storm-metrics/src/main/java/org/stormplanner/metrics/WorkerMetricsPublisher.java"
WHERE = {"storm.yaml": settings.STORM_YAML, "topology conf": settings.TOPOLOGY,
         "topology conf or storm.yaml": settings.TOPOLOGY_OR_YAML}


# -- reading -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("setting,raw,value", [
    (settings.REPLAN, "False", False), (settings.REPLAN, " yes ", True), (settings.REPLAN, True, True),
    (settings.REPLAN_THRESHOLD, "0.4", 0.4), (settings.REPLAN_THRESHOLD, 0.4, 0.4),
    (settings.MAX_MIGRATIONS, " 7 ", 7), (settings.METRICS_TRAFFIC_UNIT, "Bytes", "bytes"),
    (settings.SEED, "0", 0),
    (settings.WATERMARK_STREAMS, " watermark, marks ", ("watermark", "marks")),
])
def test_a_value_is_read_in_its_type(setting, raw, value):
    read = setting.read({setting.key: raw})
    assert read == value and type(read) is type(value)


@pytest.mark.parametrize("raw", [None, "", "  "])
def test_unset_or_empty_is_the_default(raw):
    for entry in CATALOGUE.values():
        assert entry.read({} if raw is None else {entry.key: raw}) == entry.default, entry.key


@pytest.mark.parametrize("setting,raw,says", [
    (settings.REPLAN, "maybe", "is not true or false"),
    (settings.REPLAN_PERIOD_SECS, "-5", "must not be below 0"),
    (settings.REPLAN_PERIOD_SECS, "soon", "is not a number"),
    (settings.TIME_LIMIT_SECS, "0", "must be positive"),
    (settings.MAX_MIGRATIONS, "2.5", "is not an integer"),
    (settings.MAX_MIGRATIONS, True, "is not an integer"),
    (settings.METRICS_WINDOWS, "0", "must be positive"),
    (settings.METRICS_MIN_COVERAGE, "1.5", "must not be above 1"),
    (settings.METRICS_STALE_SECS, "inf", "is not a finite number"),
    (settings.METRICS_TRAFFIC_UNIT, "bits", "is not one of tuples, bytes"),
    (settings.WATERMARK_STREAMS, "watermark,,marks", "is not a comma-separated list of stream ids"),
])
def test_an_unusable_value_is_refused_naming_the_key(setting, raw, says):
    with pytest.raises(SettingError) as refused:
        setting.read({setting.key: raw})
    assert refused.value.key == setting.key and refused.value.kind == "BAD_REQUEST"
    assert str(refused.value) == f"topology option {setting.key}={raw!r} {says}"


def test_the_service_checks_every_key_it_reads_and_nothing_else():
    settings.check_service_options({"planner.replan.interval.secs": "soon", "planner.enabled": "maybe"})  # plugin's
    for entry in settings.read_by(settings.SERVICE):
        bad = "maybe" if entry.kind == settings.FLAG else "bits" if entry.kind == settings.CHOICE else "-1"
        with pytest.raises(SettingError, match=re.escape(entry.key)):
            settings.check_service_options({entry.key: bad})


def test_a_key_nothing_reads_is_noted_with_the_closest_setting():
    options = {"planner.replan.treshold": "0.3", "planner.topdown.imc_unit": "bytes", "planner.seed": "2",
               "topology.workers": "2", "planner.zzz": "1"}
    assert settings.unknown_keys(options, ["topdown", "even"]) == [
        "topology option planner.replan.treshold is not a storm-planner setting: ignored "
        "(did you mean planner.replan.threshold?)",
        "topology option planner.zzz is not a storm-planner setting: ignored"]
    many = {f"planner.x{k}": "1" for k in range(15)}
    assert len(settings.unknown_keys(many, [])) == 11 and "5 more" in settings.unknown_keys(many, [])[-1]


def test_options_fields_fill_the_options_dataclass_and_leave_the_rest_in_extra():
    from storm_planner.core.problem import Options

    options = {"planner.max.cpu.utilisation": "0.7", "planner.seed": "3", "planner.replan": "false"}
    assert Options(**settings.options_fields(options)) == Options(max_cpu_utilisation=0.7, seed=3)
    assert settings.without_fields(options) == {"planner.replan": "false"}
    assert set(settings.OPTION_FIELDS) <= {f for f in Options.__dataclass_fields__}


def test_module_defaults_are_the_catalogue_s():
    from storm_planner.adaptation import replan_settings as replan
    from storm_planner.core import system_streams
    from storm_planner.metrics import loads_and_traffic, network_use
    from storm_planner.service.planning import rebalance

    assert (
        settings.REPLAN_THRESHOLD.default,
        settings.REPLAN_PERIOD_SECS.default,
        settings.REPLAN_MIN_GAIN.default,
        settings.REPLAN_SETTLE_SECS.default,
    ) == (replan.DEFAULT_THRESHOLD, replan.DEFAULT_PERIOD_S, replan.DEFAULT_MIN_GAIN, replan.DEFAULT_SETTLE_S)
    assert replan.ReplanSettings.of.__func__  # read through the catalogue (test below finds no hand parsing)
    assert (settings.REBALANCE_MIN_GAIN.default, settings.REBALANCE_COOLDOWN_SECS.default) == (
        rebalance.DEFAULT_MIN_GAIN,
        rebalance.DEFAULT_COOLDOWN_S,
    )
    assert settings.METRICS_WINDOWS.default == loads_and_traffic.DEFAULT_WINDOWS
    assert settings.TUPLE_OVERHEAD_BYTES.default == network_use.DEFAULT_TUPLE_OVERHEAD_BYTES
    assert settings.WATERMARK_STREAMS.default == system_streams.DEFAULT_WATERMARK_STREAMS


# -- one reader ----------------------------------------------------------------------------------------

def _planner_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"planner\.[a-z.]+", node.value):
        return node.value
    return None


def _hand_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """``options["planner.x"]`` read, ``options.get("planner.x")`` / ``.pop``, ``"planner.x" in options``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _planner_key(node.slice):
            found.append((node.lineno, _planner_key(node.slice)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args and _planner_key(node.args[0]):
            found.append((node.lineno, _planner_key(node.args[0])))
        elif isinstance(node, ast.Compare) and _planner_key(node.left) \
                and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            found.append((node.lineno, _planner_key(node.left)))
    return found


@functools.lru_cache(maxsize=1)
def _modules() -> tuple[tuple[Path, ast.AST], ...]:
    """Every module of the package but the catalogue, parsed once for the tests below."""
    return tuple((path, ast.parse(path.read_text(), str(path))) for path in sorted(SOURCE.rglob("*.py"))
                 if path != SOURCE / "core" / "settings.py")


def test_no_module_reads_a_planner_key_by_hand():
    offenders = [f"{path.relative_to(SOURCE)}:{line}: {key}" for path, tree in _modules()
                 for line, key in _hand_reads(tree)]
    assert not offenders, "read these through storm_planner.core.settings:\n" + "\n".join(offenders)


def test_the_check_finds_a_hand_read():
    tree = ast.parse('x = options.get("planner.replan", "true")\ny = "planner.seed" in options\n'
                     'z = conf["planner.algorithm"]\nconf["planner.algorithm"] = "even"\n')
    assert _hand_reads(tree) == [(1, "planner.replan"), (2, "planner.seed"), (3, "planner.algorithm")]


def test_every_key_a_module_writes_into_a_conf_is_in_the_catalogue():
    """Topology confs the kit builds (bench, profiling, the local cluster's storm.yaml) spell known keys."""
    written = set()
    for path, tree in _modules():
        for node in ast.walk(tree):
            keys = node.keys if isinstance(node, ast.Dict) else [node.slice] if isinstance(node, ast.Subscript) else []
            written.update((path.relative_to(SOURCE), key) for key in map(_planner_key, keys) if key)
    unknown = sorted(f"{path}: {key}" for path, key in written if key not in CATALOGUE)
    assert written and not unknown, unknown


# -- the Java side -------------------------------------------------------------------------------------

def _java_constants(*paths: Path) -> dict[str, object]:
    constants = {}
    for path in paths:
        for name, value in re.findall(r"static final (?:String|int|long|double) (\w+) = ([^;]+);", path.read_text()):
            constants[name] = value.strip('"') if value.startswith('"') else float(value)
    return constants


def _java_default(cell: str, constants: dict[str, object]):
    cell = re.sub(r"\s+", " ", cell).strip()
    if match := re.fullmatch(r"\{@value #(\w+)\}", cell):
        return constants[match.group(1)]
    if re.fullmatch(r"(\{@code )?(true|false)\}?", cell):
        return "true" in cell
    return None   # "(none)", "(empty: ...)", "storm.zookeeper.servers": unset, something else stands in


def _java_rows(path: Path, with_where: bool) -> dict[str, tuple[str | None, object]]:
    """key -> (where, default) from the Javadoc table of a Config class."""
    constants = _java_constants(path, PUBLISHER)
    gap = r"[\s*]*"   # line breaks and Javadoc's leading asterisks
    cells = r"<tr><td>\{@value #(\w+)\}</td>" + (gap + r"<td>([^<]+)</td>" if with_where else "") + gap + r"<td>(.*?)</td>"
    rows = {}
    for match in re.finditer(cells, path.read_text(), re.S):
        name, where, default = (match.group(1), match.group(2), match.group(3)) if with_where else \
            (match.group(1), None, match.group(2))
        rows[constants[name]] = (where, _java_default(default, constants))
    declared = {value for name, value in constants.items() if isinstance(value, str) and value.startswith("planner.")}
    assert set(rows) <= declared and len(rows) >= 6, (path, rows)
    return rows


def test_the_plugin_and_the_catalogue_declare_the_same_keys_where_and_defaults():
    rows = _java_rows(PLANNER_CONFIG, with_where=True)
    java_keys = {v for v in _java_constants(PLANNER_CONFIG).values() if isinstance(v, str) and v.startswith("planner.")
                 and v != "planner." and not v.endswith(".")}
    assert java_keys == set(rows), "every PlannerConfig key is in its Javadoc table"
    assert java_keys == {s.key for s in CATALOGUE.values() if PLUGIN in s.readers}
    for key, (where, default) in rows.items():
        entry = CATALOGUE[key]
        assert WHERE[where] == entry.where, key
        assert default == entry.default, (key, default, entry.default)


def test_the_metrics_hook_and_the_catalogue_declare_the_same_keys_and_defaults():
    rows = _java_rows(METRICS_CONFIG, with_where=False)
    hook_keys = set(rows) | {_java_constants(PUBLISHER)["STATE_SIZE_KEY"]}
    assert hook_keys == {s.key for s in CATALOGUE.values() if HOOK in s.readers}
    for key, (_, default) in rows.items():
        assert default == CATALOGUE[key].default, (key, default, CATALOGUE[key].default)


# -- the table -----------------------------------------------------------------------------------------

def test_the_committed_settings_page_is_what_the_command_writes(capsys):
    assert main(["settings"]) == 0
    written = capsys.readouterr().out
    assert written == settings.settings_page()
    committed = (ROOT / "docs" / "settings.md").read_text()
    assert committed == written, "docs/settings.md is stale: storm-planner settings > docs/settings.md"
    assert main(["settings", "--json"]) == 0
    assert [row["key"] for row in json.loads(capsys.readouterr().out)] == list(CATALOGUE)
    assert all(f"`{key}`" in committed for key in CATALOGUE)


def test_options_are_built_where_they_are_read_and_otherwise_only_narrowed():
    """``Options`` is made from a problem file (core/codec.py) or a request (service/planning/convert.py); anything
    that changes one uses ``dataclasses.replace``, so no field is lost on the way (the re-plan regression)."""
    builders = sorted({str(path.relative_to(SOURCE)) for path, tree, names in _modules_with_options_names()
                       for node in ast.walk(tree) if isinstance(node, ast.Call) and _calls_options(node.func, names)})
    assert builders == ["core/codec.py", "service/planning/convert.py"]


def _modules_with_options_names():
    """Each module with the names ``Options`` goes by in it, read once per module (reading them again for
    every call walked the whole tree per call: a minute and a half of the suite)."""
    for path, tree in _modules():
        yield path, tree, _options_names(tree)


def _options_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``Options`` goes by in a module (itself and any ``import ... Options as X``), and the
    names the kit's own modules go by there (``X.Options`` is the kit's; ``pymetis.Options`` is not)."""
    names, modules = {"Options"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("storm_planner"):
            names |= {a.asname for a in node.names if a.name == "Options" and a.asname}
            modules |= {a.asname or a.name for a in node.names if a.name != "Options"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.startswith("storm_planner")}
    return names, modules


def _calls_options(func: ast.expr, names: tuple[set[str], set[str]]) -> bool:
    """``Options(...)``, an alias of it, or ``module.Options(...)`` for one of the kit's modules."""
    options, modules = names
    return ((isinstance(func, ast.Name) and func.id in options)
            or (isinstance(func, ast.Attribute) and func.attr == "Options" and isinstance(func.value, ast.Name)
                and func.value.id in modules))


def test_the_options_builder_check_sees_aliases_and_module_calls():
    tree = ast.parse("from storm_planner.core.problem import Options as O\nimport storm_planner.core.problem as p\n"
                     "from storm_planner.core import problem\nimport pymetis\n"
                     "O(seed=1)\np.Options(seed=2)\nproblem.Options()\nOptionsLike()\npymetis.Options(seed=3)\n")
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert [_calls_options(f, _options_names(tree)) for f in calls] == [True, True, True, False, False]
