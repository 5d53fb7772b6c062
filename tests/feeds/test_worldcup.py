"""World Cup 1998 access logs: the binary record format, the reader, and the synthetic generator."""
from __future__ import annotations

import gzip
import struct
from collections import Counter

import pytest

from storm_planner.feeds.worldcup import (
    RECORD,
    START,
    Request,
    WorldCupGenerator,
    WorldCupReader,
    decode,
    encode,
    write_records,
)


def test_a_record_is_twenty_big_endian_bytes_decoded_by_the_readmes_tables():
    # 1998-06-10 15:30:00 GMT, client 7, object 4711, 2,048 bytes, GET, HTTP/1.1 + 304, IMAGE, PARIS server 5
    raw = struct.pack(">IIIIBBBB", 897_492_600, 7, 4711, 2048, 0, (2 << 6) | 13, 1, (3 << 5) | 5)
    assert RECORD.size == len(raw) == 20
    assert decode(raw) == Request(897_492_600, 7, 4711, 2048, "GET", "HTTP/1.1", 304, "IMAGE", "PARIS", 5)
    assert decode(struct.pack(">IIIIBBBB", 1, 2, 3, 4, 8, (1 << 6) | 37, 12, 0)).status is None  # "other" code
    assert decode(struct.pack(">IIIIBBBB", 1, 2, 3, 4, 2, 19, 6, 1 << 5)).status == 404
    assert encode(decode(raw)) == raw


@pytest.mark.parametrize("raw", [struct.pack(">IIIIBBBB", 1, 2, 3, 4, 9, 2, 0, 0),      # method 9
                                 struct.pack(">IIIIBBBB", 1, 2, 3, 4, 0, 38, 0, 0),     # status index 38
                                 struct.pack(">IIIIBBBB", 1, 2, 3, 4, 0, 2, 13, 0),     # type 13
                                 struct.pack(">IIIIBBBB", 1, 2, 3, 4, 0, 2, 0, 4 << 5)])  # region 4
def test_codes_outside_the_tables_are_refused(raw):
    with pytest.raises(ValueError, match="out of range"):
        decode(raw)


def test_the_reader_reads_plain_and_gzip_files_and_counts_malformed_records_without_failing(tmp_path):
    requests = list(WorldCupGenerator(seed=3, rate=5).requests(120))
    assert write_records(requests, tmp_path / "wc_day1_1.gz") == len(requests)
    with gzip.open(tmp_path / "wc_day1_1.gz", "rb") as handle:
        assert handle.read(2) != b""  # really gzip
    bad = struct.pack(">IIIIBBBB", 1, 2, 3, 4, 0, 2, 99, 0)
    (tmp_path / "wc_day2_1").write_bytes(encode(requests[0]) + bad + encode(requests[1]) + b"\x00" * 7)
    reader = WorldCupReader([tmp_path / "wc_day1_1.gz", tmp_path / "wc_day2_1"])
    read = list(reader)
    assert read == requests + requests[:2]
    assert (reader.records, reader.malformed) == (len(requests) + 2, 2)
    assert "wc_day2_1@20: code out of range" in reader.examples[0]
    assert "truncated record of 7 bytes" in reader.examples[1]


def test_the_generator_is_reproducible_per_second_and_in_time_order():
    generator = WorldCupGenerator(seed=5, rate=20)
    first = list(generator.requests(60))
    assert first == list(WorldCupGenerator(seed=5, rate=20).requests(60))
    assert list(generator.requests(10, first=30)) == [r for r in first if 30 <= r.timestamp - START < 40]
    assert [r.timestamp for r in first] == sorted(r.timestamp for r in first)
    assert first != list(WorldCupGenerator(seed=6, rate=20).requests(60))


def test_popularity_is_zipf_like_rate_is_diurnal_and_matches_spike():
    generator = WorldCupGenerator(seed=9, rate=40, objects=5_000, matches=())
    sample = [r for hour in (4, 19) for r in generator.requests(120, first=hour * 3600)]
    counts = Counter(r.object_id for r in sample).most_common()
    assert counts[0][0] == 0 and counts[0][1] > 20 * counts[len(counts) // 2][1]  # rank 1 far above the median
    night = sum(1 for r in sample if (r.timestamp - START) // 3600 == 4)
    evening = sum(1 for r in sample if (r.timestamp - START) // 3600 == 19)
    assert evening > 2.5 * night
    kinds = Counter(r.type for r in sample)
    assert kinds["IMAGE"] > 0.8 * len(sample) and kinds["HTML"] > 0.05 * len(sample)
    matched = WorldCupGenerator(seed=9, rate=40, objects=5_000, matches=((19 * 3600, 120),))
    during = list(matched.requests(120, first=19 * 3600))
    assert len(during) > 3 * evening
    hot = Counter(r.object_id for r in during).most_common(5)
    assert any(obj >= 500 for obj, _ in hot)  # match pages come from the long tail
