import numpy as np
import pytest
from gymnasium import spaces

from xdoe.environment import ActuatorInformation
from xdoe.components.environments import DummyEnvironment


def _episode(env, action):
    base = env.start_environment()
    states = []
    while True:
        acts = [ActuatorInformation(a.uid, a.space, action(a)) for a in base.actuators]
        state = env.update(acts)
        states.append(state)
        if state.done:
            return base, states


def test_ids_spaces_and_length():
    env = DummyEnvironment(uid="d", seed=1, length=4, sensors=3, actuators=2)
    base, states = _episode(env, lambda a: np.array([0.25], dtype=np.float32))
    assert [s.uid for s in base.sensors] == ["d.0", "d.1", "d.2"]
    assert [a.uid for a in base.actuators] == ["d.0", "d.1"]
    for s in base.sensors + states[-1].sensors:
        assert s.space == spaces.Box(0, 1, (1,), np.float32) and s.space.contains(s.value)
    assert len(states) == 4 and [s.done for s in states] == [False, False, False, True]
    assert all(s.rewards[0].uid == "d.reward" and s.rewards[0].value == 0.25 for s in states)


def test_discrete_spaces_and_reward_is_mean_of_actions():
    env = DummyEnvironment(uid="d", seed=1, length=1, sensors=2, actuators=3, discrete=True)
    base = env.start_environment()
    assert all(s.space == spaces.Discrete(10) and s.space.contains(s.value) for s in base.sensors)
    assert all(a.space == spaces.Discrete(10) for a in base.actuators)
    acts = [ActuatorInformation("d.0", spaces.Discrete(10), 3), ActuatorInformation("d.1", spaces.Discrete(10), 6),
            ActuatorInformation("d.2", spaces.Discrete(10), None), ActuatorInformation("x.0", spaces.Discrete(10), 9)]
    state = env.update(acts)
    assert state.rewards[0].value == pytest.approx(4.5)  # unset and foreign actuators do not count
    assert state.done


def test_no_action_gives_zero_reward():
    env = DummyEnvironment(uid="d", seed=1, length=2)
    env.start_environment()
    assert env.update([]).rewards[0].value == 0.0


def test_deterministic_per_seed():
    def readings(seed):
        env = DummyEnvironment(uid="d", seed=seed, length=3, sensors=4)
        out = []
        for _ in range(2):
            base, states = _episode(env, lambda a: a.space.low)
            out += [float(s.value[0]) for st in [base, *states] for s in st.sensors]
        return out

    assert readings(7) == readings(7)
    assert readings(7) != readings(8)


def test_start_resets_the_episode():
    env = DummyEnvironment(uid="d", seed=1, length=2)
    for _ in range(3):
        _, states = _episode(env, lambda a: None)
        assert len(states) == 2


@pytest.mark.parametrize("kwargs", [{"length": 0}, {"sensors": -1}, {"actuators": 1.5}, {"length": True}])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        DummyEnvironment(uid="d", seed=1, **kwargs)


def test_unknown_parameter():
    with pytest.raises(TypeError, match="colour"):
        DummyEnvironment(uid="d", seed=1, colour="red")
