"""A Spark session for feed builds and oracles: quiet, loopback, small shuffles."""
from __future__ import annotations

import os
import sys


def spark_session(master: str = "local[*]", app: str = "storm-planner-feeds", shuffle_partitions: int = 8):
    """Get (or create) a SparkSession; PySpark is the optional ``feeds`` extra."""
    try:
        from pyspark.sql import SparkSession
    except ModuleNotFoundError:
        raise RuntimeError("PySpark is not installed: pip install 'storm-planner[feeds]'") from None
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
               .config("spark.driver.memory", os.environ.get("STORM_PLANNER_SPARK_MEMORY", "1g")))
    if master.startswith("local"):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
