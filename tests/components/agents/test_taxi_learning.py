"""Q-learning on Taxi-v4 driven by hand, following the executor's protocol."""

import numpy as np

from xdoe.agent import Experience, Mode
from xdoe.components.agents import DummyBrain, DummyMuscle, QLearningBrain, QLearningMuscle, RewardObjective
from xdoe.components.environments import GymnasiumEnvironment


def run_episode(env, brain, muscle, objective, episode):
    base = env.start_environment()
    muscle.reset()
    sensors, actuators = base.sensors, base.actuators
    total, step = 0.0, 0
    while True:
        actions = muscle.propose_actions(sensors, actuators)
        state = env.update(actions)
        value = objective.internal_reward(state.rewards)
        total += value
        if muscle.mode == Mode.TRAIN:
            update = brain.thinking(Experience(0, episode, step, sensors, actions, state.rewards, value,
                                               state.sensors, state.done))
            if update is not None:
                muscle.update(update)
        sensors, step = state.sensors, step + 1
        if state.done:
            return total


def make_agent(brain, muscle, env):
    base = env.start_environment()
    brain.setup(base.sensors, base.actuators)
    muscle.setup(base.sensors, base.actuators)
    return brain, muscle


def set_phase(brain, muscle, mode):
    brain.mode = muscle.mode = mode
    if (state := brain.muscle_state()) is not None:
        muscle.update(state)


def test_q_learning_beats_random_on_taxi(tmp_path):
    objective = RewardObjective()

    env = GymnasiumEnvironment(uid="taxi", seed=1, env_id="Taxi-v4")
    brain, muscle = make_agent(QLearningBrain(seed=2, alpha=0.9, gamma=0.95),
                               QLearningMuscle(uid="learner", seed=3, epsilon=0.1), env)
    set_phase(brain, muscle, Mode.TRAIN)
    for episode in range(2000):
        run_episode(env, brain, muscle, objective, episode)
    set_phase(brain, muscle, Mode.TEST)
    trained = [run_episode(env, brain, muscle, objective, e) for e in range(30)]

    renv = GymnasiumEnvironment(uid="taxi", seed=1, env_id="Taxi-v4")
    rbrain, rmuscle = make_agent(DummyBrain(seed=2), DummyMuscle(uid="random", seed=3), renv)
    set_phase(rbrain, rmuscle, Mode.TEST)
    random = [run_episode(renv, rbrain, rmuscle, objective, e) for e in range(30)]

    assert np.mean(random) < -400  # ~ -770 for 200 random steps
    assert np.mean(trained) > 0 and min(trained) > max(-200, np.mean(random))

    # the stored model acts the same after loading into a fresh agent
    brain.store(tmp_path / "q.npz")
    env2 = GymnasiumEnvironment(uid="taxi", seed=5, env_id="Taxi-v4")
    brain2, muscle2 = make_agent(QLearningBrain(seed=0), QLearningMuscle(uid="learner", seed=0), env2)
    brain2.load(tmp_path / "q.npz")
    set_phase(brain2, muscle2, Mode.TEST)
    assert brain2.table == brain.table
    assert np.mean([run_episode(env2, brain2, muscle2, objective, e) for e in range(10)]) > 0


def test_training_is_reproducible():
    def train(seed):
        env = GymnasiumEnvironment(uid="taxi", seed=seed, env_id="Taxi-v4")
        brain, muscle = make_agent(QLearningBrain(seed=seed, alpha=0.5), QLearningMuscle(uid="a", seed=seed), env)
        set_phase(brain, muscle, Mode.TRAIN)
        return [run_episode(env, brain, muscle, RewardObjective(), e) for e in range(20)], brain.table

    (r1, t1), (r2, t2), (r3, _) = train(4), train(4), train(5)
    assert r1 == r2 and t1 == t2 and r1 != r3
