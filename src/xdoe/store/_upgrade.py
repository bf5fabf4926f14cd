"""Upgrading a store made by an older schema, step by step, when it is opened
for writing (``Store(url)``; ``Store(url, create=False)`` only reads and never
changes a store, it reads the columns an old store lacks as ``NULL``).

Each step takes a store from version ``n`` to ``n + 1`` inside the schema
transaction of :meth:`xdoe.store.Store._create_schema` (SQLite's write lock,
PostgreSQL's advisory lock), so two processes opening an old store at once
upgrade it once. Steps are idempotent (a column already there is kept), and
data is never rewritten: rows written before an upgrade keep ``NULL`` in the
new columns, meaning "not recorded".

(Issue 23 brings Alembic; these steps become its first revisions.)
"""

from __future__ import annotations

from typing import Callable

from sqlalchemy import Connection, inspect as sa_inspect
from sqlalchemy.schema import CreateColumn

from xdoe.errors import StoreError, printable
from xdoe.store import _tables as t

__all__ = ["UPGRADES", "upgrade", "schema_number"]


def _add_end_columns(conn: Connection) -> None:
    """1 -> 2: ``terminated``, ``truncated``, ``cut_by`` on the episode and
    step tables (:data:`~xdoe.store._tables.END_COLUMNS`)."""
    for table in (t.episode, t.step):
        present = {c["name"] for c in sa_inspect(conn).get_columns(table.name)}
        for name in t.END_COLUMNS:
            if name in present:
                continue
            ddl = CreateColumn(table.c[name]).compile(dialect=conn.dialect)
            conn.exec_driver_sql(f"ALTER TABLE {conn.dialect.identifier_preparer.quote(table.name)} ADD COLUMN {ddl}")


#: version -> the step that upgrades a store of that version to the next
UPGRADES: dict[int, Callable[[Connection], None]] = {1: _add_end_columns}


def upgrade(conn: Connection, version: int) -> int:
    """Run every step from ``version`` up to :data:`~xdoe.store._tables.SCHEMA_VERSION`
    on ``conn`` (inside the caller's transaction) and record the new version.

    Returns:
        the schema version now recorded.
    """
    from sqlalchemy import update

    while version < t.SCHEMA_VERSION:
        UPGRADES[version](conn)
        version += 1
    conn.execute(update(t.store_meta).where(t.store_meta.c.key == "schema_version")
                 .values(value=str(version)))
    return version


def schema_number(url: str, version: str | None) -> int | None:
    """The store's schema ``version`` as a number (``None`` stays ``None``).

    Raises:
        StoreError: the version is newer than this xdoe's, or not a whole
            number (a damaged store, or another application's tables).
    """
    if version is None:
        return None
    try:
        number = int(str(version).strip())
    except ValueError:
        raise StoreError(f"store {url} has an unreadable schema version '{printable(str(version)[:40])}' "
                         "(not a whole number: a damaged store, or not xdoe's); use another store") from None
    if number > t.SCHEMA_VERSION:
        raise StoreError(f"store {url} has schema version {version}, newer than this "
                         f"xdoe's {t.SCHEMA_VERSION}; upgrade xdoe")
    return number
