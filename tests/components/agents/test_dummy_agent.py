import numpy as np
import pytest
from gymnasium import spaces

from xdoe.agent import Experience, Mode
from xdoe.components.agents import DummyBrain, DummyMuscle
from xdoe.environment import ActuatorInformation, RewardInformation, SensorInformation

ACTUATORS = [
    ActuatorInformation("e.d", spaces.Discrete(4)),
    ActuatorInformation("e.b", spaces.Box(-1.0, 2.0, (3,), np.float32)),
    ActuatorInformation("e.m", spaces.MultiDiscrete([2, 5])),
    ActuatorInformation("e.t", spaces.Dict({"k": spaces.Discrete(3)})),
]


def actions(seed, n=50, mode=Mode.TRAIN):
    muscle = DummyMuscle(uid="a", seed=seed)
    muscle.setup([], ACTUATORS)
    muscle.mode = mode
    return [muscle.propose_actions([], ACTUATORS) for _ in range(n)]


def test_actions_lie_in_their_spaces_and_cover_them():
    runs = actions(1, n=200)
    for acts in runs:
        assert [a.uid for a in acts] == ["e.d", "e.b", "e.m", "e.t"]
        assert all(a.space.contains(a.value) for a in acts)
        assert type(acts[0].value) is int
    assert {acts[0].value for acts in runs} == {0, 1, 2, 3}
    box = np.array([acts[1].value for acts in runs])
    assert box.min() < -0.8 and box.max() > 1.8


def test_same_seed_same_actions_and_test_mode_still_random():
    def flat(runs):
        return [str(a.value) for acts in runs for a in acts]

    assert flat(actions(3)) == flat(actions(3)) == flat(actions(3, mode=Mode.TEST))
    assert flat(actions(3)) != flat(actions(4))


def test_spaces_are_not_reseeded_in_place():
    space = spaces.Discrete(4)
    space.seed(0)
    before = [space.sample() for _ in range(5)]
    space.seed(0)
    DummyMuscle(uid="a", seed=9).propose_actions([], [ActuatorInformation("e.d", space)])
    assert [space.sample() for _ in range(5)] == before


def test_dummy_brain_counts_and_round_trips(tmp_path):
    brain = DummyBrain(seed=1)
    brain.setup([SensorInformation("e.s", spaces.Discrete(2), 0)], ACTUATORS[:1])
    exp = Experience(0, 0, 0, [], [], [RewardInformation("e.r", 1.0)], 1.0, [], False)
    assert brain.thinking(exp) is None and brain.thinking(exp) is None
    path = tmp_path / "brain.json"
    brain.store(path)
    other = DummyBrain()
    other.load(path)
    assert other.experiences == 2
    (tmp_path / "bad").write_text("[1]")
    with pytest.raises(ValueError, match="not a DummyBrain file"):
        other.load(tmp_path / "bad")
