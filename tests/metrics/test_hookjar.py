"""The metrics hook travels inside the topology jar and is switched on in the topology conf."""
from __future__ import annotations

import zipfile

import pytest

from storm_planner.metrics.hookjar import HOOK_CLASS, HOOKS_KEY, bundle_metrics_hook, default_hook_jar
from storm_planner.submit.jar import build_topology_jar

JAR = default_hook_jar()
needs_jar = pytest.mark.skipif(JAR is None or not JAR.is_file(), reason="metrics jar not built (mvn package)")


@needs_jar
def test_submit_bundles_the_hook_classes_and_switches_the_hook_on(tmp_path):
    options = {HOOKS_KEY: ["com.example.OtherHook"], "topology.workers": 2}
    bundle = bundle_metrics_hook(options)
    assert options[HOOKS_KEY] == ["com.example.OtherHook", HOOK_CLASS], "other hooks are kept"
    assert "metrics hook on" in bundle.note
    src = tmp_path / "src" / "pkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    jar = build_topology_jar(tmp_path / "src", tmp_path / "t.jar", extra_entries=bundle.entries)
    names = zipfile.ZipFile(jar).namelist()
    assert "org/stormplanner/metrics/MetricsTaskHook.class" in names
    # The kit's partial key grouping rides along (partial_key:a,b groupings name it).
    assert "org/stormplanner/grouping/PartialKeyFieldsGrouping.class" in names
    assert "resources/pkg/__init__.py" in names
    assert all(n.startswith(("org/stormplanner/metrics/", "org/stormplanner/grouping/", "resources/",
                             "META-INF/MANIFEST.MF")) for n in names)
    again = {}
    bundle_metrics_hook(again)
    bundle_metrics_hook(again)
    assert again[HOOKS_KEY] == [HOOK_CLASS], "switched on once"


def test_the_hook_stays_off_when_the_topology_says_so_or_the_jar_is_missing(tmp_path):
    off = {"planner.metrics.enabled": False}
    assert bundle_metrics_hook(off).entries == () and HOOKS_KEY not in off
    missing = {}
    bundle = bundle_metrics_hook(missing, jar=tmp_path / "absent.jar")
    assert bundle.entries == () and "not found" in bundle.note and HOOKS_KEY not in missing
