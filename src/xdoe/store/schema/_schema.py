"""The store's schema version: reading it, refusing a newer one, creating a
new store at head and upgrading an older one (issue 23: Alembic).

* **Version.** A store records its schema version twice, in one transaction:
  the head Alembic revision in ``alembic_version`` (``"0002"``, what
  ``alembic stamp`` writes) and its number in ``store_meta.schema_version``
  (``"2"``, what releases before Alembic read, so they keep refusing a newer
  store). A store made before Alembic has only the latter.
* **New store** (``Store(url)``, no version recorded): ``create_all`` and the
  two version rows, the Alembic cookbook's "create_all + stamp head" without
  importing Alembic (the ``alembic_version`` table is one of
  :mod:`xdoe.store.schema._tables`).
* **Older store opened for writing** (``Store(url)``): the revisions after its
  version run (:func:`xdoe.store.schema.migrations.upgrade`, Alembic's ``op``),
  inside the schema transaction (SQLite's write lock, PostgreSQL's advisory
  lock), so two processes opening it at once upgrade it once; a failure rolls
  everything back. Without Alembic (the ``migrate`` extra) this is a
  :class:`~xdoe.errors.StoreError` naming the extra.
* **Older store opened for reading** (``Store(url, create=False)``): never
  changed; readers see the columns it lacks as ``NULL`` (``Store.has_end_columns``).
* **Newer store** (a version above :data:`~xdoe.store.schema._tables.SCHEMA_VERSION`,
  in either place): refused, naming both revisions, with the hint to upgrade xdoe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import NoStoreError, StoreError, printable
from xdoe.store.schema import _tables as t
from xdoe.store.schema._database import SCHEMA_LOCK
from xdoe.store.schema._engine import store_error
from xdoe.store.schema._tables import METADATA, SCHEMA_REVISION, SCHEMA_VERSION, revision_of

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["open_for_writing", "open_for_reading", "stored_version"]


def stored_version(conn: Connection, tables: set[str], url: str) -> int | None:
    """The schema version the store on ``conn`` records (``tables``: the
    names of the tables there), or ``None`` when it records none (a new store).

    Raises:
        StoreError: the version is newer than this xdoe's, or unreadable (a
            damaged store, or another application's ``alembic_version``).
    """
    revision = meta = None
    if t.alembic_version.name in tables:
        rows = conn.execute(select(t.alembic_version.c.version_num)).scalars().all()
        if len(rows) > 1:
            raise StoreError(f"store {url} records {len(rows)} schema revisions ({', '.join(map(printable, rows))}), "
                             "not one (a damaged store, or not xdoe's); use another store")
        revision = rows[0] if rows else None
    if t.store_meta.name in tables:
        c = t.store_meta.c
        meta = conn.execute(select(c.value).where(c.key == "schema_version")).scalar_one_or_none()
    numbers = [_number(url, revision, "revision"), _number(url, meta, "version")]
    for number, raw, kind in zip(numbers, (revision, meta), ("revision", "version"), strict=True):
        if number is not None and number > SCHEMA_VERSION:
            shown = raw if kind == "revision" else revision_of(number)
            raise StoreError(f"store {url} has schema revision {printable(str(shown))}, newer than this xdoe's "
                             f"{SCHEMA_REVISION}; upgrade xdoe (pip install --upgrade xdoe)")
    return numbers[0] if numbers[0] is not None else numbers[1]


def _number(url: str, value: str | None, kind: str) -> int | None:
    """A recorded schema ``value`` as a number (``None`` stays ``None``)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or not text.isascii():
        raise StoreError(f"store {url} has an unreadable schema {kind} '{printable(str(value)[:40])}' "
                         "(not a whole number: a damaged store, or not xdoe's); use another store")
    return int(text)


def open_for_reading(db: "Database") -> int:
    """The schema version of an existing store, read without changing it.

    Raises:
        NoStoreError: the xdoe tables are missing.
        StoreError: the store cannot be read, or its schema is newer.
    """
    try:
        with db.engine.connect() as conn:
            inspector = sa_inspect(conn)
            tables = {name for name in (t.store_meta.name, t.alembic_version.name) if inspector.has_table(name)}
            if t.store_meta.name not in tables:
                raise NoStoreError(f"no store at {db.url} (no xdoe tables)")
            version = stored_version(conn, tables, db.url)
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "open", exc) from None
    return SCHEMA_VERSION if version is None else version


def open_for_writing(db: "Database") -> int:
    """Create the store's tables, or upgrade an older schema, and return the
    version (always :data:`SCHEMA_VERSION`). See the module docstring.

    Raises:
        StoreError: the store cannot be opened, its schema is newer, or an
            upgrade needs Alembic, which is not installed.
    """
    try:
        if _sqlite_complete(db):  # the usual case: an existing store (issue 16)
            return SCHEMA_VERSION
        with db.writer.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")
            tables = _table_names(conn)
            version = stored_version(conn, tables, db.url)
            if version is not None and version < SCHEMA_VERSION:
                _migrate(conn, db.url, version)
                tables = _table_names(conn)
            # only the missing tables (every table of a new store, the version
            # table of a store made before Alembic, session tables used later)
            # from one read instead of create_all's per-table reflection
            METADATA.create_all(conn, tables=[table for table in METADATA.sorted_tables
                                              if table.name not in tables], checkfirst=False)
            # a table that was there keeps its indexes; one dropped by hand comes back
            for table in METADATA.sorted_tables:
                if table.name in tables:
                    for index in table.indexes:
                        index.create(conn, checkfirst=True)
            _record_head(conn, new=tables)
    except SQLAlchemyError as exc:
        raise store_error(db.full_url, "open", exc) from None
    return SCHEMA_VERSION


def _sqlite_complete(db: "Database") -> bool:
    """SQLite: whether every table and index of this xdoe exists and the
    store is at head, from one read of ``sqlite_master`` (no write lock, none
    of ``create_all``'s per-table and per-index reflection queries) and one of
    the version; ``False`` on other backends (they take the full path).

    Raises:
        StoreError: the schema is newer.
    """
    if db.engine.dialect.name != "sqlite":
        return False
    needed = {("table", table.name) for table in METADATA.sorted_tables}
    needed |= {("index", str(i.name)) for table in METADATA.sorted_tables for i in table.indexes}
    with db.engine.connect() as conn:
        present = set(conn.exec_driver_sql(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index')").all())
        if not needed <= present:
            return False
        tables = {name for kind, name in present if kind == "table"}
        return stored_version(conn, tables, db.url) == SCHEMA_VERSION


def _table_names(conn: Connection) -> set[str]:
    """The tables there now (SQLite: one read of ``sqlite_master``)."""
    if conn.dialect.name == "sqlite":
        return {name for (name,) in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return set(sa_inspect(conn).get_table_names())


def _migrate(conn: Connection, url: str, version: int) -> None:
    """Run the revisions after ``version`` on ``conn`` (Alembic)."""
    from xdoe._extras import missing_extra

    try:
        from xdoe.store.schema.migrations import upgrade
        upgrade(conn, version)
    except ModuleNotFoundError as exc:
        hint = missing_extra(exc)
        if hint is None:
            raise
        raise StoreError(f"store {url} has schema revision {revision_of(version)}, older than this xdoe's "
                         f"{SCHEMA_REVISION}; upgrading it: {hint}") from None


def _record_head(conn: Connection, *, new: set[str]) -> None:
    """Record :data:`SCHEMA_VERSION` in both places (nothing when already so);
    ``new``: the tables there before this transaction's ``create_all`` (a
    version table not among them was just created, empty: not read)."""
    meta = t.store_meta.c
    value = None
    if t.store_meta.name in new:
        value = conn.execute(select(meta.value).where(meta.key == "schema_version")).scalar_one_or_none()
    if value is None:
        conn.execute(insert(t.store_meta), [{"key": "schema_version", "value": str(SCHEMA_VERSION)}])
    elif value != str(SCHEMA_VERSION):
        conn.execute(update(t.store_meta).where(meta.key == "schema_version").values(value=str(SCHEMA_VERSION)))
    if t.alembic_version.name not in new:
        conn.execute(insert(t.alembic_version), [{"version_num": SCHEMA_REVISION}])
        return
    rows: list[Any] = conn.execute(select(t.alembic_version.c.version_num)).scalars().all()
    if rows != [SCHEMA_REVISION]:
        conn.execute(delete(t.alembic_version))
        conn.execute(insert(t.alembic_version), [{"version_num": SCHEMA_REVISION}])
