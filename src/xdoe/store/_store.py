"""The store: open a store by URL and reach its parts.

:class:`Store` owns one :class:`~xdoe.store.schema._database.Database` (the
engine, the schema version, the transactions) and the parts that hold their
own queries on it: ``store.runs`` (runs, instances, claims, stop requests:
:class:`~xdoe.store.runs._runs.Runs`), ``store.checkpoints``
(:class:`~xdoe.store.runs._checkpoints.Checkpoints`), ``store.rungs``
(:class:`~xdoe.store.runs._rungs.Rungs`), ``store.sessions`` (session trees:
:class:`~xdoe.store.sessions._sessions.Sessions`) and ``store.views``
(status, export, scores, curves, lineage, the dashboard:
:class:`~xdoe.store.views._views.Views`); :meth:`Store.recorder` hands out the
:class:`~xdoe.store.RunRecorder` of one run. The checkpoints, rungs, session trees
and views are imported on first use: a run that needs none loads none.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from xdoe.errors import StoreError
from xdoe.store.recorder._recorder import RunRecorder
from xdoe.store.runs._records import InstanceInfo, RunInfo, RunState
from xdoe.store.runs._runs import IN_CHUNK, Runs
from xdoe.store.schema._database import Database
from xdoe.store.schema._engine import mask_url, require_sqlite_file, resolve_url
from xdoe.store.schema._schema import open_for_reading, open_for_writing

if TYPE_CHECKING:
    from xdoe.store.runs._checkpoints import Checkpoints
    from xdoe.store.runs._rungs import Rungs
    from xdoe.store.sessions._sessions import Sessions
    from xdoe.store.views._views import Views

__all__ = ["Store", "RunInfo", "RunState", "InstanceInfo", "IN_CHUNK", "StoreError"]


class Store:
    """The results store, chosen by a SQLAlchemy URL.

    ``Store()`` opens ``$XRUN_STORE`` or ``sqlite:///_outputs/xrun.sqlite``
    (creating the folder); ``Store("postgresql+psycopg://user:pw@host:5432/db")``
    a PostgreSQL database. Tables are created when missing; several processes
    may open and write the same store at once.

    ``create=False`` opens only a store that exists (nothing is created, not
    even the SQLite file's folder). ``read_only=True`` (implies
    ``create=False``; the commands that only read) also never writes it: a
    SQLite file is opened ``mode=ro`` with no journal-mode change, and can be
    read on read-only media (:func:`xdoe.store.schema._engine.make_engine`).

    ``wait``: seconds to wait, with back-off, for a store that went away (its
    server stopped or restarting) before a :class:`~xdoe.errors.StoreLostError`
    (``xrun experiment-start --store-wait``); 0: at once.

    Raises:
        StoreError: the URL is malformed, the server cannot be reached, the
            file cannot be opened or was written by a newer schema. The
            message names the URL with its password masked.
        NoStoreError: ``create`` is false and there is no store at the URL.
    """

    def __init__(self, url: str | URL | None = None, *, create: bool = True, read_only: bool = False,
                 wait: float = 0.0) -> None:
        full_url = resolve_url(url)
        self.url = mask_url(full_url)
        """The store's URL with the password masked."""
        create = create and not read_only
        self.read_only = read_only
        """Opened only to read (``read_only=True``)."""
        if not create:
            require_sqlite_file(full_url, self.url)
        db = self.database = Database(full_url, read_only=read_only, wait=wait)
        """The engine and transactions the parts share (``database.wait``: seconds
        to wait, with back-off, for a store that went away before a
        :class:`~xdoe.errors.StoreLostError`, ``xrun experiment-start --store-wait``;
        ``database.engine``, ``database.session()``: for tests and ad-hoc queries)."""
        try:
            if db.wait > 0:  # a campaign's worker opening the store while its server restarts
                try:
                    db.reach("open", lambda: db.engine.connect().close())
                except SQLAlchemyError:
                    pass  # not a lost store: opening it names the error
            db.schema_version = open_for_writing(db) if create else open_for_reading(db)
        except Exception:
            db.engine.dispose()
            raise
        self.runs = Runs(db)
        """Runs, instances, episodes and steps, claims, stop requests (:class:`~xdoe.store.runs._runs.Runs`)."""

    @cached_property
    def checkpoints(self) -> "Checkpoints":
        """Checkpoint and brain-source rows (:class:`~xdoe.store.runs._checkpoints.Checkpoints`;
        imported on first use: a run without checkpoints loads none)."""
        from xdoe.store.runs._checkpoints import Checkpoints

        return Checkpoints(self.database)

    @cached_property
    def rungs(self) -> "Rungs":
        """The rungs of pruned runs (:class:`~xdoe.store.runs._rungs.Rungs`; imported on first use)."""
        from xdoe.store.runs._rungs import Rungs

        return Rungs(self.database)

    @cached_property
    def sessions(self) -> "Sessions":
        """Session trees (:class:`~xdoe.store.sessions._sessions.Sessions`; imported on first use)."""
        from xdoe.store.sessions._sessions import Sessions

        return Sessions(self.database)

    @cached_property
    def views(self) -> "Views":
        """Status, export, scores, curves, lineage and the dashboard's pages
        (:class:`~xdoe.store.views._views.Views`; imported on first use)."""
        from xdoe.store.views._views import Views

        return Views(self.database)

    # -- life cycle -------------------------------------------------------
    @property
    def schema_version(self) -> int:
        """The schema version of the store as opened (older than
        :data:`SCHEMA_VERSION` only when opened with ``create=False``: reads
        do not upgrade; see :mod:`xdoe.store.schema._schema`)."""
        return self.database.schema_version

    @property
    def has_end_columns(self) -> bool:
        """Whether episode and step rows have ``terminated``, ``truncated``,
        ``cut_by`` (schema version 2; a store only read keeps its version)."""
        return self.database.has_end_columns

    def close(self) -> None:
        """Release every pooled connection (the store may still be used afterwards)."""
        self.database.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- recording --------------------------------------------------------
    def recorder(
        self,
        document: dict[str, Any],
        *,
        results_root: Path | str | None = None,
        store_steps: str = "none",
        flush_rows: int = 1000,
        file_sha256: str | None = None,
        content_hash: str | None = None,
        design: dict[str, Any] | None = None,
    ) -> RunRecorder:
        """A :class:`RunRecorder` for one execution of ``document``.

        Args:
            document: the resolved run document (needs a string ``uid``).
            results_root: where results folders go; ``None`` means ``_outputs/results``.
            store_steps: ``none``, ``all`` or ``every:N``.
            flush_rows: buffered episode and step rows written per transaction.
            file_sha256: sha256 (hex) of the bytes of the file ``document``
                was read from; recorded with the run (see
                :meth:`Runs.finished_file_hashes <xdoe.store.runs._runs.Runs.finished_file_hashes>`). Give it only when those bytes
                alone determine the document (not when its uid came from the
                file name).
            content_hash: :func:`document_hash` of ``document``, when the caller has it.
            design: the design of the run's experiment as xgen's manifest
                records it (:func:`xdoe._files.manifest_design`), recorded on
                the experiment (:meth:`Runs.experiment_design <xdoe.store.runs._runs.Runs.experiment_design>`) when it differs.

        Raises:
            StoreStepsError: ``store_steps`` is invalid.
            DocumentError: the document has no string ``uid``.
        """
        return RunRecorder(self, self.database, document, results_root=results_root, store_steps=store_steps,
                           flush_rows=flush_rows, file_sha256=file_sha256, content_hash=content_hash,
                           design=design)
