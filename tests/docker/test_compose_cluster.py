"""The docker-compose cluster (docker/): valid, rendered, and the same cluster as the local one.

No Docker engine is needed. What is checked:

- the committed ``docker/compose.yaml`` validates against the Compose Specification's JSON Schema
  (vendored beside this file) and, when Debian's ``docker-compose`` is installed, ``docker-compose
  config`` accepts it;
- it and every file under ``docker/conf/`` equal what ``storm-planner cluster compose`` renders from
  the default description;
- every storm.yaml a service mounts has the same keys and values as the local launcher's file for
  the same daemon, except exactly the keys of ``compose.CONTAINER_KEYS`` (host names, container
  paths, the UI's bind address, and the added ``storm.log.dir``);
- each supervisor container's CPU limit is its ``supervisor.cpu.capacity`` / 100 and its memory
  limit its ``supervisor.memory.capacity.mb``.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from storm_planner.cli import main
from storm_planner.cluster import compose
from storm_planner.cluster.description import default_description
from storm_planner.cluster.launcher import ClusterOptions, LocalCluster
from storm_planner.cluster.supervisor_id import read_supervisor_id

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "compose-spec.json"
# The vendored schema is upstream's file unchanged (see compose-spec.README.md).
SCHEMA_SHA256 = "1f91e091f16b2dd50ab8860e02bb391d22df553d91c145eacedb1b6eff9c3f0e"

# Which storm.yaml keys differ between a container and a local process, per daemon. Stated here
# on purpose, not derived from compose.CONTAINER_KEYS, so a change to either shows up as a failure.
HOST_AND_PATH_KEYS = {
    "storm.zookeeper.servers",  # host name of the zookeeper service
    "nimbus.seeds",             # host name of the nimbus service
    "storm.local.hostname",     # the daemon's own service name
    "ui.host",                  # 0.0.0.0: the published port must reach the UI in its container
    "storm.local.dir",          # /data, the official image's data directory
}
DIFFERING_KEYS = {
    "nimbus": HOST_AND_PATH_KEYS | {"planner.service.host"},  # host name of the planner service
    "ui": HOST_AND_PATH_KEYS,
    "supervisor": HOST_AND_PATH_KEYS,
}
# Keys only the container files have: the local launcher gives the log directory on the command line.
ADDED_KEYS = {"storm.log.dir"}
ZOO_CFG_DIFFERING = {"dataDir", "clientPortAddress"}


def load_compose(path: Path = DOCKER / "compose.yaml") -> dict:
    return yaml.safe_load(path.read_text())


def storm_services(document: dict) -> dict[str, dict]:
    """The services that run a Storm daemon (they mount a storm.yaml)."""
    return {name: s for name, s in document["services"].items() if s.get("command", [None])[0] == "storm"}


def mounted_storm_yaml(service: dict) -> str:
    """The compose-relative path of the storm.yaml a service mounts."""
    mounts = [v for v in service.get("volumes", []) if v.split(":")[1] == compose.CONF_FILE]
    assert len(mounts) == 1, f"expected one storm.yaml mount, got {mounts}"
    source, _, mode = mounts[0].split(":")
    assert mode == "ro"
    return source


def launcher_confs(tmp_path: Path, description=None) -> dict[str, str]:
    """The local launcher's own files for the description: name without suffix → text."""
    cluster = LocalCluster(description or default_description(), tmp_path / "state", ClusterOptions(),
                           progress=lambda message: None)
    cluster._prepare_dirs(None)  # what `cluster up` writes before it starts anything
    return {p.stem if p.suffix == ".yaml" else p.name: p.read_text() for p in cluster.conf_dir.iterdir()}


def zoo_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


# -- the committed files are the rendered ones -----------------------------------------------
def test_committed_files_equal_the_rendered_ones():
    rendered = compose.render(default_description(), project_root="..")
    for relative, text in rendered.items():
        path = DOCKER / relative
        assert path.is_file(), f"docker/{relative} is missing: run `storm-planner cluster compose > docker/compose.yaml`"
        assert path.read_text() == text, (
            f"docker/{relative} differs from what `storm-planner cluster compose` renders from the default "
            f"description; render again: storm-planner cluster compose > docker/compose.yaml"
        )
    committed_conf = {f"{compose.CONF_DIR}/{p.name}" for p in (DOCKER / compose.CONF_DIR).iterdir()}
    assert committed_conf == {r for r in rendered if r.startswith(compose.CONF_DIR + "/")}


def test_command_writes_the_files_and_prints_the_compose_file(tmp_path, monkeypatch, capsys):
    # --out DIR: everything in DIR, the build context pointing back at this checkout.
    assert main(["cluster", "compose", "--out", str(tmp_path / "out")]) == 0
    rendered = compose.render(default_description())
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert written == set(rendered)
    document = load_compose(tmp_path / "out" / "compose.yaml")
    context = tmp_path / "out" / document["services"]["nimbus"]["build"]["context"]
    assert context.resolve() == REPO
    assert (tmp_path / "out" / "conf" / "nimbus.yaml").read_text() == rendered["conf/nimbus.yaml"]

    # No --out: the compose file on stdout, the rest beside the checkout's docker/compose.yaml.
    fake_checkout = tmp_path / "checkout"
    (fake_checkout / "docker").mkdir(parents=True)
    monkeypatch.setattr("storm_planner.cluster.locations.repo_root", lambda: fake_checkout)
    capsys.readouterr()
    assert main(["cluster", "compose"]) == 0
    assert capsys.readouterr().out == (DOCKER / "compose.yaml").read_text()
    for name in ("nimbus.yaml", "ui.yaml", "zoo.cfg"):
        assert (fake_checkout / "docker" / "conf" / name).read_text() == (DOCKER / "conf" / name).read_text()
    assert not (fake_checkout / "docker" / "compose.yaml").exists()


def test_rendering_another_description_replaces_the_supervisors(tmp_path):
    description = tmp_path / "three.yaml"
    data = yaml.safe_load((REPO / "python/src/storm_planner/cluster/default-cluster.yaml").read_text())
    data["supervisors"] = [
        {"name": "i7-a", "cpu": 200, "memory_mb": 4096, "meta": {"machine.type": "i7", "speed": "2.0"}},
        {"name": "i5-a", "cpu": 100, "memory_mb": 2048, "meta": {"machine.type": "i5", "speed": "1.0"}},
        {"name": "atom-a", "cpu": 50, "memory_mb": 1024, "meta": {"machine.type": "atom", "speed": "0.5"}},
    ]
    description.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    assert main(["cluster", "compose", "--out", str(out)]) == 0
    (out / "conf" / "keep-me.yaml").write_text("not rendered by storm-planner\n")
    assert main(["cluster", "compose", "--cluster", str(description), "--out", str(out)]) == 0
    confs = sorted(p.name for p in (out / "conf").iterdir())
    # The default's supervisors are gone, files the renderer did not write are kept.
    assert confs == ["keep-me.yaml", "nimbus.yaml", "supervisor-atom-a.yaml", "supervisor-i5-a.yaml",
                     "supervisor-i7-a.yaml", "ui.yaml", "zoo.cfg"]
    document = load_compose(out / "compose.yaml")
    assert document["services"]["supervisor-atom-a"]["cpus"] == 0.5
    meta = yaml.safe_load((out / "conf" / "supervisor-atom-a.yaml").read_text())["supervisor.scheduler.meta"]
    assert meta == {"machine.type": "atom", "speed": "0.5"}
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(document)


# -- the compose file is valid ------------------------------------------------------------------
def test_vendored_schema_is_upstreams_file():
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256


def test_compose_file_validates_against_the_compose_specification_schema():
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(load_compose()), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
    # The schema does catch mistakes (a sanity check of the check).
    broken = load_compose()
    broken["services"]["nimbus"]["cpu"] = 2
    assert list(validator.iter_errors(broken))


def test_docker_compose_config_accepts_the_compose_file():
    if shutil.which("docker-compose") is None:
        pytest.skip("docker-compose is not installed (Debian package docker-compose; `make system-packages` "
                    "installs it when run as root); the Compose Specification schema check still ran")
    result = subprocess.run(["docker-compose", "-f", "compose.yaml", "config", "-q"], cwd=DOCKER,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout


# -- the same cluster as the local launcher's ---------------------------------------------------
def test_services_are_the_launchers_daemons_on_one_network():
    document = load_compose()
    description = default_description()
    expected = {"zookeeper", "planner", "nimbus", "ui"} | {f"supervisor-{s.name}" for s in description.supervisors}
    assert set(document["services"]) == expected
    assert all(s["networks"] == [compose.NETWORK] for s in document["services"].values())
    assert list(document["networks"]) == [compose.NETWORK]
    for service in storm_services(document).values():
        assert service["image"] == f"{compose.STORM_IMAGE}:{description.storm_version}"
        assert service["build"]["args"]["STORM_VERSION"] == description.storm_version
    nimbus = yaml.safe_load((DOCKER / "conf" / "nimbus.yaml").read_text())
    planner = document["services"]["planner"]
    assert nimbus["planner.service.host"] == "planner"
    assert ["--port", str(nimbus["planner.service.port"])] == planner["command"][4:6]
    assert planner["environment"]["STORM_PLANNER_NIMBUS"] == f"nimbus:{nimbus['nimbus.thrift.port']}"


def test_every_mounted_storm_yaml_is_the_launchers_apart_from_container_keys(tmp_path):
    local = launcher_confs(tmp_path)
    services = storm_services(load_compose())
    # One mounted storm.yaml per launcher storm.yaml, named alike.
    assert {name for name in local if name != "zoo.cfg"} == set(services)
    for name, service in services.items():
        source = mounted_storm_yaml(service)
        assert source == f"./{compose.CONF_DIR}/{name}.yaml"
        container = yaml.safe_load((DOCKER / source).read_text())
        here = yaml.safe_load(local[name])
        kind = "supervisor" if name.startswith("supervisor-") else name

        assert set(container) - set(here) == ADDED_KEYS, name
        assert set(here) <= set(container), name
        differing = {k for k in here if here[k] != container[k]}
        assert differing == DIFFERING_KEYS[kind], f"{name}: unexpected differences {differing ^ DIFFERING_KEYS[kind]}"
        assert differing | ADDED_KEYS <= set(compose.CONTAINER_KEYS), "CONTAINER_KEYS must explain every difference"

        # And the differences are the container's host names and paths.
        assert container["storm.zookeeper.servers"] == ["zookeeper"]
        assert container["nimbus.seeds"] == ["nimbus"]
        assert container["storm.local.hostname"] == name == service["hostname"]
        assert container["ui.host"] == "0.0.0.0"
        assert container["storm.local.dir"] == "/data"
        assert container["storm.log.dir"] == "/logs"
        # Ports are the description's in both clusters.
        assert {k: v for k, v in container.items() if "port" in k} == {k: v for k, v in here.items() if "port" in k}


def test_no_local_address_leaks_into_a_container_conf():
    loopback = default_description().host
    for path in (DOCKER / "conf").iterdir():
        if path.suffix == ".yaml":
            assert loopback not in path.read_text(), path.name
    assert f"clientPortAddress={loopback}" not in (DOCKER / "conf" / "zoo.cfg").read_text()


def test_zoo_cfg_is_the_launchers_apart_from_its_address_and_data_dir(tmp_path):
    local = zoo_lines(launcher_confs(tmp_path)["zoo.cfg"])
    container = zoo_lines((DOCKER / "conf" / "zoo.cfg").read_text())
    assert set(local) == set(container)
    assert {k for k in local if local[k] != container[k]} == ZOO_CFG_DIFFERING == set(compose.ZOO_CFG_CONTAINER_KEYS)
    assert container["dataDir"] == "/data" and container["clientPortAddress"] == "0.0.0.0"
    assert load_compose()["services"]["zookeeper"]["volumes"] == [f"./{compose.CONF_DIR}/zoo.cfg:/conf/zoo.cfg:ro"]


def test_supervisor_containers_have_what_they_advertise():
    document = load_compose()
    description = default_description()
    limits = set()
    for sup in description.supervisors:
        service = document["services"][f"supervisor-{sup.name}"]
        conf = yaml.safe_load((DOCKER / mounted_storm_yaml(service)).read_text())
        assert service["cpus"] * 100 == conf["supervisor.cpu.capacity"] == sup.cpu
        assert service["mem_limit"] == f"{conf['supervisor.memory.capacity.mb']:g}m"
        assert conf["supervisor.scheduler.meta"] == dict(sup.meta)
        assert service["environment"][compose.SUPERVISOR_ID_ENV] == sup.name
        limits.add((service["cpus"], conf["supervisor.scheduler.meta"]["machine.type"]))
    assert len(limits) == len(description.supervisors) >= 2, "the default supervisors must really differ"


# -- images ---------------------------------------------------------------------------------------
def dockerfile_copies(dockerfile: Path) -> list[str]:
    sources = []
    for line in dockerfile.read_text().splitlines():
        if line.startswith("COPY "):
            parts = [p for p in line.split()[1:] if not p.startswith("--")]
            sources.extend(parts[:-1])
    return sources


@pytest.mark.parametrize("image", ["storm", "planner"])
def test_dockerfiles_copy_only_what_exists_or_maven_builds(image):
    dockerfile = DOCKER / image / "Dockerfile"
    allowed = [line[1:] for line in (DOCKER / image / "Dockerfile.dockerignore").read_text().splitlines()
               if line.startswith("!")]
    maven_outputs = {
        "storm-scheduler/target/storm-planner-scheduler.jar": REPO / "storm-scheduler" / "pom.xml",
        "storm-metrics/target/storm-planner-metrics.jar": REPO / "storm-metrics" / "pom.xml",
    }
    for source in dockerfile_copies(dockerfile):
        assert any(source == a or source.startswith(a + "/") for a in allowed), \
            f"{image}: COPY {source} is excluded by Dockerfile.dockerignore"
        if source in maven_outputs:
            final_name = Path(source).stem
            assert f"<finalName>{final_name}</finalName>" in maven_outputs[source].read_text()
        else:
            assert (REPO / source).exists(), f"{image}: COPY {source}: no such file in the checkout"


def test_storm_image_version_is_the_plugins():
    pom = re.search(r"<storm.version>([^<]+)</storm.version>", (REPO / "pom.xml").read_text()).group(1)
    dockerfile = re.search(r"^ARG STORM_VERSION=(\S+)$", (DOCKER / "storm" / "Dockerfile").read_text(), re.M).group(1)
    assert pom == dockerfile == default_description().storm_version
    assert "FROM storm:${STORM_VERSION}" in (DOCKER / "storm" / "Dockerfile").read_text()


def test_streamparse_run_is_at_the_same_path_in_both_images():
    # `storm-planner submit` in the planner container names its streamparse_run; supervisors run it.
    for image in ("storm", "planner"):
        assert f"-m venv {compose.VENV}" in (DOCKER / image / "Dockerfile").read_text(), image


# -- the container scripts ------------------------------------------------------------------------
def test_seed_script_stores_the_supervisor_id_from_storm_yaml(tmp_path):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    local_dir = tmp_path / "data"
    (conf_dir / "storm.yaml").write_text(yaml.safe_dump({"storm.local.dir": str(local_dir)}))
    env = {"STORM_CONF_DIR": str(conf_dir), "STORM_PLANNER_SUPERVISOR_ID": "sup-fast", "PATH": "/usr/bin:/bin"}
    script = DOCKER / "storm" / "seed_supervisor_id.py"
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert read_supervisor_id(local_dir) == "sup-fast"
    # A second start keeps the stored id.
    env["STORM_PLANNER_SUPERVISOR_ID"] = "other"
    subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True, timeout=60)
    assert read_supervisor_id(local_dir) == "sup-fast"


def test_healthcheck_script_reports_an_absent_daemon(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "storm.yaml").write_text(yaml.safe_dump({"nimbus.thrift.port": port, "ui.port": port}))
    script = DOCKER / "storm" / "healthcheck.py"
    env = {"STORM_CONF_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for check in ("nimbus", "ui"):
        result = subprocess.run([sys.executable, str(script), check], env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith(f"{check}: ")
    usage = subprocess.run([sys.executable, str(script), "bogus"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert usage.returncode == 2
