"""The database of a :class:`xdoe.store.Store`: its engine, its schema
version, and the transactions every query of the store runs in.

Every part of the store (``store.runs``, ``store.checkpoints``,
``store.rungs``, ``store.sessions``, ``store.views``, the recorder) holds the
store's one :class:`Database` and runs its queries in :meth:`Database.read`
and :meth:`Database.write` transactions; none of them imports
:mod:`xdoe.store._store` (no import cycle).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import StoreLostError
from xdoe.store.schema._engine import WRITE, lost_connection, make_engine, mask_url, store_error
from xdoe.store.schema._tables import SCHEMA_VERSION

T = TypeVar("T")

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = ["Database", "SCHEMA_LOCK", "WAIT_FIRST", "WAIT_LONGEST"]

#: seconds between the first two attempts to reach a lost store; doubled after each, up to
#: :data:`WAIT_LONGEST`
WAIT_FIRST, WAIT_LONGEST = 0.25, 4.0

#: Key of the PostgreSQL advisory lock that serialises schema creation.
SCHEMA_LOCK = 0x7864_6F65  # "xdoe"


class Database:
    """The engine and transactions of one store, shared by its parts.

    Args:
        url: the store's URL (as :func:`~xdoe.store.schema._engine.resolve_url` returns it).
        read_only: open it only to read (no journal-mode change on SQLite).
        wait: seconds to wait, with back-off, for a store that went away
            before a :class:`~xdoe.errors.StoreLostError`; 0: at once.
    """

    def __init__(self, url: str, *, read_only: bool = False, wait: float = 0.0) -> None:
        self.full_url = url
        """The URL with its password (for connecting and for error messages' masking)."""
        self.url = mask_url(url)
        """The URL with the password masked."""
        self.read_only = read_only
        self.wait = max(float(wait), 0.0)
        """Seconds to wait for a store that went away (0: fail at once)."""
        self.engine: Engine = make_engine(url, read_only=read_only)
        """The SQLAlchemy engine (reading transactions)."""
        self.writer: Engine = self.engine.execution_options(**{WRITE: True})
        """The same engine for writing transactions (``BEGIN IMMEDIATE`` on SQLite)."""
        self._makers: dict[bool, Any] = {}  # write -> sessionmaker, made on first use (the ORM)
        self._gave_up = False  # waited for in vain: do not wait again until it answers
        self.schema_version = SCHEMA_VERSION
        """The schema version of the store as opened (older than
        :data:`SCHEMA_VERSION` only when opened with ``create=False``: reads
        do not upgrade; see :mod:`xdoe.store.schema._schema`)."""

    @property
    def has_end_columns(self) -> bool:
        """Whether episode and step rows have ``terminated``, ``truncated``,
        ``cut_by`` (schema version 2; a store only read keeps its version)."""
        return self.schema_version >= 2

    def reach(self, action: str, attempt: "Callable[[], T]") -> T:
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
                    error = store_error(self.full_url, action, exc)
                    lost = StoreLostError(f"{error}; waited {self.wait:g} s for it to come back")
                    lost.waited = self._gave_up = True
                    raise lost from None
                time.sleep(min(delay, deadline - now))
                delay = min(delay * 2, WAIT_LONGEST)

    def again(self, action: Callable[[], T]) -> T:
        """``action()`` (a whole transaction), once more when the store was
        lost while it ran and this store waits (:attr:`wait`): the second
        attempt waits for the store to come back before it starts."""
        try:
            return action()
        except StoreLostError as exc:
            if self.wait <= 0 or exc.waited:  # waited for already
                raise
            return action()

    def write_again(self, action: str, body: "Callable[[Connection], T]") -> T:
        """``body(conn)`` inside one Core write transaction (:meth:`write`),
        run once more (:meth:`again`) when the store was lost while it ran: for
        the run path's writes, which must survive a server restart when the store
        waits (:attr:`wait`). ``body`` must be safe to run again after a rolled-back
        attempt (it is: the transaction that failed left nothing)."""
        def once() -> T:
            with self.write(action) as conn:
                return body(conn)

        return self.again(once)

    def session(self, *, write: bool = False) -> "Session":
        """A new ORM session; ``write=True`` for transactions that write
        (on SQLite they take the write lock when they begin, avoiding
        lock-upgrade failures between concurrent writers). The ORM is
        imported here, on first use: recording a run does without it."""
        makers = self._makers.get(write)
        if makers is None:
            from sqlalchemy.orm import sessionmaker

            makers = self._makers[write] = sessionmaker(self.writer if write else self.engine,
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
                self.reach(action, lambda: self.engine.connect().close())
            if write:
                with session.begin():
                    yield session
            else:
                yield session
        except SQLAlchemyError as exc:
            raise store_error(self.full_url, action, exc) from None
        finally:
            session.close()

    def orm_read(self, action: str) -> AbstractContextManager["Session"]:
        """An ORM session for reading (tests and ad-hoc queries; the store's
        own queries use :meth:`read`). Raises :class:`StoreError` naming the
        URL and ``action`` on a database error."""
        return self._transaction(action, write=False)

    def orm_write(self, action: str) -> AbstractContextManager["Session"]:
        """An ORM session inside one transaction committed at the end."""
        return self._transaction(action, write=True)

    @contextmanager
    def _connection(self, action: str, *, write: bool) -> Iterator[Connection]:
        """A Core connection (no ORM: the run path); with ``write`` inside
        one transaction (``BEGIN IMMEDIATE`` on SQLite) committed at the end.
        Database errors become :class:`StoreError` naming the URL and ``action``."""
        try:
            conn = self.reach(action, (self.writer if write else self.engine).connect)
            with conn:
                if write:
                    with conn.begin():
                        yield conn
                else:
                    yield conn
        except SQLAlchemyError as exc:
            raise store_error(self.full_url, action, exc) from None

    def read(self, action: str) -> AbstractContextManager[Connection]:
        """A Core connection for reading; ``action`` (``"read runs from"``)
        names what failed in the :class:`StoreError` a database error becomes."""
        return self._connection(action, write=False)

    def write(self, action: str) -> AbstractContextManager[Connection]:
        """A Core connection inside one write transaction, committed at the
        end (``BEGIN IMMEDIATE`` on SQLite); errors as :meth:`read`."""
        return self._connection(action, write=True)
