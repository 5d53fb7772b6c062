"""A real Storm cluster of local processes: up, status, down.

One :class:`LocalCluster` owns a state directory::

    <state>/cluster.json          what `up` was asked for (addresses, options)
    <state>/conf/                 zoo.cfg, nimbus.yaml, supervisor-<name>.yaml, ui.yaml
    <state>/data/<daemon>/        storm.local.dir of each daemon, ZooKeeper's data
    <state>/extlib-daemon/        this cluster's copy of the planner plugin jar
    <state>/logs/                 every log: <daemon>.log (log4j), <daemon>.out
                                  (stdout/stderr), workers-artifacts/<topology>/<port>/worker.log
    <state>/run/<daemon>.json     pid records: `down` stops exactly these
    <state>/network.json          the emulated network's namespaces and links, when
                                  the description asks for one (``network.py``)

``up`` starts ZooKeeper (or uses ``--zookeeper HOST:PORT``) and the planner
service first, then Nimbus, the supervisors and the UI together, and waits for
each to be healthy, printing progress. If anything fails, everything it
started is stopped again and the error quotes the failing daemon's log.
Data directories are fresh on every ``up``: a test never sees the previous
run's topologies.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

from storm_planner.progress import Progress, print_progress
from storm_planner.submit import nimbus

from . import daemons, network, reachability, storm_home, storm_lines, storm_yaml
from .assignment import applied_assignment
from .description import ClusterDescription, default_description
from .errors import ClusterError
from .locations import PLUGIN_JAR_ENV, default_state_root
from .options import ClusterAddresses, ClusterOptions
from .probes import (
    free_port_offset,
    http_ok,
    nimbus_leader,
    parse_host_port,
    planner_ok,
    port_free,
    supervisor_registered,
    wait_healthy,
)
from .storm_home import StormHome, ensure_storm_home
from .supervisor_id import seed_supervisor_id

UI_UNAVAILABLE = (
    "not available (org.apache.storm:storm-webapp is not published to Maven Central; "
    "pass --storm-home with an Apache Storm binary distribution to get the UI)"
)


class LocalCluster:
    """The processes of one described cluster, in one state directory."""

    def __init__(
        self,
        description: ClusterDescription,
        state_dir: Path | None = None,
        options: ClusterOptions | None = None,
        progress: Progress = print_progress,
    ):
        self.description = description
        self.state_dir = Path(state_dir or default_state_root() / description.name).resolve()
        self.options = options or ClusterOptions()
        self.progress = progress
        self.home: StormHome | None = None
        self.addresses: ClusterAddresses | None = None
        self.network: network.NetworkLayout | None = None

    # -- paths -----------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        return self.state_dir / "conf"

    @property
    def data_dir(self) -> Path:
        return self.state_dir / "data"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def run_dir(self) -> Path:
        return self.state_dir / "run"

    @property
    def extlib_daemon(self) -> Path:
        return self.state_dir / "extlib-daemon"

    def zookeeper_address(self) -> tuple[str, int]:
        if self.options.zookeeper:
            return parse_host_port(self.options.zookeeper, what="--zookeeper")
        return self.description.host, self.description.ports.zookeeper

    # -- up ----------------------------------------------------------------
    def up(self) -> ClusterAddresses:
        """Start every daemon and wait until all are healthy; stop all on failure."""
        started = time.monotonic()
        running = [r.name for r in daemons.records(self.run_dir) if daemons.is_alive(r)]
        if running:
            raise ClusterError(
                f"cluster {self.description.name!r} is already up in {self.state_dir} "
                f"({', '.join(running)}); run `storm-planner cluster down` first"
            )
        plugin_jar = self._check_plugin_jar()
        self.home = ensure_storm_home(
            self.description.storm_version,
            cache_dir=self.options.cache_dir,
            storm_home=self.options.storm_home,
            progress=self.progress,
        )
        self._check_ports_free()
        try:
            self._network_up()
            self._prepare_dirs(plugin_jar)
            self.addresses = self._addresses()
            (self.state_dir / "cluster.json").write_text(json.dumps(asdict(self.addresses), indent=2) + "\n")
            self.progress(
                f"starting cluster {self.description.name!r} (state and logs in {self.state_dir})"
            )
            self._start_all()
        except BaseException:
            self.progress("start failed; stopping what was started")
            self.down(quiet=True)
            raise
        self.progress(f"cluster {self.description.name!r} is up in {time.monotonic() - started:.0f}s: "
                      f"nimbus {self.addresses.nimbus}, zookeeper {self.addresses.zookeeper}"
                      + (f", planner {self.addresses.planner_host}:{self.addresses.planner_port}"
                         if self.addresses.planner_port else "")
                      + (f", ui {self.addresses.ui_url}" if self.addresses.ui_url else "")
                      + (f", dashboard {self.addresses.dashboard_url}" if self.addresses.dashboard_url else "")
                      + (f", planner metrics {self.addresses.planner_metrics_url}"
                         if self.addresses.planner_metrics_url else ""))
        return self.addresses

    def _network_up(self) -> None:
        """Make the emulated network (if the description asks for one), check that its supervisors reach
        each other, and move the daemons onto it."""
        if not self.description.network.emulated:
            return
        network.check_available()
        stale = network.load(self._network_file, self.progress)   # an earlier `up` that died before `down`
        if stale is not None:
            network.destroy(stale)
        subnet = self.description.network.subnet or network.free_subnet(network.addresses_in_use())
        layout = network.plan_layout(self.description, self.state_dir, subnet)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        network.save(layout, self._network_file)   # before creating: `down` must find what a failure left
        network.create(layout)
        self.network = layout
        self.description = network.apply_layout(self.description, layout)
        links = ", ".join(f"{link.supervisor} {link.address} {link.mbit:g} Mbit/s" for link in layout.links)
        self.progress(f"emulated network {subnet}: this machine {layout.master}; {links}")
        started = time.monotonic()
        reachability.check_reachable(layout, self.options.network_probe_timeout_s)
        self.progress(f"  {'network':<22} healthy: supervisors reach each other over TCP "
                      f"({time.monotonic() - started:.1f}s)")

    @property
    def _network_file(self) -> Path:
        return self.state_dir / "network.json"

    def _check_plugin_jar(self) -> Path | None:
        if not self.options.plugin:
            return None
        jar = self.options.plugin_jar or storm_lines.plugin_jar_for(self.description.storm_version, self.progress)
        if jar is None or not Path(jar).is_file():
            raise ClusterError(
                f"planner plugin jar not found: {jar or '(no default: not running from a checkout)'}; "
                f"build it with Maven (mvn package), pass --plugin-jar PATH or set "
                f"{PLUGIN_JAR_ENV}, or use --no-plugin for Storm's default scheduler"
            )
        return Path(jar).resolve()

    def _check_ports_free(self) -> None:
        d = self.description
        wanted = [("nimbus", d.ports.nimbus)]
        if not self.options.zookeeper:
            wanted.append(("zookeeper", d.ports.zookeeper))
        if self.options.planner:
            wanted.append(("planner", d.ports.planner))
            wanted.append(("planner metrics", d.ports.planner_metrics))
        if self._ui_enabled():
            wanted.append(("ui", d.ports.ui))
        if self._dashboard_enabled():
            wanted.append(("dashboard", d.ports.dashboard))
        for sup in d.supervisors:
            wanted.append((f"{sup.name} thrift", sup.thrift_port))
            wanted.extend((f"{sup.name} slot", p) for p in sup.slot_ports)
        busy = [f"{port} ({owner})" for owner, port in wanted if not port_free(d.host, port)]
        if busy:
            raise ClusterError(
                f"port{'s' if len(busy) > 1 else ''} already in use on {d.host}: {', '.join(busy)}; "
                f"another cluster may be running: stop it, or move this one with --port-offset N"
            )

    def _prepare_dirs(self, plugin_jar: Path | None) -> None:
        # Fresh data every time; logs are kept (appended) for post-mortems.
        shutil.rmtree(self.data_dir, ignore_errors=True)
        shutil.rmtree(self.conf_dir, ignore_errors=True)
        shutil.rmtree(self.extlib_daemon, ignore_errors=True)
        shutil.rmtree(self.log_dir / "workers-artifacts", ignore_errors=True)
        for path in (self.conf_dir, self.data_dir, self.log_dir, self.run_dir, self.extlib_daemon):
            path.mkdir(parents=True, exist_ok=True)
        for stale in self.run_dir.glob("*.json"):
            stale.unlink()
        if plugin_jar is not None:
            shutil.copy2(plugin_jar, self.extlib_daemon / plugin_jar.name)

        d = self.description
        zk = self.zookeeper_address() if self.options.zookeeper else None
        if not self.options.zookeeper:
            (self.data_dir / "zookeeper").mkdir()
            (self.conf_dir / "zoo.cfg").write_text(
                storm_yaml.zookeeper_cfg(d, data_dir=str(self.data_dir / "zookeeper"))
            )
        self._write_conf(
            "nimbus",
            storm_yaml.nimbus_conf(
                d, local_dir=str(self.data_dir / "nimbus"), plugin=self.options.plugin, zookeeper=zk
            ),
        )
        for sup in d.supervisors:
            local = self.data_dir / sup.name
            local.mkdir()
            seed_supervisor_id(local, sup.name)
            self._write_conf(
                f"supervisor-{sup.name}",
                storm_yaml.supervisor_conf(d, sup, local_dir=str(local), zookeeper=zk),
            )
        self._write_conf("ui", storm_yaml.ui_conf(d, local_dir=str(self.data_dir / "ui"), zookeeper=zk))

    def _write_conf(self, name: str, conf: dict) -> Path:
        path = self.conf_dir / f"{name}.yaml"
        path.write_text(storm_yaml.to_yaml(conf))
        return path

    def _ui_enabled(self) -> bool:
        return self.options.ui and self.home is not None and self.home.has_ui

    def _addresses(self) -> ClusterAddresses:
        d = self.description
        zk_host, zk_port = self.zookeeper_address()
        return ClusterAddresses(
            name=d.name,
            state_dir=str(self.state_dir),
            log_dir=str(self.log_dir),
            zookeeper=f"{zk_host}:{zk_port}",
            nimbus_host=d.host,
            nimbus_port=d.ports.nimbus,
            ui_url=f"http://{d.host}:{d.ports.ui}" if self._ui_enabled() else None,
            planner_host=d.host if self.options.planner else None,
            planner_port=d.ports.planner if self.options.planner else None,
            supervisors=[s.name for s in d.supervisors],
            plugin=self.options.plugin,
            storm_home=str(self.home.path if self.home else ""),
            description={"source": d.source, "offset": d.offset},
            zookeeper_root=str(d.storm.get("storm.zookeeper.root", "/storm")),
            dashboard_url=f"http://{d.host}:{d.ports.dashboard}/" if self._dashboard_enabled() else None,
            planner_metrics_url=f"http://{d.host}:{d.ports.planner_metrics}/metrics" if self.options.planner
            else None,
        )

    def _dashboard_enabled(self) -> bool:
        return self.options.dashboard

    # -- the daemons -------------------------------------------------------
    def _java(self, name: str, main_class: str, conf_file: Path, heap_mb: int, classpath: list[Path],
              extra: list[str] = ()) -> list[str]:
        assert self.home is not None
        return self.home.daemon_command(name, main_class, conf_file=conf_file, heap_mb=heap_mb,
                                        classpath=classpath, log_dir=self.log_dir, java=self.options.java,
                                        extra=list(extra))

    def _start(self, name: str, command: list[str], port: int | None, env: dict | None = None):
        """Start one daemon (a supervisor inside its namespace when the network is emulated)."""
        record = daemons.start_daemon(
            name, command, run_dir=self.run_dir, out_file=self.log_dir / f"{name}.out",
            cwd=self.state_dir, port=port, env=env,
        )
        self.progress(f"  {name:<22} started (pid {record.pid}{f', port {port}' if port else ''})")
        return record

    def _start_all(self) -> None:
        """Start every daemon first, then wait for each: their JVMs start side by side."""
        d = self.description
        assert self.home is not None and self.addresses is not None
        deadline_s = self.options.start_timeout_s
        zk = None if self.options.zookeeper else self._start_zookeeper()
        planner = self.start_planner(wait=False) if self.options.planner else None
        zk_host, zk_port = self.zookeeper_address()
        self._wait("zookeeper", lambda: nimbus.zookeeper_ok(zk_host, zk_port), 30, record=zk)

        nimbus_record = self._start_nimbus()
        sup_records = {sup.name: self._start_supervisor(sup) for sup in d.supervisors}
        ui = self._start_ui()
        dashboard = self._start_dashboard() if self._dashboard_enabled() else None
        if planner is not None:
            self._wait_planner(planner)
        self._wait("nimbus", lambda: self._nimbus_leader(), deadline_s, record=nimbus_record)
        self._wait_supervisors(sup_records, deadline_s)
        if ui is not None:
            self._wait("ui", lambda: http_ok(f"{self.addresses.ui_url}/api/v1/cluster/summary"),
                       deadline_s, record=ui)
        if dashboard is not None:
            self._wait("dashboard", lambda: http_ok(f"{self.addresses.dashboard_url}api/health"), 60, record=dashboard)

    def _start_zookeeper(self) -> daemons.DaemonRecord:
        main = storm_home.ZOOKEEPER_MAIN
        command = self._java("zookeeper", main, self.conf_dir / "nimbus.yaml", self.description.heap_mb.zookeeper,
                             [self.home.lib / "*"])
        return self._start("zookeeper", command + [str(self.conf_dir / "zoo.cfg")],
                           self.description.ports.zookeeper)

    def _daemon_classpath(self) -> list[Path]:
        assert self.home is not None
        return [self.home.lib / "*", self.extlib_daemon / "*", self.conf_dir]

    def _start_nimbus(self) -> daemons.DaemonRecord:
        d = self.description
        return self._start("nimbus", self._java("nimbus", storm_home.NIMBUS_MAIN, self.conf_dir / "nimbus.yaml",
                                                d.heap_mb.nimbus, self._daemon_classpath()), d.ports.nimbus)

    def _start_supervisor(self, sup) -> daemons.DaemonRecord:
        """One supervisor; with the emulated network it runs in its node's namespace."""
        name = f"supervisor-{sup.name}"
        inside = network.enter_command(self.network.link(sup.name)) if self.network else []
        return self._start(
            name,
            inside + self._java(name, storm_home.SUPERVISOR_MAIN, self.conf_dir / f"{name}.yaml",
                                self.description.heap_mb.supervisor, self._daemon_classpath()),
            sup.thrift_port,
        )

    def _start_ui(self) -> daemons.DaemonRecord | None:
        if not self._ui_enabled():
            if self.options.ui:
                self.progress(f"  {'ui':<22} {UI_UNAVAILABLE}")
            return None
        home = self.home
        return self._start(
            "ui",
            self._java("ui", storm_home.UI_MAIN, self.conf_dir / "ui.yaml",
                       self.description.heap_mb.ui, [home.lib_webapp / "*", home.lib / "*", self.conf_dir]),
            self.description.ports.ui,
        )

    def _wait_supervisors(self, records: dict[str, daemons.DaemonRecord], deadline_s: float) -> None:
        for sup in self.description.supervisors:
            self._wait_supervisor(sup, records[sup.name], deadline_s)

    def _wait_supervisor(self, sup, record: daemons.DaemonRecord | None, deadline_s: float) -> None:
        self._wait(
            f"supervisor-{sup.name}",
            lambda: self._supervisor_registered(sup.name),
            deadline_s,
            record=record,
            detail=lambda: f"cpu {sup.cpu:g}" + (f" (held to {sup.held_cpu:g})" if sup.held_cpu != sup.cpu else "")
                           + f", memory {sup.memory_mb:g} MB, "
                           f"slots {','.join(map(str, sup.slot_ports))}, meta {dict(sup.meta)}",
        )

    def start_daemon(self, name: str, *, wait: bool = True) -> daemons.DaemonRecord:
        """Start one daemon of the running cluster again, after :meth:`stop_daemon` or after it died:
        ``zookeeper`` (the cluster's own), ``planner``, ``nimbus``, ``supervisor-<name>`` (in its namespace
        when the network is emulated) or ``dashboard``, on the ports, configuration and data it had; with
        ``wait``, until it is healthy (ZooKeeper answers, the planner answers, Nimbus leads and sees every
        supervisor, the supervisor is registered), :class:`ClusterError` otherwise. Returns its record."""
        if self.home is None or self.addresses is None:
            raise ClusterError(f"cannot start {name}: cluster {self.description.name!r} is not up in this process")
        if name == "planner" and self.options.planner:
            return self.start_planner(wait=wait)
        deadline_s = self.options.start_timeout_s
        if name == "zookeeper" and not self.options.zookeeper:
            record = self._start_zookeeper()
            zk_host, zk_port = self.zookeeper_address()
            if wait:
                self._wait("zookeeper", lambda: nimbus.zookeeper_ok(zk_host, zk_port), 30, record=record)
            return record
        if name == "nimbus":
            record = self._start_nimbus()
            if wait:
                self._wait("nimbus", self._nimbus_leader, deadline_s, record=record)
                for sup in self.description.supervisors:
                    self._wait_supervisor(sup, None, deadline_s)
            return record
        sup = next((s for s in self.description.supervisors if f"supervisor-{s.name}" == name), None)
        if sup is not None:
            record = self._start_supervisor(sup)
            if wait:
                self._wait_supervisor(sup, record, deadline_s)
            return record
        if name == "dashboard" and self._dashboard_enabled():
            record = self._start_dashboard()
            if wait:
                self._wait("dashboard", lambda: http_ok(f"{self.addresses.dashboard_url}api/health"), 60,
                           record=record)
            return record
        raise ClusterError(f"cluster {self.description.name!r}: no daemon {name!r} to start again (its own "
                           f"zookeeper, planner, nimbus, supervisor-<name>, dashboard)")

    def start_planner(self, *, wait: bool = True) -> daemons.DaemonRecord:
        """Start the planner service (again, e.g. after :meth:`stop_daemon`); wait until it answers."""
        d = self.description
        record = self._start(
            "planner",
            [self.options.python, "-m", "storm_planner", "serve",
             "--host", d.host, "--port", str(d.ports.planner),
             "--default-algorithm", d.planner_algorithm,
             "--plan-log", str(self.plan_log),
             # Each topology's problem as its planner saw it, a round at a time: benchmarks read the measured
             # costs from it, and any round can be planned again with `storm-planner plan`.
             "--problem-log", str(self.problem_log),
             # The metrics the workers' hooks publish live in the cluster's ZooKeeper.
             "--zookeeper", "{}:{}".format(*self.zookeeper_address()),
             # Topologies with planner.rebalance: true are rebalanced through this Nimbus.
             "--nimbus", f"{d.host}:{d.ports.nimbus}",
             # /metrics for Prometheus, on the cluster's address like the service.
             "--metrics-host", d.host, "--metrics-port", str(d.ports.planner_metrics),
             # Each topology name's measured loads, kept where a benchmark resumed in another sitting finds them.
             *(["--load-memory", str(self.options.load_memory)] if self.options.load_memory else [])],
            d.ports.planner,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        if wait:
            self._wait_planner(record)
        return record

    def _start_dashboard(self) -> daemons.DaemonRecord:
        """``storm-planner dashboard`` on the plan log and this cluster's ZooKeeper."""
        d = self.description
        return self._start(
            "dashboard",
            [self.options.python, "-m", "storm_planner", "dashboard", "--plan-log", str(self.plan_log),
             "--nimbus", f"{d.host}:{d.ports.nimbus}",
             "--zookeeper", "{}:{}".format(*self.zookeeper_address()),
             "--host", d.host, "--port", str(d.ports.dashboard)],
            d.ports.dashboard,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )

    def _wait_planner(self, record: daemons.DaemonRecord) -> None:
        d = self.description
        self._wait("planner", lambda: planner_ok(d.host, d.ports.planner), 60, record=record)

    @property
    def plan_log(self) -> Path:
        """Every plan the planner service answered (JSON lines; see ``service.planning.planlog.PlanLog``)."""
        return self.log_dir / "plans.jsonl"

    @property
    def problem_log(self) -> Path:
        """Each topology's problem per round, as its planner saw it (JSON lines, ``"event": "problem"``)."""
        return self.log_dir / "problems.jsonl"

    def stop_daemon(self, name: str, *, grace_s: float = 10.0) -> str:
        """Stop one daemon of the running cluster (e.g. ``"planner"`` to test the fallback)."""
        path = self.run_dir / f"{name}.json"
        if not path.exists():
            raise ClusterError(f"no daemon {name!r} recorded in {self.run_dir}")
        outcome = daemons.stop_daemon(daemons.DaemonRecord.load(path), grace_s=grace_s)
        path.unlink(missing_ok=True)
        self.progress(f"  {name:<22} {outcome}")
        return outcome

    def assignment(self, topology_id: str) -> list[dict]:
        """Where Nimbus placed each executor (:func:`applied_assignment`)."""
        d = self.description
        return applied_assignment(d, d.host, d.ports.nimbus, topology_id)

    def _nimbus_leader(self) -> bool:
        return nimbus_leader(self.description.host, self.description.ports.nimbus)

    def _supervisor_registered(self, name: str) -> bool:
        return supervisor_registered(self.description.host, self.description.ports.nimbus, name)

    def _wait(self, name: str, check: Callable[[], bool], timeout_s: float,
              record: daemons.DaemonRecord | None, detail: Callable[[], str] | None = None) -> None:
        wait_healthy(name, check, timeout_s, progress=self.progress, record=record,
                     log4j_log=self.log_dir / f"{name}.log", detail=detail)

    # -- down ----------------------------------------------------------------
    def down(self, *, quiet: bool = False, grace_s: float = 10.0) -> list[tuple[str, str]]:
        """Stop what ``up`` recorded (planner and UI first, ZooKeeper last) and sweep strays."""
        say = (lambda m: None) if quiet else self.progress
        order = {"planner": 0, "ui": 1, "nimbus": 3, "zookeeper": 4}
        recs = sorted(daemons.records(self.run_dir), key=lambda r: (order.get(r.name, 2), r.name))
        outcomes = []
        for record in recs:
            outcome = daemons.stop_daemon(record, grace_s=grace_s)
            outcomes.append((record.name, outcome))
            say(f"  {record.name:<22} {outcome} (pid {record.pid})")
            (self.run_dir / f"{record.name}.json").unlink(missing_ok=True)
        strays = daemons.stray_processes(self.state_dir)
        if strays:
            say(f"  stopping {len(strays)} leftover process(es) of this cluster: {strays}")
            daemons.kill_pids(strays)
            outcomes.append(("leftovers", f"killed {len(strays)}"))
        layout = network.load(self._network_file, self.progress)   # refused names are always said
        if layout is not None:
            removed = network.destroy(layout)
            self._network_file.unlink(missing_ok=True)
            say(f"  emulated network {layout.subnet} removed: {', '.join(removed) or 'nothing was left'}")
            outcomes.append(("network", f"removed {layout.subnet}"))
        if not recs and not strays and layout is None:
            say(f"cluster {self.description.name!r}: nothing running in {self.state_dir}")
        return outcomes

    # -- status ----------------------------------------------------------------
    def status(self) -> dict:
        """Each recorded daemon (pid, port, alive) and the supervisors Nimbus sees."""
        saved = self.saved_addresses()
        result: dict = {"name": self.description.name, "state_dir": str(self.state_dir), "daemons": []}
        for record in daemons.records(self.run_dir):
            result["daemons"].append(
                {"name": record.name, "pid": record.pid, "port": record.port,
                 "alive": daemons.is_alive(record), "log": record.log}
            )
        result["supervisors"] = []
        result["ui"] = saved.ui_url if saved else None
        result["dashboard"] = saved.dashboard_url if saved else None
        result["planner_metrics"] = saved.planner_metrics_url if saved else None
        if saved is None:
            return result
        result["nimbus"] = saved.nimbus
        result["zookeeper"] = saved.zookeeper
        layout = network.load(self._network_file, self.progress)
        if layout is not None:
            result["network"] = network.link_status(layout)
        try:
            summary = nimbus.cluster_summary(saved.nimbus_host, saved.nimbus_port, 3000)
        except Exception as error:  # noqa: BLE001 - any failure means "cannot reach"
            result["nimbus_error"] = f"{type(error).__name__}: {error}"
            return result
        try:
            in_zk = nimbus.supervisors_in_zookeeper(saved.zookeeper, saved.zookeeper_root)
        except Exception:  # noqa: BLE001 - meta is a bonus; the summary still answers
            in_zk = {}
        for view in nimbus.supervisors_from_summary(summary):
            meta = in_zk.get(view.id).meta if view.id in in_zk else {}
            result["supervisors"].append(dict(asdict(view), meta=meta))
        result["topologies"] = [
            {"name": t.name, "id": t.id, "status": t.status, "workers": t.num_workers,
             "executors": t.num_executors}
            for t in summary.topologies or []
        ]
        return result

    def saved_addresses(self) -> ClusterAddresses | None:
        try:
            return ClusterAddresses(**json.loads((self.state_dir / "cluster.json").read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def log_files(self) -> dict[str, Path]:
        """Daemon name → its main log (log4j file, or stdout file for the planner)."""
        return daemons.log_files(self.log_dir)


@contextlib.contextmanager
def local_cluster(
    description: ClusterDescription | None = None,
    state_dir: Path | None = None,
    *,
    free_ports: bool = False,
    progress: Progress = print_progress,
    **options,
) -> Iterator[LocalCluster]:
    """``with local_cluster(...) as cluster:`` – a running cluster, always torn down.

    ``free_ports=True`` moves every port by a free offset (and names the
    cluster after it), so a test cluster runs beside a demo. ``options`` are
    :class:`ClusterOptions` fields (``plugin``, ``planner``, ``plugin_jar``,
    ``zookeeper``, ...). The yielded cluster's ``addresses`` say where Nimbus,
    ZooKeeper, the planner and the UI are.
    """
    description = description or default_description()
    if free_ports:
        offset = free_port_offset(description)
        description = description.with_offset(offset).with_name(f"{description.name}-{offset}")
    cluster = LocalCluster(description, state_dir, ClusterOptions(**options), progress)
    cluster.up()  # stops what it started if it fails
    try:
        yield cluster
    finally:
        cluster.down()


def running_cluster(tmp_path: Path, description: ClusterDescription | None = None, **options):
    """A test cluster on free ports with its state under ``tmp_path``.

    For pytest: ``with running_cluster(tmp_path, plugin=False, planner=False) as cluster: ...``.
    """
    return local_cluster(description, Path(tmp_path) / "cluster", free_ports=True, **options)
