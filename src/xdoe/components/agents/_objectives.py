"""Objectives: environment rewards -> an agent's objective value."""

from __future__ import annotations

from xdoe.agent import Objective

__all__ = ["RewardObjective"]


class RewardObjective(Objective):
    """The sum of the rewards the agent receives.

    Parameters:
        reward_ids: full reward ids to add up (e.g. ``["ttt.reward_x"]``),
            chosen among every reward of the agent's environments, including
            rewards attributed to other agents; ``None`` (default): the sum of
            the agent's own rewards (when an environment attributes rewards
            per agent, see :class:`xdoe.environment.RewardInformation`
            ``owner``, only those owned by the agent's actuators and the shared
            ones; otherwise every reward it receives).

    Returns a float in the rewards' units.

    Raises:
        ValueError: a listed id is not among the rewards received (the message
            names the missing ids and those received); ``reward_ids`` is not a
            list of strings.
    """

    def __init__(self, reward_ids: list[str] | None = None) -> None:
        super().__init__()
        if reward_ids is not None:
            if isinstance(reward_ids, str) or not all(isinstance(r, str) for r in reward_ids):
                raise ValueError(f"reward_ids must be a list of reward ids, got {reward_ids!r}")
            reward_ids = list(reward_ids)
        self.reward_ids = reward_ids
        #: with explicit ids the executor hands every reward, not only the agent's own
        self.all_rewards = reward_ids is not None

    def internal_reward_values(self, rewards: dict[str, float]) -> float:
        """The objective of the rewards ``uid -> value`` (``internal_reward``,
        on information objects, is derived from this)."""
        if self.reward_ids is not None:
            return self._listed_sum(rewards)
        # the executor's episode reward is the same sum (``sum(rewards.values(), 0.0)``), so that
        # the two agree to the last bit on every Python (3.12's ``sum`` of floats is compensated)
        total = sum(rewards.values(), 0.0)
        return total if type(total) is float else float(total)

    def _listed_sum(self, rewards: dict[str, float]) -> float:
        """The sum of the rewards :attr:`reward_ids` lists (apart: its comprehensions would make
        ``rewards`` a cell variable of :meth:`internal_reward_values`, a cell made at every step)."""
        reward_ids = self.reward_ids
        assert reward_ids is not None
        missing = [uid for uid in reward_ids if uid not in rewards]
        if missing:
            raise ValueError(
                f"RewardObjective: unknown reward ids {missing}; received {sorted(rewards)}"
            )
        return float(sum(float(rewards[uid]) for uid in reward_ids))
