"""The store's schema: SQLAlchemy 2 declarative models, mapped onto the Core
tables of :mod:`xdoe.store.schema._tables` (every reader and writer of the store
uses those without the ORM; these models serve tests and ad-hoc queries).

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
from typing import Any

from sqlalchemy.orm import DeclarativeBase, Mapped

from xdoe.store.schema import _tables as _t
from xdoe.store.schema._tables import INSTANCE_STATUSES, METADATA, PHASE_STATUSES, SCHEMA_VERSION, utcnow

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


class Base(DeclarativeBase):
    """Declarative base of every xdoe table (its metadata is :data:`xdoe.store.schema._tables.METADATA`)."""

    metadata = METADATA


class StoreMeta(Base):
    """Key/value facts about the store itself (``schema_version``)."""

    __table__ = _t.store_meta

    key: Mapped[str]
    value: Mapped[str]


class Experiment(Base):
    """An experiment: the family of runs an experiment document expands into."""

    __table__ = _t.experiment

    id: Mapped[int]
    uid: Mapped[str]
    created: Mapped[_dt.datetime]
    #: the design the runs come from (xgen's manifest: method, coding, blocks), schema 4
    design: Mapped[Any | None]


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

    __table__ = _t.run

    id: Mapped[int]
    uid: Mapped[str]
    experiment_id: Mapped[int | None]
    content_hash: Mapped[str]
    document: Mapped[str]
    design_point: Mapped[int | None]
    repetition: Mapped[int | None]
    seed: Mapped[int | None]
    levels: Mapped[Any | None]
    file_sha256: Mapped[str | None]
    created: Mapped[_dt.datetime]


class RunInstance(Base):
    """One execution of a run: where, when, how it ended.

    ``status`` is one of :data:`INSTANCE_STATUSES`; ``error`` is a one-line
    summary and ``traceback`` the full text. ``heartbeat`` is refreshed while
    the instance runs, so a ``running`` instance with an old heartbeat is stale.
    ``uuid`` identifies the instance across stores (it is in
    ``session_metadata.json``). ``warnings``: the lines the run warned and
    went on with (``RunResult.warnings``), ``None`` when it warned nothing
    (or the store's schema is older than version 3).
    """

    __table__ = _t.run_instance

    id: Mapped[int]
    uuid: Mapped[str]
    run_id: Mapped[int]
    host: Mapped[str]
    pid: Mapped[int]
    start: Mapped[_dt.datetime]
    end: Mapped[_dt.datetime | None]
    status: Mapped[str]
    error: Mapped[str | None]
    traceback: Mapped[str | None]
    heartbeat: Mapped[_dt.datetime | None]
    results_dir: Mapped[str | None]
    warnings: Mapped[list[str] | None]


class Phase(Base):
    """One phase of a run instance (``index`` is its position in the schedule)."""

    __table__ = _t.phase

    id: Mapped[int]
    instance_id: Mapped[int]
    index: Mapped[int]
    name: Mapped[str]
    mode: Mapped[str]
    config: Mapped[Any | None]
    status: Mapped[str]
    start: Mapped[_dt.datetime]
    end: Mapped[_dt.datetime | None]


class Episode(Base):
    """One finished episode of one worker, for one agent.

    ``reward`` is the sum of the agent's environment rewards over the episode,
    ``objective`` the sum of its objective values, ``wall_time`` in seconds.
    ``extras`` holds anything else (e.g. sampled environment parameters).
    ``terminated``, ``truncated``, ``cut_by``: how it ended
    (:data:`xdoe.store.schema._tables.END_COLUMNS`; ``None`` in rows of a store made
    before schema version 2).
    """

    __table__ = _t.episode

    id: Mapped[int]
    phase_id: Mapped[int]
    worker: Mapped[int]
    episode: Mapped[int]
    agent: Mapped[str]
    steps: Mapped[int]
    reward: Mapped[float | None]
    objective: Mapped[float | None]
    wall_time: Mapped[float | None]
    extras: Mapped[Any | None]
    terminated: Mapped[bool | None]
    truncated: Mapped[bool | None]
    cut_by: Mapped[str | None]


class Step(Base):
    """One step of one agent (recorded only with ``store_steps`` all or every:N).

    ``sensors``, ``actions`` and ``rewards`` are JSON objects keyed by id;
    ``terminated``, ``truncated``, ``cut_by`` as of :class:`Episode` on an
    episode's last step, ``False, False, None`` on the others.
    """

    __table__ = _t.step

    id: Mapped[int]
    phase_id: Mapped[int]
    worker: Mapped[int]
    episode: Mapped[int]
    step: Mapped[int]
    agent: Mapped[str]
    sensors: Mapped[Any | None]
    actions: Mapped[Any | None]
    rewards: Mapped[Any | None]
    objective: Mapped[float | None]
    done: Mapped[bool]
    terminated: Mapped[bool | None]
    truncated: Mapped[bool | None]
    cut_by: Mapped[str | None]


class Checkpoint(Base):
    """A saved brain: file ``path`` (with its ``sha256``) of ``agent`` at
    ``episode``/``step`` of a phase; ``metric`` is what "best" compares
    (higher is better), ``best`` marks the best checkpoint of its phase and agent."""

    __table__ = _t.checkpoint

    id: Mapped[int]
    instance_id: Mapped[int]
    phase_id: Mapped[int | None]
    agent: Mapped[str]
    step: Mapped[int | None]
    episode: Mapped[int | None]
    path: Mapped[str]
    sha256: Mapped[str | None]
    metric: Mapped[float | None]
    best: Mapped[bool]
    created: Mapped[_dt.datetime]


class BrainSource(Base):
    """Lineage: where an agent's brain came from when a phase started.

    ``source_kind`` is ``fresh`` (new brain), ``previous_phase`` (kept from the
    previous phase of the same instance), ``checkpoint`` (loaded from another
    run's checkpoint: ``source_run_uid``, ``source_phase``,
    ``source_checkpoint_id``) or ``path`` (loaded from ``source_path``).
    """

    __table__ = _t.brain_source

    id: Mapped[int]
    instance_id: Mapped[int]
    phase_id: Mapped[int | None]
    agent: Mapped[str]
    source_kind: Mapped[str]
    source_run_uid: Mapped[str | None]
    source_phase: Mapped[str | None]
    source_checkpoint_id: Mapped[int | None]
    source_path: Mapped[str | None]
    source_sha256: Mapped[str | None]


class Claim(Base):
    """Work claiming: at most one owner per run version across processes and nodes.

    The unique (run uid, content hash) makes claiming an INSERT that either
    succeeds or fails; ``heartbeat`` lets others take over a stale claim.
    """

    __table__ = _t.claim

    id: Mapped[int]
    run_uid: Mapped[str]
    content_hash: Mapped[str]
    owner: Mapped[str]
    host: Mapped[str]
    pid: Mapped[int]
    heartbeat: Mapped[_dt.datetime]
    claimed_at: Mapped[_dt.datetime]


class StopRequest(Base):
    """A request to stop a running instance cleanly (``xrun dashboard``'s stop
    button, :meth:`store.runs.request_stop <xdoe.store.runs._runs.Runs.request_stop>`). The run's process polls it at
    episode ends (about every 2 s), records the instance ``interrupted``
    (resumable) and removes the request."""

    __table__ = _t.stop_request

    instance_id: Mapped[int]
    requested: Mapped[_dt.datetime]
    reason: Mapped[str | None]


class Rung(Base):
    """A rung a run with ``run_config.prune`` reached: its intermediate value
    and the decision (:mod:`xdoe.store.runs._rungs`)."""

    __table__ = _t.rung

    id: Mapped[int]
    instance_id: Mapped[int]
    phase_index: Mapped[int]
    rung: Mapped[int]
    step: Mapped[int]
    value: Mapped[float | None]
    pruned: Mapped[bool]
    peers: Mapped[int]
    created: Mapped[_dt.datetime]
