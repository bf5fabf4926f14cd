import pytest
from gymnasium import spaces

from xdoe.environment import (
    EnvironmentCheckError,
    EnvironmentState,
    RewardInformation,
    SensorInformation,
    check_environment,
)
from xdoe.components.environments import DummyEnvironment, GymnasiumEnvironment, TicTacToeEnvironment


@pytest.mark.parametrize("make", [
    lambda: DummyEnvironment(uid="d", seed=1, length=5, sensors=2, actuators=2),
    lambda: DummyEnvironment(uid="d", seed=1, discrete=True),
    lambda: GymnasiumEnvironment(uid="cp", seed=2, env_id="CartPole-v1"),
    lambda: GymnasiumEnvironment(uid="taxi", seed=2, env_id="Taxi-v4", max_episode_steps=50),
    lambda: TicTacToeEnvironment(uid="t", seed=3),
    lambda: TicTacToeEnvironment(uid="t", seed=3, opponent="random"),
])
def test_builtin_environments_pass(make):
    check_environment(make())


def test_twin_from_params():
    check_environment(GymnasiumEnvironment(uid="cp", seed=4, env_id="CartPole-v1"),
                      params={"env_id": "CartPole-v1"})


class _GlobalRandom(DummyEnvironment):
    """Draws from numpy's global state: not reproducible from its seed."""

    def update(self, actuators):
        import numpy as np

        state = super().update(actuators)
        state.rewards[0].value = float(np.random.random())  # noqa: NPY002 - on purpose
        return state


class _BadOwner(DummyEnvironment):
    def update(self, actuators):
        state = super().update(actuators)
        state.rewards = [RewardInformation("d.reward", 1.0, owner="d.nobody")]
        return state


class _BadValue(DummyEnvironment):
    def update(self, actuators):
        state = super().update(actuators)
        return EnvironmentState([SensorInformation("d.0", spaces.Discrete(2), 5)] + state.sensors[1:],
                                state.rewards, truncated=state.truncated)


@pytest.mark.parametrize("cls, message", [
    (_GlobalRandom, "not deterministic"),
    (_BadOwner, "owned by 'd.nobody'"),
    (_BadValue, "outside its space"),
])
def test_breaches_are_reported(cls, message):
    with pytest.raises(EnvironmentCheckError, match=message):
        check_environment(cls(uid="d", seed=0, length=3, sensors=2, actuators=1))


def test_done_is_read_only_and_legacy_keyword_works():
    state = EnvironmentState([], [], done=True)
    assert state.terminated and not state.truncated and state.done
    assert EnvironmentState([], [], truncated=True).done
    with pytest.raises(AttributeError):
        state.done = False
