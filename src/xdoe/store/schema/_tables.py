"""The store's tables as SQLAlchemy Core :class:`~sqlalchemy.Table` objects,
without the ORM (issue 16: the run path — open, claim, record — never imports
``sqlalchemy.orm``, ~0.1 s of every ``xrun`` process's start-up).

Every reader and writer of the store uses these tables through SQLAlchemy
Core; the ORM classes of :mod:`xdoe.store.schema._models` are mapped onto these
very tables (``__table__``) for tests and ad-hoc queries; :data:`METADATA`
is their declarative base's metadata.
The session tables (Core tables of :mod:`xdoe.store.sessions._sessions`) join it when
that module is imported. The schema, its types and its DDL are described in
:mod:`xdoe.store.schema._models`; a test checks the DDL of both dialects against
``tests/store/data/schema_ddl.sql``.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator

from xdoe.store._json import compact_json

__all__ = [
    "SCHEMA_VERSION", "SCHEMA_REVISION", "revision_of", "END_COLUMNS",
    "INSTANCE_STATUSES", "PHASE_STATUSES", "METADATA", "UtcDateTime", "JsonText",
    "utcnow", "store_meta", "experiment", "run", "run_instance", "phase", "episode", "step", "checkpoint",
    "brain_source", "claim", "stop_request", "rung", "alembic_version",
]

#: Version of this schema: the number of the head Alembic revision
#: (:mod:`xdoe.store.schema.migrations`), recorded in ``alembic_version`` (as
#: :data:`SCHEMA_REVISION`) and in ``store_meta.schema_version`` (as a number,
#: what releases before Alembic read). A store written by a newer schema is
#: refused rather than misread; an older one is upgraded when it is opened for
#: writing (:mod:`xdoe.store.schema._schema`; reading never changes it).
#: 1: the schema of the first release; 2: ``terminated``, ``truncated``,
#: ``cut_by`` of episode and step rows; 3: ``warnings`` of run instances; 4: ``design``
#: of experiments (the design's method and coding, issue 32); 5: the ``rung`` table (a pruned
#: run's intermediate values and the decisions taken on them, issue 37).
SCHEMA_VERSION = 5


def revision_of(version: int) -> str:
    """The Alembic revision id of schema ``version``: four digits, ``"0002"``."""
    return f"{version:04d}"


#: The head Alembic revision id (:func:`revision_of` of :data:`SCHEMA_VERSION`).
SCHEMA_REVISION = revision_of(SCHEMA_VERSION)


#: Status of a run instance. ``running`` until :meth:`RunRecorder.finish`.
#: ``pruned``: ended early by its ``run_config.prune`` rule (done, like ``finished``: never run again).
INSTANCE_STATUSES = ("running", "finished", "failed", "interrupted", "pruned")
#: Status of a phase.
PHASE_STATUSES = ("running", "finished", "failed", "interrupted", "pruned")

# 64-bit ids on servers; SQLite needs exactly INTEGER for an autoincrementing rowid.
_Id = BigInteger().with_variant(Integer(), "sqlite")

#: The metadata of every xdoe table (also the ORM base's, :class:`xdoe.store.schema._models.Base`).
METADATA = MetaData()


def utcnow() -> _dt.datetime:
    """The current time, timezone-aware, in UTC."""
    return _dt.datetime.now(_dt.timezone.utc)


class UtcDateTime(TypeDecorator[_dt.datetime]):
    """A datetime stored as naive UTC and read back as aware UTC.

    Naive values given to it are taken as UTC.
    """

    impl = DateTime(timezone=False)
    cache_ok = True

    def process_bind_param(self, value: _dt.datetime | None, dialect: Any) -> _dt.datetime | None:
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return value

    def process_result_value(self, value: _dt.datetime | None, dialect: Any) -> _dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=_dt.timezone.utc)


class JsonText(TypeDecorator[Any]):
    """Any JSON value stored as compact JSON text (sorted keys)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        if value is None:
            return None
        return value if isinstance(value, _Encoded) else compact_json(value)

    def process_result_value(self, value: str | None, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


class _Encoded(str):
    """JSON text already encoded (the recorder encodes once, when buffering)."""

    __slots__ = ()


def _pk() -> Column[int]:
    return Column("id", _Id, primary_key=True, autoincrement=True)


def _fk(name: str, target: str, ondelete: str, *, nullable: bool, **kw: Any) -> Column[int]:
    return Column(name, ForeignKey(target, ondelete=ondelete), nullable=nullable, **kw)


def _col(name: str, type_: Any, nullable: bool = True, **kw: Any) -> Column[Any]:
    return Column(name, type_, nullable=nullable, **kw)


#: The columns that say how an episode ended (schema version 2), last in the
#: episode and step tables: ``terminated`` (a terminal state of the task),
#: ``truncated`` (cut short: a time limit, a condition, a budget) and ``cut_by``
#: (``NULL`` when terminated, else why: see :mod:`xdoe._cuts`). Step rows other than an episode's last have
#: ``false, false, NULL``. Nullable: rows of a store made before version 2
#: keep ``NULL`` (unknown).
END_COLUMNS = ("terminated", "truncated", "cut_by")


def _end_columns() -> list[Column[Any]]:
    return [_col("terminated", Boolean), _col("truncated", Boolean), _col("cut_by", String(64))]


# Column order, types, nullability, constraints and index names are the
# schema's: exactly what the declarative models produced before (see the DDL test).

store_meta = Table(
    "store_meta", METADATA,
    Column("key", String(64), primary_key=True),
    _col("value", String(255), False),
)

experiment = Table(
    "experiment", METADATA,
    _pk(),
    _col("uid", String(255), False, unique=True),
    _col("created", UtcDateTime, False, default=utcnow),
    # the design the runs come from, as xgen's manifest records it (method, coding of every
    # factor: which level is low and high, blocks...): JSON, NULL for runs without a manifest
    _col("design", JsonText),
)

run = Table(
    "run", METADATA,
    _pk(),
    _col("uid", String(255), False, index=True),
    _fk("experiment_id", "experiment.id", "CASCADE", nullable=True, index=True),
    _col("content_hash", String(64), False),
    _col("document", Text, False),
    _col("design_point", Integer),
    _col("repetition", Integer),
    _col("seed", BigInteger),
    _col("levels", JsonText),
    _col("file_sha256", String(64), index=True),
    _col("created", UtcDateTime, False, default=utcnow),
    UniqueConstraint("uid", "content_hash", name="uq_run_uid_hash"),
)

run_instance = Table(
    "run_instance", METADATA,
    _pk(),
    _col("uuid", String(36), False, unique=True),
    _fk("run_id", "run.id", "CASCADE", nullable=False),
    _col("host", String(255), False),
    _col("pid", Integer, False),
    _col("start", UtcDateTime, False),
    _col("end", UtcDateTime),
    _col("status", String(16), False),
    _col("error", Text),
    _col("traceback", Text),
    _col("heartbeat", UtcDateTime),
    _col("results_dir", Text),
    # what the run warned and went on with (RunResult.warnings), a JSON list of lines; NULL: none,
    # or not recorded (schema version 3)
    _col("warnings", JsonText),
    Index("ix_run_instance_run_status", "run_id", "status"),
    Index("ix_run_instance_status", "status"),
)

phase = Table(
    "phase", METADATA,
    _pk(),
    _fk("instance_id", "run_instance.id", "CASCADE", nullable=False),
    _col("index", Integer, False),
    _col("name", String(255), False),
    _col("mode", String(32), False),
    _col("config", JsonText),
    _col("status", String(16), False),
    _col("start", UtcDateTime, False),
    _col("end", UtcDateTime),
    UniqueConstraint("instance_id", "index", name="uq_phase_instance_index"),
)

episode = Table(
    "episode", METADATA,
    _pk(),
    _fk("phase_id", "phase.id", "CASCADE", nullable=False),
    _col("worker", Integer, False),
    _col("episode", Integer, False),
    _col("agent", String(255), False),
    _col("steps", Integer, False),
    _col("reward", Float),
    _col("objective", Float),
    _col("wall_time", Float),
    _col("extras", JsonText),
    *_end_columns(),
    Index("ix_episode_phase_episode", "phase_id", "episode", "agent"),
    # live curves read "rows of this phase newer than the last seen" (xrun dashboard)
    Index("ix_episode_phase_id", "phase_id", "id"),
)

step = Table(
    "step", METADATA,
    _pk(),
    _fk("phase_id", "phase.id", "CASCADE", nullable=False),
    _col("worker", Integer, False),
    _col("episode", Integer, False),
    _col("step", Integer, False),
    _col("agent", String(255), False),
    _col("sensors", JsonText),
    _col("actions", JsonText),
    _col("rewards", JsonText),
    _col("objective", Float),
    _col("done", Boolean, False),
    *_end_columns(),
    Index("ix_step_phase_episode", "phase_id", "worker", "episode", "step"),
)

checkpoint = Table(
    "checkpoint", METADATA,
    _pk(),
    _fk("instance_id", "run_instance.id", "CASCADE", nullable=False),
    _fk("phase_id", "phase.id", "CASCADE", nullable=True, index=True),
    _col("agent", String(255), False),
    _col("step", BigInteger),
    _col("episode", Integer),
    _col("path", Text, False),
    _col("sha256", String(64)),
    _col("metric", Float),
    _col("best", Boolean, False, default=False),
    _col("created", UtcDateTime, False, default=utcnow),
    Index("ix_checkpoint_instance_agent", "instance_id", "agent"),
)

brain_source = Table(
    "brain_source", METADATA,
    _pk(),
    _fk("instance_id", "run_instance.id", "CASCADE", nullable=False),
    _fk("phase_id", "phase.id", "CASCADE", nullable=True),
    _col("agent", String(255), False),
    _col("source_kind", String(32), False),
    _col("source_run_uid", String(255), index=True),
    _col("source_phase", String(255)),
    _fk("source_checkpoint_id", "checkpoint.id", "SET NULL", nullable=True),
    _col("source_path", Text),
    _col("source_sha256", String(64)),
    Index("ix_brain_source_instance", "instance_id", "agent"),
)

claim = Table(
    "claim", METADATA,
    _pk(),
    _col("run_uid", String(255), False),
    _col("content_hash", String(64), False),
    _col("owner", String(64), False),
    _col("host", String(255), False),
    _col("pid", Integer, False),
    _col("heartbeat", UtcDateTime, False),
    _col("claimed_at", UtcDateTime, False),
    UniqueConstraint("run_uid", "content_hash", name="uq_claim_run_hash"),
)

stop_request = Table(
    "stop_request", METADATA,
    _fk("instance_id", "run_instance.id", "CASCADE", nullable=False, primary_key=True),
    _col("requested", UtcDateTime, False, default=utcnow),
    _col("reason", Text),
)

#: One row per rung a run with ``run_config.prune`` reached (schema version 5): the phase's
#: environment ``step`` of the rung, the run's intermediate ``value`` there (NULL: not a number),
#: the decision (``pruned``) and how many other runs of its experiment had a value at that rung
#: when it was taken (``peers``). Other runs' decisions read these rows, never the clock, and a
#: resumed instance takes the decisions it recorded (:mod:`xdoe.store.runs._rungs`).
rung = Table(
    "rung", METADATA,
    _pk(),
    _fk("instance_id", "run_instance.id", "CASCADE", nullable=False),
    _col("phase_index", Integer, False),
    _col("rung", Integer, False),
    _col("step", BigInteger, False),
    _col("value", Float),
    _col("pruned", Boolean, False),
    _col("peers", Integer, False),
    _col("created", UtcDateTime, False, default=utcnow),
    UniqueConstraint("instance_id", "phase_index", "rung", name="uq_rung_instance_phase_rung"),
    Index("ix_rung_phase_rung", "phase_index", "rung"),
)

#: Alembic's version table, exactly as ``alembic stamp`` creates it
#: (``alembic.runtime.migration.MigrationContext``: ``version_num
#: VARCHAR(32) NOT NULL``, primary key ``alembic_version_pkc``), so that a new
#: store is created at head by ``create_all`` and one row, without importing
#: Alembic (an optional extra); a test compares it with Alembic's own.
alembic_version = Table(
    "alembic_version", METADATA,
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)
