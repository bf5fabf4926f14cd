"""What an agent optimises: :class:`Objective`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from xdoe._plugins import derive_forms, retire_value_steps
from xdoe.environment import RewardInformation

__all__ = ["Objective"]


class Objective(ABC):
    """Turns the rewards an agent receives into its objective value.

    Constructed as ``Cls(**params)``. When an environment attributes rewards
    per agent (``RewardInformation.owner``), :meth:`internal_reward` gets the
    agent's own and the shared rewards only, unless :attr:`all_rewards` is
    true (then every reward of the agent's environments).

    Two forms: write :meth:`internal_reward` (``RewardInformation`` objects)
    or :meth:`internal_reward_values` (a dict ``uid -> value``); the class
    gets the other form derived from the one its body defines. The executor
    calls :meth:`internal_reward_values`.
    """

    #: see every reward of the agent's environments, not only the agent's own
    all_rewards: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        retire_value_steps(cls, ("value_steps", "internal_reward_value"), {})
        derive_forms(cls, "internal_reward", "internal_reward_values", _internal_reward_values_of,
                     _internal_reward_of)

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"unexpected parameters: {', '.join(sorted(params))}")

    @abstractmethod
    def internal_reward(self, rewards: list[RewardInformation]) -> float:
        """The agent's objective value of one step: what its brain maximises.

        The object form; write this or :meth:`internal_reward_values`, the
        class gets the other. Called after every environment update of the
        agent's worker (one objective per agent and worker), in both modes;
        the value goes into the agent's :class:`~xdoe.agent.Experience`, its
        episode's ``objective`` sum in the store and termination conditions'
        ``StepProgress.objectives``.

        Args:
            rewards (list[RewardInformation]): the rewards of this update of
                the environments the agent acts on: its own (``owner`` one
                of its actuators) and the shared ones (``owner=None``); every
                reward of those environments when :attr:`all_rewards` is
                true. May be empty.

        Returns:
            objective (float): the objective value of the step (converted with
                ``float()``; keep it finite).

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``objective.internal_reward``.

        Examples:
            >>> from xdoe.agent import Objective
            >>> from xdoe.environment import RewardInformation
            >>> class CostlySteps(Objective):
            ...     # The summed rewards minus a cost per step.
            ...     def __init__(self, cost: float = 0.1):
            ...         super().__init__()
            ...         self.cost = cost
            ...     def internal_reward(self, rewards):
            ...         return sum(r.value for r in rewards) - self.cost
            >>> CostlySteps(cost=0.5).internal_reward([RewardInformation("walk.reward", 1.0),
            ...                                        RewardInformation("walk.bonus", 2.0)])
            2.5
        """

    @abstractmethod
    def internal_reward_values(self, rewards: dict[str, float]) -> float:
        """The agent's objective value of one step, from rewards as plain values (the value form).

        :meth:`internal_reward` with the rewards as a dict: what the executor
        calls after every update. Write this or :meth:`internal_reward`; the
        class gets the other.

        Args:
            rewards (dict[str, float]): ``reward id -> value`` of the rewards
                the agent receives this update (see :meth:`internal_reward`;
                may be empty).

        Returns:
            objective (float): the objective value of the step (keep it finite).

        Raises:
            Exception: anything it raises fails the run with a
                :class:`~xdoe.errors.RunError` naming the agent and
                ``objective.internal_reward_values``.

        Examples:
            >>> from xdoe.agent import Objective
            >>> class Weighted(Objective):
            ...     # A weighted sum of named rewards; others count once.
            ...     def __init__(self, weights=None):
            ...         super().__init__()
            ...         self.weights = dict(weights or {})
            ...     def internal_reward_values(self, rewards):
            ...         return sum(self.weights.get(uid, 1.0) * value for uid, value in rewards.items())
            >>> Weighted(weights={"grid.cost": -2.0}).internal_reward_values({"grid.cost": 1.5, "grid.comfort": 1.0})
            -2.0
        """


# -- the derived forms (xdoe._plugins.derive_forms) ----------------

def _internal_reward_values_of(own: Any) -> Any:
    def internal_reward_values(self: Objective, rewards: dict[str, float]) -> float:
        return own(self, [RewardInformation(uid, value) for uid, value in rewards.items()])
    return internal_reward_values


def _internal_reward_of(own: Any) -> Any:
    def internal_reward(self: Objective, rewards: list[RewardInformation]) -> float:
        return own(self, {r.uid: r.value for r in rewards})
    return internal_reward
