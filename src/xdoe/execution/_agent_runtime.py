"""The run-time state of one agent in one worker (:class:`AgentRuntime`, the
executor's adapter of its brain, muscle and objective) and small helpers of
the step (reward routing and sums, actuator bounds)."""

from __future__ import annotations

from typing import Any, Callable

from xdoe.agent import Brain, Experience, Muscle, Objective
from xdoe._plugins import int_range, is_derived, propose_through_objects, think_through_objects
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

__all__ = ["AgentRuntime", "COMPLETE", "GOING_ON", "PROPOSE", "brain_step", "batches", "own_rewards", "sum_rewards"]

#: ``Worker.act``'s ``proposed``: the muscle proposes (the default), or only complete the transition
PROPOSE: Any = object()
COMPLETE: Any = object()
#: ``Worker.act``'s ``end`` while the episode goes on: ``(done, truncated, cut_by)``
GOING_ON: tuple[bool, bool, str | None] = (False, False, None)


class AgentRuntime:
    """One agent in one worker: its muscle and the transition in progress,
    held as values (``xdoe._plugins._forms``: the plain value of a single
    sensor or actuator, else a dict ``uid -> value``; rewards ``uid -> float``).

    The executor's adapter of the agent's plugins: it holds the ids and
    spaces of the agent's sensors and actuators and calls the form of each
    method the plugin's class wrote, a value form directly, an object form
    (``propose_actions``, ``thinking``) with the information objects it
    builds from the values (:func:`xdoe._plugins.propose_through_objects`);
    nothing is written into the plugin objects."""

    __slots__ = (
        "name", "brain", "muscle", "muscles", "objective", "sensor_ids", "sensor_specs", "templates",
        "spaces", "sensor_env", "reward_envs", "reward_env", "transition",
        "t_rewards", "t_objective", "ep_reward", "ep_objective",
        "actuator_ids", "all_rewards", "left", "propose", "think", "internal", "propose_form",
        "think_form", "internal_form", "actuator_id", "bounds", "write_step", "actuator_specs",
        "low", "high", "action_slot",
    )

    def __init__(self, name: str, brain: Brain, muscle: Muscle, muscles: list[Muscle],
                 objective: Objective, sensors: list[SensorInformation], actuators: list[ActuatorInformation],
                 sensor_env: int, reward_envs: list[int]) -> None:
        self.name = name
        self.brain = brain
        self.muscle = muscle
        self.muscles = muscles  # every muscle of the agent (all workers)
        self.objective = objective
        self.sensor_ids = [s.uid for s in sensors]
        self.sensor_specs = tuple((s.uid, s.space) for s in sensors)
        self.templates = actuators
        self.actuator_specs = tuple((a.uid, a.space) for a in actuators)
        self.spaces = {a.uid: _bounds(a.space) for a in actuators}
        #: the only actuator's id and ``(space, low, high)``, else ``None`` (the
        #: value form of the agent's actions is then a dict)
        self.actuator_id = actuators[0].uid if len(actuators) == 1 else None
        self.bounds = self.spaces[self.actuator_id] if self.actuator_id is not None else None
        #: the only actuator's Python-int range ``low <= action < high`` (a ``Discrete`` space),
        #: else the empty range ``(1, 0)``: every action then goes through the space's ``contains``
        _, self.low, self.high = self.bounds if self.bounds is not None else (None, 1, 0)
        #: the index of the environment whose only actuator is the agent's only actuator (the
        #: action is that environment's whole input, ``Worker.env_actions``), else -1; bound by the worker
        self.action_slot = -1
        self.sensor_env = sensor_env  # >= 0: the agent sees exactly that env's sensors, in order
        self.reward_envs = reward_envs
        self.reward_env = reward_envs[0] if len(reward_envs) == 1 else -1
        # the value forms the executor calls, and the names of the forms the classes wrote (for errors)
        self.propose = muscle.propose_values if not is_derived(type(muscle), "propose_values") \
            else self._propose_through_objects
        self.think = brain_step(brain, self.sensor_specs, self.actuator_specs)
        self.internal = objective.internal_reward_values
        self.propose_form = _written(muscle, "propose_actions", "propose_values")
        self.think_form = _written(brain, "thinking", "thinking_values")
        self.internal_form = _written(objective, "internal_reward", "internal_reward_values")
        #: the transition in progress, from the agent's action until it completes:
        #: ``(step, observation, action, extras)`` (the step it acted at, the values it acted on and
        #: proposed, its muscle's extras or ``None``); ``None`` when no transition is pending
        self.transition: tuple[int, Any, Any, dict[str, Any] | None] | None = None
        #: the rewards and the objective of the updates since the agent acted (``t_rewards`` ``None``:
        #: none yet; ``t_objective`` is then left from an earlier transition)
        self.t_rewards: dict[str, float] | None = None
        self.t_objective = 0.0
        self.ep_reward = 0.0
        self.ep_objective = 0.0
        self.actuator_ids = frozenset(a.uid for a in actuators)
        #: the objective sees every reward of the agent's environments, not only its own
        self.all_rewards = bool(getattr(objective, "all_rewards", False))
        #: ``None`` while in the episode; True/False (truncated/terminated) once it left
        self.left: bool | None = None
        #: the recorder's writer of the agent's step rows in its worker (``Worker.step_writer``), ``None``: not stored
        self.write_step: Callable[..., None] | None = None


    def _propose_through_objects(self, observation: Any) -> Any:
        """The value form of the muscle's ``propose_actions`` (its class wrote that form)."""
        return propose_through_objects(self.muscle.propose_actions, observation, self.sensor_specs,
                                       self.actuator_specs, (SensorInformation, ActuatorInformation), self.name)


def brain_step(brain: Brain, sensors: tuple[tuple[str, Any], ...],
               actuators: tuple[tuple[str, Any], ...]) -> Callable[..., Any]:
    """What the executor calls for one step of ``brain`` (the arguments of
    :meth:`~xdoe.agent.Brain.thinking_values`): that method when the brain's
    class wrote it, else its ``thinking`` with an ``Experience`` of the
    information objects of the agent's ``sensors`` and ``actuators``
    (``(uid, space)`` pairs)."""
    if not is_derived(type(brain), "thinking_values"):
        return brain.thinking_values
    thinking, kinds = brain.thinking, (Experience, SensorInformation, ActuatorInformation, RewardInformation)

    def step(*values: Any) -> Any:
        return think_through_objects(thinking, values, sensors, actuators, kinds)
    return step


def _written(obj: Any, general: str, value: str) -> str:
    """The name of the form of the pair ``(general, value)`` that ``obj``'s
    class wrote: ``general`` when its ``value`` form is derived from it."""
    return general if is_derived(type(obj), value) else value


def batches(cls: type) -> bool:
    """Whether the muscle class ``cls`` overrides :meth:`Muscle.propose_batch`
    (acts for the workers of a round in one pass)."""
    return getattr(cls.propose_batch, "__func__", None) is not Muscle.propose_batch.__func__


def own_rewards(agent: AgentRuntime, rewards: list[RewardInformation]) -> list[RewardInformation]:
    """The rewards ``agent`` receives: shared ones and those owned by its actuators."""
    ids = agent.actuator_ids
    return [r for r in rewards if r.owner is None or r.owner in ids]


def _bounds(space: Any) -> tuple[Any, int, int]:
    """``(space, low, high)``: a Python int with ``low <= value < high`` is in
    ``space`` (:func:`~xdoe._plugins.int_range`, empty unless ``Discrete``)."""
    return (space, *int_range(space))


def sum_rewards(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """The rewards of two updates within one transition, summed per id (in
    the order of first appearance)."""
    totals = {uid: float(value) for uid, value in a.items()}
    for uid, value in b.items():
        totals[uid] = totals[uid] + float(value) if uid in totals else float(value)
    return totals
