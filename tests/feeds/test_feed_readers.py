"""The PySpark readers on small hand-written files in the datasets' real formats."""
from __future__ import annotations

import json

import pytest

from storm_planner.feeds import readers

pytestmark = pytest.mark.slow


def records(feed) -> list[tuple[int, dict]]:
    rows = feed.frame.orderBy("ts_ms", "seq").collect()
    return [(row["ts_ms"], json.loads(row["json"])) for row in rows]


def test_tweets_keep_the_raw_tweet_and_skip_malformed_lines(spark, data):
    feed = readers.read_tweets(spark, [data / "tweets.jsonl"])
    got = records(feed)
    assert [tweet["id"] for _, tweet in got] == [2, 1, 4]  # time order; created_at-only tweet parsed
    assert got[0][0] == 1370080799000 and got[1][0] == 1370080800000
    assert got[1][1]["entities"]["hashtags"][0]["text"] == "Storm"  # the tweet as published
    assert feed.malformed == 2  # the delete notice (no time) and the truncated line; the blank line is not a row
    assert any("delete" in example for example in feed.malformed_examples)
    assert "skipped 2 malformed" in feed.report()


def test_taq_trades_and_quotes_are_told_apart_and_parsed_to_the_millisecond(spark, data):
    feeds = readers.read_taq(spark, [data / "taq_trades.csv", data / "taq_quotes.csv"])
    trades, quotes = records(feeds["trades"]), records(feeds["quotes"])
    base = 1370251800000  # 2013-06-03 09:30:00 UTC
    assert [(ts - base, r["SYM_ROOT"], r["PRICE"], r["SIZE"]) for ts, r in trades] == [
        (0, "AAPL", 441.3, 300), (123, "AAPL", 441.25, 100), (1500, "MSFT", 34.99, 2500)]
    assert feeds["trades"].malformed == 2  # SIZE "abc"; a row cut short
    assert [(ts - base, r["SYM_ROOT"], r["ASK"], r["ASKSIZ"]) for ts, r in quotes] == [
        (500, "AAPL", 441.26, 3), (700, "MSFT", 35.0, 12)]
    assert feeds["quotes"].malformed == 1  # no symbol
    assert set(quotes[0][1]) == {"DATE", "TIME_M", "SYM_ROOT", "BID", "BIDSIZ", "ASK", "ASKSIZ"}


def test_bts_old_and_new_column_names_and_malformed_rows(spark, data):
    feed = readers.read_bts(spark, [data / "On_Time_On_Time_Performance_2004_1.csv",
                                    data / "On_Time_Reporting_Carrier_On_Time_Performance_2013_12.csv"])
    got = records(feed)
    assert [(r["TailNum"], r["Origin"], r["Dest"]) for _, r in got] == [
        ("N901DL", "ATL", "JFK"), ("N302AA", "JFK", "LAX"), ("N301AA", "JFK", "LAX"), ("N201WN", "ATL", "BWI")]
    first = got[0]
    assert first[0] == 1073260800000  # 2004-01-05, CRSDepTime 2400 = midnight
    assert got[1][1]["Cancelled"] == 1.0 and "ArrDelayMinutes" not in got[1][1]  # cancelled: no delay
    assert got[2][1]["ArrDelayMinutes"] == 25.0 and got[2][1]["UniqueCarrier"] == "AA"
    assert got[3][1]["UniqueCarrier"] == "WN" and got[3][1]["Year"] == 2013  # newer names mapped
    assert feed.malformed == 2  # a bad date, a row cut short


def test_gsod_fixed_width_and_csv_editions(spark, data):
    feed = readers.read_gsod(spark, [data / "725030-14732-2004.op", data / "72219013874.csv"])
    got = [(r["STN"], r["WBAN"], r["YEARMODA"], r.get("PRCP"), r["PRCP_FLAG"]) for _, r in records(feed)]
    assert sorted(got) == sorted([
        ("725030", "14732", "20040101", 0.12, "G"), ("725030", "14732", "20040102", None, ""),
        ("725030", "14732", "20040103", 0.55, "D"),
        ("722190", "13874", "20040101", 0.0, "G"), ("722190", "13874", "20040102", 1.25, "G")])
    assert feed.malformed == 1  # the line cut short


def test_isd_history_maps_airports_to_their_current_station(data):
    stations, malformed = readers.read_isd_stations(data / "isd-history.csv")
    assert stations == [{"airport": "ANC", "station": "702730-26451"},
                        {"airport": "ATL", "station": "722190-13874"},
                        {"airport": "JFK", "station": "744860-94789"},
                        {"airport": "LGA", "station": "725030-14732"}]
    assert malformed == 1


def test_missing_input_is_a_clear_error(spark, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        readers.read_tweets(spark, [tmp_path / "nope.jsonl"])
    (tmp_path / "x.csv").write_text("A,B\n1,2\n")
    with pytest.raises(ValueError, match="neither a TAQ trades"):
        readers.read_taq(spark, [tmp_path / "x.csv"])


def test_world_cup_binary_logs_become_requests_with_their_urls_and_a_truncated_tail_is_counted(spark, tmp_path):
    from storm_planner.feeds.worldcup import WorldCupGenerator, url_of, write_records
    generator = WorldCupGenerator(seed=3, rate=5.0)
    first, second = list(generator.requests(20)), list(generator.requests(10, first=20))
    write_records(first, tmp_path / "wc_day1_1.gz")
    write_records(second, tmp_path / "wc_day1_2")
    with open(tmp_path / "wc_day1_2", "ab") as handle:
        handle.write(b"\x00" * 7)  # a truncated record
    feed = readers.read_worldcup(spark, [tmp_path])
    got = records(feed)
    assert len(got) == len(first) + len(second) and feed.malformed == 1 and feed.inputs == 2
    ts, request = got[0]
    assert ts == first[0].timestamp * 1000 and request["object_id"] == first[0].object_id
    assert request["url"] == url_of(first[0].object_id, first[0].type)
