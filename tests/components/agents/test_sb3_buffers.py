"""SB3Brain's buffers (``_sb3_buffers.own``): SB3's own buffers whose draws
come from the brain's numpy generator. They give what SB3's give with
``np.random`` in the same state, leave the process's generator alone, pickle
as SB3's own classes, and the brain keeps their generator in its checkpoints."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
from gymnasium import spaces

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from stable_baselines3.common import buffers  # noqa: E402

from xdoe.agent import Experience  # noqa: E402
from xdoe.components.agents import SB3Brain, SB3Muscle  # noqa: E402
from xdoe.components.agents._sb3_buffers import own  # noqa: E402
from xdoe.environment import ActuatorInformation as A  # noqa: E402
from xdoe.environment import SensorInformation as S  # noqa: E402

BOX = spaces.Box(-1.0, 1.0, (3,), np.float32)
DICT = spaces.Dict({"x": BOX, "y": spaces.Box(0.0, 1.0, (2,), np.float32)})
ACTION = spaces.Box(-1.0, 1.0, (2,), np.float32)


def _equal(a, b):
    if a is None or b is None:  # e.g. the samples' ``discounts`` without n-step returns
        return a is b
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))


def _rollout(cls, obs_space, n_envs=2, n_steps=8):
    rng = np.random.default_rng(1)
    buffer = cls(n_steps, obs_space, ACTION, gamma=0.9, gae_lambda=0.95, n_envs=n_envs)

    def obs():
        if isinstance(obs_space, spaces.Dict):
            return {k: rng.normal(size=(n_envs, *s.shape)).astype(np.float32) for k, s in obs_space.items()}
        return rng.normal(size=(n_envs, *obs_space.shape)).astype(np.float32)

    for _ in range(n_steps):
        buffer.add(obs(), rng.normal(size=(n_envs, 2)).astype(np.float32), rng.normal(size=n_envs),
                   rng.random(n_envs) < 0.2, torch.as_tensor(rng.normal(size=(n_envs, 1))),
                   torch.as_tensor(rng.normal(size=n_envs)))
    buffer.compute_returns_and_advantage(torch.as_tensor(rng.normal(size=(n_envs, 1))), np.zeros(n_envs))
    return buffer


def _replay(cls, obs_space, added, size=16, **kwargs):
    rng = np.random.default_rng(2)
    buffer = cls(size, obs_space, ACTION, n_envs=1, **kwargs)

    def obs():
        if isinstance(obs_space, spaces.Dict):
            return {k: rng.normal(size=(1, *s.shape)).astype(np.float32) for k, s in obs_space.items()}
        return rng.normal(size=(1, *obs_space.shape)).astype(np.float32)

    for t in range(added):
        buffer.add(obs(), obs(), rng.normal(size=(1, 2)).astype(np.float32), rng.normal(size=1),
                   np.array([t % 5 == 4]), [{"TimeLimit.truncated": t % 10 == 9}])
    return buffer


ROLLOUTS = [(buffers.RolloutBuffer, BOX), (buffers.DictRolloutBuffer, DICT)]
REPLAYS = [(buffers.ReplayBuffer, BOX, {}),
           (buffers.ReplayBuffer, BOX, {"optimize_memory_usage": True, "handle_timeout_termination": False}),
           (buffers.DictReplayBuffer, DICT, {})]
if hasattr(buffers, "NStepReplayBuffer"):
    REPLAYS.append((buffers.NStepReplayBuffer, BOX, {"n_steps": 3, "gamma": 0.9}))


@pytest.mark.parametrize("cls, obs_space", ROLLOUTS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("batch_size", [None, 4, 5])
def test_rollout_minibatches_are_sb3s_own(cls, obs_space, batch_size):
    ours, theirs = own(_rollout(cls, obs_space), np.random.RandomState(7), "PPO"), _rollout(cls, obs_space)
    assert isinstance(ours, cls)
    state = np.random.get_state()
    mine = [list(ours.get(batch_size)) for _ in range(2)]  # the second call: data already flattened
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(state, after))  # numpy's global generator untouched
    np.random.seed(7)
    assert _equal(mine, [list(theirs.get(batch_size)) for _ in range(2)])
    assert len(mine[0]) == -(-16 // (batch_size or 16))


@pytest.mark.parametrize("cls, obs_space, kwargs", REPLAYS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("added", [11, 37])  # partly filled; full and wrapped around
def test_replay_samples_are_sb3s_own(cls, obs_space, kwargs, added):
    ours = own(_replay(cls, obs_space, added, **kwargs), np.random.RandomState(7), "DQN")
    theirs = _replay(cls, obs_space, added, **kwargs)
    state = np.random.get_state()
    mine = [ours.sample(6) for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(state, np.random.get_state()))
    np.random.seed(7)
    assert _equal(mine, [theirs.sample(6) for _ in range(3)])


def test_own_buffers_pickle_as_sb3s_own_classes():
    """``save_replay_buffer`` pickles the buffer: a plain SB3 buffer, loadable without xdoe."""
    buffer = own(_replay(buffers.ReplayBuffer, BOX, 11), np.random.RandomState(7), "DQN")
    back = pickle.loads(pickle.dumps(buffer))
    assert type(back) is buffers.ReplayBuffer and not hasattr(back, "random")
    assert back.pos == 11 and np.array_equal(back.observations, buffer.observations)
    assert own(back, np.random.RandomState(7), "DQN").sample(4) is not None


def _feed(brain, muscle, sensors, actuators, n):
    rng = np.random.default_rng(0)
    space = sensors[0].space
    for t in range(n):
        seen = [S(sensors[0].uid, space, rng.uniform(-1, 1, space.shape).astype(np.float32))]
        acts = muscle.propose_actions(seen, [A(a.uid, a.space) for a in actuators])
        nxt = [S(sensors[0].uid, space, rng.uniform(-1, 1, space.shape).astype(np.float32))]
        update = brain.thinking(Experience(0, 0, t, seen, acts, [], float(rng.normal()), nxt, t % 7 == 6,
                                           muscle.extras or {}, t % 14 == 6))
        if update is not None:
            muscle.update(update)


def _agent(algorithm, hp, action_space, seed=1):
    sensors, actuators = [S("e.o", spaces.Box(-1, 1, (2,), np.float32))], [A("e.act", action_space)]
    brain = SB3Brain(seed=seed, algorithm=algorithm, hyperparameters=hp)
    brain.setup(sensors, actuators)
    muscle = SB3Muscle(uid="a", seed=seed)
    muscle.setup(sensors, actuators)
    muscle.update(brain.muscle_state())
    return brain, muscle, sensors, actuators


@pytest.mark.parametrize("algorithm, hp, action_space", [
    ("PPO", {"n_steps": 8, "batch_size": 4, "n_epochs": 2}, spaces.Discrete(3)),
    ("A2C", {"n_steps": 4}, BOX),
    ("DQN", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, spaces.Discrete(3)),
    ("SAC", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, BOX),
])
def test_learning_draws_from_the_brains_generators_only(algorithm, hp, action_space):
    """Minibatches and replay samples come from the brain's numpy generator,
    SAC's actor samples in ``train()`` from the brain's torch generator; the
    process's generators are left as they were."""
    brain, muscle, sensors, actuators = _agent(algorithm, hp, action_space)
    own_numpy = brain.random.numpy.get_state()
    numpy_state, torch_state = np.random.get_state(), torch.get_rng_state()
    _feed(brain, muscle, sensors, actuators, 24)
    assert all(np.array_equal(a, b) for a, b in zip(numpy_state, np.random.get_state()))
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert not np.array_equal(own_numpy[1], brain.random.numpy.get_state()[1])  # the buffer drew from it
    buffer = brain.model.rollout_buffer if brain.on_policy else brain.model.replay_buffer
    assert buffer.random is brain.random.numpy


def test_another_buffer_class_is_refused():
    class MyReplayBuffer(buffers.ReplayBuffer):
        pass

    with pytest.raises(ValueError, match="DQN keeps its transitions in a MyReplayBuffer"):
        _agent("DQN", {"replay_buffer_class": MyReplayBuffer}, spaces.Discrete(2))
    brain, *_ = _agent("DQN", {"replay_buffer_class": buffers.ReplayBuffer}, spaces.Discrete(2))
    assert brain.model.replay_buffer.random is brain.random.numpy


def test_checkpoints_keep_the_buffers_generator(tmp_path):
    """A loaded brain draws its next replay samples as the stored one would
    (the generator's state is in the checkpoint); the replay buffer is stored
    as SB3's own ``ReplayBuffer``."""
    hp = {"learning_starts": 4, "train_freq": 4, "batch_size": 4}
    brain, muscle, sensors, actuators = _agent("DQN", hp, spaces.Discrete(2))
    brain.store_replay_buffer = True
    _feed(brain, muscle, sensors, actuators, 20)
    brain.store(tmp_path / "b.ckpt")
    with zipfile.ZipFile(tmp_path / "b.ckpt") as zf:
        assert type(pickle.load(io.BytesIO(zf.read("replay_buffer.pkl")))) is buffers.ReplayBuffer
    other, *_ = _agent("DQN", hp, spaces.Discrete(2), seed=99)
    other.load(tmp_path / "b.ckpt")
    assert other.model.replay_buffer.random is other.random.numpy
    assert _equal([brain.model.replay_buffer.sample(8) for _ in range(3)],
                  [other.model.replay_buffer.sample(8) for _ in range(3)])
