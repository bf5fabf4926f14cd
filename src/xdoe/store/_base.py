"""The base of :class:`xdoe.store.Store`: its engine and the transactions
every query of the store runs in.

Every part of the store (the run queries, checkpoint and instance rows,
claims, stop requests, session trees, the recorder, the campaign views) types
its store as :class:`StoreBase` or one of the mixins built on it, never as
``Store``: :mod:`xdoe.store._store` imports them all, so none of them imports
it back (no import cycle, ``TYPE_CHECKING`` imports included).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from xdoe.store._engine import store_error

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = ["SCHEMA_LOCK", "StoreBase"]

#: Key of the PostgreSQL advisory lock that serialises schema creation.
SCHEMA_LOCK = 0x7864_6F65  # "xdoe"


class StoreBase:
    """The engine and transactions of a store (built by :class:`xdoe.store.Store`)."""

    _url: str
    url: str
    engine: Engine
    _writer: Engine
    _sessions: dict[bool, Any]

    def session(self, *, write: bool = False) -> "Session":
        """A new ORM session; ``write=True`` for transactions that write
        (on SQLite they take the write lock when they begin, avoiding
        lock-upgrade failures between concurrent writers). The ORM is
        imported here, on first use: recording a run does without it."""
        makers = self._sessions.get(write)
        if makers is None:
            from sqlalchemy.orm import sessionmaker

            makers = self._sessions[write] = sessionmaker(self._writer if write else self.engine,
                                                          expire_on_commit=False)
        return makers()  # type: ignore[no-any-return]

    @contextmanager
    def _transaction(self, action: str, *, write: bool) -> Iterator["Session"]:
        """An ORM session (for the readers that map rows to the models);
        with ``write`` inside one transaction committed at the end.
        Database errors become :class:`StoreError` naming the URL and ``action``."""
        session = self.session(write=write)
        try:
            if write:
                with session.begin():
                    yield session
            else:
                yield session
        except SQLAlchemyError as exc:
            raise store_error(self._url, action, exc) from None
        finally:
            session.close()

    def _read(self, action: str) -> AbstractContextManager["Session"]:
        return self._transaction(action, write=False)

    def _write(self, action: str) -> AbstractContextManager["Session"]:
        return self._transaction(action, write=True)

    @contextmanager
    def _connection(self, action: str, *, write: bool) -> Iterator[Connection]:
        """A Core connection (no ORM: the run path); with ``write`` inside
        one transaction (``BEGIN IMMEDIATE`` on SQLite) committed at the end.
        Database errors become :class:`StoreError` naming the URL and ``action``."""
        try:
            if write:
                with self._writer.begin() as conn:
                    yield conn
            else:
                with self.engine.connect() as conn:
                    yield conn
        except SQLAlchemyError as exc:
            raise store_error(self._url, action, exc) from None

    def _core_read(self, action: str) -> AbstractContextManager[Connection]:
        return self._connection(action, write=False)

    def _core_write(self, action: str) -> AbstractContextManager[Connection]:
        return self._connection(action, write=True)
