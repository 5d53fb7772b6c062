"""Where the shipped feed lives.

The supervisor runs shell components with the jar's ``resources/`` directory as
working directory, so the project's ``data/`` folder is not there; the feed is
therefore shipped inside this package and found relative to it.
"""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def shipped_feed() -> Path:
    return PACKAGE_DIR / "data" / "tweets.jsonl"
