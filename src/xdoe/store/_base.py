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
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import StoreLostError
from xdoe.store._engine import lost_connection, store_error

T = TypeVar("T")

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = ["SCHEMA_LOCK", "StoreBase", "WAIT_FIRST", "WAIT_LONGEST"]

#: seconds between the first two attempts to reach a lost store; doubled after each, up to
#: :data:`WAIT_LONGEST`
WAIT_FIRST, WAIT_LONGEST = 0.25, 4.0

#: Key of the PostgreSQL advisory lock that serialises schema creation.
SCHEMA_LOCK = 0x7864_6F65  # "xdoe"


class StoreBase:
    """The engine and transactions of a store (built by :class:`xdoe.store.Store`)."""

    _url: str
    url: str
    engine: Engine
    _writer: Engine
    _sessions: dict[bool, Any]
    #: seconds to wait for a store that went away (``Store(wait=...)``; 0: fail at once)
    wait: float = 0.0
    _gave_up = False  # the store was waited for in vain: do not wait again until it answers

    def _reach(self, action: str, attempt: "Callable[[], T]") -> T:
        """``attempt()`` (which opens a connection), again and again with
        back-off while the store cannot be reached, for up to :attr:`wait`
        seconds; then a :class:`StoreLostError` naming the store and how long
        it was waited for. Other errors pass unchanged."""
        import time

        deadline: float | None = None
        delay = WAIT_FIRST
        while True:
            try:
                done = attempt()
                self._gave_up = False
                return done
            except SQLAlchemyError as exc:
                # once waited for in vain, later calls (releasing a claim...) fail at once
                if not lost_connection(exc) or self.wait <= 0 or self._gave_up:
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.wait
                if now >= deadline:
                    error = store_error(self._url, action, exc)
                    lost = StoreLostError(f"{error}; waited {self.wait:g} s for it to come back")
                    lost.waited = self._gave_up = True
                    raise lost from None
                time.sleep(min(delay, deadline - now))
                delay = min(delay * 2, WAIT_LONGEST)

    def _again(self, action: Callable[[], T]) -> T:
        """``action()`` (a whole transaction), once more when the store was
        lost while it ran and this store waits (:attr:`wait`): the second
        attempt waits for the store to come back before it starts."""
        try:
            return action()
        except StoreLostError as exc:
            if self.wait <= 0 or exc.waited:  # waited for already
                raise
            return action()

    def _write_again(self, action: str, body: "Callable[[Connection], T]") -> T:
        """``body(conn)`` inside one Core write transaction (:meth:`_core_write`),
        run once more (:meth:`_again`) when the store was lost while it ran: for
        the run path's writes, which must survive a server restart when the store
        waits (:attr:`wait`). ``body`` must be safe to run again after a rolled-back
        attempt (it is: the transaction that failed left nothing)."""
        def once() -> T:
            with self._core_write(action) as conn:
                return body(conn)

        return self._again(once)

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
            if self.wait > 0:  # wait for a store that went away before the session starts
                self._reach(action, lambda: self.engine.connect().close())
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
            conn = self._reach(action, (self._writer if write else self.engine).connect)
            with conn:
                if write:
                    with conn.begin():
                        yield conn
                else:
                    yield conn
        except SQLAlchemyError as exc:
            raise store_error(self._url, action, exc) from None

    def _core_read(self, action: str) -> AbstractContextManager[Connection]:
        return self._connection(action, write=False)

    def _core_write(self, action: str) -> AbstractContextManager[Connection]:
        return self._connection(action, write=True)
