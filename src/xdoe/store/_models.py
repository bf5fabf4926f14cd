"""The store's schema: SQLAlchemy 2 declarative models.

One experiment has many runs; a run is identified by its uid *and* the
content hash of its document, so the same uid with a changed document is a new
run version (a new row), and "is this run finished?" means "has this exact
document a finished instance?". Every execution of a run is a run instance
(host, pid, times, status, error). A run instance has phases; a phase has
episodes (one row per worker, episode and agent) and, when asked, steps.
Checkpoints, brain sources (lineage) and claims (work claiming across
processes and nodes) hang off instances and runs.

Timestamps are stored as UTC and read back timezone-aware (UTC) on every
backend. JSON payloads are stored as compact JSON text, identical on SQLite and
PostgreSQL.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from xdoe.store._json import compact_json

__all__ = [
    "SCHEMA_VERSION",
    "INSTANCE_STATUSES",
    "PHASE_STATUSES",
    "Base",
    "StoreMeta",
    "Experiment",
    "Run",
    "RunInstance",
    "Phase",
    "Episode",
    "Step",
    "Checkpoint",
    "BrainSource",
    "Claim",
    "StopRequest",
    "utcnow",
]

#: Version of this schema, recorded in ``store_meta``; a store written by a
#: newer schema is refused rather than misread.
SCHEMA_VERSION = 1

#: Status of a run instance. ``running`` until :meth:`RunRecorder.finish`.
INSTANCE_STATUSES = ("running", "finished", "failed", "interrupted")
#: Status of a phase.
PHASE_STATUSES = ("running", "finished", "failed", "interrupted")

# 64-bit ids on servers; SQLite needs exactly INTEGER for an autoincrementing rowid.
_Id = BigInteger().with_variant(Integer(), "sqlite")


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


class Base(DeclarativeBase):
    """Declarative base of every xdoe table."""


class StoreMeta(Base):
    """Key/value facts about the store itself (``schema_version``)."""

    __tablename__ = "store_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(255))


class Experiment(Base):
    """An experiment: the family of runs an experiment document expands into."""

    __tablename__ = "experiment"

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    uid: Mapped[str] = mapped_column(String(255), unique=True)
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class Run(Base):
    """One run document (one design point x one repetition), by uid and content hash.

    ``document`` is the canonical JSON of the run document and
    ``content_hash`` its sha256 (:func:`xdoe.store.document_hash`).
    ``design_point``, ``repetition``, ``seed`` and ``levels`` are copied from
    the document for queries; they are null for hand-written documents
    without a ``design_point``. ``file_sha256`` is the sha256 of the bytes of
    the file the run was first started from (null when it was not started
    from a file, or its uid came from the file name): the same bytes are the
    same document, so ``xrun`` skips a finished file without parsing it.
    """

    __tablename__ = "run"
    __table_args__ = (UniqueConstraint("uid", "content_hash", name="uq_run_uid_hash"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    uid: Mapped[str] = mapped_column(String(255), index=True)
    experiment_id: Mapped[int | None] = mapped_column(
        ForeignKey("experiment.id", ondelete="CASCADE"), index=True
    )
    content_hash: Mapped[str] = mapped_column(String(64))
    document: Mapped[str] = mapped_column(Text)
    design_point: Mapped[int | None] = mapped_column(Integer)
    repetition: Mapped[int | None] = mapped_column(Integer)
    seed: Mapped[int | None] = mapped_column(BigInteger)
    levels: Mapped[Any | None] = mapped_column(JsonText)
    file_sha256: Mapped[str | None] = mapped_column(String(64), index=True)
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class RunInstance(Base):
    """One execution of a run: where, when, how it ended.

    ``status`` is one of :data:`INSTANCE_STATUSES`; ``error`` is a one-line
    summary and ``traceback`` the full text. ``heartbeat`` is refreshed while
    the instance runs, so a ``running`` instance with an old heartbeat is stale.
    ``uuid`` identifies the instance across stores (it is in
    ``session_metadata.json``).
    """

    __tablename__ = "run_instance"
    __table_args__ = (
        Index("ix_run_instance_run_status", "run_id", "status"),
        Index("ix_run_instance_status", "status"),
    )

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), unique=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"))
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    start: Mapped[_dt.datetime] = mapped_column(UtcDateTime)
    end: Mapped[_dt.datetime | None] = mapped_column(UtcDateTime)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text)
    traceback: Mapped[str | None] = mapped_column(Text)
    heartbeat: Mapped[_dt.datetime | None] = mapped_column(UtcDateTime)
    results_dir: Mapped[str | None] = mapped_column(Text)


class Phase(Base):
    """One phase of a run instance (``index`` is its position in the schedule)."""

    __tablename__ = "phase"
    __table_args__ = (UniqueConstraint("instance_id", "index", name="uq_phase_instance_index"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("run_instance.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(255))
    mode: Mapped[str] = mapped_column(String(32))
    config: Mapped[Any | None] = mapped_column(JsonText)
    status: Mapped[str] = mapped_column(String(16))
    start: Mapped[_dt.datetime] = mapped_column(UtcDateTime)
    end: Mapped[_dt.datetime | None] = mapped_column(UtcDateTime)


class Episode(Base):
    """One finished episode of one worker, for one agent.

    ``reward`` is the sum of the agent's environment rewards over the episode,
    ``objective`` the sum of its objective values, ``wall_time`` in seconds.
    ``extras`` holds anything else (e.g. sampled environment parameters).
    """

    __tablename__ = "episode"
    __table_args__ = (
        Index("ix_episode_phase_episode", "phase_id", "episode", "agent"),
        # live curves read "rows of this phase newer than the last seen" (xrun dashboard)
        Index("ix_episode_phase_id", "phase_id", "id"),
    )

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phase.id", ondelete="CASCADE"))
    worker: Mapped[int] = mapped_column(Integer)
    episode: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(255))
    steps: Mapped[int] = mapped_column(Integer)
    reward: Mapped[float | None] = mapped_column(Float)
    objective: Mapped[float | None] = mapped_column(Float)
    wall_time: Mapped[float | None] = mapped_column(Float)
    extras: Mapped[Any | None] = mapped_column(JsonText)


class Step(Base):
    """One step of one agent (recorded only with ``store_steps`` all or every:N).

    ``sensors``, ``actions`` and ``rewards`` are JSON objects keyed by id.
    """

    __tablename__ = "step"
    __table_args__ = (Index("ix_step_phase_episode", "phase_id", "worker", "episode", "step"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phase.id", ondelete="CASCADE"))
    worker: Mapped[int] = mapped_column(Integer)
    episode: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(255))
    sensors: Mapped[Any | None] = mapped_column(JsonText)
    actions: Mapped[Any | None] = mapped_column(JsonText)
    rewards: Mapped[Any | None] = mapped_column(JsonText)
    objective: Mapped[float | None] = mapped_column(Float)
    done: Mapped[bool] = mapped_column(Boolean)


class Checkpoint(Base):
    """A saved brain: file ``path`` (with its ``sha256``) of ``agent`` at
    ``episode``/``step`` of a phase; ``metric`` is what "best" compares
    (higher is better), ``best`` marks the best checkpoint of its phase and agent."""

    __tablename__ = "checkpoint"
    __table_args__ = (Index("ix_checkpoint_instance_agent", "instance_id", "agent"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("run_instance.id", ondelete="CASCADE"))
    phase_id: Mapped[int | None] = mapped_column(ForeignKey("phase.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(255))
    step: Mapped[int | None] = mapped_column(BigInteger)
    episode: Mapped[int | None] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str | None] = mapped_column(String(64))
    metric: Mapped[float | None] = mapped_column(Float)
    best: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)


class BrainSource(Base):
    """Lineage: where an agent's brain came from when a phase started.

    ``source_kind`` is ``fresh`` (new brain), ``previous_phase`` (kept from the
    previous phase of the same instance), ``checkpoint`` (loaded from another
    run's checkpoint: ``source_run_uid``, ``source_phase``,
    ``source_checkpoint_id``) or ``path`` (loaded from ``source_path``).
    """

    __tablename__ = "brain_source"
    __table_args__ = (Index("ix_brain_source_instance", "instance_id", "agent"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("run_instance.id", ondelete="CASCADE"))
    phase_id: Mapped[int | None] = mapped_column(ForeignKey("phase.id", ondelete="CASCADE"))
    agent: Mapped[str] = mapped_column(String(255))
    source_kind: Mapped[str] = mapped_column(String(32))
    source_run_uid: Mapped[str | None] = mapped_column(String(255), index=True)
    source_phase: Mapped[str | None] = mapped_column(String(255))
    source_checkpoint_id: Mapped[int | None] = mapped_column(
        ForeignKey("checkpoint.id", ondelete="SET NULL")
    )
    source_path: Mapped[str | None] = mapped_column(Text)
    source_sha256: Mapped[str | None] = mapped_column(String(64))


class Claim(Base):
    """Work claiming: at most one owner per run version across processes and nodes.

    The unique (run uid, content hash) makes claiming an INSERT that either
    succeeds or fails; ``heartbeat`` lets others take over a stale claim.
    """

    __tablename__ = "claim"
    __table_args__ = (UniqueConstraint("run_uid", "content_hash", name="uq_claim_run_hash"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True, autoincrement=True)
    run_uid: Mapped[str] = mapped_column(String(255))
    content_hash: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(String(64))
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    heartbeat: Mapped[_dt.datetime] = mapped_column(UtcDateTime)
    claimed_at: Mapped[_dt.datetime] = mapped_column(UtcDateTime)


class StopRequest(Base):
    """A request to stop a running instance cleanly (``xrun dashboard``'s stop
    button, :func:`xdoe.store.request_stop`). The run's process polls it at
    episode ends (about every 2 s), records the instance ``interrupted``
    (resumable) and removes the request."""

    __tablename__ = "stop_request"

    instance_id: Mapped[int] = mapped_column(
        ForeignKey("run_instance.id", ondelete="CASCADE"), primary_key=True
    )
    requested: Mapped[_dt.datetime] = mapped_column(UtcDateTime, default=utcnow)
    reason: Mapped[str | None] = mapped_column(Text)
