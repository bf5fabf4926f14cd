"""What the experiment document and the run document share: a component,
the simulation, and the fields of an agent, a ``phase_config`` and a
``run_config`` that are the same at both stages.

Each stage has its own types, named by its stage (``Experiment*`` in
:mod:`xdoe.documents._experiment_models`, ``Run*`` in
:mod:`xdoe.documents._run`); what is the same at both is declared here once:
:class:`Component` and :class:`Simulation` serve both stages as they are, and
the stage types of an agent, a ``phase_config`` and a ``run_config`` derive
from :class:`AgentBase`, :class:`PhaseConfigBase` and :class:`RunConfigBase`,
adding or narrowing only what differs (a run document's agent has a required
``name`` and its ``sensors``/``actuators``; an experiment's ``mode`` is one
of two words, a run document's any case of them).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from xdoe.documents._log_targets import check_log
from xdoe.documents._prune import RUN_CONFIG_SHAPE, PruneSpec
from xdoe.documents._validation import (MAX_EPISODES, MAX_WORKERS, DocumentModel, Integer, Seconds, empty_list,
                                           empty_name_means_none, null_means, refuse_named_definitions)

__all__ = ["Component", "Simulation", "AgentBase", "PhaseConfigBase", "RunConfigBase"]


class Component(DocumentModel):
    """A component: ``name`` is ``package.module:Class`` (or a full module
    path), ``params`` the keyword arguments of its constructor (a null
    ``params:`` is none)."""

    name: str = Field(min_length=1, description="import path, 'package.module:Class'")
    params: Annotated[dict[str, Any], null_means(dict)] = Field(default_factory=dict,
                                                                description="constructor keyword arguments")


class Simulation(DocumentModel):
    """The simulation controller (``name``, ``params`` kept as an extra key)
    and its termination conditions."""

    #: the controller's keyword arguments (read by :func:`xdoe.execution.plan_run`; not a field, so that a
    #: document without them keeps its content hash)
    passed_keys: ClassVar[tuple[str, ...]] = ("params",)

    name: str = Field(min_length=1)
    conditions: Annotated[list[Component], null_means(list)] = Field(default_factory=empty_list)


class AgentBase(DocumentModel):
    """An agent's parts: ``brain``, ``muscle`` and ``objective``; ``load``
    and ``replay`` pass through unchanged (:mod:`xdoe.documents._lineage_specs`
    reads them). ``name`` is optional here (an experiment's agent is named
    after its definition key); a run document's agent requires it."""

    name: str | None = Field(default=None, description="agent name (default: the definition key)")
    brain: Component
    muscle: Component
    objective: Component
    load: Any = None
    replay: Any = None


class PhaseConfigBase(DocumentModel):
    """``mode`` (train or test), ``worker`` (copies of the environments, each
    with its own muscle), ``episodes`` (per worker) and ``step_timeout``
    (seconds one call into a component may take, i.e. without a step; off
    when absent: :mod:`xdoe.execution._watchdog`), ``observation_check``
    (``warn``, the default, ``error`` or ``off``: what a sensor value outside
    its space does, :mod:`xdoe._plugins._observations`); the executor's
    options ``checkpoint_every``, ``keep_checkpoints``, ``best_window`` and a
    session's ``max_steps`` pass through (:data:`passed_keys`, checked where
    they are read); any other key is unknown (a warning, an error with
    ``--strict``, or when a few edits from a known key)."""

    passed_keys: ClassVar[tuple[str, ...]] = ("best_window", "checkpoint_every", "keep_checkpoints", "max_steps")

    mode: str = "train"
    worker: Integer = Field(default=1, ge=1, le=MAX_WORKERS)
    episodes: Integer = Field(default=1, ge=1, le=MAX_EPISODES)
    step_timeout: Seconds | None = None
    observation_check: Literal["warn", "error", "off"] | None = None


class RunConfigBase(DocumentModel):
    """Run-wide settings: ``condition`` ends the whole run; ``timeout``:
    seconds the whole run may take (off when absent:
    :mod:`xdoe.execution._watchdog`); ``log``: ``tensorboard:DIR`` /
    ``mlflow:URI`` targets the run's episodes are logged to as they happen;
    ``prune``: end poor runs early (:mod:`xdoe.documents._prune`). Any
    other key is unknown (nothing reads it: a warning, an error with
    ``--strict``, or when a few edits from a known key)."""

    condition: Annotated[Component | None, empty_name_means_none] = None
    timeout: Seconds | None = None
    #: where the run's episodes are logged besides the store (docs/tracking.md)
    log: list[str] | str | None = None  # one target or a list; checked and made a list by check_log
    prune: PruneSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_mapping(cls, value: Any) -> Any:
        return refuse_named_definitions(value, ("condition", "timeout", "log", "prune"), "run_config",
                                        RUN_CONFIG_SHAPE)

    @field_validator("log", mode="before")
    @classmethod
    def _log(cls, value: Any) -> Any:
        return check_log(value)
