"""Speed of xrun on a Taxi-v4 Q-learning run against a plain gymnasium loop.

Prints steps per second of:

- ``plain``: a hand-written loop — ``gymnasium.make("Taxi-v4")``, epsilon-greedy
  actions with random tie-breaking and the tabular Q-learning update of
  ``xdoe.agents.QLearningBrain`` (Watkins & Dayan 1992) — in this process;
- ``xrun none``: ``xdoe.execution.run`` of the same run (episodes stored, no steps);
- ``xrun all``: the same with every step stored (``store_steps="all"``);

the ratios to the plain loop (targets: >= 0.5 with episode-level storage,
>= 0.25 with every step stored), the wall time of ``xrun experiment-start``
on a one-episode run (target < 1 s), and the peak Python memory of runs with
1x and 4x the episodes (flat: the recorder buffers at most 1000 rows and
flushes).

Usage: ``python benchmarks/bench_execute.py [--episodes N]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ALPHA, GAMMA, EPSILON = 0.5, 0.95, 0.1


def document(episodes: int, seed: int = 7) -> dict:
    return {
        "uid": "bench-taxi",
        "experiment_uid": "bench",
        "seed": seed,
        "schedule": [
            {
                "training": {
                    "environments": [
                        {"environment": {"name": "xdoe.environments:GymnasiumEnvironment",
                                         "uid": "taxi", "params": {"env_id": "Taxi-v4"}}}
                    ],
                    "agents": [
                        {
                            "name": "learner",
                            "brain": {"name": "xdoe.agents:QLearningBrain",
                                      "params": {"alpha": ALPHA, "gamma": GAMMA}},
                            "muscle": {"name": "xdoe.agents:QLearningMuscle",
                                       "params": {"epsilon": EPSILON}},
                            "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
                            "sensors": ["taxi.observation"],
                            "actuators": ["taxi.action"],
                        }
                    ],
                    "simulation": {
                        "name": "xdoe.simulation:VanillaSimController",
                        "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}],
                    },
                    "phase_config": {"mode": "train", "worker": 1, "episodes": episodes},
                }
            }
        ],
    }


def plain_loop(episodes: int, seed: int = 7) -> tuple[int, float]:
    """Steps and seconds of the hand-written loop."""
    import gymnasium

    env = gymnasium.make("Taxi-v4")
    rng = np.random.default_rng(seed)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    n_actions = int(env.action_space.n)
    steps = 0
    start = time.perf_counter()
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        obs, _ = env.reset()
        done = False
        while not done:
            if rng.random() < EPSILON:
                action = int(rng.integers(n_actions))
            else:
                values = q[obs]
                best = np.flatnonzero(values == values.max())
                action = int(best[0]) if best.size == 1 else int(rng.choice(best))
            obs2, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            target = float(reward) + (0.0 if done else GAMMA * float(q[obs2].max()))
            q[obs, action] += ALPHA * (target - q[obs, action])
            obs = obs2
            steps += 1
    return steps, time.perf_counter() - start


def xrun(episodes: int, store_steps: str, tmp: Path) -> tuple[int, float]:
    from xdoe.execution import run
    from xdoe.store import Store

    name = "bench-" + store_steps.replace(":", "") + f"-{episodes}.sqlite"
    store = Store(f"sqlite:///{tmp / name}")
    try:
        result = run(document(episodes), store=store, results=tmp / "results", store_steps=store_steps)
    finally:
        store.close()
    assert result.ok, result.traceback
    return result.steps, result.wall_time


def peak_memory(episodes: int, tmp: Path) -> float:
    tracemalloc.start()
    xrun(episodes, "none", tmp)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def cli_one_episode(tmp: Path) -> float:
    from ruamel.yaml import YAML

    path = tmp / "one.yaml"
    with open(path, "w") as fh:
        YAML().dump(document(1), fh)
    xrun_script = shutil.which("xrun")
    command = [xrun_script] if xrun_script else [sys.executable, "-m", "xdoe.cli._xrun"]
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(
            [*command, "experiment-start", str(path), "--store", f"sqlite:///{tmp / 'cli.sqlite'}",
             "--results", str(tmp / "results"), "--quiet"],
            check=True, capture_output=True,
        )
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        xrun(20, "none", tmp)  # warm imports
        p_steps, p_time = plain_loop(args.episodes)
        plain = p_steps / p_time
        print(f"plain gymnasium loop : {plain:10,.0f} steps/s ({p_steps} steps, {p_time:.2f} s)")
        for policy, target in (("none", 0.5), ("all", 0.25)):
            steps, seconds = xrun(args.episodes, policy, tmp)
            rate = steps / seconds
            print(f"xrun store_steps={policy:<4} : {rate:10,.0f} steps/s ({steps} steps, {seconds:.2f} s)"
                  f"  ratio {rate / plain:.2f} (target >= {target})")
        print(f"xrun experiment-start, one episode: {cli_one_episode(tmp):.2f} s wall, best of 3 "
              "(target < 1 s)")
        # both sizes beyond the recorder's 1000-row buffer, so growth would be a leak
        small, large = peak_memory(args.episodes, tmp), peak_memory(4 * args.episodes, tmp)
        print(f"peak traced memory: {small:.1f} MiB ({args.episodes} episodes), "
              f"{large:.1f} MiB ({4 * args.episodes} episodes)")


if __name__ == "__main__":
    main()
