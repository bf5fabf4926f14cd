"""Any gymnasium environment as an xdoe environment."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import gymnasium
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

__all__ = ["GymnasiumEnvironment", "jsonable_info", "split_observation"]

_DROP = object()


def _jsonable(value: Any) -> Any:
    """``value`` as JSON-able Python data, or ``_DROP``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item = _jsonable(item)
            if item is not _DROP:
                out[str(key)] = item
        return out
    if isinstance(value, (list, tuple)):
        items = [_jsonable(item) for item in value]
        return _DROP if any(item is _DROP for item in items) else items
    return _DROP  # numpy arrays, objects


#: Exact types that are JSON values as they are (``float`` needs a finiteness check).
_PLAIN_TYPES = frozenset({bool, int, str, type(None)})


def jsonable_info(info: dict[str, Any]) -> dict[str, Any]:
    """The JSON-able part of a gymnasium ``info`` dict: numpy scalars become
    Python numbers, numpy arrays (e.g. Taxi's ``action_mask``), non-finite
    floats and other objects are dropped."""
    # Called on every step, so the common top-level values (exact Python
    # scalars, numpy arrays) are decided by their exact type here; everything
    # else goes through the general _jsonable, which gives the same results.
    out: dict[str, Any] = {}
    for key, value in info.items():
        kind = type(value)
        if kind is np.ndarray:
            continue
        if type(key) is not str:
            key = str(key)
        if kind in _PLAIN_TYPES:
            out[key] = value
        elif kind is float:
            if math.isfinite(value):
                out[key] = value
        else:
            value = _jsonable(value)
            if value is not _DROP:
                out[key] = value
    return out


def _state(sensors: list[SensorInformation], rewards: list[RewardInformation], terminated: bool,
           info: dict[str, Any], truncated: bool) -> EnvironmentState:
    """``EnvironmentState(sensors, rewards, terminated, info, truncated=truncated)``
    for values already of the right types, without the argument normalisation
    of its ``__init__`` (half the cost, on every step)."""
    state = _new(EnvironmentState)
    state.sensors = sensors
    state.rewards = rewards
    state.terminated = terminated
    state.info = info
    state.truncated = truncated
    state.left = {}
    return state


_new = object.__new__


def _plain(space: spaces.Space, value: Any) -> Any:
    """Discrete values as Python ints (gymnasium sometimes returns numpy ints)."""
    if isinstance(space, spaces.Discrete):
        return int(value)
    return value


def _not_started(actions: Any) -> Any:
    raise RuntimeError("update_values() called before start_environment()")


def _observation_conversion(uid: str, space: spaces.Space) -> Any:
    """The function that turns gymnasium's observation in ``space``, when it is
    not a Python int, into the value form of :meth:`GymnasiumEnvironment.update_values`
    (``None``: it is already): ``int`` for a ``Discrete`` space (gymnasium
    sometimes returns numpy ints), a dict ``<uid>.<key> -> value`` for a ``Dict`` space."""
    if isinstance(space, spaces.Discrete):
        return int
    if isinstance(space, spaces.Dict):
        return partial(_dict_values, [(f"{uid}.{key}", key, sub) for key, sub in space.spaces.items()])
    return None


def _dict_values(ids: list[tuple[str, str, spaces.Space]], observation: Any) -> dict[str, Any]:
    """A ``Dict`` observation as values ``<uid>.<key> -> value`` (``ids``: full id, key, subspace)."""
    return {full: _plain(sub, observation[key]) for full, key, sub in ids}


def split_observation(
    uid: str, space: spaces.Space, observation: Any
) -> list[SensorInformation]:
    """Sensors of one observation: ``<uid>.observation``, or for a top-level
    ``Dict`` space one sensor ``<uid>.<key>`` per key (in the space's key
    order) with the key's subspace."""
    if isinstance(space, spaces.Dict):
        return [
            SensorInformation(f"{uid}.{key}", sub, _plain(sub, observation[key]))
            for key, sub in space.spaces.items()
        ]
    return [SensorInformation(f"{uid}.observation", space, _plain(space, observation))]


class GymnasiumEnvironment(Environment):
    """A ``gymnasium`` environment (``gymnasium.make(env_id, **make_kwargs)``).

    Parameters:
        uid: the environment uid (prefix of every id).
        seed: seeds :attr:`rng`; the first reset is seeded with an integer drawn
            from it, later resets continue gymnasium's own generator, so the
            same seed gives the same sequence of episodes.
        env_id: a registered gymnasium id such as ``"Taxi-v4"`` or ``"CartPole-v1"``.
        **make_kwargs: passed to ``gymnasium.make`` (e.g. ``max_episode_steps``).

    Ids and spaces:
        - sensor ``<uid>.observation`` with the observation space; a ``Dict``
          observation space is split into one sensor ``<uid>.<key>`` per key;
        - actuator ``<uid>.action`` with the action space;
        - reward ``<uid>.reward``: gymnasium's reward of the step (a float,
          in the environment's units);
        - the step is :meth:`update_values` (``update`` is derived from it);
        - the state's ``terminated`` and ``truncated`` are gymnasium's (``done``
          is either); its ``info`` holds them too, with the JSON-able part of gymnasium's
          info (numpy arrays such as Taxi's ``action_mask`` are dropped).

    Discrete values are Python ints; other values are what gymnasium returns.

    Raises:
        ValueError: gymnasium cannot make ``env_id`` with these arguments
            (unknown id, wrong keyword), with gymnasium's message; or
            :meth:`update` gets no value for ``<uid>.action``.
    """

    def __init__(self, uid: str, seed: int, env_id: str, **make_kwargs: Any) -> None:
        super().__init__(uid=uid, seed=seed)
        self.env_id = env_id
        self.make_kwargs = dict(make_kwargs)
        self._action_id = self.full_id("action")
        self._reward_id = self.full_id("reward")
        self._observation_id = self.full_id("observation")
        self.env: gymnasium.Env | None = self._make()
        self._seeded = False
        #: ``env.step`` while the environment is started (bound by start_environment)
        self._step: Any = _not_started
        #: gymnasium's five values of the last step (for last_state)
        self._last: tuple[Any, Any, Any, Any, dict[str, Any]] | None = None

    def _make(self) -> gymnasium.Env:
        try:
            env = gymnasium.make(self.env_id, **self.make_kwargs)
        except (gymnasium.error.Error, TypeError) as exc:
            raise ValueError(
                f"gymnasium cannot make {self.env_id!r}"
                + (f" with {self.make_kwargs!r}" if self.make_kwargs else "")
                + f": {exc}"
            ) from exc
        # The spaces are read once: through gymnasium's wrappers every
        # ``env.observation_space`` is a chain of property lookups, too slow
        # for every step.
        self._observation_space = env.observation_space
        self._discrete_observation = isinstance(self._observation_space, spaces.Discrete)
        self._action_space = env.action_space
        self._discrete_action = isinstance(self._action_space, spaces.Discrete)
        #: the conversion of an observation that is not a Python int to its value form, chosen once per space
        self._convert = _observation_conversion(self.uid, self._observation_space)
        return env

    def _sensors(self, observation: Any) -> list[SensorInformation]:
        """:func:`split_observation` of this environment, with a shortcut for
        the common ``Discrete`` observation."""
        if self._discrete_observation:
            return [SensorInformation(self._observation_id, self._observation_space, int(observation))]
        return split_observation(self.uid, self._observation_space, observation)

    @property
    def action_id(self) -> str:
        """``<uid>.action``."""
        return self.full_id("action")

    def start_environment(self) -> EnvironmentBaseline:
        """Reset the gymnasium environment (re-made if :meth:`close` was called)."""
        env = self.env
        if env is None:
            env = self.env = self._make()
        if self._seeded:
            observation, info = env.reset()
        else:
            observation, info = env.reset(seed=int(self.rng.integers(2**31 - 1)))
            self._seeded = True
        self._last = None
        self._step = env.step
        return EnvironmentBaseline(self._sensors(observation),
                                   [ActuatorInformation(self._action_id, self._action_space)],
                                   jsonable_info(info))

    def update_values(self, actions: Any) -> tuple[Any, dict[str, float], bool, bool]:
        """``env.step(actions)`` as ``(observation, rewards, terminated,
        truncated)``: ``actions`` is the value of ``<uid>.action``; the
        observation is the value of ``<uid>.observation`` (a Python int for a
        ``Discrete`` space), or for a ``Dict`` space a dict ``<uid>.<key> ->
        value``; the rewards ``{<uid>.reward: float}``. gymnasium's info is
        kept for :meth:`last_state` (made JSON-able only there)."""
        if type(actions) is not int:  # a Python int is the common Discrete action: one test for it
            if actions is None:
                raise ValueError(f"no value set for actuator {self._action_id}")
            if self._discrete_action:
                actions = int(np.asarray(actions).item())
        step = self._step  # an attribute holding a bound method: called from a local (CPython 3.11
        self._last = last = step(actions)  # does not specialise a method call on it)
        observation, reward, terminated, truncated, _ = last
        if type(observation) is not int:
            convert = self._convert
            if convert is not None:
                observation = convert(observation)
        # gymnasium's flags are bools as a rule: bool() only for other types (numpy bools)
        return observation, {self._reward_id: float(reward)}, \
            terminated is True or (terminated is not False and bool(terminated)), \
            truncated is True or (truncated is not False and bool(truncated))

    def last_state(self) -> EnvironmentState:
        """The state of the last :meth:`update_values` (``update``'s answer):
        the sensors, the reward, gymnasium's flags and the JSON-able part of
        its info with ``terminated`` and ``truncated``."""
        if self._last is None:
            raise RuntimeError("last_state() called before update_values()")
        observation, reward, terminated, truncated, info = self._last
        state_info = jsonable_info(info)
        state_info["terminated"] = terminated = bool(terminated)
        state_info["truncated"] = truncated = bool(truncated)
        return _state(self._sensors(observation), [RewardInformation(self._reward_id, float(reward))], terminated,
                      state_info, truncated)

    def close(self) -> None:
        """Close the gymnasium environment; the next episode re-makes it
        (continuing from :attr:`rng`, so the episode sequence stays seeded)."""
        if self.env is not None:
            self.env.close()
            self.env = None
            self._seeded = False
            self._step = _not_started
