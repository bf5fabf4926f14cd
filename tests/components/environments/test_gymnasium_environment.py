import json

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from xdoe.environment import ActuatorInformation
from xdoe.components.environments import GymnasiumEnvironment
from xdoe.components.environments._gymnasium import jsonable_info, split_observation


class DictObsEnv(gymnasium.Env):
    """A tiny env with a Dict observation: a position counter and a flag."""

    observation_space = spaces.Dict({"position": spaces.Discrete(5), "velocity": spaces.Box(-1, 1, (2,))})
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = int(self.np_random.integers(5))
        return self._obs(), {"array": np.zeros(3), "count": np.int64(0)}

    def _obs(self):
        return {"position": self.pos, "velocity": np.full(2, 0.5, dtype=np.float32)}

    def step(self, action):
        self.pos = (self.pos + 1) % 5 if action else self.pos
        return self._obs(), float(action), self.pos == 0, False, {}


DICT_ID = "xdoe-test/DictObs-v0"
if DICT_ID not in gymnasium.registry:
    gymnasium.register(id=DICT_ID, entry_point=DictObsEnv, max_episode_steps=20)


def _run(env, n_episodes, actions_seed=0):
    rng = np.random.default_rng(actions_seed)
    log = []
    for _ in range(n_episodes):
        base = env.start_environment()
        log.append(("start", base.sensors[0].value))
        done = False
        while not done:
            (act,) = base.actuators
            state = env.update([ActuatorInformation(act.uid, act.space, int(rng.integers(act.space.n)))])
            log.append((state.sensors[0].value, state.rewards[0].value))
            done = state.done
    return log


def test_taxi_ids_spaces_and_values():
    env = GymnasiumEnvironment(uid="taxi", seed=3, env_id="Taxi-v4")
    base = env.start_environment()
    assert [(s.uid, s.space) for s in base.sensors] == [("taxi.observation", spaces.Discrete(500))]
    assert [(a.uid, a.space) for a in base.actuators] == [("taxi.action", spaces.Discrete(6))]
    assert type(base.sensors[0].value) is int and base.sensors[0].space.contains(base.sensors[0].value)
    json.dumps(base.info)  # the action_mask array is dropped, prob kept
    assert "action_mask" not in base.info and base.info["prob"] == 1.0
    state = env.update([ActuatorInformation("taxi.action", spaces.Discrete(6), np.int64(0))])
    assert [r.uid for r in state.rewards] == ["taxi.reward"] and isinstance(state.rewards[0].value, float)
    assert state.info["terminated"] is False and state.info["truncated"] is False
    json.dumps(state.info)
    env.close()


def test_truncation_is_done():
    env = GymnasiumEnvironment(uid="t", seed=3, env_id="Taxi-v4", max_episode_steps=5)
    log = _run(env, 3)
    assert len(log) == 3 * 6  # one start + 5 steps per episode (random play never delivers in 5)


def test_same_seed_same_episodes_across_resets():
    a = _run(GymnasiumEnvironment(uid="t", seed=11, env_id="Taxi-v4", max_episode_steps=20), 4)
    b = _run(GymnasiumEnvironment(uid="t", seed=11, env_id="Taxi-v4", max_episode_steps=20), 4)
    c = _run(GymnasiumEnvironment(uid="t", seed=12, env_id="Taxi-v4", max_episode_steps=20), 4)
    assert a == b and a != c
    starts = [v for k, v in a if k == "start"]
    assert len(set(starts)) > 1  # later resets are not re-seeded with the same seed


def test_close_then_start_again():
    env = GymnasiumEnvironment(uid="t", seed=1, env_id="Taxi-v4", max_episode_steps=3)
    _run(env, 1)
    env.close()
    assert env.env is None
    assert len(_run(env, 1)) == 4


def test_box_observation_cartpole():
    env = GymnasiumEnvironment(uid="cp", seed=1, env_id="CartPole-v1")
    base = env.start_environment()
    (s,) = base.sensors
    assert s.uid == "cp.observation" and isinstance(s.value, np.ndarray) and s.space.contains(s.value)
    state = env.update([ActuatorInformation("cp.action", base.actuators[0].space, 1)])
    assert state.sensors[0].value.shape == (4,)


def test_dict_observation_is_split_per_key():
    env = GymnasiumEnvironment(uid="d", seed=5, env_id=DICT_ID)
    base = env.start_environment()
    assert [s.uid for s in base.sensors] == ["d.position", "d.velocity"]
    assert base.sensors[0].space == spaces.Discrete(5) and base.sensors[1].space == spaces.Box(-1, 1, (2,))
    assert all(s.space.contains(s.value) for s in base.sensors)
    assert base.info == {"count": 0}  # the numpy array is dropped
    state = env.update([ActuatorInformation("d.action", spaces.Discrete(2), 1)])
    assert [s.uid for s in state.sensors] == ["d.position", "d.velocity"]
    assert state.rewards[0].value == 1.0


def test_split_observation_directly():
    space = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.MultiBinary(2)})
    sensors = split_observation("e", space, {"a": np.int64(2), "b": np.array([0, 1], dtype=np.int8)})
    assert [(s.uid, s.value) for s in sensors][0] == ("e.a", 2) and type(sensors[0].value) is int
    assert split_observation("e", spaces.Discrete(3), 1)[0].uid == "e.observation"


def test_jsonable_info():
    info = {"a": np.float32(1.5), "b": np.zeros(2), "c": [1, np.int8(2)], "d": {"e": np.bool_(True), "f": object()},
            "g": float("nan"), "h": "x"}
    assert jsonable_info(info) == {"a": 1.5, "c": [1, 2], "d": {"e": True}, "h": "x"}


def test_unknown_env_id_is_a_clear_value_error():
    with pytest.raises(ValueError, match=r"gymnasium cannot make 'NoSuchEnv-v0'.*doesn't exist"):
        GymnasiumEnvironment(uid="x", seed=1, env_id="NoSuchEnv-v0")


def test_wrong_make_kwarg_is_a_value_error():
    with pytest.raises(ValueError, match="colour"):
        GymnasiumEnvironment(uid="x", seed=1, env_id="Taxi-v4", colour="red")


def test_missing_action_is_a_value_error():
    env = GymnasiumEnvironment(uid="x", seed=1, env_id="Taxi-v4")
    env.start_environment()
    with pytest.raises(ValueError, match="x.action"):
        env.update([ActuatorInformation("x.action", spaces.Discrete(6), None)])


def test_jsonable_info_fast_path_equals_the_general_conversion():
    import enum

    from xdoe.components.environments._gymnasium import _jsonable

    class Colour(enum.IntEnum):
        RED = 1

    class Text(str):
        pass

    values = [None, True, False, 0, -3, 2**70, 1.5, -0.0, float("inf"), float("nan"), "x", Text("t"),
              np.float64(2.5), np.float32(np.nan), np.int64(4), np.bool_(False), Colour.RED,
              np.zeros(2), np.array(3), [1, np.int8(2)], (1.0, float("nan")), {"k": np.zeros(1), 3: 1},
              object()]
    info = {f"k{i}": v for i, v in enumerate(values)} | {7: "int key"}
    assert jsonable_info(info) == _jsonable(dict(info))
    json.dumps(jsonable_info(info), allow_nan=False)


def test_update_matches_a_plain_gymnasium_loop():
    env = GymnasiumEnvironment(uid="taxi", seed=21, env_id="Taxi-v4", max_episode_steps=50)
    base = env.start_environment()
    raw = gymnasium.make("Taxi-v4", max_episode_steps=50)
    obs, info = raw.reset(seed=int(np.random.default_rng(21).integers(2**31 - 1)))
    assert base.sensors[0].value == obs
    rng = np.random.default_rng(0)
    for i in range(50):
        action = int(rng.integers(6))
        state = env.update([ActuatorInformation("taxi.action", spaces.Discrete(6),
                                                np.int64(action) if i % 2 else action)])
        obs, reward, terminated, truncated, info = raw.step(action)
        assert [s.value for s in state.sensors] == [obs] and type(state.sensors[0].value) is int
        assert state.rewards[0].value == reward and state.done == (terminated or truncated)
        assert state.info == {"prob": info["prob"], "terminated": terminated, "truncated": truncated}
        if state.done:
            break
    assert state.done and state.info["truncated"]


def test_the_step_state_built_without_init_equals_a_constructed_one():
    """GymnasiumEnvironment.update builds its EnvironmentState without
    ``__init__`` (a speed shortcut): it must set every field ``__init__`` sets,
    so a field added to EnvironmentState later cannot be missing from it."""
    import dataclasses

    from xdoe.components.environments._gymnasium import _state
    from xdoe.environment import EnvironmentState, RewardInformation, SensorInformation

    sensors, rewards = [SensorInformation("e.s", None, 3)], [RewardInformation("e.r", 1.5)]
    for terminated, truncated in ((False, False), (True, False), (False, True)):
        fast = _state(sensors, rewards, terminated, {"k": 1}, truncated)
        slow = EnvironmentState(sensors, rewards, terminated, {"k": 1}, truncated=truncated)
        assert vars(fast) == vars(slow)
        assert fast == slow and fast.done == slow.done
        assert {f.name for f in dataclasses.fields(EnvironmentState)} == set(vars(fast))
