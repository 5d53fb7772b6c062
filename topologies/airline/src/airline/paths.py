"""The shipped feeds, found relative to the package (the supervisor's cwd is the jar's resources/)."""
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def shipped_flights() -> Path:
    return DATA / "flights.jsonl"


def shipped_weather() -> Path:
    return DATA / "weather.jsonl"


def shipped_stations() -> Path:
    return DATA / "stations.jsonl"
