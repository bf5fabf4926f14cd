"""Budgets and checkpoints of a :class:`~xdoe.TrainingSession` (a mixin):
checkpoints every ``checkpoint_every`` steps, on a new best rolling mean, or on
request, through the run's :class:`~xdoe.execution._checkpoints.CheckpointManager`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from xdoe.store import CheckpointInfo

if TYPE_CHECKING:
    from xdoe.execution import CheckpointManager

__all__ = ["SessionCheckpoints"]


class SessionCheckpoints:
    """Budgets and checkpoints of a training session (state set by :class:`~xdoe.TrainingSession`)."""

    manager: "CheckpointManager | None"
    brain: Any
    agent: str
    phase_index: int
    phase_steps: int
    phase_episodes: int
    checkpoint_every: int | None
    max_steps: int | None
    max_episodes: int | None
    steps: int
    episodes: int
    checkpoints: list[CheckpointInfo]
    _next_checkpoint: int | None
    _best: float | None

    def _require_running(self) -> None:
        raise NotImplementedError  # TrainingSession's

    def _after_steps(self) -> None:
        every = self.checkpoint_every
        if every is None or self._next_checkpoint is None or self.steps < self._next_checkpoint:
            return
        self.save_checkpoint()
        self._next_checkpoint = (self.steps // every + 1) * every

    # -- budgets ------------------------------------------------------------------
    def is_done(self) -> bool:
        """True once ``max_steps`` steps or ``max_episodes`` episodes were recorded."""
        return ((self.max_steps is not None and self.steps >= self.max_steps)
                or (self.max_episodes is not None and self.episodes >= self.max_episodes))

    # -- checkpoints -----------------------------------------------------------------
    def save_checkpoint(self, metric: float | None = None) -> CheckpointInfo:
        """Save the brain now (``metric`` default: the rolling mean reward).

        Raises:
            RunError: the brain cannot be stored.
        """
        self._require_running()
        assert self.manager is not None
        info = self.manager.save(self.brain, agent=self.agent, phase_index=self.phase_index,
                                 step=self.phase_steps, episode=self.phase_episodes, metric=metric)
        self.checkpoints.append(info)
        return info

    def maybe_save_best(self, mean_reward: float | None = None) -> bool:
        """Save a checkpoint when ``mean_reward`` (default: the mean reward
        over the last ``best_window`` episodes) beats every earlier value of
        this phase. Returns whether it saved."""
        if mean_reward is None:
            assert self.manager is not None
            mean_reward = self.manager.metric(self.agent)
        if mean_reward is None or math.isnan(mean_reward):
            return False
        if self._best is not None and mean_reward <= self._best:
            return False
        self._best = float(mean_reward)
        self.save_checkpoint(metric=float(mean_reward))
        return True
