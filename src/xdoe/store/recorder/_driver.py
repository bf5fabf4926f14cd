"""A recorder's per-episode commits on SQLite, through a driver connection it
keeps (:class:`DriverRows`)."""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any

from xdoe.store.recorder._cells import positional_inserts
from xdoe.store.schema._engine import SQLITE_BUSY_TIMEOUT_MS, store_error, while_busy

if TYPE_CHECKING:
    from xdoe.store.schema._database import Database

__all__ = ["DriverRows"]


class DriverRows:
    """Buffered episode and step rows written straight to a SQLite driver
    connection taken from the store's pool at the first :meth:`write` and
    kept until :meth:`release` (the run's end).

    The connection's busy timeout is 0 while it is kept: when another
    connection holds the write lock (the other workers of ``xrun --jobs N``
    commit their episodes to the same file), the transaction is retried after
    sleeps of 50 µs upwards (:func:`~xdoe.store.schema._engine.while_busy`)
    instead of SQLite's own 1, 2, 5 ms...; :meth:`release` sets it back
    before the connection returns to the pool.
    """

    __slots__ = ("_db", "_raw", "_cursor", "_error")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._raw: Any = None  # the pool's connection, kept between writes
        self._cursor: Any = None  # its driver's cursor, which executes them
        self._error: Any = None  # sqlite3.Error, imported with the first write

    def write(self, episode_sql: str | None, episodes: list[tuple[Any, ...]], step_sql: str | None,
              steps: list[tuple[Any, ...]]) -> None:
        """Insert ``episodes`` and ``steps`` (tuples in the order of the
        positional one-row INSERTs ``episode_sql`` / ``step_sql``) in one
        transaction: an episode's one row is one autocommitted INSERT (SQLite
        writes it atomically and durably, as it would ``BEGIN``, the INSERT
        and ``COMMIT``), anything else ``BEGIN IMMEDIATE``, the multi-row
        INSERTs (:func:`~xdoe.store.recorder._cells.positional_inserts`),
        ``COMMIT``.

        Raises:
            StoreError: the store cannot be written (the transaction rolled back).
        """
        cursor = self._cursor
        try:
            if cursor is None:
                import sqlite3

                self._error = sqlite3.Error
                self._raw = self._db.engine.raw_connection()
                cursor = self._cursor = self._raw.driver_connection.cursor()
                cursor.execute("PRAGMA busy_timeout = 0")  # while_busy waits instead (see the class)
            if not steps and len(episodes) == 1:
                while_busy(cursor.execute, episode_sql, episodes[0])
                return
            while_busy(cursor.execute, "BEGIN IMMEDIATE")  # the write lock taken: the INSERTs do not wait
            try:
                for statement, values in chain(positional_inserts(episode_sql, episodes),  # type: ignore[arg-type]
                                               positional_inserts(step_sql, steps)):  # type: ignore[arg-type]
                    cursor.execute(statement, values)
                cursor.execute("COMMIT")
            except BaseException:
                if cursor.connection.in_transaction:
                    cursor.execute("ROLLBACK")
                raise
        except self._error as exc:
            raise store_error(self._db.full_url, "write episodes to", exc) from None

    def release(self) -> None:
        """Give the connection back to the pool with the store's busy timeout
        (a connection that cannot take it is dropped instead)."""
        if self._raw is not None:
            raw, cursor, self._raw, self._cursor = self._raw, self._cursor, None, None
            try:
                cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            except Exception:  # noqa: BLE001 - never back to the pool without it
                raw.invalidate()
            try:
                raw.close()  # back to the pool
            except Exception:  # noqa: BLE001 - a broken connection is dropped by the pool
                pass
