"""The compose cluster's images on several hosts: per machine, its daemons' files and ``docker run`` lines.

``storm-planner cluster compose --hosts --out DIR`` renders, from a cluster description whose ``host`` is
the master's address (ZooKeeper, Nimbus, the planner, the dashboard) and whose supervisors name their
own machines in ``host``, one directory per machine::

    DIR/<address>/run.sh          docker run --network host, one line per daemon of that machine
    DIR/<address>/conf/...        each of its Storm daemons' storm.yaml (and zoo.cfg on the master)

Every address comes from the description: the containers share their host's network, so each daemon
binds to and advertises the address the description gives its machine, and finds the others at theirs.
The storm.yaml files are the local launcher's (:mod:`.storm_yaml`, the same functions) with the Storm
image's paths (``/data``, ``/logs``); the planner and the dashboard get the command lines of the compose
cluster's services with the description's addresses in place of the service names.
"""
from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path
from typing import Any

from . import compose, images, storm_yaml
from .description import (
    ClusterDescription,
    DescriptionError,
    Supervisor,
    load_description,
)

RUN_SCRIPT = "run.sh"
CONTAINER_PREFIX = "storm-planner-"


def _container(name: str) -> str:
    return f"{CONTAINER_PREFIX}{name}"


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def check_hosts(description: ClusterDescription) -> None:
    """Refuse what several machines cannot run: the emulated network, a loopback address beside others."""
    compose._check_renderable(description)
    machines = {description.host, *(sup.host for sup in description.supervisors)}
    if len(machines) > 1 and any(_loopback(address) for address in machines):
        local = sorted(address for address in machines if _loopback(address))
        raise compose.ComposeError(
            f"the description names {len(machines)} machines ({', '.join(sorted(machines))}) but "
            f"{', '.join(local)} is a loopback address, which no other machine reaches: give `host` (the "
            f"master) and each supervisor's `host` the address the others reach it at")


def nimbus_conf(description: ClusterDescription) -> dict[str, Any]:
    conf = storm_yaml.nimbus_conf(description, local_dir=compose.DATA_DIR)
    conf["storm.log.dir"] = compose.LOG_DIR
    return conf


def supervisor_conf(description: ClusterDescription, supervisor: Supervisor) -> dict[str, Any]:
    conf = storm_yaml.supervisor_conf(description, supervisor, local_dir=compose.DATA_DIR)
    conf["storm.log.dir"] = compose.LOG_DIR
    return conf


def _storm_run(d: ClusterDescription, name: str, daemon: str, heap_mb: int, mounts: list[str],
               extra: list[str] = ()) -> list[str]:
    return ["docker", "run", "-d", "--name", _container(name), "--network", "host", "--init",
            "-e", f"{compose.HEAP_ENV}={heap_mb}", *extra,
            *[arg for mount in mounts for arg in ("-v", mount)],
            images.storm_image(d.storm_version), daemon]


def _master_commands(d: ClusterDescription) -> list[list[str]]:
    zookeeper, nimbus = f"{d.host}:{d.ports.zookeeper}", f"{d.host}:{d.ports.nimbus}"
    plans = f"{d.name}-{compose.PLANS_VOLUME}"
    return [
        _storm_run(d, compose.ZOOKEEPER, "zookeeper", d.heap_mb.zookeeper,
                   [f"$HERE/conf/zoo.cfg:{compose.ZOO_CFG_FILE}:ro"]),
        ["docker", "run", "-d", "--name", _container(compose.PLANNER), "--network", "host",
         "-v", f"{plans}:{compose.LOG_DIR}",
         "-e", f"STORM_PLANNER_NIMBUS={nimbus}", "-e", f"STORM_PLANNER_ZOOKEEPER={zookeeper}",
         compose.PLANNER_IMAGE, "storm-planner", "serve", "--host", d.host, "--port", str(d.ports.planner),
         "--default-algorithm", d.planner_algorithm, "--plan-log", compose.PLAN_LOG,
         "--zookeeper", zookeeper, "--nimbus", nimbus,
         "--metrics-host", d.host, "--metrics-port", str(d.ports.planner_metrics)],
        _storm_run(d, compose.NIMBUS, "nimbus", d.heap_mb.nimbus,
                   [f"$HERE/conf/{compose.NIMBUS}.yaml:{compose.CONF_FILE}:ro"]),
        ["docker", "run", "-d", "--name", _container(compose.DASHBOARD), "--network", "host",
         "-v", f"{plans}:{compose.LOG_DIR}:ro", compose.PLANNER_IMAGE,
         "storm-planner", "dashboard", "--plan-log", compose.PLAN_LOG, "--nimbus", nimbus,
         "--zookeeper", zookeeper, "--host", d.host, "--port", str(d.ports.dashboard)],
    ]


def _supervisor_command(d: ClusterDescription, sup: Supervisor) -> list[str]:
    name = compose.supervisor_service(sup)
    return _storm_run(
        d, name, "supervisor", d.heap_mb.supervisor,
        [f"$HERE/conf/{name}.yaml:{compose.CONF_FILE}:ro", f"{d.name}-{compose.RESULTS_VOLUME}:{compose.RESULTS_DIR}"],
        ["--cpus", f"{compose.cpus(sup):g}", "--memory", compose.mem_limit(sup),
         "-e", f"{compose.SUPERVISOR_ID_ENV}={sup.name}"])


def _script(address: str, daemons: list[str], commands: list[list[str]]) -> str:
    lines = [
        "#!/bin/sh",
        f"# Machine {address}: {', '.join(daemons)}. Written by `storm-planner cluster compose --hosts`;",
        "# needs the images (storm-planner compose build, then docker save | docker load on this machine).",
        "# Stop: docker rm -f " + " ".join(_container(name) for name in daemons),
        "set -eu",
        'HERE="$(cd "$(dirname "$0")" && pwd)"',
    ]
    lines += [" ".join(map(_shell, command)) for command in commands]
    return "\n".join(lines) + "\n"


def _shell(arg: str) -> str:
    """One word of a run.sh line: ``$HERE/...`` (the script's directory) expanded, everything else quoted."""
    if arg.startswith("$HERE/"):
        return '"$HERE"/' + shlex.quote(arg[len("$HERE/"):])
    return shlex.quote(arg)


def write_hosts(files: dict[str, str], out_dir: Path) -> list[Path]:
    written = []
    for relative, text in files.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if path.name == RUN_SCRIPT:
            path.chmod(0o755)
        written.append(path)
    return written


def render_hosts(description: ClusterDescription) -> dict[str, str]:
    """Every file, path relative to the output directory (``<address>/...``) -> text."""
    d = description
    check_hosts(d)
    files = {f"{d.host}/{compose.CONF_DIR}/zoo.cfg": storm_yaml.zookeeper_cfg(d, data_dir=compose.DATA_DIR),
             f"{d.host}/{compose.CONF_DIR}/{compose.NIMBUS}.yaml": storm_yaml.to_yaml(nimbus_conf(d))}
    daemons = {d.host: [compose.ZOOKEEPER, compose.PLANNER, compose.NIMBUS, compose.DASHBOARD]}
    commands = {d.host: _master_commands(d)}
    for sup in d.supervisors:
        name = compose.supervisor_service(sup)
        files[f"{sup.host}/{compose.CONF_DIR}/{name}.yaml"] = storm_yaml.to_yaml(supervisor_conf(d, sup))
        daemons.setdefault(sup.host, []).append(name)
        commands.setdefault(sup.host, []).append(_supervisor_command(d, sup))
    for address, names in daemons.items():
        files[f"{address}/{RUN_SCRIPT}"] = _script(address, names, commands[address])
    return files


HOSTS_HELP = ("the same images on several machines instead: with --out, write DIR/<address>/ per machine of "
              "the description (its daemons' storm.yaml and a run.sh of `docker run --network host` lines); "
              "docker/README.md")


def cmd_hosts(args: argparse.Namespace) -> int:
    """``storm-planner cluster compose --hosts --out DIR``."""
    from storm_planner.cli import CommandError

    if args.out is None:
        raise CommandError("--hosts writes one directory per machine: give it --out DIR")
    out_dir = args.out.resolve()
    try:
        files = render_hosts(load_description(args.cluster))
    except (DescriptionError, compose.ComposeError) as error:
        raise CommandError(str(error)) from None
    written = write_hosts(files, out_dir)
    machines = sorted({path.relative_to(out_dir).parts[0] for path in written})
    print(f"wrote {len(written)} files for {len(machines)} machine(s) to {out_dir}: {', '.join(machines)} "
          f"(run each one's run.sh there)", file=sys.stderr)
    return 0
