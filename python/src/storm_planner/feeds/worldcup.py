"""The 1998 World Cup web site access logs (Internet Traffic Archive): reader, writer, synthetic generator.

Elastic Allocator's workload (*Elastic Allocator: An Adaptive Task Scheduler for Streaming
Query in the Cloud*, SOSE 2014, §V.A): "HTTP requests sent to the
servers hosting the World Cup 1998 web site (totaling approximately 1.35 billion requests over a
three-month period)", M. Arlitt and T. Jin, *1998 World Cup Web Site Access Logs*, August 1998,
http://ita.ee.lbl.gov/html/contrib/WorldCup.html (files ``wc_dayX_Y.gz``).

**Binary format** (the ITA tools' README): fixed 20-byte records, big endian (network order)::

    struct request { uint32 timestamp; uint32 clientID; uint32 objectID; uint32 size;
                     uint8 method; uint8 status; uint8 type; uint8 server; };

* ``timestamp``: seconds since the Epoch, GMT (local time in France was +0200);
* ``method``: GET=0, HEAD, POST, PUT, DELETE, TRACE, OPTIONS, CONNECT, OTHER_METHODS=8;
* ``status``: the 2 high bits are the HTTP version (HTTP/0.9=0, 1.0, 1.1, other=3), the 6 low bits
  a status code index: 100, 101, 200–206 (2–8), 300–305 (9–14), 400–415 (15–30), 500–505
  (31–36), other=37;
* ``type``: HTML=0, IMAGE, AUDIO, VIDEO, JAVA, FORMATTED, DYNAMIC, TEXT, COMPRESSED, PROGRAMS,
  DIRECTORY, ICL, OTHER_TYPES=12;
* ``server``: the 3 high bits the region (SANTA CLARA=0, PLANO, HERNDON, PARIS=3), the 5 low bits
  the server at that site.

:class:`WorldCupReader` streams records from plain or gzip files; malformed records (a truncated
tail, a code outside the tables) are counted with examples and skipped, never fatal, as the other
readers of :mod:`storm_planner.feeds` do. :func:`encode` / :func:`write_records` write the same
format, so a synthetic feed is a valid input for every tool that reads the real one.

**Synthetic requests** (:class:`WorldCupGenerator`, same schema): object popularity Zipf over the
object ids; a diurnal rate (sinusoid over the day, peak in the European evening); match spikes
(during a match the rate rises and a set of match pages, drawn from the long tail, takes a share
of the requests); clients Zipf too (proxies send much); the mix of types, methods, statuses and
versions of the real logs' workload characterisation (mostly images, GET, 200 and 304,
HTTP/1.0). Records are generated per second of trace time from ``rng_for(seed, second)``, so any
time slice is reproducible on its own and records come out in time order. Cost: O(records).
"""
from __future__ import annotations

import gzip
import io
import math
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from storm_planner.feeds.synthetic import rng_for, sample_cdf, zipf_cdf

RECORD = struct.Struct(">IIIIBBBB")
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "OTHER")
VERSIONS = ("HTTP/0.9", "HTTP/1.0", "HTTP/1.1", "HTTP/X.X")
STATUS_CODES = (100, 101, *range(200, 207), *range(300, 306), *range(400, 416), *range(500, 506))  # 0..36; 37 = other
OTHER_STATUS = 37
TYPES = ("HTML", "IMAGE", "AUDIO", "VIDEO", "JAVA", "FORMATTED", "DYNAMIC", "TEXT", "COMPRESSED", "PROGRAMS",
         "DIRECTORY", "ICL", "OTHER")
REGIONS = ("SANTA CLARA", "PLANO", "HERNDON", "PARIS")
EXAMPLES = 3


class Request(NamedTuple):
    """One decoded request; ``status`` is the HTTP code (None for the logs' "other" code)."""

    timestamp: int
    client_id: int
    object_id: int
    size: int
    method: str
    version: str
    status: int | None
    type: str
    region: str
    server: int           # the server number within its region


def decode(raw: bytes) -> Request:
    """One 20-byte record; ValueError when a code is outside the tables."""
    timestamp, client, obj, size, method, status, kind, server = RECORD.unpack(raw)
    code = status & 0x3F
    if method >= len(METHODS) or kind >= len(TYPES) or code > OTHER_STATUS or server >> 5 >= len(REGIONS):
        raise ValueError(f"code out of range (method {method}, status {status}, type {kind}, server {server})")
    return Request(timestamp, client, obj, size, METHODS[method], VERSIONS[status >> 6],
                   None if code == OTHER_STATUS else STATUS_CODES[code], TYPES[kind], REGIONS[server >> 5],
                   server & 0x1F)


def encode(request: Request) -> bytes:
    code = OTHER_STATUS if request.status is None else STATUS_CODES.index(request.status)
    return RECORD.pack(request.timestamp, request.client_id, request.object_id, request.size,
                       METHODS.index(request.method), VERSIONS.index(request.version) << 6 | code,
                       TYPES.index(request.type), REGIONS.index(request.region) << 5 | request.server)


def _open(path: str | Path) -> io.BufferedIOBase:
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


class WorldCupReader:
    """Streams the requests of ``wc_dayX_Y`` files (plain or gzip), in the files' order."""

    def __init__(self, paths: Iterable[str | Path]) -> None:
        self.paths = [Path(p) for p in paths]
        self.records = 0
        self.malformed = 0
        self.examples: list[str] = []

    def _bad(self, where: str) -> None:
        self.malformed += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(where)

    def __iter__(self) -> Iterator[Request]:
        for path in self.paths:
            with _open(path) as handle:
                offset = 0
                while True:
                    raw = handle.read(RECORD.size * 4096)
                    if not raw:
                        break
                    whole = len(raw) - len(raw) % RECORD.size
                    for start in range(0, whole, RECORD.size):
                        try:
                            request = decode(raw[start:start + RECORD.size])
                        except ValueError as error:
                            self._bad(f"{path.name}@{offset + start}: {error}")
                            continue
                        self.records += 1
                        yield request
                    if whole < len(raw):  # read(n) returns n bytes until the end: a truncated tail
                        self._bad(f"{path.name}@{offset + whole}: truncated record of {len(raw) - whole} bytes")
                        break
                    offset += whole


def write_records(requests: Iterable[Request], path: str | Path, compress: bool | None = None) -> int:
    """Writes ``requests`` in the binary format (gzip when ``compress``, default: a ``.gz`` name)."""
    path = Path(path)
    compress = path.suffix == ".gz" if compress is None else compress
    count = 0
    with (gzip.open(path, "wb") if compress else open(path, "wb")) as handle:
        for request in requests:
            handle.write(encode(request))
            count += 1
    return count


# -- synthetic requests ---------------------------------------------------------------------------

START = 897_170_400          # 1998-06-07 00:00:00 +0200 (22:00 GMT the day before): three days before the opening
TYPE_CDF = [(0.0988, "HTML"), (0.9823, "IMAGE"), (0.9824, "AUDIO"), (0.9825, "VIDEO"), (0.9893, "JAVA"),
            (0.9903, "FORMATTED"), (0.9979, "DYNAMIC"), (0.9983, "TEXT"), (0.9990, "COMPRESSED"),
            (0.9991, "PROGRAMS"), (0.9998, "DIRECTORY"), (0.99985, "ICL"), (1.0, "OTHER")]
STATUS_CDF = [(0.7775, 200), (0.9877, 304), (0.9913, 206), (0.9935, 302), (0.9995, 404), (1.0, 500)]
MEAN_SIZE = {"HTML": 4_800, "IMAGE": 3_200, "AUDIO": 180_000, "VIDEO": 900_000, "JAVA": 9_000,
             "FORMATTED": 60_000, "DYNAMIC": 2_000, "TEXT": 3_000, "COMPRESSED": 400_000, "PROGRAMS": 800_000,
             "DIRECTORY": 1_500, "ICL": 1_000, "OTHER": 2_000}


def _pick(cdf, u: float):
    for bound, value in cdf:
        if u <= bound:
            return value
    return cdf[-1][1]


class WorldCupGenerator:
    """Synthetic requests in the World Cup logs' schema (see the module docstring).

    ``rate`` is the mean requests per second; the rate at trace time t is
    ``rate · (1 + diurnal·sin(2π(t − peak + 6 h)/day)) · (1 + spike)`` with ``spike`` =
    ``match_boost`` during a match (matches: (start offset s, duration s) from ``START``; by default
    the opening day's two matches, 10 June 1998 at 17:30 and 21:00 local time).
    """

    def __init__(self, seed: int = 1998, rate: float = 50.0, objects: int = 20_000, exponent: float = 1.0,
                 clients: int = 100_000, diurnal: float = 0.6, peak_hour: float = 19.0,
                 matches: tuple[tuple[float, float], ...] = ((3 * 86_400 + 17.5 * 3600, 7_200),
                                                             (3 * 86_400 + 21 * 3600, 7_200)),
                 match_boost: float = 3.0, match_pages: int = 20, match_share: float = 0.3) -> None:
        self.seed, self.rate, self.objects = seed, rate, objects
        self.object_cdf = zipf_cdf(objects, exponent)
        self.client_cdf = zipf_cdf(clients, 0.8)
        self.diurnal, self.peak_hour = diurnal, peak_hour
        self.matches, self.match_boost = matches, match_boost
        self.match_pages, self.match_share = match_pages, match_share

    def rate_at(self, second: int) -> float:
        """Expected requests in trace second ``second`` (from ``START``)."""
        local_hour = (second / 3600.0) % 24.0   # START is local midnight
        diurnal = 1.0 + self.diurnal * math.sin(2 * math.pi * (local_hour - self.peak_hour + 6.0) / 24.0)
        spike = self.match_boost if self.match_at(second) is not None else 0.0
        return self.rate * diurnal * (1.0 + spike)

    def match_at(self, second: int) -> int | None:
        for number, (start, duration) in enumerate(self.matches):
            if start <= second < start + duration:
                return number
        return None

    def second(self, second: int) -> list[Request]:
        """The requests of one trace second (Poisson count), from that second's own generator."""
        rng = rng_for(self.seed, "s", second)
        count = _poisson(rng, self.rate_at(second))
        match = self.match_at(second)
        requests = []
        for _ in range(count):
            if match is not None and rng.random() < self.match_share:
                # Match pages: from the long tail, a fixed set per match (live score, reports).
                page_rng = rng_for(self.seed, "match", match, rng.randrange(self.match_pages))
                obj = page_rng.randrange(self.objects // 10, self.objects)
            else:
                obj = sample_cdf(self.object_cdf, rng.random())
            kind = object_type(self.seed, obj)  # an object keeps its type
            status = _pick(STATUS_CDF, rng.random())
            size = 0 if status == 304 else int(rng.expovariate(1.0 / MEAN_SIZE[kind])) + 1
            method = "GET" if rng.random() < 0.9976 else ("HEAD" if rng.random() < 0.9 else "POST")
            version = "HTTP/1.0" if rng.random() < 0.79 else ("HTTP/1.1" if rng.random() < 0.99 else "HTTP/0.9")
            region = REGIONS[_pick([(0.15, 0), (0.4, 1), (0.6, 2), (1.0, 3)], rng.random())]
            requests.append(Request(START + second, sample_cdf(self.client_cdf, rng.random()), obj, size, method,
                                    version, status, kind, region, rng.randrange(1, 9)))
        return requests

    def requests(self, seconds: int, first: int = 0) -> Iterator[Request]:
        """Every request of trace seconds ``first`` .. ``first + seconds − 1``, in time order."""
        for second in range(first, first + seconds):
            yield from self.second(second)


def _poisson(rng, mean: float) -> int:
    """A Poisson draw: Knuth's product method for small means, a rounded normal for large ones."""
    if mean <= 0:
        return 0
    if mean > 60:
        return max(0, int(round(rng.gauss(mean, math.sqrt(mean)))))
    limit, product, count = math.exp(-mean), rng.random(), 0
    while product > limit:
        product *= rng.random()
        count += 1
    return count


# -- replay feeds: one JSON record per request, URLs and the object catalogue ------------------------
#
# The archive's records name objects by id only; the site's URLs are not in it. The feeds give every
# object a URL in the site's layout, /<language>/<section>/<name>_<id>.<extension>, drawn from the id
# (the same for every tool: the topologies, the oracles, the catalogue), and a catalogue describing
# each object (section, language, type). A twentieth of the objects are missing from the catalogue
# (pages retired during the tournament): a join with it drops their requests.

LANGUAGES = ("english", "french", "spanish", "german", "japanese")
SECTIONS = ("images", "teams", "matches", "news", "tickets", "venues", "history", "competition")
NAMES = ("logo", "photo", "score", "team", "player", "stadium", "ball", "cup", "final", "group", "fans", "goal")
EXTENSIONS = {"HTML": "html", "IMAGE": "gif", "AUDIO": "wav", "VIDEO": "mpg", "JAVA": "class", "FORMATTED": "pdf",
              "DYNAMIC": "cgi", "TEXT": "txt", "COMPRESSED": "zip", "PROGRAMS": "exe", "DIRECTORY": "",
              "ICL": "icl", "OTHER": "dat"}


def _draw(object_id: int, salt: int, choices: tuple[str, ...]) -> str:
    return choices[(object_id * 2_654_435_761 + salt * 40_503) % 4_294_967_296 % len(choices)]


def url_of(object_id: int, kind: str) -> str:
    """The URL the feeds give object ``object_id`` of type ``kind``."""
    base = f"/{_draw(object_id, 1, LANGUAGES)}/{_draw(object_id, 2, SECTIONS)}/{_draw(object_id, 3, NAMES)}_{object_id}"
    extension = EXTENSIONS.get(kind, "dat")
    return f"{base}.{extension}" if extension else base + "/"


def in_catalogue(object_id: int) -> bool:
    return object_id % 20 != 7


def catalogue_entry(object_id: int, kind: str) -> dict:
    """The catalogue's record of an object: its URL, section, language and type."""
    return {"object_id": object_id, "url": url_of(object_id, kind), "section": _draw(object_id, 2, SECTIONS),
            "language": _draw(object_id, 1, LANGUAGES), "type": kind}


def feed_record(request: Request) -> dict:
    """A request as a replay feed's JSON record (the archive's fields, and the object's URL)."""
    return {"timestamp": request.timestamp, "client_id": request.client_id, "object_id": request.object_id,
            "size": request.size, "method": request.method, "version": request.version, "status": request.status,
            "type": request.type, "region": request.region, "server": request.server,
            "url": url_of(request.object_id, request.type)}


def object_type(seed: int, object_id: int) -> str:
    """The type the generator gives every request of ``object_id`` (an object keeps its type)."""
    return _pick(TYPE_CDF, rng_for(seed, "type", object_id).random())
