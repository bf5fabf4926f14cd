"""What a run's recorder tells its observers (:class:`RecorderObserver`)."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["RecorderObserver"]


class RecorderObserver(Protocol):
    """What a :class:`~xdoe.store.RunRecorder` tells the observers in its
    ``observers`` list, in the run's process and order, as it records them
    (:mod:`xdoe.tracking` logs them to TensorBoard and MLflow). Values are
    as stored: a non-finite ``reward``/``objective`` arrives as ``None``.
    An observer must not raise: the recorder does not catch for it."""

    def phase_started(self, index: int, name: str, mode: str, config: dict[str, Any]) -> None:
        """A phase started, or a resumed instance continues it."""

    def episode_finished(self, worker: int, episode: int, agent: str, steps: int,
                         reward: float | None, objective: float | None) -> None:
        """One worker's episode ended for one agent (recorded in the open phase)."""

    def run_finished(self, status: str) -> None:
        """The instance ended with ``status`` (``finished``, ``failed``, ``interrupted``)."""
