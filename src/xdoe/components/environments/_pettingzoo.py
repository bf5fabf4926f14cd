"""Any PettingZoo environment (AEC or parallel API) as an xdoe environment."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.environment import (
    ActuatorInformation,
    Environment,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)
from xdoe.components.environments._gymnasium import jsonable_info

__all__ = ["PettingZooEnvironment"]


def _value(space: spaces.Space, value: Any) -> Any:
    if isinstance(space, spaces.Discrete):
        return int(np.asarray(value).item())
    return value


class PettingZooEnvironment(Environment):
    """A PettingZoo environment: ``<env>.env(**env_kwargs)`` (AEC API) or
    ``<env>.parallel_env(**env_kwargs)`` (parallel API).

    Parameters:
        uid: the environment uid (prefix of every id).
        seed: seeds :attr:`rng`; every episode's ``reset(seed=...)`` gets an
            integer drawn from it, so the same seed gives the same episodes.
        env: a module path such as ``pettingzoo.classic.tictactoe_v3`` or
            ``pettingzoo.classic.rps_v2``.
        env_kwargs: keyword arguments of ``env()`` / ``parallel_env()``.
        api: ``aec`` or ``parallel``; default: ``parallel`` when the module
            has ``parallel_env``, else ``aec``.

    Ids, per PettingZoo agent ``<agent>`` (``possible_agents``):

    - sensor ``<uid>.<agent>.observation``: ``observe(agent)`` (AEC) or the
      agent's observation (parallel), with ``observation_space(agent)``; when
      that space is a ``Dict`` holding ``observation`` and ``action_mask``
      (PettingZoo's convention for legal moves), the sensor holds the
      ``observation`` part and a sensor ``<uid>.<agent>.action_mask`` the mask
      (1 = allowed; the built-in muscles honour it);
    - actuator ``<uid>.<agent>.action`` with ``action_space(agent)``;
    - reward ``<uid>.<agent>.reward`` (the step's reward of that agent,
      ``owner`` = its actuator: each xdoe agent receives only its own).

    AEC (run it under ``TakingTurnsSimController``, agents listed in the
    environment's turn order): an update applies the action of the agent to
    move (``agent_selection``) and ignores the others; one without it
    changes nothing. Parallel (``VanillaSimController``): an update steps
    every live agent with its action at once.

    Agents leaving: an agent terminated or truncated while others play on is
    reported in the state's ``left`` (it stops acting); in AEC its dead step
    (``step(None)``) is taken by the environment, as PettingZoo requires; in
    parallel it gets no more actions. The episode is over when no agent is
    left: ``terminated`` unless an agent was truncated (then ``truncated``).
    Sensors of agents that left keep their last reading.

    Raises:
        ValueError: the module cannot be imported or lacks the API asked
            for; ``api`` is not ``aec``/``parallel``; a live agent's action is
            missing in a parallel update.
    """

    def __init__(self, uid: str, seed: int, env: str, env_kwargs: dict[str, Any] | None = None,
                 api: str | None = None) -> None:
        super().__init__(uid=uid, seed=seed)
        try:
            module = importlib.import_module(env)
        except ImportError as exc:
            raise ValueError(f"env {env!r} cannot be imported: {exc}") from exc
        if api is None:
            api = "parallel" if hasattr(module, "parallel_env") else "aec"
        if api not in ("aec", "parallel"):
            raise ValueError(f"api must be 'aec' or 'parallel', got {api!r}")
        factory = getattr(module, "env" if api == "aec" else "parallel_env", None)
        if factory is None:
            raise ValueError(f"{env} offers no {'env' if api == 'aec' else 'parallel_env'}() for api {api!r}")
        try:
            self.env = factory(**(env_kwargs or {}))
        except TypeError as exc:
            raise ValueError(f"{env}: {exc}") from exc
        self.api = api
        self.agents = list(self.env.possible_agents)
        self._masked: dict[str, bool] = {}
        self._spaces: dict[str, spaces.Space] = {}
        for agent in self.agents:
            space = self.env.observation_space(agent)
            masked = isinstance(space, spaces.Dict) and {"observation", "action_mask"} <= set(space.spaces)
            self._masked[agent] = masked
            self._spaces[agent] = space["observation"] if masked else space
        self._readings: dict[str, SensorInformation] = {}
        self._gone: set[str] = set()
        self._cut = False  # an agent was truncated this episode

    # -- ids ----------------------------------------------------------------------
    def _id(self, agent: str, name: str) -> str:
        return f"{self.uid}.{agent}.{name}"

    def _read(self, agent: str, observation: Any) -> None:
        if self._masked[agent]:
            mask_space = self.env.observation_space(agent)["action_mask"]
            self._readings[self._id(agent, "action_mask")] = SensorInformation(
                self._id(agent, "action_mask"), mask_space, observation["action_mask"])
            observation = observation["observation"]
        space = self._spaces[agent]
        self._readings[self._id(agent, "observation")] = SensorInformation(
            self._id(agent, "observation"), space, _value(space, observation))

    def _sensors(self) -> list[SensorInformation]:
        out = []
        for agent in self.agents:
            out.append(self._readings[self._id(agent, "observation")])
            if self._masked[agent]:
                out.append(self._readings[self._id(agent, "action_mask")])
        return out

    def _rewards(self, values: dict[str, float]) -> list[RewardInformation]:
        return [RewardInformation(self._id(a, "reward"), float(values.get(a, 0.0)), owner=self._id(a, "action"))
                for a in self.agents]

    # -- lifecycle -------------------------------------------------------------------
    def start_environment(self) -> EnvironmentBaseline:
        """Reset (seeded from :attr:`rng`) and read every agent's observation."""
        seed = int(self.rng.integers(2**31 - 1))
        self._gone = set()
        self._cut = False
        if self.api == "aec":
            self.env.reset(seed=seed)
            for agent in self.agents:
                self._read(agent, self.env.observe(agent))
            info = {}
        else:
            observations, infos = self.env.reset(seed=seed)
            for agent in self.agents:
                self._read(agent, observations[agent])
            info = jsonable_info({a: jsonable_info(i) for a, i in infos.items()})
        actuators = [ActuatorInformation(self._id(a, "action"), self.env.action_space(a)) for a in self.agents]
        return EnvironmentBaseline(self._sensors(), actuators, info)

    def update(self, actuators: list[ActuatorInformation]) -> EnvironmentState:
        """One AEC turn or one parallel step (see the class docstring)."""
        actions = {a.uid: a.value for a in actuators if a.value is not None}
        if self.api == "aec":
            rewards, terminated, truncated = self._aec(actions)
        else:
            rewards, terminated, truncated = self._parallel(actions)
        left = {self._id(a, "action"): a in truncated for a in (*terminated, *truncated)}
        self._cut = self._cut or bool(truncated)
        over = len(self._gone) == len(self.agents)
        return EnvironmentState(self._sensors(), self._rewards(rewards), over and not self._cut, {},
                                truncated=over and self._cut, left=left)

    def _aec(self, actions: dict[str, Any]) -> tuple[dict[str, float], list[str], list[str]]:
        env = self.env
        if not env.agents:
            raise RuntimeError("the episode is over; call start_environment() first")
        mover = env.agent_selection
        action_id = self._id(mover, "action")
        if action_id not in actions:
            return {}, [], []
        env.step(actions[action_id])
        rewards = {a: float(r) for a, r in env.rewards.items()}
        terminated = [a for a in env.agents if env.terminations.get(a) and a not in self._gone]
        truncated = [a for a in env.agents if env.truncations.get(a) and not env.terminations.get(a)
                     and a not in self._gone]
        for agent in self.agents:
            if agent not in self._gone:
                try:
                    self._read(agent, env.observe(agent))
                except (KeyError, AttributeError):  # pragma: no cover - an env that forgets agents
                    pass
        self._gone.update(terminated, truncated)
        # dead steps: PettingZoo removes a finished agent when it is selected and steps None
        while env.agents and (env.terminations.get(env.agent_selection) or env.truncations.get(env.agent_selection)):
            env.step(None)
        return rewards, terminated, truncated

    def _parallel(self, actions: dict[str, Any]) -> tuple[dict[str, float], list[str], list[str]]:
        env = self.env
        if not env.agents:
            raise RuntimeError("the episode is over; call start_environment() first")
        step = {}
        for agent in env.agents:
            action_id = self._id(agent, "action")
            if action_id not in actions:
                raise ValueError(f"no value set for actuator {action_id}")
            step[agent] = actions[action_id]
        observations, rewards, terminations, truncations, _ = env.step(step)
        for agent, observation in observations.items():
            self._read(agent, observation)
        terminated = [a for a, t in terminations.items() if t]
        truncated = [a for a, t in truncations.items() if t and not terminations.get(a)]
        self._gone.update(terminated, truncated)
        return {a: float(r) for a, r in rewards.items()}, terminated, truncated

    def close(self) -> None:
        self.env.close()
