# The two commands of the README:
#   make demo   set up everything, start a real local Storm cluster with the planner, run Twitter trends
#   make test   set up everything, run every test (Java and Python, real daemons included)
# and, for a quick check while working, make test-fast (the Python tests that start no Storm cluster).
# Everything else is a step of those.

VENV      ?= .venv
PYTHON    := $(VENV)/bin/python
PIP       := $(VENV)/bin/pip
MVN       ?= mvn -B -q
PLUGIN    := storm-scheduler/target/storm-planner-scheduler.jar
LOCK      := python/requirements.lock
PIP_VERSION   := 26.3
WHEEL_VERSION := 0.48.0
UV_VERSION    := 0.13.9

.PHONY: compose-demo compose-down compose-test demo test test-fast test-bench setup lock python-env plugin system-packages thrift lint format java-test python-test demo-down clean

demo: setup
	$(VENV)/bin/storm-planner demo

demo-down:
	$(VENV)/bin/storm-planner cluster down

# `make demo` in docker-compose containers: installs and starts Docker when missing (as root), builds the
# images (cached after the first time), starts the cluster and runs the same demo. docker/README.md.
compose-demo: python-env plugin
	$(VENV)/bin/storm-planner compose demo

compose-down:
	$(VENV)/bin/storm-planner compose down

# The tests on a running compose cluster alone (marker `compose`; `make test` runs them too): one cluster
# for the module, images built first (Docker's layer cache: seconds when nothing changed). As root, or
# with a Docker engine that answers; the cluster takes a free port offset, so it runs beside others.
compose-test: python-env plugin
	$(PYTHON) -m pytest -m compose tests/docker/test_compose_on_docker.py

test: setup lint java-test python-test

setup: system-packages python-env plugin

# Debian packages: the Thrift compiler checks the generated Java against the IDL; docker-compose
# validates docker/compose.yaml offline and runs the compose cluster (the engine, docker.io, and
# mmdebstrap for its base image are installed by `storm-planner compose` when it first needs them);
# headless Chromium and its driver run the dashboard's browser tests; iproute2 (ip, tc) makes the
# emulated network (supervisors in network namespaces behind rate-limited links) and iptables lets its
# bridge forward where bridge netfilter and a FORWARD policy DROP (Docker) would drop it.
system-packages:
	@{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; \
	  else echo "note: chromium missing (sudo apt-get install chromium chromium-driver); the dashboard's browser tests will be skipped"; fi; }
	@command -v thrift >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq thrift-compiler >/dev/null; \
	  else echo "note: thrift-compiler missing (sudo apt-get install thrift-compiler); the IDL sync test will be skipped"; fi; }
	@{ command -v ip >/dev/null && command -v tc >/dev/null; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends iproute2 >/dev/null; \
	  else echo "note: iproute2 missing (sudo apt-get install iproute2); the emulated network's tests will be skipped"; fi; }
	@command -v iptables >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends iptables >/dev/null; \
	  else echo "note: iptables missing (sudo apt-get install iptables); on a host with Docker the emulated network cannot forward between supervisors"; fi; }
	@command -v docker-compose >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-compose >/dev/null; \
	  else echo "note: docker-compose missing (sudo apt-get install --no-install-recommends docker-compose); the 'docker-compose config' check of docker/compose.yaml will be skipped"; fi; }

python-env: $(VENV)/.installed

# Two distributions, both editable: the library (python/, with every extra) and the benchmark harness
# (benchmarks/harness, `storm-planner bench ...`; the library runs without it). Installs exactly the versions
# in the lock (a fresh install would otherwise pull the newest of everything, and a new release can break the
# build: highspy 1.16 started printing a banner). The pyproject.toml files keep version ranges for people who
# install the packages into their own environment.
HARNESS   := benchmarks/harness
$(VENV)/.installed: python/pyproject.toml $(HARNESS)/pyproject.toml $(LOCK)
	python3 -m venv $(VENV)
	$(PIP) install -q "pip==$(PIP_VERSION)" "wheel==$(WHEEL_VERSION)"
	$(PIP) install -q -c $(LOCK) -e "python[all]" -e $(HARNESS)
	touch $@

# Refresh the lock after changing dependencies in python/pyproject.toml or the harness's (newest versions that
# fit; one universal lock for every supported Python, 3.10 and later). Commit the result. Both projects are
# given as local editables, so the harness's requirement `storm-planner` is the checkout's library (never looked
# up on PyPI), and neither project is written into the lock (pip refuses editables as constraints).
lock: python-env
	$(PIP) install -q "uv==$(UV_VERSION)"
	printf -- '-e ./python[all]\n-e ./$(HARNESS)\n' | $(VENV)/bin/uv pip compile - --universal --python-version 3.10 \
	  --no-emit-package storm-planner --no-emit-package storm-planner-bench --quiet -o $(LOCK)

plugin: $(PLUGIN)

# One Maven build makes both jars: the Nimbus plugin and the workers' metrics hook.
$(PLUGIN): pom.xml storm-scheduler/pom.xml storm-metrics/pom.xml \
           $(shell find storm-scheduler/src/main storm-metrics/src/main -type f 2>/dev/null)
	$(MVN) -DskipTests package

thrift:
	scripts/gen-thrift.sh

# Static checks (configured in python/pyproject.toml, versions pinned in the lock): ruff over every Python file
# in the repository, mypy over the library and the benchmark harness (its `files`). The Java compiler's warnings are errors in the Maven build itself
# (-Xlint:all -Werror in pom.xml), which `plugin` and `java-test` run; `lint` compiles the test code too.
lint: python-env
	$(VENV)/bin/ruff check --config python/pyproject.toml .
	cd python && $(abspath $(VENV))/bin/mypy --config-file pyproject.toml
	$(MVN) -DskipTests test-compile

# The formatter (ruff format). Not yet applied to the tree: see [tool.ruff.format] in python/pyproject.toml.
format: python-env
	$(VENV)/bin/ruff format --config python/pyproject.toml .

# Every Storm line the plugin and the metrics hook support (storm-scheduler/README.md): the default line
# (pom.xml's storm.version) builds in target/ as always; each other line compiles, runs the whole Java suite
# (the LocalCluster test against the real service included) and packages its jars in target/storm-<line>/.
OTHER_STORM_LINES := 2.6.4 2.7.1

java-test: python-env
	PLANNER_PYTHON=$(abspath $(PYTHON)) $(MVN) test
	for line in $(OTHER_STORM_LINES); do \
	  PLANNER_PYTHON=$(abspath $(PYTHON)) $(MVN) -pl storm-scheduler,storm-metrics -Dstorm.version=$$line \
	    -Dstorm.build.dir=target/storm-$$line package \
	    || exit 1; done

# Two lanes at once: the cluster tests one after another, every other test beside them
# (scripts/test-lanes.sh says why); `$(PYTHON) -m pytest` runs the same tests in one lane.
python-test: python-env plugin
	scripts/test-lanes.sh $(PYTHON)

# The Python tests that need no cluster: leaves out those marked `cluster` (a real multi-process
# Storm cluster: ZooKeeper, Nimbus, supervisors, workers) and `slow` (PySpark feed builds). Markers
# are declared in pytest.ini; tests that start one ZooKeeper or the planner service stay in.
test-fast: python-env plugin
	$(PYTHON) -m pytest -m "not cluster and not slow"

# The benchmarks run end to end on a real cluster, one after another (marker `bench`: each checks its
# harness on short runs, never the figures; about 25 minutes on 2 cores). `make test` leaves them out so
# that CI stays within 30 minutes, bench capacity's quick search excepted; run them before merging a
# change to the harness. Needs root, cgroup v1 and iproute2, as the cluster tests.
test-bench: python-env plugin
	$(PYTHON) -m pytest -p no:cacheprovider -m bench

clean:
	rm -rf $(VENV) storm-scheduler/target
