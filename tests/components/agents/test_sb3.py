"""SB3Brain / SB3Muscle as plugins: spaces, hyperparameters, learning calls, store/load."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from gymnasium import spaces

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402

from xdoe.agent import Experience, Mode  # noqa: E402
from xdoe.components.agents import SB3Brain, SB3Muscle  # noqa: E402
from xdoe.components.agents._sb3_spaces import ActionCodec, ObservationCodec, mask_for  # noqa: E402
from xdoe.environment import ActuatorInformation as A  # noqa: E402
from xdoe.environment import SensorInformation as S  # noqa: E402

BOX = spaces.Box(-1.0, 1.0, (3,), np.float32)


def test_unknown_hyperparameter_lists_the_accepted_ones():
    with pytest.raises(ValueError, match=r"PPO takes no n_stepz; accepted: .*n_steps"):
        SB3Brain(algorithm="PPO", hyperparameters={"n_stepz": 8})
    with pytest.raises(ValueError, match="set by the brain itself"):
        SB3Brain(algorithm="DQN", hyperparameters={"seed": 1})
    with pytest.raises(ValueError, match="unknown algorithm 'PPPO'"):
        SB3Brain(algorithm="PPPO")
    with pytest.raises(ValueError, match="cannot be imported"):
        SB3Brain(algorithm="no_such_module:Algo")
    with pytest.raises(ValueError, match="device"):
        SB3Brain(device="tpu")


def test_module_class_algorithm_and_schedules():
    brain = SB3Brain(algorithm="stable_baselines3:A2C", hyperparameters={"learning_rate": "lin_0.01"})
    assert brain.cls.__name__ == "A2C" and brain.kwargs["learning_rate"](0.5) == pytest.approx(0.005)


@pytest.mark.parametrize("sensors, expected", [
    ([S("e.o", BOX)], BOX),
    ([S("e.o", spaces.Discrete(5, start=2))], spaces.Discrete(5)),
    ([S("e.o", spaces.MultiDiscrete([2, 3]))], spaces.MultiDiscrete([2, 3])),
    ([S("e.o", spaces.MultiBinary(4))], spaces.MultiBinary(4)),
    ([S("e.a", BOX), S("e.b", spaces.Discrete(3)), S("e.action_mask", spaces.MultiBinary(3))],
     spaces.Dict({"e_a": BOX, "e_b": spaces.Discrete(3)})),
])
def test_observation_spaces(sensors, expected):
    codec = ObservationCodec(sensors)
    assert codec.space == expected
    values = [S(s.uid, s.space, s.space.sample()) for s in sensors]
    assert codec.space.contains(codec.encode(values))


def test_several_actuators_form_one_action_space_and_back():
    acts = [A("e.x", spaces.Discrete(3, start=1)), A("e.y", spaces.MultiDiscrete([2, 4]))]
    codec = ActionCodec(acts)
    assert codec.space == spaces.MultiDiscrete([3, 2, 4])
    back = codec.split(np.array([2, 1, 3]))
    assert [(a.uid, a.value if np.isscalar(a.value) else a.value.tolist()) for a in back] == [
        ("e.x", 3), ("e.y", [1, 3])]
    np.testing.assert_array_equal(codec.join(back), [2, 1, 3])
    boxes = ActionCodec([A("e.u", BOX), A("e.v", spaces.Box(0, 2, (2,), np.float32))])
    assert boxes.space.shape == (5,) and boxes.space.high.tolist() == [1, 1, 1, 2, 2]
    with pytest.raises(ValueError, match="no single Stable-Baselines3 action space"):
        ActionCodec([A("e.u", BOX), A("e.d", spaces.Discrete(2))])


def test_action_mask_sensor():
    acts = [A("g.p.action", spaces.Discrete(4))]
    assert mask_for(acts, [S("g.p.action_mask", spaces.MultiBinary(4), np.array([0, 1, 0, 1]))]).tolist() == [
        False, True, False, True]
    assert mask_for(acts, [S("g.q.action_mask", spaces.MultiBinary(4), np.ones(4))]) is None


def _setup(algorithm, hp, sensors, actuators, seed=1):
    brain = SB3Brain(seed=seed, algorithm=algorithm, hyperparameters=hp)
    brain.setup(sensors, actuators)
    muscle = SB3Muscle(uid="a", seed=seed)
    muscle.setup(sensors, actuators)
    muscle.update(brain.muscle_state())
    return brain, muscle


def _feed(brain, muscle, sensors, n, mask=None):
    updates = 0
    obs_space = sensors[0].space
    rng = np.random.default_rng(0)
    for t in range(n):
        seen = [S(s.uid, s.space, s.space.sample() if s.value is None else s.value) for s in sensors]
        acts = muscle.propose_actions(seen, [A(a.uid, a.space) for a in brain.actuators])
        nxt = [S(seen[0].uid, obs_space, obs_space.sample())] + seen[1:]
        e = Experience(0, 0, t, seen, acts, [], float(rng.normal()), nxt, t % 7 == 6, muscle.extras or {},
                       t % 14 == 6)
        update = brain.thinking(e)
        if update is not None:
            muscle.update(update)
            updates += "policy" in update
    return updates


@pytest.mark.parametrize("algorithm, hp, action_space", [
    ("PPO", {"n_steps": 8, "batch_size": 8, "n_epochs": 1}, spaces.Discrete(3)),
    ("A2C", {"n_steps": 4}, BOX),
    ("DQN", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, spaces.Discrete(3)),
    ("SAC", {"learning_starts": 4, "train_freq": 4, "batch_size": 4, "action_noise": 0.1}, BOX),
    ("TD3", {"learning_starts": 4, "train_freq": 4, "batch_size": 4, "action_noise": 0.1}, BOX),
])
def test_algorithms_train_through_sb3(algorithm, hp, action_space):
    sensors = [S("e.o", spaces.Box(-1, 1, (2,), np.float32))]
    brain, muscle = _setup(algorithm, hp, sensors, [A("e.act", action_space)])
    before = [p.detach().clone() for p in brain.model.policy.parameters()]
    assert _feed(brain, muscle, sensors, 24) >= 2  # train() ran and the muscles got the policy
    after = list(brain.model.policy.parameters())
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, after))
    assert brain.model.num_timesteps == 24


def test_masked_actions_are_never_taken():
    sensors = [S("g.p.observation", spaces.Box(0, 1, (4,), np.float32)),
               S("g.p.action_mask", spaces.MultiBinary(4), np.array([0, 1, 0, 1], np.int8))]
    for algorithm, hp in (("PPO", {"n_steps": 8, "batch_size": 8}), ("DQN", {"learning_starts": 0})):
        brain, muscle = _setup(algorithm, hp, sensors, [A("g.p.action", spaces.Discrete(4))])
        for mode in (Mode.TRAIN, Mode.TEST):
            muscle.mode = mode
            taken = {muscle.propose_actions([S(sensors[0].uid, sensors[0].space, sensors[0].space.sample()),
                                             sensors[1]], [A("g.p.action", spaces.Discrete(4))])[0].value
                     for _ in range(60)}
            assert taken <= {1, 3}


def test_store_and_load_round_trip(tmp_path):
    sensors = [S("e.o", spaces.Box(-1, 1, (2,), np.float32))]
    actuators = [A("e.act", spaces.Discrete(2))]
    brain, muscle = _setup("DQN", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, sensors, actuators)
    brain.store_replay_buffer = True
    _feed(brain, muscle, sensors, 20)
    brain.store(tmp_path / "b.ckpt")
    other, other_muscle = _setup("DQN", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, sensors,
                                 actuators, seed=99)
    other.load(tmp_path / "b.ckpt")
    assert other.model.num_timesteps == 20 and other.model.replay_buffer.size() == 20
    for a, b in zip(brain.model.policy.parameters(), other.model.policy.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with pytest.raises(ValueError, match="stored for sensors"):
        third, _ = _setup("DQN", {}, [S("e.other", sensors[0].space)], actuators)
        third.load(tmp_path / "b.ckpt")


def test_hyperparameters_per_algorithm():
    hp = {"PPO": {"n_steps": 16}, "DQN": {"buffer_size": 500}}
    assert SB3Brain(algorithm="PPO", hyperparameters=hp).kwargs == {"n_steps": 16}
    assert SB3Brain(algorithm="DQN", hyperparameters=hp).kwargs == {"buffer_size": 500}
    with pytest.raises(ValueError, match="none for algorithm 'A2C'"):
        SB3Brain(algorithm="A2C", hyperparameters=hp)


@pytest.mark.parametrize("algorithm, action_space", [
    ("PPO", spaces.Discrete(3)), ("PPO", BOX), ("A2C", spaces.Discrete(3)), ("SAC", BOX), ("TD3", BOX),
    ("PPO", spaces.MultiDiscrete([2, 3])),
])
@pytest.mark.parametrize("mode", [Mode.TRAIN, Mode.TEST])
def test_muscle_acts_as_sb3_itself(algorithm, action_space, mode):
    """The muscle's actions (and, on-policy, the value and log-probability it
    sends) are exactly SB3's own, from the same draws of the same generator:
    ``policy(obs)`` as ``collect_rollouts`` calls it, ``policy.predict`` as
    off-policy algorithms and test mode do."""
    import copy

    import torch

    sensors = [S("e.o", spaces.Box(-2, 2, (4,), np.float32))]
    brain, muscle = _setup(algorithm, {"learning_starts": 0} if algorithm in ("SAC", "TD3") else {}, sensors,
                           [A("e.act", action_space)])
    muscle.mode = mode
    policy, test = brain.model.policy, mode is Mode.TEST
    reference = copy.deepcopy(muscle.random)
    rng = np.random.default_rng(3)
    global_state = torch.get_rng_state()
    for _ in range(12):
        obs = rng.uniform(-2, 2, 4).astype(np.float32)
        (act,) = muscle.propose_actions([S("e.o", sensors[0].space, obs)], [A("e.act", action_space)])
        with torch.no_grad(), reference.active():
            if brain.on_policy and not test:
                actions, values, log_prob = policy(policy.obs_to_tensor(obs)[0])
                expected = actions.numpy()[0]
                assert muscle.extras["value"] == float(values.reshape(-1)[0])
                assert muscle.extras["log_prob"] == float(log_prob.reshape(-1)[0])
                if isinstance(action_space, spaces.Box):
                    assert muscle.extras["action"] == expected.tolist()
                    expected = np.clip(expected, action_space.low, action_space.high)
            else:
                expected, _ = policy.predict(obs, deterministic=test)
                assert muscle.extras is None
        np.testing.assert_array_equal(np.asarray(act.value), expected)
    assert torch.equal(torch.get_rng_state(), global_state)  # the process's generator left as it was


@pytest.mark.parametrize("algorithm, hp, action_space", [
    ("PPO", {"n_steps": 8, "batch_size": 8, "n_epochs": 1}, spaces.Discrete(3)),
    ("A2C", {"n_steps": 4}, BOX),
    ("A2C", {"n_steps": 4, "use_sde": True}, BOX),
    ("SAC", {"learning_starts": 4, "train_freq": 4, "batch_size": 4}, BOX),
])
def test_trained_policy_pickles_to_worker_processes(algorithm, hp, action_space):
    """--parallel-workers sends each update through multiprocessing; torch
    refuses a tensor still tied to train()'s graph (PPO and A2C left their
    last minibatch's distribution in the policy: the phase crashed)."""
    import torch.multiprocessing  # noqa: F401  (registers torch's reductions, as the workers' imports do)
    from multiprocessing.reduction import ForkingPickler

    sensors = [S("e.o", spaces.Box(-1, 1, (2,), np.float32))]
    brain, muscle = _setup(algorithm, hp, sensors, [A("e.act", action_space)])
    assert _feed(brain, muscle, sensors, 24) >= 2
    copy = pickle.loads(ForkingPickler.dumps(brain.muscle_state()))["policy"]
    obs = torch.as_tensor(np.zeros((1, 2), np.float32))
    with torch.no_grad():  # the copy acts as the brain's policy does
        assert np.allclose(copy._predict(obs, deterministic=True).numpy(),
                           brain.model.policy._predict(obs, deterministic=True).numpy())
