"""From a store URL to a ready SQLAlchemy engine, with errors that name the URL.

* ``None`` means ``$XRUN_STORE`` or else :data:`DEFAULT_URL`.
* SQLite: the parent folder of the file is created; every connection gets WAL
  journaling, a busy timeout of :data:`SQLITE_BUSY_TIMEOUT_MS` and foreign
  keys on. Writing transactions start with ``BEGIN IMMEDIATE`` (they take the
  write lock up front and wait for it, instead of failing when two writers
  meet); reading ones with a plain ``BEGIN``, which never blocks writers in WAL
  mode. A recorder's per-episode commits wait for another writer's lock in
  shorter sleeps than SQLite's own (:func:`while_busy`).
* PostgreSQL (``postgresql+psycopg://user:password@host:port/db``): a connect
  timeout of 10 s unless the URL sets one.
* ``read_only`` (the commands that only read: ``xrun status``, ``results``,
  ``analyze``, ``export``, ``tree``...): a SQLite file is opened through a
  ``file:...?mode=ro`` URI, with no folder created and no journal-mode
  change, so its bytes are never written (another application's SQLite file
  stays as it was; a 0-byte file gets no header). On read-only media, where
  SQLite cannot make the WAL index a ``mode=ro`` connection needs, it is
  opened ``immutable=1`` (nothing can write there anyway); so is a file
  that cannot be written (``chmod 444``, or its folder) and has no ``-wal``
  beside it, so that no ``-wal``/``-shm`` files appear beside it. PostgreSQL
  sessions are set ``default_transaction_read_only``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from xdoe.errors import DiskFullError, NoStoreError, StoreError, StoreLostError, no_space_cause

__all__ = ["DEFAULT_URL", "ENV_VAR", "SQLITE_BUSY_TIMEOUT_MS", "resolve_url", "mask_url",
           "absolute_url", "url_database", "make_engine", "store_error", "lost_connection", "require_sqlite_file",
           "while_busy", "WRITE"]

ENV_VAR = "XRUN_STORE"
DEFAULT_URL = "sqlite:///_outputs/xrun.sqlite"
SQLITE_BUSY_TIMEOUT_MS = 60_000
#: Execution option that marks a writing transaction (``BEGIN IMMEDIATE`` on SQLite).
WRITE = "xdoe_write"

_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")


def resolve_url(url: str | URL | None) -> str:
    """The URL to open: ``url``, else ``$XRUN_STORE``, else :data:`DEFAULT_URL`."""
    if url is None or url == "":
        url = os.environ.get(ENV_VAR) or DEFAULT_URL
    return url.render_as_string(hide_password=False) if isinstance(url, URL) else str(url)


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (works on malformed URLs too)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a URL SQLAlchemy cannot parse is masked by pattern
        return _PASSWORD.sub(r"\1***@", url)


def absolute_url(url: str | None) -> str:
    """The store URL other processes should open: ``$XRUN_STORE``/the
    default resolved, and a relative SQLite path made absolute."""
    resolved = resolve_url(url)
    try:
        parsed = make_url(resolved)
    except Exception:  # noqa: BLE001 - Store() reports malformed URLs
        return resolved
    db = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and db and db != ":memory:" and not db.startswith("file:") \
            and not os.path.isabs(db):
        return parsed.set(database=str(Path(db).resolve())).render_as_string(hide_password=False)
    return resolved


def url_database(url: str) -> tuple[str, str | None]:
    """``(backend name, database)`` of a store URL, e.g. ``("sqlite", ":memory:")``.

    Raises:
        ValueError: SQLAlchemy cannot parse the URL (the message says why).
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ValueError(str(exc)) from None
    return parsed.get_backend_name(), parsed.database


def store_error(url: str, action: str, exc: BaseException) -> StoreError:
    """A :class:`StoreError` naming the masked URL, what failed and why (one line)."""
    orig = getattr(exc, "orig", None) or exc
    reason = " ".join(str(orig).split()) or type(orig).__name__
    reason = reason.replace(url, mask_url(url))
    if _disk_full(orig):
        return DiskFullError(_store_folder(url), f"{mask_url(url)}: {reason}", store=True)
    if lost_connection(exc):
        return StoreLostError(f"cannot {action} store {mask_url(url)}: lost the connection ({reason})")
    return StoreError(f"cannot {action} store {mask_url(url)}: {reason}")


#: PostgreSQL SQLSTATEs of a server that went away or is not there yet (class 08: connection
#: exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now) and SQLite's
#: result codes of a file that cannot be read any more (SQLITE_IOERR, SQLITE_CANTOPEN).
_PG_LOST = ("08", "57P01", "57P02", "57P03")
_SQLITE_LOST = (10, 14)


def lost_connection(exc: BaseException) -> bool:
    """Whether a driver error (as SQLAlchemy raises it) means the store went
    away: the connection was lost or the server cannot be reached, as
    opposed to a statement the store refused. Such an error may go away by
    itself (a restarting server): a store opened with ``wait`` waits for it."""
    from sqlalchemy.exc import DBAPIError, OperationalError

    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, StoreLostError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    orig = exc.orig
    code = getattr(orig, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _SQLITE_LOST
    if type(orig).__module__.split(".")[0] in ("psycopg", "psycopg2"):
        state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        return state is None or str(state).startswith(_PG_LOST)
    return False


#: SQLite's result code SQLITE_FULL and PostgreSQL's SQLSTATE disk_full.
_SQLITE_FULL, _PG_DISK_FULL = 13, "53100"


def _disk_full(orig: BaseException) -> bool:
    """Whether a driver error says the device of the database is full."""
    code = getattr(orig, "sqlite_errorcode", None)
    return ((code is not None and code & 0xFF == _SQLITE_FULL) or getattr(orig, "sqlstate", None) == _PG_DISK_FULL
            or "database or disk is full" in str(orig) or no_space_cause(orig) is not None)


def _store_folder(url: str) -> str:
    """The folder of a SQLite store's file, else the masked URL (a server's disk)."""
    try:
        backend, database = url_database(url)
    except ValueError:
        return mask_url(url)
    if backend == "sqlite" and database and database != ":memory:" and not database.startswith("file:"):
        return str(Path(database).expanduser().resolve().parent)
    return mask_url(url)


def make_engine(url: str, *, read_only: bool = False) -> Engine:
    """An engine for ``url`` (no connection is made yet); ``read_only``: see
    the module docstring.

    Raises:
        StoreError: the URL is malformed, names an unknown backend or driver,
            or the SQLite folder cannot be created.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise store_error(url, "open", exc) from None
    kwargs: dict[str, Any] = {}
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database or ""
        if read_only and database and database != ":memory:" and not database.startswith("file:"):
            path = str(Path(database).expanduser().resolve())
            kwargs["creator"] = lambda: _connect_read_only(path)
        elif database and database != ":memory:" and not database.startswith("file:"):
            try:
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise store_error(url, "create the folder of", exc) from None
    elif backend == "postgresql":
        kwargs["pool_pre_ping"] = True  # a pooled connection a server restart cut is replaced, not used
        if "connect_timeout" not in parsed.query:
            kwargs["connect_args"] = {"connect_timeout": 10}
        if read_only:  # added to the URL's own libpq options (e.g. a search_path), not instead of them
            given = parsed.query.get("options", "")
            given = " ".join(given) if isinstance(given, tuple) else given
            parsed = parsed.update_query_dict(
                {"options": f"{given} -c default_transaction_read_only=on".strip()})
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        raise store_error(url, "open", exc) from None
    if backend == "sqlite":
        _configure_sqlite(engine, read_only=read_only)
    return engine


def _connect_read_only(path: str) -> Any:
    """A ``sqlite3`` connection to the file ``path`` that cannot write it:
    ``mode=ro``, or ``immutable=1`` where the folder cannot be written (on
    read-only media a WAL file cannot be read ``mode=ro`` without its
    ``-shm`` index, which SQLite cannot create there); a writable file with
    no ``-wal`` beside it ``mode=rw`` with ``PRAGMA query_only``, so that the
    ``-wal``/``-shm`` files reading creates are removed when it closes."""
    import sqlite3
    from urllib.parse import quote

    uri = "file:" + quote(path)
    if not os.path.exists(path + "-wal"):
        if _unwritable(path):
            # a chmod-444 file (or one in a folder nobody may write): nothing writes it, and with no
            # WAL beside it every row is in the file; mode=ro would still create -wal/-shm beside it
            return sqlite3.connect(uri + "?immutable=1", uri=True, check_same_thread=False)
        # a writable file with every row in it: opened mode=rw but query_only, so that the last
        # connection to close removes the -wal/-shm files reading made (a mode=ro connection
        # cannot: they would stay beside the store); with no WAL there is nothing to fold back,
        # so the file's bytes stay as they were, and no statement can write (no journal change)
        con = sqlite3.connect(uri + "?mode=rw", uri=True, check_same_thread=False)
        con.execute("PRAGMA query_only = ON")
        return con
    con = sqlite3.connect(uri + "?mode=ro", uri=True, check_same_thread=False)
    try:
        con.execute("PRAGMA schema_version").fetchone()
        return con
    except sqlite3.OperationalError:
        if os.access(os.path.dirname(path) or ".", os.W_OK):
            return con  # the error is the file's own: the first query reports it
        con.close()
    return sqlite3.connect(uri + "?immutable=1", uri=True, check_same_thread=False)


def _unwritable(path: str) -> bool:
    """Whether the SQLite file ``path`` cannot be written: no write bit at
    all (``chmod 444``: root, to whom ``os.access`` grants everything, counts
    too), not writable for this user, or in a folder this user cannot write."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # the first query reports it
    return (not mode & 0o222 or not os.access(path, os.W_OK)
            or not os.access(os.path.dirname(path) or ".", os.W_OK))


def _enable_wal(cursor: Any) -> None:
    """Switch a SQLite file to WAL journaling (persistent, so usually a no-op).

    Changing the journal mode needs an exclusive lock, and SQLite answers
    ``database is locked`` at once, without its busy handler, when another
    process opens the same new file at that moment (e.g. several ``xrun``
    processes starting together): retried by :func:`while_busy`, from 10 ms.
    """
    if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() in ("wal", "memory"):
        return
    while_busy(cursor.execute, "PRAGMA journal_mode = WAL", first=0.01, longest=0.5)


def while_busy(execute: Callable[..., Any], *args: Any, first: float = 50e-6, longest: float = 0.005) -> Any:
    """``execute(*args)`` (a SQLite driver cursor's or connection's
    ``execute``), again after a sleep each time it fails with ``SQLITE_BUSY``
    (another connection holds the lock it needs), until
    :data:`SQLITE_BUSY_TIMEOUT_MS` have passed since the first failure; then,
    or on any other error, the ``sqlite3`` error is raised. The sleeps double
    from ``first`` to ``longest`` seconds.

    For statements that fail whole when they meet the lock, on a connection
    whose busy timeout is 0: a transaction's ``BEGIN IMMEDIATE``, or a
    statement of its own (autocommit). SQLite's own busy handler (the busy
    timeout) sleeps 1, 2, 5, 10 ms... at each meeting; two workers that each
    commit an episode every millisecond or two (``xrun --jobs 2`` on Taxi)
    met 12-22 times per 600 episodes and lost 10-45 ms over them; a writer
    holds the lock for some 30 µs, so 50 µs is the first sleep here.
    """
    import sqlite3
    import time

    deadline = None
    delay = first
    while True:
        try:
            return execute(*args)
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            now = time.monotonic()
            if deadline is None:
                deadline = now + SQLITE_BUSY_TIMEOUT_MS / 1000
            elif now > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, longest)


def _configure_sqlite(engine: Engine, *, read_only: bool = False) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN (the driver must not).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        if not read_only:  # a reader never changes the file's journal mode
            _enable_wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get(WRITE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def require_sqlite_file(url: str, masked: str) -> None:
    """Raise :class:`NoStoreError` when ``url`` names a SQLite file that does not exist."""
    try:
        backend, database = url_database(url)
    except ValueError:
        return  # make_engine names the malformed URL
    if backend != "sqlite":
        return
    database = database or ""
    if database in ("", ":memory:") or not (database.startswith("file:") or Path(database).expanduser().is_file()):
        raise NoStoreError(f"no store at {masked}")
