"""A Spark session for feed builds and oracles: quiet, loopback, small shuffles."""
from __future__ import annotations

import ipaddress
import logging
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from storm_planner.core.errors import StormPlannerError

LOG4J2_CONFIG = Path(__file__).resolve().with_name("spark-log4j2.properties")
MEMORY_ENV, DEFAULT_DRIVER_MEMORY = "STORM_PLANNER_SPARK_MEMORY", "1g"


class SparkDriverError(StormPlannerError, RuntimeError):
    """The Spark driver's JVM stopped answering during a job: most often it ran out of heap."""


def driver_memory() -> str:
    """The driver's heap: ``$STORM_PLANNER_SPARK_MEMORY``, else 1g."""
    return os.environ.get(MEMORY_ENV, DEFAULT_DRIVER_MEMORY)


def driver_stopped(error: BaseException, doing: str) -> SparkDriverError | None:
    """A :class:`SparkDriverError` naming what was being done and the heap setting when ``error`` is py4j's
    (the Python side losing the JVM), else None. Spark prints the JVM's own error above it."""
    if not type(error).__module__.startswith("py4j"):
        return None
    first = (str(error).strip().splitlines() or [""])[0][:200]
    return SparkDriverError(f"the Spark driver stopped while {doing} ({type(error).__name__}: {first}); if its "
                            f"log above says OutOfMemoryError, give it more heap than {driver_memory()}: "
                            f"{MEMORY_ENV}=4g")


def spark_session(master: str = "local[*]", app: str = "storm-planner-feeds", shuffle_partitions: int = 8):
    """Get (or create) a SparkSession; PySpark is the optional ``feeds`` extra."""
    try:
        from pyspark.sql import SparkSession
    except ModuleNotFoundError:
        raise RuntimeError("PySpark is not installed: pip install 'storm-planner[feeds]'") from None
    # py4j says at INFO level every time it closes a connection to the JVM.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    # Workers must run the same Python as the driver (the venv's).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.sql.session.timeZone", "UTC")
               # Malformed input rows must become nulls to be counted and skipped;
               # Spark 4's ANSI mode would raise on the first bad cast instead.
               .config("spark.sql.ansi.enabled", "false")
               .config("spark.driver.memory", driver_memory())
               # Errors only, from the driver JVM's start (setLogLevel below comes after its start-up notes).
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()}"))
    if on_loopback(master):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def on_loopback(master: str) -> bool:
    """A local master, or a standalone master on this machine's loopback: the driver then listens on
    127.0.0.1 too (its executors reach it there), not on the address the host name resolves to."""
    if master.startswith("local"):
        return True
    host = urlsplit(master).hostname if master.startswith("spark://") else None
    return host == "localhost" or (host is not None and _is_loopback_address(host))


def _is_loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
