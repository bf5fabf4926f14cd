"""``SB3Muscle.propose_batch`` (issue 26.2): N on-policy muscles act in one
forward pass of a batch of N, with each muscle's own draws, and give what
each would give alone (actions equal, value and log-probability up to the
rounding of a batched matrix product); other cases act muscle by muscle."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402

from xdoe.agent import Mode  # noqa: E402
from xdoe.agents import SB3Brain, SB3Muscle  # noqa: E402
from xdoe.environment import ActuatorInformation, SensorInformation  # noqa: E402

OBS = spaces.Box(-5.0, 5.0, (4,), np.float32)


def _agent(action_space, algorithm="PPO", n=4, mask=False, hyperparameters=None):
    sensors = [SensorInformation("cp.obs", OBS, np.zeros(4, np.float32))]
    actuators = [ActuatorInformation("cp.action", action_space)]
    if mask:
        sensors.append(SensorInformation("cp.action_mask", spaces.MultiBinary(2), np.ones(2, np.int8)))
    brain = SB3Brain(seed=3, algorithm=algorithm, hyperparameters=hyperparameters)
    brain.setup(sensors, actuators)
    def muscles():
        out = []
        for i in range(n):
            muscle = SB3Muscle("a", seed=100 + i)
            muscle.setup(sensors, actuators)
            muscle.update(brain.muscle_state())
            out.append(muscle)
        return out

    return brain, muscles(), muscles()


def _observations(rng, n, mask=False):
    obs = [rng.normal(size=4).astype(np.float32) for _ in range(n)]
    if mask:
        return [{"cp.obs": o, "cp.action_mask": np.array([1, 0], np.int8)} for o in obs]
    return obs


def _forward_passes(brain):
    """The batch sizes of the policy head's forward passes (a torch forward hook on ``action_net``)."""
    sizes = []
    handle = brain.model.policy.action_net.register_forward_hook(lambda m, args, out: sizes.append(len(args[0])))
    return sizes, handle


@pytest.mark.parametrize("action_space", [spaces.Discrete(2), spaces.Box(-1.0, 1.0, (2,), np.float32)],
                         ids=["discrete", "box"])
@pytest.mark.parametrize("mode", [Mode.TRAIN, Mode.TEST])
def test_one_pass_gives_what_each_muscle_gives_alone(action_space, mode):
    brain, together, alone = _agent(action_space)
    for m in together + alone:
        m.mode = mode
    rng = np.random.default_rng(0)
    sizes, handle = _forward_passes(brain)
    try:
        for _ in range(40):
            observations = _observations(rng, 4)
            start = len(sizes)
            actions = SB3Muscle.propose_batch(together, observations)
            assert sizes[start:] == [4]  # one pass of a batch of 4
            expected = [m.propose_values(o) for m, o in zip(alone, observations)]
            for got, want, a, b in zip(actions, expected, together, alone):
                assert type(got) is type(want)
                if isinstance(want, int):
                    assert got == want
                else:
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
                if mode is Mode.TEST:
                    assert a.extras is None and b.extras is None
                else:
                    assert a.extras.keys() == b.extras.keys()
                    for key in a.extras:
                        np.testing.assert_allclose(a.extras[key], b.extras[key], rtol=1e-5, atol=1e-5)
    finally:
        handle.remove()
    # the same draws: every muscle's torch generator is where its own single calls left it
    for a, b in zip(together, alone):
        assert torch.equal(a.random.torch, b.random.torch)
    if mode is Mode.TRAIN:  # and the muscles' streams differ (each row its own draws)
        assert len({bytes(m.random.torch.numpy()) for m in together}) == 4


@pytest.mark.parametrize("case", ["dqn", "mask", "one"])
def test_other_cases_act_muscle_by_muscle(case):
    n = 1 if case == "one" else 3
    algorithm = "DQN" if case == "dqn" else "PPO"
    hyperparameters = {"learning_starts": 0} if case == "dqn" else None
    brain, together, alone = _agent(spaces.Discrete(2), algorithm, n, mask=case == "mask",
                                    hyperparameters=hyperparameters)
    if case == "dqn":
        for m in together + alone:
            m.update({"warmup": False, "epsilon": 0.3})
    rng = np.random.default_rng(1)
    for _ in range(30):
        observations = _observations(rng, n, mask=case == "mask")
        assert SB3Muscle.propose_batch(together, observations) == [
            m.propose_values(o) for m, o in zip(alone, observations)]
        assert [m.extras for m in together] == [m.extras for m in alone]
    if case == "mask":  # the masked-out action is never taken
        assert all(m.propose_values(o) == 0 for m, o in zip(alone, _observations(rng, n, mask=True)))
