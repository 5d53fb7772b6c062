"""The shipped feeds, found relative to the package (the supervisor's cwd is the jar's resources/)."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def shipped_trades() -> Path:
    return PACKAGE_DIR / "data" / "trades.jsonl"


def shipped_quotes() -> Path:
    return PACKAGE_DIR / "data" / "quotes.jsonl"
