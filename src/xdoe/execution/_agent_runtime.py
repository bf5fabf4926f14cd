"""The run-time state of one agent in one worker (:class:`AgentRuntime`) and
small helpers of the step (reward routing and sums, actuator bounds)."""

from __future__ import annotations

from typing import Any

from xdoe.agent import Brain, Muscle, Objective
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

__all__ = ["AgentRuntime", "keeps_actuators", "own_rewards", "sum_rewards"]


class AgentRuntime:
    """One agent in one worker: its muscle and the transition in progress."""

    __slots__ = (
        "name", "brain", "muscle", "muscles", "objective", "sensor_ids", "templates",
        "spaces", "sensor_env", "reward_envs", "reward_env", "pending", "t_sensors",
        "t_actions", "t_rewards", "t_objective", "t_step", "t_updates", "ep_reward",
        "ep_objective", "t_extras", "actuator_ids", "all_rewards", "left", "fixed_templates",
    )

    def __init__(self, name: str, brain: Brain, muscle: Muscle, muscles: list[Muscle],
                 objective: Objective, sensor_ids: list[str], actuators: list[ActuatorInformation],
                 sensor_env: int, reward_envs: list[int]) -> None:
        self.name = name
        self.brain = brain
        self.muscle = muscle
        self.muscles = muscles  # every muscle of the agent (all workers)
        self.objective = objective
        self.sensor_ids = sensor_ids
        self.templates = actuators
        #: the actuators handed to a muscle that keeps them (``Muscle.keeps_actuators``)
        #: at every step, else ``None``: fresh copies of ``templates`` each step
        self.fixed_templates = ([ActuatorInformation(a.uid, a.space) for a in actuators]
                                if keeps_actuators(muscle) else None)
        self.spaces = {a.uid: _bounds(a.space) for a in actuators}
        self.sensor_env = sensor_env  # >= 0: the agent sees exactly that env's sensors, in order
        self.reward_envs = reward_envs
        self.reward_env = reward_envs[0] if len(reward_envs) == 1 else -1
        self.pending = False
        self.t_sensors: list[SensorInformation] = []
        self.t_actions: list[ActuatorInformation] = []
        self.t_rewards: list[RewardInformation] | None = None
        self.t_objective = 0.0
        self.t_step = 0
        self.t_updates = 0
        self.ep_reward = 0.0
        self.ep_objective = 0.0
        self.t_extras: dict[str, Any] | None = None
        self.actuator_ids = frozenset(a.uid for a in actuators)
        #: the objective sees every reward of the agent's environments, not only its own
        self.all_rewards = bool(getattr(objective, "all_rewards", False))
        #: ``None`` while in the episode; True/False (truncated/terminated) once it left
        self.left: bool | None = None


def keeps_actuators(muscle: Muscle) -> bool:
    """Whether ``muscle`` declares :attr:`Muscle.keeps_actuators` for the
    ``propose_actions`` it runs: on the instance, or on the class defining that
    method or a subclass of it. A subclass that overrides ``propose_actions``
    (say, to set values on the actuators it is given) without declaring it
    again gets fresh copies, whatever its parent declared."""
    if getattr(muscle, "keeps_actuators", False) is not True:
        return False
    if "keeps_actuators" in getattr(muscle, "__dict__", {}):
        return True
    for cls in type(muscle).__mro__:
        if "keeps_actuators" in vars(cls):
            return vars(cls)["keeps_actuators"] is True
        if "propose_actions" in vars(cls):
            return False  # overridden below the class that declared it
    return False


def own_rewards(agent: AgentRuntime, rewards: list[RewardInformation]) -> list[RewardInformation]:
    """The rewards ``agent`` receives: shared ones and those owned by its actuators."""
    ids = agent.actuator_ids
    return [r for r in rewards if r.owner is None or r.owner in ids]


def _bounds(space: Any) -> tuple[Any, int | None, int | None]:
    """``(space, low, high)``; for a ``Discrete`` space ``low <= value < high``
    is the whole membership test of a Python int."""
    from gymnasium.spaces import Discrete

    if type(space) is Discrete:
        return space, int(space.start), int(space.start + space.n)
    return space, None, None


def sum_rewards(a: list[RewardInformation], b: list[RewardInformation]) -> list[RewardInformation]:
    totals: dict[str, RewardInformation] = {}
    for r in a:
        totals[r.uid] = RewardInformation(r.uid, float(r.value), r.space)
    for r in b:
        if r.uid in totals:
            totals[r.uid].value += float(r.value)
        else:
            totals[r.uid] = RewardInformation(r.uid, float(r.value), r.space)
    return list(totals.values())
