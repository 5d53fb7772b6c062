"""The docker-compose cluster (docker/): valid, rendered, and the same cluster as the local one.

No Docker engine is needed (``test_compose_on_docker.py`` runs the cluster for real). What is checked:

- the committed ``docker/compose.yaml`` validates against the Compose Specification's JSON Schema
  (vendored beside this file) and, when Debian's ``docker-compose`` is installed, ``docker-compose
  config`` accepts it;
- it and every file under ``docker/conf/`` equal what ``storm-planner cluster compose`` renders from
  the default description;
- every storm.yaml a service mounts has the same keys and values as the local launcher's file for
  the same daemon, except exactly the keys of ``compose.CONTAINER_KEYS`` (host names, container
  paths, the UI's bind address, and the added ``storm.log.dir``);
- each supervisor container's CPU limit is its ``supervisor.cpu.capacity`` / 100 and its memory
  limit its ``supervisor.memory.capacity.mb``;
- Docker's addresses stay inside 198.18.0.0/15, out of the private networks;
- the build context holds everything ``docker/Dockerfile`` copies, and the containers run the local
  launcher's JVM command lines.
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from storm_planner.cli import main
from storm_planner.cluster import compose, container, docker_engine, images, storm_home
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
    "storm.local.dir",          # /data, the Storm image's data directory
}
DIFFERING_KEYS = {
    "nimbus": HOST_AND_PATH_KEYS | {"planner.service.host"},  # host name of the planner service
    "supervisor": HOST_AND_PATH_KEYS,
}
# Keys only the container files have: the local launcher gives the log directory on the command line.
ADDED_KEYS = {"storm.log.dir"}
ZOO_CFG_DIFFERING = {"dataDir", "clientPortAddress"}


def load_compose(path: Path = DOCKER / "compose.yaml") -> dict:
    return yaml.safe_load(path.read_text())


def storm_services(document: dict) -> dict[str, dict]:
    """The services that run a Storm daemon with a storm.yaml (Nimbus, the supervisors)."""
    return {name: s for name, s in document["services"].items()
            if s.get("command", [None])[0] in ("nimbus", "supervisor")}


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
    rendered = compose.render(default_description())
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
    # --out DIR: everything in DIR.
    assert main(["cluster", "compose", "--out", str(tmp_path / "out")]) == 0
    rendered = compose.render(default_description())
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert written == set(rendered)
    assert (tmp_path / "out" / "conf" / "nimbus.yaml").read_text() == rendered["conf/nimbus.yaml"]

    # No --out: the compose file on stdout, the rest beside the checkout's docker/compose.yaml.
    fake_checkout = tmp_path / "checkout"
    (fake_checkout / "docker").mkdir(parents=True)
    monkeypatch.setattr("storm_planner.cluster.locations.repo_root", lambda: fake_checkout)
    capsys.readouterr()
    assert main(["cluster", "compose"]) == 0
    assert capsys.readouterr().out == (DOCKER / "compose.yaml").read_text()
    for name in ("nimbus.yaml", "supervisor-sup-fast.yaml", "zoo.cfg"):
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
                     "supervisor-i7-a.yaml", "zoo.cfg"]
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
    expected = {"zookeeper", "planner", "nimbus", "dashboard"} | {f"supervisor-{s.name}" for s in description.supervisors}
    assert set(document["services"]) == expected
    assert all(s["networks"] == [compose.NETWORK] for s in document["services"].values())
    assert list(document["networks"]) == [compose.NETWORK]
    # The images the compose command builds; none is pulled from a registry.
    for name, service in document["services"].items():
        assert service["image"] in (images.PLANNER_IMAGE, images.storm_image(description.storm_version)), name
        assert "build" not in service, name
    for name in ("zookeeper", *storm_services(document)):
        assert document["services"][name]["image"] == f"storm-planner-storm:{description.storm_version}"
        assert document["services"][name]["command"] == [name.split("-")[0]]
    nimbus = yaml.safe_load((DOCKER / "conf" / "nimbus.yaml").read_text())
    planner = document["services"]["planner"]
    assert nimbus["planner.service.host"] == "planner"
    assert ["--port", str(nimbus["planner.service.port"])] == planner["command"][4:6]
    assert planner["environment"]["STORM_PLANNER_NIMBUS"] == f"nimbus:{nimbus['nimbus.thrift.port']}"
    # The planner reads the workers' metrics from ZooKeeper, as the launcher's does; the dashboard reads
    # the planner's plan log from the volume they share.
    assert planner["command"][planner["command"].index("--zookeeper") + 1] == "zookeeper:2181"
    dashboard = document["services"]["dashboard"]
    assert dashboard["command"][dashboard["command"].index("--plan-log") + 1] == compose.PLAN_LOG
    assert f"{compose.PLANS_VOLUME}:/logs" in planner["volumes"]
    assert f"{compose.PLANS_VOLUME}:/logs:ro" in dashboard["volumes"]


def test_a_pid_file_left_by_a_dead_dockerd_is_removed_and_a_live_ones_kept(tmp_path):
    """dockerd refuses to start while its pid file names a live process, even one that is not dockerd
    (a pid reused after the old daemon died): the file is removed then, never while dockerd holds it."""
    pid_file = tmp_path / "docker.pid"
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        pid_file.write_text(str(_execed(sleeper.pid, "sleep")))
        assert "now sleep" in docker_engine.remove_stale_pid_file(pid_file) and not pid_file.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    pid_file.write_text(str(sleeper.pid))
    assert "not running" in docker_engine.remove_stale_pid_file(pid_file) and not pid_file.exists()
    pid_file.write_text("not a pid")
    assert docker_engine.remove_stale_pid_file(pid_file) == "" and pid_file.exists()
    named_dockerd = tmp_path / "dockerd"            # a process the kernel names dockerd: kept
    shutil.copy(shutil.which("sleep"), named_dockerd)
    with subprocess.Popen([str(named_dockerd), "30"]) as running:
        try:
            pid_file.write_text(str(_execed(running.pid, "dockerd")))
            assert docker_engine.remove_stale_pid_file(pid_file) == "" and pid_file.exists()
        finally:
            running.kill()


def test_a_dockerd_that_exits_as_it_starts_is_reported_at_once_with_its_reason(tmp_path, monkeypatch):
    log = tmp_path / "dockerd.log"
    log.write_text("failed to start daemon: pid file found, ensure docker is not running\n")
    monkeypatch.setattr(docker_engine, "DOCKERD_LOG", log)
    monkeypatch.setattr(docker_engine, "DOCKERD_PID_FILE", tmp_path / "docker.pid")
    monkeypatch.setattr(docker_engine.os, "geteuid", lambda: 0)
    monkeypatch.setattr(docker_engine, "_answers", lambda docker: False)
    popen = subprocess.Popen
    monkeypatch.setattr(docker_engine.subprocess, "Popen", lambda args, **kwargs: popen(["false"], **kwargs))
    started = time.monotonic()
    with pytest.raises(docker_engine.EngineError, match="exited with status 1 as it started: failed to start"):
        docker_engine._start_dockerd("docker", lambda message: None)
    assert time.monotonic() - started < docker_engine.START_TIMEOUT_S / 2


def _execed(pid: int, name: str) -> int:
    """``pid`` once the kernel names it ``name`` (right after the fork it still bears its parent's name)."""
    for _ in range(200):
        if Path(f"/proc/{pid}/comm").read_text().strip() == name:
            return pid
        time.sleep(0.01)
    raise AssertionError(f"pid {pid} never became {name}")


def test_docker_stays_inside_the_benchmarking_block():
    block = ipaddress.ip_network("198.18.0.0/15")
    private = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
    subnet = load_compose()["networks"][compose.NETWORK]["ipam"]["config"][0]["subnet"]
    arguments = docker_engine.dockerd_arguments()
    bridge = ipaddress.ip_interface(arguments[arguments.index("--bip") + 1]).network
    pool = ipaddress.ip_network(arguments[arguments.index("--default-address-pool") + 1].split(",")[0][5:])
    networks = [ipaddress.ip_network(subnet), bridge, pool]
    for network in networks:
        assert network.subnet_of(block) and not any(network.overlaps(p) for p in private), network
    # And apart from each other: the compose network is not handed out by the pool, nor the bridge.
    assert not networks[0].overlaps(pool) and not bridge.overlaps(pool) and not networks[0].overlaps(bridge)


def test_every_mounted_storm_yaml_is_the_launchers_apart_from_container_keys(tmp_path):
    local = launcher_confs(tmp_path)
    services = storm_services(load_compose())
    # One mounted storm.yaml per launcher storm.yaml, named alike (no UI: the Maven home has none).
    assert {name for name in local if name not in ("zoo.cfg", "ui")} == set(services)
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
    """The build-context sources of every COPY (COPY --from=<stage> copies from a stage, not the context)."""
    sources = []
    for line in dockerfile.read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            parts = [p for p in line.split()[1:] if not p.startswith("--")]
            sources.extend(parts[:-1])
    return sources


def test_the_staged_context_holds_everything_the_dockerfile_copies(tmp_path, monkeypatch):
    # A stand-in Storm home (the real one is built from Maven by the same function the launcher calls);
    # the jars exist once Maven built them, as `make test` does first.
    fake_home = tmp_path / "home"
    (fake_home / "lib").mkdir(parents=True)
    (fake_home / "lib" / "storm-server-2.8.3.jar").write_text("jar")
    calls = []
    monkeypatch.setattr(images, "ensure_storm_home", lambda version, progress: calls.append(version)
                        or storm_home.StormHome(fake_home, version))
    monkeypatch.setattr(images, "ensure_jars", lambda root, progress: None)
    for jar in (images.PLUGIN_JAR, images.METRICS_JAR):
        if not (REPO / jar).is_file():
            pytest.skip(f"{jar} is not built (mvn -DskipTests package)")
    context = images.stage_context(REPO, "2.8.3", lambda message: None, context=tmp_path / "context")
    assert calls == ["2.8.3"]
    for source in dockerfile_copies(REPO / images.DOCKERFILE):
        assert (context / source).exists(), f"COPY {source}: not in the staged context"
    assert (context / "storm-home" / "lib" / "storm-server-2.8.3.jar").is_file()
    assert (context / "python" / "requirements.lock").read_text() == (REPO / "python/requirements.lock").read_text()
    assert not list(context.rglob("__pycache__"))
    # The images get the runtime dependencies (pinned by the lock), not the extras: no Spark, no pytest.
    dependencies = (context / "dependencies.txt").read_text().splitlines()
    assert "streamparse==5.0.1" in dependencies and "kazoo>=2.9" in dependencies
    assert not any(d.startswith(("pyspark", "pytest", "selenium")) for d in dependencies)


def test_storm_image_version_is_the_plugins():
    pom = re.search(r"<storm.version>([^<]+)</storm.version>", (REPO / "pom.xml").read_text()).group(1)
    assert pom == default_description().storm_version == storm_home.DEFAULT_STORM_VERSION
    assert images.storm_image(pom) == f"storm-planner-storm:{pom}"


def test_runtime_images_share_the_build_stages_venv():
    # `storm-planner submit` in the planner container names its streamparse_run; supervisors run it.
    dockerfile = (REPO / images.DOCKERFILE).read_text()
    assert dockerfile.count(f"python3 -m venv {compose.VENV}") == 1
    assert dockerfile.count(f"COPY --from=deps {compose.VENV} {compose.VENV}") == 2
    # No build tool reaches a runtime stage: the venv module and pip's downloads stay in `deps`.
    stages = re.split(r"^FROM ", dockerfile, flags=re.M)[1:]
    runtime = [stage for stage in stages if not stage.startswith("runtime AS deps")]
    assert not any("python3-venv" in stage or "host-ca.crt" in stage for stage in runtime)


@pytest.mark.parametrize("daemon, main_class", [("zookeeper", storm_home.ZOOKEEPER_MAIN),
                                                 ("nimbus", storm_home.NIMBUS_MAIN),
                                                 ("supervisor", storm_home.SUPERVISOR_MAIN)])
def test_containers_run_the_launchers_command_lines(tmp_path, daemon, main_class):
    home = storm_home.StormHome(tmp_path / "home", "2.8.3")
    cluster = LocalCluster(default_description(), tmp_path / "state", ClusterOptions(), progress=lambda m: None)
    cluster.home = home
    command = container.daemon_command(daemon, home, heap=384, conf_dir=Path("/conf"), log_dir=cluster.log_dir)
    conf = Path("/conf/storm.yaml") if daemon != "zookeeper" else home.path / "conf" / "storm.yaml"
    classpath = [home.lib / "*"] if daemon == "zookeeper" else [home.lib / "*", home.path / "extlib-daemon" / "*",
                                                                Path("/conf")]
    expected = cluster._java(daemon, main_class, conf, 384, classpath)
    if daemon == "zookeeper":
        expected += ["/conf/zoo.cfg"]
    assert command == expected
    assert f"-Dstorm.home={home.path}" in command and "-Xmx384m" in command


def test_container_refuses_an_unknown_daemon_or_heap(tmp_path):
    home = storm_home.StormHome(tmp_path, "2.8.3")
    with pytest.raises(container.ContainerError, match="unknown daemon"):
        container.daemon_command("ui", home, heap=256)
    for bad in ("12g", "0", "-5", "999999999"):
        with pytest.raises(container.ContainerError, match=container.HEAP_ENV):
            container.heap_mb({container.HEAP_ENV: bad})
    assert container.heap_mb({}) == container.DEFAULT_HEAP_MB
    with pytest.raises(container.ContainerError, match="not a Storm home"):
        container.storm_home({"STORM_HOME": str(tmp_path)})


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
    (tmp_path / "zoo.cfg").write_text(f"clientPort={port}\n")
    script = DOCKER / "storm" / "healthcheck.py"
    env = {"STORM_CONF_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for check in ("zookeeper", "nimbus", "ui"):
        result = subprocess.run([sys.executable, str(script), check], env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith(f"{check}: ")
    usage = subprocess.run([sys.executable, str(script), "bogus"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert usage.returncode == 2


def test_compose_command_refuses_a_description_compose_cannot_run_before_touching_docker(tmp_path, capsys,
                                                                                         monkeypatch):
    data = yaml.safe_load((REPO / "python/src/storm_planner/cluster/default-cluster.yaml").read_text())
    data["network"] = {"emulated": True}
    description = tmp_path / "emulated.yaml"
    description.write_text(yaml.safe_dump(data))
    # Nothing may reach for the engine: no Docker call, no install, no dockerd.
    monkeypatch.setattr(docker_engine, "ensure_engine", lambda *a, **k: pytest.fail("touched the engine"))
    assert main(["compose", "up", "--cluster", str(description)]) == 2
    captured = capsys.readouterr()
    assert "network.emulated is for local process clusters" in captured.err
    assert captured.out == ""


# -- the same images on several hosts -------------------------------------------------------------------

def several_hosts(tmp_path: Path, master: str = "203.0.113.10", supervisors=("203.0.113.11", "203.0.113.12")) -> Path:
    data = yaml.safe_load((REPO / "python/src/storm_planner/cluster/default-cluster.yaml").read_text())
    data["host"] = master
    for sup, address in zip(data["supervisors"], supervisors):
        sup["host"] = address
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_several_hosts_each_machine_gets_its_daemons_with_the_descriptions_addresses(tmp_path, capsys):
    from storm_planner.cluster import compose_hosts, storm_yaml
    from storm_planner.cluster.description import load_description

    path = several_hosts(tmp_path)
    out = tmp_path / "out"
    assert main(["cluster", "compose", "--hosts", "--cluster", str(path), "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    d = load_description(path)
    machines = {p.name for p in out.iterdir()}
    assert machines == {"203.0.113.10", "203.0.113.11", "203.0.113.12"}
    # Each supervisor's storm.yaml is the launcher's for it, with the image's paths; Nimbus' likewise.
    for sup in d.supervisors:
        conf = yaml.safe_load((out / sup.host / "conf" / f"supervisor-{sup.name}.yaml").read_text())
        expected = storm_yaml.supervisor_conf(d, sup, local_dir="/data")
        assert conf == {**json.loads(json.dumps(expected)), "storm.log.dir": "/logs"}
        assert conf["storm.local.hostname"] == sup.host and conf["storm.zookeeper.servers"] == [d.host]
    nimbus = yaml.safe_load((out / d.host / "conf" / "nimbus.yaml").read_text())
    assert nimbus["planner.service.host"] == d.host and nimbus["nimbus.seeds"] == [d.host]
    assert f"clientPortAddress={d.host}" in (out / d.host / "conf" / "zoo.cfg").read_text()
    # run.sh: valid shell, host networking, every address one of the description's.
    described = {d.host, *(s.host for s in d.supervisors)}
    for machine in machines:
        script = out / machine / compose_hosts.RUN_SCRIPT
        assert subprocess.run(["sh", "-n", str(script)]).returncode == 0
        text = script.read_text()
        assert text.count("docker run") == text.count("--network host") >= 1
        addresses = set(re.findall(r"\b\d+\.\d+\.\d+\.\d+\b", text))
        assert addresses <= described, addresses
    master = (out / d.host / "run.sh").read_text()
    assert all(f" {daemon}\n" in master or f"storm-planner {daemon} " in master
               for daemon in ("zookeeper", "nimbus", "serve", "dashboard"))
    fast = (out / "203.0.113.11" / "run.sh").read_text()
    assert "--cpus 2 --memory 4096m" in fast and "STORM_PLANNER_SUPERVISOR_ID=sup-fast" in fast


def test_several_hosts_refuse_a_loopback_master_and_need_an_output_directory(tmp_path, capsys):
    path = several_hosts(tmp_path, master="127.0.0.1")
    assert main(["cluster", "compose", "--hosts", "--cluster", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "127.0.0.1 is a loopback address, which no other machine reaches" in capsys.readouterr().err
    assert main(["cluster", "compose", "--hosts", "--cluster", str(several_hosts(tmp_path))]) == 2
    assert "--hosts writes one directory per machine: give it --out DIR" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
