"""The shipped feed and catalogue, found relative to the package (the supervisor's cwd is the jar's resources/)."""
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def shipped_requests() -> Path:
    return DATA / "requests.jsonl"


def shipped_catalogue() -> Path:
    return DATA / "catalogue.jsonl"
