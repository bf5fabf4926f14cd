"""xrun's overhead on Stable-Baselines3 training (issues 13, 26, 35.4).

Run: ``python benchmarks/bench_sb3.py [--steps 10000] [--repeats 3] [--algorithms PPO A2C DQN SAC]``.

For each algorithm, interleaved ``repeats`` times (the machine is shared, so
both sides alternate under the same load):

* xdoe: ``xdoe.execution.run`` of a one-phase run document, ``SB3Brain`` /
  ``SB3Muscle`` on ``GymnasiumEnvironment`` CartPole-v1 (SAC: Pendulum-v1) for ``steps``
  transitions (``MaxStepsTerminationCondition(phase_steps=...)``), recorded
  in a SQLite store under a temporary folder;
* plain SB3: ``ALGO("MlpPolicy", ENV, seed=..., **hp).learn(steps)``
  with the same hyperparameters and the same torch thread count (1).

Prints the wall times and the CPU times of this process (``time.process_time``;
both sides run in it, with one torch thread, so CPU time is what each side
costs even when other programs share the cores), medians over repeats, and
their ratios, xdoe / plain (target <= 1.0 at 10,000 steps, issue 35.4). Process start-up and
imports are excluded on both sides, and each algorithm first runs a short warm-up on both sides
off the clock (``WARMUP_STEPS``): without it the first side measured paid the algorithm's
first-use costs (SAC at 3,000 steps: whichever side went first took ~8 % more CPU).
Hyperparameters: SB3's defaults for PPO and A2C; rl-zoo's CartPole-v1 DQN and
Pendulum-v1 SAC.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import tempfile
import time
from pathlib import Path

import torch
from stable_baselines3 import A2C, DQN, PPO, SAC
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

from xdoe.execution import run

HYPERPARAMETERS = {
    "PPO": {},
    "A2C": {},
    "SAC": {"learning_rate": 1e-3},
    "DQN": {"learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100000, "learning_starts": 1000,
            "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
            "exploration_fraction": 0.16, "exploration_final_eps": 0.04,
            "policy_kwargs": {"net_arch": [256, 256]}},
}
CLASSES = {"PPO": PPO, "A2C": A2C, "DQN": DQN, "SAC": SAC}
ENVIRONMENTS = {"SAC": "Pendulum-v1"}  # the others: CartPole-v1
TARGET = 1.0
#: each algorithm's warm-up on both sides, off the clock: past every ``learning_starts`` here (DQN's
#: 1000), so first uses (torch kernels, the allocator's growth) fall on neither side's figures
WARMUP_STEPS = 1100


def environment(algorithm: str) -> str:
    return ENVIRONMENTS.get(algorithm, "CartPole-v1")


def whole_rollouts(algorithm: str, steps: int, n_envs: int = 1) -> int:
    """``steps`` rounded up to whole rollouts, the amount ``learn(steps)`` collects
    (it finishes the rollout it is in: ``n_steps`` x ``n_envs`` transitions for
    PPO/A2C, ``train_freq`` x ``n_envs`` for DQN/SAC), so both sides collect as
    many transitions and train as often."""
    defaults = inspect.signature(CLASSES[algorithm].__init__).parameters
    key = "n_steps" if issubclass(CLASSES[algorithm], OnPolicyAlgorithm) else "train_freq"
    unit = HYPERPARAMETERS[algorithm].get(key, defaults[key].default) * n_envs
    return -(-steps // unit) * unit


def document(algorithm: str, steps: int, seed: int, workers: int = 1) -> dict:
    agent = {"name": "agent",
             "brain": {"name": "xdoe.agents:SB3Brain",
                       "params": {"algorithm": algorithm, "hyperparameters": HYPERPARAMETERS[algorithm],
                                  "total_timesteps": steps}},
             "muscle": {"name": "xdoe.agents:SB3Muscle"},
             "objective": {"name": "xdoe.agents:RewardObjective"}}
    phase = {"environments": [{"environment": {"name": "xdoe.environments:GymnasiumEnvironment",
                                               "uid": "cp", "params": {"env_id": environment(algorithm)}}}],
             "agents": [agent],
             "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": [
                 {"name": "xdoe.conditions:EnvironmentTerminationCondition"},
                 {"name": "xdoe.conditions:MaxStepsTerminationCondition", "params": {"phase_steps": steps}}]},
             "phase_config": {"mode": "train", "worker": workers, "episodes": 10**6}}
    return {"uid": f"bench-sb3-{algorithm}-{seed}", "experiment_uid": "bench-sb3", "seed": seed,
            "schedule": [{"train": phase}]}


def xdoe_side(algorithm: str, steps: int, seed: int) -> tuple[float, float, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        result = run(document(algorithm, steps, seed), store=f"sqlite:///{Path(tmp) / 's.db'}",
                     results=Path(tmp) / "results")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if not result.ok:
        raise SystemExit(result.traceback)
    phase = result.phases[0]
    return seconds, cpu, phase.steps, phase.rewards["agent"]


def plain_side(algorithm: str, steps: int, seed: int) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    from stable_baselines3.common.logger import Logger

    model = CLASSES[algorithm]("MlpPolicy", environment(algorithm), seed=seed, **HYPERPARAMETERS[algorithm])
    # the null logger the xdoe brain gives its model: equal work, and no empty SB3-<time> folder
    # left in the temporary directory by each learn() (SB3's default logger makes one)
    model.set_logger(Logger(None, []))
    model.learn(steps)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="repeat r runs seed first_seed + r on both sides (to add repeats from another process)")
    parser.add_argument("--algorithms", nargs="+", default=["PPO", "A2C", "DQN", "SAC"],
                        choices=sorted(CLASSES))
    args = parser.parse_args()
    torch.set_num_threads(1)  # what SB3Brain's torch_threads default sets on the xdoe side
    xdoe_side("PPO", 64, 0)  # warm-up: first-use imports (torch's optimiser, dynamo) on neither side's clock
    requested = args.steps
    for algorithm in args.algorithms:
        ours, theirs = [], []
        args.steps = whole_rollouts(algorithm, requested)
        if args.steps != requested:
            print(f"{algorithm}: {requested} steps rounded up to whole rollouts: {args.steps} "
                  f"(what learn({requested}) collects)", flush=True)
        warmup = whole_rollouts(algorithm, min(WARMUP_STEPS, requested))
        xdoe_side(algorithm, warmup, seed=10**6)
        plain_side(algorithm, warmup, seed=10**6)
        for r in range(args.repeats):
            if r % 2:  # alternate which side goes first
                theirs.append(plain_side(algorithm, args.steps, seed=args.first_seed + r))
            seconds, cpu, steps, reward = xdoe_side(algorithm, args.steps, seed=args.first_seed + r)
            ours.append((seconds, cpu))
            if not r % 2:
                theirs.append(plain_side(algorithm, args.steps, seed=args.first_seed + r))
            print(f"{algorithm} repeat {r}: xdoe {seconds:.1f} s wall, {cpu:.1f} s CPU ({steps} steps, "
                  f"mean episode reward {reward:.1f}); plain SB3 {theirs[-1][0]:.1f} s wall, "
                  f"{theirs[-1][1]:.1f} s CPU", flush=True)
        for i, what in ((0, "wall"), (1, "CPU")):
            a, b = statistics.median(o[i] for o in ours), statistics.median(t[i] for t in theirs)
            ratios = sorted(o[i] / t[i] for o, t in zip(ours, theirs))
            print(f"{algorithm} {what}: xdoe {a:.1f} s vs plain SB3 {b:.1f} s for {args.steps} steps "
                  f"(medians of {args.repeats}): ratio {a / b:.3f}; per-repeat ratios "
                  f"{min(ratios):.3f}-{max(ratios):.3f} (target <= {TARGET})", flush=True)


if __name__ == "__main__":
    main()
