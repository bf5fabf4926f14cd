"""The figures of a :class:`~xdoe.TrainingSession` (a mixin): elapsed time,
steps per second, a summary and reward statistics of the last episodes."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from xdoe.errors import InputError

if TYPE_CHECKING:
    from xdoe.execution import CheckpointManager
    from xdoe.store import CheckpointInfo

__all__ = ["SessionFigures"]


def _positive(name: str, value: Any, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


class SessionFigures:
    """Figures of a training session (set by :class:`~xdoe.TrainingSession`)."""

    agent: str
    episodes: int
    steps: int
    checkpoints: "list[CheckpointInfo]"
    manager: "CheckpointManager | None"
    _rewards: Any
    _best: float | None
    _elapsed: float | None
    _started: float | None
    _phases: list[dict[str, Any]]

    def elapsed(self) -> float:
        """Seconds since :meth:`start` (frozen at :meth:`finish`)."""
        if self._elapsed is not None:
            return self._elapsed
        return 0.0 if self._started is None else time.perf_counter() - self._started

    def steps_per_sec(self) -> float:
        """Steps per second of wall time since the start (0.0 before any time passed)."""
        elapsed = self.elapsed()
        return self.steps / elapsed if elapsed > 0 else 0.0

    def stats_summary(self) -> dict[str, Any]:
        """``episodes``, ``steps``, ``mean_reward`` (all episodes), ``last_reward``,
        ``best`` (best rolling mean reward of the phase that was saved, or
        ``None``), ``metric`` (current rolling mean), ``elapsed`` (s),
        ``steps_per_sec``, ``checkpoints`` (saved so far), ``phase``."""
        rewards = self._rewards
        return {
            "episodes": self.episodes,
            "steps": self.steps,
            "mean_reward": (sum(rewards) / len(rewards)) if rewards else None,
            "last_reward": rewards[-1] if rewards else None,
            "best": self._best,
            "metric": None if self.manager is None else self.manager.metric(self.agent),
            "elapsed": self.elapsed(),
            "steps_per_sec": self.steps_per_sec(),
            "checkpoints": len(self.checkpoints),
            "phase": self._phases[-1]["name"],
        }

    def eval_report(self, n_episodes: int = 10) -> dict[str, Any]:
        """Reward statistics over the last ``n_episodes`` episodes: ``n`` (how
        many there were), ``mean``, ``std`` (population), ``min``, ``max``
        (``None`` when there are none).

        Raises:
            InputError: ``n_episodes`` is not a positive integer.
        """
        n = _positive("n_episodes", n_episodes, allow_none=False)
        assert n is not None
        last = self._rewards[-n:]
        if not last:
            return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
        mean = sum(last) / len(last)
        std = math.sqrt(sum((x - mean) ** 2 for x in last) / len(last))
        return {"n": len(last), "mean": mean, "std": std, "min": min(last), "max": max(last)}
