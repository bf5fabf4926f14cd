"""The :class:`Tracker` interface, what it is told (:class:`TrackedRun`,
:class:`EpisodeLog`) and the names both trackers give it."""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["TrackedRun", "EpisodeLog", "Tracker", "metric_tag", "env_step_tag", "param_value", "run_params",
           "run_tags", "key_part", "NO_EXPERIMENT", "ENDED_STATUSES"]

#: the statuses of an instance that has ended for good: a tracker's copy closed with one is complete
#: (``running`` and ``interrupted`` instances go on: live, or resumed as the same instance)
ENDED_STATUSES = ("finished", "failed", "pruned")

#: the experiment name of a run whose document names none (a hand-written one)
NO_EXPERIMENT = "no-experiment"


@dataclass(frozen=True)
class TrackedRun:
    """One xdoe run instance as a tracker opens it.

    Attributes:
        experiment: the experiment uid (``None``: a document without one).
        run: the run uid (the tracker's run name).
        instance: the run instance's uuid: one tracker run per instance (a
            resumed instance rewrites its own, another instance of the run
            is another).
        levels: the run's factor levels (``design_point.levels``).
        design_point, repetition, seed: from the document.
        content_hash: the run version.
        branch: a session of a tree: its label (``xrun export --include-branches``).
    """

    experiment: str | None
    run: str
    instance: str
    levels: dict[str, Any] = field(default_factory=dict)
    design_point: int | None = None
    repetition: int | None = None
    seed: int | None = None
    content_hash: str | None = None
    branch: str | None = None

    @property
    def experiment_name(self) -> str:
        return self.experiment or NO_EXPERIMENT

    @classmethod
    def of_document(cls, document: dict[str, Any], instance: str, content_hash: str | None = None) -> "TrackedRun":
        """The info of a run document (as the store records it) and its instance's uuid."""
        point = document.get("design_point") if isinstance(document.get("design_point"), dict) else {}
        levels = point.get("levels") if isinstance(point.get("levels"), dict) else {}
        seed = document.get("seed")
        return cls(experiment=document.get("experiment_uid") or None, run=str(document.get("uid")),
                   instance=instance, levels=dict(levels), design_point=_int(point.get("index")),
                   repetition=_int(point.get("repetition")), seed=_int(seed), content_hash=content_hash)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class EpisodeLog:
    """One finished episode of one worker for one agent, as a tracker logs it.

    ``episode`` is the worker's episode index in the phase (the step of the
    curves); ``env_step`` the worker's environment steps since the run
    began, this episode's included; ``reward``/``objective`` ``None`` when
    the store records them missing (non-finite)."""

    phase: str
    phase_index: int
    mode: str
    worker: int
    episode: int
    agent: str
    steps: int
    reward: float | None
    objective: float | None
    env_step: int
    #: the first row of its (worker, episode): ``env_step`` is logged once for all agents
    first_agent: bool = True


_NOT_IN_KEYS = re.compile(r"[^A-Za-z0-9_\-. ]|\.\.")


def key_part(name: str) -> str:
    """``name`` (a phase, agent or factor name: printable text without
    ``/``) with every character an MLflow key may not hold as ``_``."""
    return _NOT_IN_KEYS.sub("_", str(name)) or "_"


def metric_tag(phase: str, metric: str, agent: str, worker: int) -> str:
    """``training/reward/learner`` (``...learner.worker2`` for a worker other
    than 0; no tag is the folder of another: MLflow's file store keeps a
    metric as a file at its key's path): grouped by phase in TensorBoard,
    one curve per agent."""
    tag = f"{key_part(phase)}/{metric}/{key_part(agent)}"
    return tag if worker == 0 else f"{tag}.worker{worker}"


def env_step_tag(phase: str, worker: int) -> str:
    """``training/env_step`` (``training/env_step.worker2`` for a worker other than 0)."""
    tag = f"{key_part(phase)}/env_step"
    return tag if worker == 0 else f"{tag}.worker{worker}"


def param_value(level: Any) -> bool | int | float | str:
    """A factor level as a hyperparameter: a number, bool or string as it
    is, a one-item list (a schedule level ``[learner]``) as its item, else
    compact JSON."""
    if isinstance(level, list) and len(level) == 1 and isinstance(level[0], (str, int, float, bool)):
        level = level[0]
    if isinstance(level, (bool, int, float, str)):
        return level
    return json.dumps(level, sort_keys=True, separators=(",", ":"), default=str)


def run_params(info: TrackedRun) -> dict[str, bool | int | float | str]:
    """The run's factor levels as hyperparameters (an inactive conditional factor is absent)."""
    return {key_part(name): param_value(level) for name, level in sorted(info.levels.items()) if level is not None}


def run_tags(info: TrackedRun) -> dict[str, str]:
    """``xdoe.*`` tags naming the run: uid, experiment, instance, design point, repetition, seed."""
    tags = {"xdoe.run": info.run, "xdoe.experiment": info.experiment_name, "xdoe.instance": info.instance}
    for key, value in (("design_point", info.design_point), ("repetition", info.repetition),
                       ("seed", info.seed), ("content_hash", info.content_hash), ("branch", info.branch)):
        if value is not None:
            tags[f"xdoe.{key}"] = str(value)
    return tags


class Tracker(ABC):
    """One place runs are logged to (TensorBoard, MLflow): :meth:`open_run`
    once per run instance, :meth:`log_episode` per episode and agent,
    :meth:`close_run` with the instance's status; :meth:`end_others` (before
    the episodes) ends what dead instances of the run left open. One tracker object logs
    one run at a time; a tracker may buffer, and writes everything by
    :meth:`close_run` (or :meth:`flush`).

    ``open_run`` returns ``False`` when the destination holds this instance
    already and ``replace`` is false (``xrun export --to`` keeps it), else
    ``True``; with ``replace`` the instance's tracker run is written anew
    (``--overwrite``; a resumed instance, :func:`~xdoe.tracking.open_live`).
    """

    #: the log target's kind (``tensorboard``, ``mlflow``)
    kind: str = ""

    def __init__(self, where: str) -> None:
        self.where = where

    def __str__(self) -> str:
        return f"{self.kind}:{self.where}"

    @abstractmethod
    def open_run(self, info: TrackedRun, *, replace: bool = False) -> bool:
        """Start (or continue) the tracker's run of ``info``."""

    @abstractmethod
    def held(self, info: TrackedRun) -> str | None:
        """What the destination holds of ``info``'s instance: ``None``
        nothing; the status its copy was closed with when that is one of
        :data:`ENDED_STATUSES` (a complete copy); ``""`` a copy of an
        instance that had not ended (exported while it ran, a live log cut off)."""

    @abstractmethod
    def log_episode(self, episode: EpisodeLog) -> None:
        """Log one episode's reward, objective and steps (and, on its first agent, the env step)."""

    def flush(self) -> None:
        """Write what is buffered."""

    def end_others(self, info: TrackedRun, ended: Mapping[str, str]) -> None:
        """End the runs this destination holds of the *other* instances of
        ``info.run`` that are still open although their process is gone
        (killed: SIGKILL, out of memory, a lost node), before ``info``'s
        instance starts. ``ended``: instance uuid -> its status as the store
        has it (``finished``, ``failed``, ``pruned``, ``interrupted``; a
        process that died without recording its end counts as
        ``interrupted``); an instance running elsewhere is not in it. The
        copies are left incomplete (:meth:`held` is ``""``: ``xrun export
        --to`` writes them anew). The default does nothing: only a tracker
        whose runs have an open state (MLflow's RUNNING) overrides it."""

    @abstractmethod
    def close_run(self, status: str) -> None:
        """Write what is buffered and end the run with ``status`` (``finished``, ``failed``, ``interrupted``,
        ``pruned``; ``running``: an export of an instance still running, left open in the tracker); a status
        of :data:`ENDED_STATUSES` marks the copy complete (:meth:`held`)."""
