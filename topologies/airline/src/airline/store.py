"""Result tables in a relational database: SQLite by default, PostgreSQL by URL.

``airline.db_url`` is ``sqlite:////absolute/path.db`` or
``postgresql://user:password@host:port/dbname`` (needs ``psycopg`` or
``psycopg2`` installed); by default the SQLite file is ``airline.sink``.
Rows are upserted, so the tables always hold each key's latest sum.
"""
from __future__ import annotations

import sqlite3

TABLES = {
    "plane_delays": (("tail_num", "TEXT"), ("year", "INTEGER")),
    "route_delays": (("origin", "TEXT"), ("dest", "TEXT")),
    "courier_efficiency": (("bucket", "INTEGER"),),
}


class ResultStore:
    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite:///"):
            self.connection = sqlite3.connect(url[len("sqlite:///"):], timeout=60)
            self.placeholder = "?"
        elif url.startswith(("postgresql://", "postgres://")):
            self.connection = _postgres(url)
            self.placeholder = "%s"
        else:
            raise ValueError(f"database URL {url!r}: expected sqlite:////path or postgresql://...")
        self.create_tables()

    def create_tables(self) -> None:
        cursor = self.connection.cursor()
        for table, keys in TABLES.items():
            columns = ", ".join(f"{name} {kind} NOT NULL" for name, kind in keys)
            key_names = ", ".join(name for name, _ in keys)
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns}, delay_sum DOUBLE PRECISION NOT NULL, "
                           f"flights INTEGER NOT NULL, PRIMARY KEY ({key_names}))")
        self.connection.commit()

    def upsert(self, table: str, rows: list[tuple]) -> None:
        """``rows`` = (*key, delay_sum, flights); one transaction."""
        keys = [name for name, _ in TABLES[table]]
        marks = ", ".join([self.placeholder] * (len(keys) + 2))
        sql = (f"INSERT INTO {table} ({', '.join(keys)}, delay_sum, flights) VALUES ({marks}) "
               f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET delay_sum = excluded.delay_sum, "
               f"flights = excluded.flights")
        cursor = self.connection.cursor()
        cursor.executemany(sql, rows)
        self.connection.commit()

    def read(self, table: str) -> dict:
        keys = [name for name, _ in TABLES[table]]
        cursor = self.connection.cursor()
        cursor.execute(f"SELECT {', '.join(keys)}, delay_sum, flights FROM {table}")
        return {tuple(row[:-2]): (float(row[-2]), int(row[-1])) for row in cursor.fetchall()}

    def close(self) -> None:
        self.connection.close()


def _postgres(url: str):
    try:
        import psycopg
        return psycopg.connect(url)
    except ModuleNotFoundError:
        pass
    try:
        import psycopg2
        return psycopg2.connect(url)
    except ModuleNotFoundError:
        raise RuntimeError("PostgreSQL needs psycopg (pip install 'psycopg[binary]') or psycopg2") from None


def read_tables(url: str) -> dict[str, dict]:
    """Every result table as ``{key tuple: (delay_sum, flights)}`` (tables not written are empty)."""
    store = ResultStore(url)
    try:
        return {table: store.read(table) for table in TABLES}
    finally:
        store.close()
