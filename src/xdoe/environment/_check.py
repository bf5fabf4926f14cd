"""``check_environment``: the plugin contract of an :class:`Environment`,
checked the way gymnasium's ``check_env`` checks a ``gymnasium.Env``."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import numpy as np
from gymnasium import spaces

from xdoe.environment._environment import Environment
from xdoe.environment._masks import action_mask
from xdoe.environment._information import (
    ActuatorInformation,
    EnvironmentBaseline,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
)
from xdoe.errors import EnvironmentCheckError

__all__ = ["check_environment", "EnvironmentCheckError"]


def _fail(env: Environment, message: str) -> EnvironmentCheckError:
    return EnvironmentCheckError(f"{type(env).__name__} {env.uid!r}: {message}")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except TypeError:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def _check_items(env: Environment, items: list[Any], kind: type, what: str, *, values: bool) -> None:
    if not isinstance(items, list):
        raise _fail(env, f"{what} must be a list, got {type(items).__name__}")
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, kind):
            raise _fail(env, f"{what}: {item!r} is not a {kind.__name__}")
        if not item.uid.startswith(f"{env.uid}."):
            raise _fail(env, f"{what}: id {item.uid!r} does not start with '{env.uid}.'")
        if item.uid in seen:
            raise _fail(env, f"{what}: id {item.uid!r} appears twice")
        seen.add(item.uid)
        if not isinstance(item.space, spaces.Space):
            raise _fail(env, f"{what}: {item.uid!r} has no gymnasium space ({item.space!r})")
        if values and item.value is not None and not item.space.contains(item.value):
            raise _fail(env, f"{what}: value {item.value!r} of {item.uid!r} is outside its space {item.space}")


def _check_rewards(env: Environment, rewards: list[Any], actuator_ids: set[str]) -> None:
    if not isinstance(rewards, list):
        raise _fail(env, f"rewards must be a list, got {type(rewards).__name__}")
    for r in rewards:
        if not isinstance(r, RewardInformation):
            raise _fail(env, f"rewards: {r!r} is not a RewardInformation")
        if not r.uid.startswith(f"{env.uid}."):
            raise _fail(env, f"rewards: id {r.uid!r} does not start with '{env.uid}.'")
        if isinstance(r.value, bool) or not isinstance(r.value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(r.value)):
            raise _fail(env, f"rewards: {r.uid!r} has value {r.value!r}, not a finite number")
        if r.owner is not None and r.owner not in actuator_ids:
            raise _fail(env, f"rewards: {r.uid!r} is owned by {r.owner!r}, which is not an actuator "
                             f"of the environment ({', '.join(sorted(actuator_ids))})")


def _jsonable(env: Environment, info: Any, where: str) -> None:
    try:
        json.dumps(info, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _fail(env, f"{where} info is not JSON-able ({exc})") from None


def _actions(actuators: list[ActuatorInformation], sensors: list[SensorInformation],
             samplers: dict[str, spaces.Space]) -> list[ActuatorInformation]:
    out = []
    for a in actuators:
        space = samplers[a.uid]
        mask = action_mask(a, sensors)
        if mask is not None:
            value: Any = int(space.sample(mask=mask.astype(np.int8)))
        else:
            value = space.sample()
            if isinstance(space, spaces.Discrete):
                value = int(value)
        out.append(ActuatorInformation(a.uid, a.space, value))
    return out


def _rollout(env: Environment, episodes: int, steps: int, seed: int) -> list[Any]:
    """Play ``episodes`` episodes of at most ``steps`` updates with seeded random
    actions (honouring action masks), checking every baseline and state;
    returns what was seen, for the determinism check."""
    trace: list[Any] = []
    rng = np.random.default_rng(seed)
    for _ in range(episodes):
        baseline = env.start_environment()
        if not isinstance(baseline, EnvironmentBaseline):
            raise _fail(env, f"start_environment() returned {type(baseline).__name__}, not EnvironmentBaseline")
        _check_items(env, baseline.sensors, SensorInformation, "baseline sensors", values=True)
        _check_items(env, baseline.actuators, ActuatorInformation, "baseline actuators", values=False)
        if any(a.value is not None for a in baseline.actuators):
            raise _fail(env, "baseline actuators must carry value=None")
        _jsonable(env, baseline.info, "baseline")
        sensor_ids = [s.uid for s in baseline.sensors]
        actuator_ids = {a.uid for a in baseline.actuators}
        samplers = {}
        for a in baseline.actuators:
            own = copy.deepcopy(a.space)
            own.seed(int(rng.integers(2**31)))
            samplers[a.uid] = own
        trace.append([(s.uid, s.value) for s in baseline.sensors])
        sensors = baseline.sensors
        for _ in range(steps):
            actions = _actions(baseline.actuators, sensors, samplers)
            state = env.update(actions)
            if not isinstance(state, EnvironmentState):
                raise _fail(env, f"update() returned {type(state).__name__}, not EnvironmentState")
            _check_items(env, state.sensors, SensorInformation, "state sensors", values=True)
            if [s.uid for s in state.sensors] != sensor_ids:
                raise _fail(env, f"update() sensors {[s.uid for s in state.sensors]} differ from the "
                                 f"baseline's {sensor_ids}")
            _check_rewards(env, state.rewards, actuator_ids)
            for flag in ("terminated", "truncated"):
                if not isinstance(getattr(state, flag), (bool, np.bool_)):
                    raise _fail(env, f"state.{flag} must be a bool, got {getattr(state, flag)!r}")
            unknown = set(state.left) - actuator_ids
            if unknown:
                raise _fail(env, f"state.left names {sorted(unknown)}, not actuators of the environment")
            _jsonable(env, state.info, "state")
            trace.append(([(s.uid, s.value) for s in state.sensors],
                          [(r.uid, float(r.value), r.owner) for r in state.rewards],
                          bool(state.terminated), bool(state.truncated)))
            sensors = state.sensors
            if state.done:
                break
    return trace


def check_environment(env: Environment, *, params: dict[str, Any] | None = None,
                      episodes: int = 3, steps: int = 200) -> None:
    """Check that ``env`` keeps the plugin contract, as gymnasium's ``check_env``
    does for a ``gymnasium.Env``.

    Checked, over ``episodes`` episodes of at most ``steps`` updates each with
    random actions (seeded; ``<prefix>.action_mask`` sensors are honoured for
    ``<prefix>.action`` actuators):

    - ``start_environment`` returns an :class:`EnvironmentBaseline` whose
      sensors and actuators are lists of the right types with unique ids
      ``<uid>.<name>``, gymnasium spaces, sensor values inside their spaces,
      actuator values ``None`` and a JSON-able ``info``;
    - every ``update`` returns an :class:`EnvironmentState` with the
      baseline's sensor ids in the same order and values inside their spaces,
      :class:`RewardInformation` rewards with finite values whose ``owner``
      (if any) is one of the environment's actuators, bool ``terminated`` /
      ``truncated``, ``left`` naming only its actuators, a JSON-able ``info``;
    - seeding: a twin built with the same seed
      (``type(env)(uid=env.uid, seed=env.seed, **params)`` when ``params`` is
      given, else a deep copy of ``env`` taken before it is used) sees the
      same readings, rewards and flags for the same actions.

    ``env`` is used (started, stepped) and closed.

    Raises:
        EnvironmentCheckError: the first breach found, naming the environment,
            the item and what is wrong (an ``AssertionError`` too).
    """
    def make_twin() -> Environment:
        return type(env)(uid=env.uid, seed=env.seed, **params) if params is not None else copy.deepcopy(env)

    twin = make_twin()
    try:
        first = _rollout(env, episodes, steps, seed=env.seed)
        second = _rollout(twin, episodes, steps, seed=env.seed)
    finally:
        env.close()
        twin.close()
    for i, (a, b) in enumerate(zip(first, second)):
        if not _same(a, b):
            raise _fail(env, f"not deterministic for its seed: item {i} of the rollout differs "
                             f"between two instances with seed {env.seed} ({a!r} != {b!r}); draw every "
                             f"random choice from env.rng")
    if len(first) != len(second):
        raise _fail(env, "not deterministic for its seed: episode lengths differ between two instances")
