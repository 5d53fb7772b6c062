"""PySpark readers for the real datasets, in their published formats.

Each reader returns a :class:`FeedFrame`: the records in the dataset's own
field names (the subset the topologies and oracles use) plus their event time,
and how many input rows were malformed — counted, reported with examples, and
skipped, never fatal.

- **Tweets** (Twitter API v1.1 JSON, one tweet per line, optionally gzip): the
  raw line is kept; a row is malformed when it is not JSON or carries no usable
  time (``timestamp_ms`` or ``created_at``), e.g. the stream's ``delete`` notices.
- **NASDAQ-100 trades and quotes** in NYSE TAQ CSV (header row; trades have
  ``DATE, TIME_M, SYM_ROOT, PRICE, SIZE``, quotes ``DATE, TIME_M, SYM_ROOT,
  BID, BIDSIZ, ASK, ASKSIZ``; other TAQ columns are ignored; ``TIME_M`` may
  carry up to nanoseconds). A file is a trades or a quotes file by its header.
- **BTS Airline On-Time Performance** CSVs (2004–2013 downloads, quoted header,
  trailing comma), with the older (``TailNum``, ``UniqueCarrier``,
  ``FlightNum``) or newer (``Tail_Number``, ``Reporting_Airline``,
  ``Flight_Number_Reporting_Airline``) column names.
- **NOAA GSOD**: the classic fixed-width ``.op`` files (``STN--- WBAN
  YEARMODA TEMP ... PRCP SNDP FRSHTT``; ``PRCP`` carries a flag letter, 99.99 =
  missing) or NCEI's CSV edition (``STATION, DATE, ..., PRCP,
  PRCP_ATTRIBUTES``). ``PRCP`` becomes null where missing.
- **ISD station history** (``isd-history.csv``) gives airport → station for
  the weather join (ICAO ``Kxxx``/``Pxxx`` → IATA ``xxx``).
"""
from __future__ import annotations

import csv
import gzip
from collections.abc import Iterable
from pathlib import Path

from storm_planner.feeds.feedframe import FeedFrame

EXAMPLES = 3


def _paths(paths: Iterable[str | Path]) -> list[str]:
    """Input paths; directories expand to the files in them (sorted)."""
    files: list[str] = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            files += sorted(str(p) for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_")))
        elif path.is_file():
            files.append(str(path))
        else:
            raise FileNotFoundError(f"input {path} does not exist")
    if not files:
        raise FileNotFoundError("no input files")
    return files


def first_line(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        return handle.readline().strip()


def header_groups(files: list[str]) -> list[list[str]]:
    """Files grouped by identical header line, in first-seen order.

    Spark's CSV reader takes the column names from one file and maps the
    others by position, so files with different layouts (BTS changed its
    column names over the years) are read group by group and united by name.
    """
    groups: dict[str, list[str]] = {}
    for path in files:
        groups.setdefault(first_line(path), []).append(path)
    return list(groups.values())


def _read_csv(spark, files: list[str]):
    return spark.read.option("header", "true").option("mode", "PERMISSIVE").csv(files)


def _split_malformed(kind: str, frame, good, raw_column: str, inputs: int) -> FeedFrame:
    """Keep rows where ``good`` holds; count and sample the others."""
    from pyspark.sql import functions as F
    flagged = frame.withColumn("_good", F.coalesce(good, F.lit(False))).cache()
    bad = flagged.where(~F.col("_good"))
    malformed = bad.count()
    examples = [str(r[0]) for r in bad.select(raw_column).limit(EXAMPLES).collect()] if malformed else []
    return FeedFrame(kind, flagged.where(F.col("_good")).select("ts_ms", "seq", "json"),
                     malformed, examples, inputs)


# -- tweets ---------------------------------------------------------------------------------------

def read_tweets(spark, paths) -> FeedFrame:
    from pyspark.sql import functions as F
    files = _paths(paths)
    lines = (spark.read.text(files).where(F.length(F.trim("value")) > 0)
             .withColumn("seq", F.monotonically_increasing_id()))
    schema = "timestamp_ms string, created_at string, entities struct<hashtags: array<struct<text: string>>>"
    parsed = lines.withColumn("t", F.from_json("value", schema))
    from_ms = F.col("t.timestamp_ms").cast("long")
    # "Wed Oct 10 20:19:24 +0000 2018": drop the weekday, Spark cannot parse it.
    from_created = F.unix_timestamp(F.substring(F.col("t.created_at"), 5, 100), "MMM dd HH:mm:ss Z yyyy") * 1000
    frame = parsed.select(F.coalesce(from_ms, from_created).alias("ts_ms"), "seq",
                          F.trim("value").alias("json"))
    good = F.col("ts_ms").isNotNull() & F.col("json").startswith("{")
    return _split_malformed("tweets", frame, good, "json", len(files))


# -- TAQ trades and quotes ----------------------------------------------------------------------------

TRADE_COLUMNS = ("DATE", "TIME_M", "SYM_ROOT", "PRICE", "SIZE")
QUOTE_COLUMNS = ("DATE", "TIME_M", "SYM_ROOT", "BID", "BIDSIZ", "ASK", "ASKSIZ")


def _taq_ts_ms(F):
    """DATE (yyyyMMdd or yyyy-MM-dd) + TIME_M (HH:mm:ss[.fraction]) → ms, truncating below 1 ms."""
    date = F.regexp_replace(F.col("DATE"), "-", "")
    days = F.datediff(F.to_date(date, "yyyyMMdd"), F.lit("1970-01-01"))
    hms = F.split(F.col("TIME_M"), ":")
    seconds = F.split(hms.getItem(2), r"\.")
    millis = F.substring(F.concat(F.coalesce(seconds.getItem(1), F.lit("")), F.lit("000")), 1, 3).cast("long")
    return (days.cast("long") * 86_400_000 + hms.getItem(0).cast("long") * 3_600_000
            + hms.getItem(1).cast("long") * 60_000 + seconds.getItem(0).cast("long") * 1000 + millis)


def classify_taq(files: list[str]) -> dict[str, list[str]]:
    """Split TAQ files into trades and quotes by their header row."""
    kinds: dict[str, list[str]] = {"trades": [], "quotes": []}
    for path in files:
        header = {h.strip().strip('"').upper() for h in first_line(path).split(",")}
        if {"PRICE", "SIZE"} <= header:
            kinds["trades"].append(path)
        elif {"ASK", "ASKSIZ"} <= header:
            kinds["quotes"].append(path)
        else:
            raise ValueError(f"{path}: neither a TAQ trades (PRICE, SIZE) nor quotes (ASK, ASKSIZ) header")
    return kinds


def read_taq(spark, paths) -> dict[str, FeedFrame]:
    """``{"trades": FeedFrame, "quotes": FeedFrame}`` (a kind without files is absent)."""
    from pyspark.sql import functions as F
    out = {}
    for kind, files in classify_taq(_paths(paths)).items():
        if not files:
            continue
        wanted = TRADE_COLUMNS if kind == "trades" else QUOTE_COLUMNS
        rows = None
        for group in header_groups(files):
            part = _read_csv(spark, group)
            part = part.toDF(*[c.strip().upper() for c in part.columns])
            if "TIME_M" not in part.columns and "TIME" in part.columns:  # second-resolution TAQ
                part = part.withColumnRenamed("TIME", "TIME_M")
            part = part.select(*[F.col(c) if c in part.columns else F.lit(None).cast("string").alias(c)
                                 for c in wanted])
            rows = part if rows is None else rows.unionByName(part)
        assert rows is not None, "files is not empty: one header group at least"
        rows = rows.withColumn("seq", F.monotonically_increasing_id())
        if kind == "trades":
            record = F.struct(F.regexp_replace("DATE", "-", "").alias("DATE"), F.col("TIME_M"),
                              F.trim("SYM_ROOT").alias("SYM_ROOT"), F.col("PRICE").cast("double").alias("PRICE"),
                              F.col("SIZE").cast("long").alias("SIZE"))
            required = ["PRICE", "SIZE"]
        else:
            record = F.struct(F.regexp_replace("DATE", "-", "").alias("DATE"), F.col("TIME_M"),
                              F.trim("SYM_ROOT").alias("SYM_ROOT"),
                              *[F.col(c).cast("double" if c in ("BID", "ASK") else "long").alias(c)
                                for c in ("BID", "BIDSIZ", "ASK", "ASKSIZ")])
            required = ["ASK", "ASKSIZ"]
        frame = rows.select(_taq_ts_ms(F).alias("ts_ms"), "seq", F.to_json(record).alias("json"),
                            F.concat_ws(",", *[F.coalesce(F.col(c), F.lit("")) for c in
                                               (TRADE_COLUMNS if kind == "trades" else QUOTE_COLUMNS)]).alias("raw"),
                            *[F.col(c).cast("double").alias(f"_{c}") for c in required],
                            F.length(F.trim("SYM_ROOT")).alias("_symlen"))
        good = F.col("ts_ms").isNotNull() & (F.col("_symlen") > 0)
        for column in required:
            good = good & F.col(f"_{column}").isNotNull()
        out[kind] = _split_malformed(kind, frame, good, "raw", len(files))
    return out


# -- BTS On-Time Performance --------------------------------------------------------------------------

# Feed field ← accepted input column names (older downloads first).
BTS_FIELDS = {
    "Year": ("Year",), "Month": ("Month",), "DayofMonth": ("DayofMonth",), "FlightDate": ("FlightDate",),
    "UniqueCarrier": ("UniqueCarrier", "Reporting_Airline"), "TailNum": ("TailNum", "Tail_Number"),
    "FlightNum": ("FlightNum", "Flight_Number_Reporting_Airline"), "Origin": ("Origin",), "Dest": ("Dest",),
    "CRSDepTime": ("CRSDepTime",), "DepDelay": ("DepDelay",), "ArrDelay": ("ArrDelay",),
    "ArrDelayMinutes": ("ArrDelayMinutes",), "Cancelled": ("Cancelled",), "Diverted": ("Diverted",),
    "Distance": ("Distance",),
}
BTS_TYPES = {"Year": "int", "Month": "int", "DayofMonth": "int", "DepDelay": "double", "ArrDelay": "double",
             "ArrDelayMinutes": "double", "Cancelled": "double", "Diverted": "double", "Distance": "double"}


def read_bts(spark, paths) -> FeedFrame:
    from pyspark.sql import functions as F
    files = _paths(paths)
    rows = None
    for group in header_groups(files):
        part = _read_csv(spark, group)
        columns = set(part.columns)
        missing = [f for f in ("FlightDate", "Origin", "Dest", "Year")
                   if not any(n in columns for n in BTS_FIELDS[f])]
        if missing:
            raise ValueError(f"{group[0]}: not a BTS On-Time file, no columns {missing}")
        picked = []
        for field, names in BTS_FIELDS.items():
            name = next((n for n in names if n in columns), None)
            value = F.col(name) if name else F.lit(None).cast("string")
            picked.append(F.when(F.trim(value) == "", None).otherwise(F.trim(value)).alias(field))
        part = part.select(*picked)
        rows = part if rows is None else rows.unionByName(part)
    assert rows is not None, "paths is not empty: one header group at least"
    rows = rows.withColumn("seq", F.monotonically_increasing_id())
    typed = {field: (F.col(field).cast(BTS_TYPES[field]) if field in BTS_TYPES else F.col(field))
             for field in BTS_FIELDS}
    flight_date = F.to_date(F.col("FlightDate"), "yyyy-MM-dd")
    hhmm = F.lpad(F.coalesce(F.col("CRSDepTime"), F.lit("0")), 4, "0")
    ts = (F.unix_timestamp(flight_date.cast("timestamp")) * 1000
          + (F.substring(hhmm, 1, 2).cast("long") % 24 * 60 + F.substring(hhmm, 3, 2).cast("long")) * 60_000)
    frame = rows.select(ts.alias("ts_ms"), "seq",
                        F.to_json(F.struct(*[v.alias(k) for k, v in typed.items()])).alias("json"),
                        F.concat_ws(",", *[F.coalesce(F.col(c), F.lit(""))
                                           for c in ("FlightDate", "Origin", "Dest", "CRSDepTime")]).alias("raw"),
                        typed["Year"].alias("_year"), F.col("Origin").alias("_o"), F.col("Dest").alias("_d"))
    good = F.col("ts_ms").isNotNull() & F.col("_year").isNotNull() & F.col("_o").isNotNull() & F.col("_d").isNotNull()
    return _split_malformed("flights", frame, good, "raw", len(files))


# -- NOAA GSOD --------------------------------------------------------------------------------------

def _is_gsod_csv(path: str) -> bool:
    return first_line(path).replace('"', "").upper().startswith("STATION,")


def read_gsod(spark, paths) -> FeedFrame:
    from pyspark.sql import functions as F
    files = _paths(paths)
    csv_files = [p for p in files if _is_gsod_csv(p)]
    op_files = [p for p in files if p not in csv_files]
    frames = []
    if op_files:
        # Whitespace-separated tokens: STN WBAN YEARMODA TEMP n DEWP n SLP n STP n VISIB n WDSP n
        # MXSPD GUST MAX MIN PRCP(+flag) SNDP FRSHTT — 22 of them.
        lines = spark.read.text(op_files).where(~F.col("value").startswith("STN") & (F.length(F.trim("value")) > 0))
        tokens = F.split(F.trim("value"), r"\s+")
        prcp_token = tokens.getItem(19)
        frames.append(lines.select(
            F.col("value").alias("raw"), F.size(tokens).alias("_n"),
            tokens.getItem(0).alias("STN"), tokens.getItem(1).alias("WBAN"), tokens.getItem(2).alias("YEARMODA"),
            tokens.getItem(3).cast("double").alias("TEMP"),
            F.regexp_extract(prcp_token, r"^([0-9.]+)", 1).cast("double").alias("PRCP"),
            F.regexp_extract(prcp_token, r"([A-I])$", 1).alias("PRCP_FLAG")))
    for group in header_groups(csv_files):
        rows = _read_csv(spark, group)
        station = F.lpad(F.trim("STATION"), 11, "0")
        frames.append(rows.select(
            F.concat_ws(",", *[F.coalesce(F.col(c), F.lit("")) for c in ("STATION", "DATE", "PRCP")]).alias("raw"),
            F.lit(22).alias("_n"), F.substring(station, 1, 6).alias("STN"), F.substring(station, 7, 5).alias("WBAN"),
            F.regexp_replace("DATE", "-", "").alias("YEARMODA"), F.col("TEMP").cast("double").alias("TEMP"),
            F.col("PRCP").cast("double").alias("PRCP"),
            F.coalesce(F.trim("PRCP_ATTRIBUTES"), F.lit("")).alias("PRCP_FLAG")))
    rows = frames[0]
    for other in frames[1:]:
        rows = rows.unionByName(other)
    rows = rows.withColumn("seq", F.monotonically_increasing_id())
    prcp = F.when(F.col("PRCP") >= 99.99, None).otherwise(F.col("PRCP"))
    temp = F.when(F.col("TEMP") >= 9999.9, None).otherwise(F.col("TEMP"))
    day = F.to_date("YEARMODA", "yyyyMMdd")
    record = F.struct("STN", "WBAN", "YEARMODA", temp.alias("TEMP"), prcp.alias("PRCP"), "PRCP_FLAG")
    frame = rows.select((F.unix_timestamp(day.cast("timestamp")) * 1000).alias("ts_ms"), "seq",
                        F.to_json(record).alias("json"), "raw", "_n", "STN", "YEARMODA")
    good = (F.col("ts_ms").isNotNull() & (F.col("_n") >= 20) & F.col("STN").rlike(r"^[0-9A-Z]{6}$")
            & F.col("YEARMODA").rlike(r"^[0-9]{8}$"))
    return _split_malformed("weather", frame, good, "raw", len(files))


# -- ISD station history → airports ------------------------------------------------------------------

def read_isd_stations(path: str | Path) -> tuple[list[dict], int]:
    """``([{"airport", "station"}], malformed)`` from NOAA's ``isd-history.csv``.

    US airports have ICAO codes ``K`` + IATA (``KJFK``), Alaska and Hawaii ``P``
    + IATA (``PANC``); when several stations share a code the one whose record
    ends latest wins.
    """
    path = str(path)
    opener = gzip.open if path.endswith(".gz") else open
    best: dict[str, tuple[str, str]] = {}
    malformed = 0
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        for row in csv.DictReader(handle):
            if None in row.values() or None in row:  # too few or too many fields
                malformed += 1
                continue
            try:
                icao = (row.get("ICAO") or "").strip().upper()
                usaf, wban, end = row["USAF"].strip(), row["WBAN"].strip(), (row.get("END") or "").strip()
            except (KeyError, AttributeError):
                malformed += 1
                continue
            if len(icao) != 4 or icao[0] not in "KP" or not usaf or not wban:
                continue
            airport = icao[1:]
            if airport not in best or end > best[airport][1]:
                best[airport] = (f"{usaf}-{wban}", end)
    return [{"airport": a, "station": s} for a, (s, _) in sorted(best.items())], malformed


# -- World Cup 1998 access logs ---------------------------------------------------------------------

def read_worldcup(spark, paths) -> FeedFrame:
    """Requests of the archive's binary ``wc_dayX_Y[.gz]`` files, one Spark task per file; malformed
    records (a truncated tail, a code outside the format's tables) counted and skipped."""
    files = _paths(paths)
    malformed = spark.sparkContext.accumulator(0)

    def decode_file(indexed):
        import json

        from storm_planner.feeds.worldcup import WorldCupReader, feed_record
        number, path = indexed
        reader = WorldCupReader([path])
        for offset, request in enumerate(reader):
            yield (request.timestamp * 1000, number * 10_000_000_000 + offset,
                   json.dumps(feed_record(request), separators=(",", ":")))
        malformed.add(reader.malformed)

    rows = spark.sparkContext.parallelize(list(enumerate(files)), max(1, len(files))).flatMap(decode_file)
    frame = spark.createDataFrame(rows, "ts_ms long, seq long, json string").cache()
    frame.count()  # runs the decoding, so the accumulator holds the malformed count
    return FeedFrame("requests", frame, malformed=malformed.value, inputs=len(files))
