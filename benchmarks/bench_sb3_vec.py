"""Throughput of ``worker: N`` (N environment copies feeding one SB3 brain)
against Stable-Baselines3's own vectorised environments (issue 26.2).

Run: ``python benchmarks/bench_sb3_vec.py [--workers 4] [--steps 16384] [--repeats 3] [--sides xdoe,...]``.

PPO (SB3's defaults) on CartPole-v1, one torch thread, ``steps`` transitions
over all N environment copies (rounded up to whole rollouts of
``n_steps`` x N, what ``learn`` collects), four sides run in turn in every
repeat (the first side rotates, so all see the same load):

* ``xdoe``: ``xdoe.execution.run`` of the run document of ``bench_sb3.py``
  with ``phase_config.worker: N`` (the workers step in lockstep in this
  process; ``SB3Muscle.propose_batch`` acts for the N of them in one forward
  pass of a batch of N, as ``DummyVecEnv``'s side does);
* ``xdoe parallel``: the same within ``xdoe.execution.parallel_workers()``
  (``xrun experiment-start --parallel-workers``: one spawned process per
  worker, the brain in this process);
* ``SB3 DummyVecEnv``: ``PPO("MlpPolicy", make_vec_env("CartPole-v1", N)).learn(steps)``
  (one forward pass of a batch of N per step of the N copies);
* ``SB3 SubprocVecEnv``: the same with ``SubprocVecEnv(start_method="spawn")``.

Prints, per side, transitions per CPU-second (this process plus its finished
children: ``time.process_time`` and ``resource.getrusage(RUSAGE_CHILDREN)``,
so the spawned processes' start-up and imports count) and per wall-second;
medians over repeats; the xdoe/SB3 throughput ratios (target >= 0.9); and the
CPU cost of one policy forward pass with a batch of 1 and of N, which is what
separates N batch-1 passes from one batch-N pass.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
import timeit
from pathlib import Path
from typing import Callable

import torch
from bench_sb3 import document, whole_rollouts
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from xdoe.execution import parallel_workers, run

TARGET = 0.9


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(side: Callable[[], int]) -> tuple[float, float, int]:
    """(wall s, CPU s of this process and its finished children, transitions) of ``side()``."""
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    steps = side()
    return (time.perf_counter() - start, time.process_time() - cpu + _children_cpu() - children, steps)


def xdoe_side(steps: int, workers: int, seed: int, parallel: bool) -> int:
    # in worker processes each worker's copy of MaxStepsTerminationCondition counts its own steps
    budget = -(-steps // workers) if parallel else steps
    with tempfile.TemporaryDirectory() as tmp, parallel_workers(parallel):
        result = run(document("PPO", budget, seed, workers=workers), store=f"sqlite:///{Path(tmp) / 's.db'}",
                     results=Path(tmp) / "results")
    if not result.ok:
        raise SystemExit(result.traceback)
    return result.phases[0].steps


def sb3_side(steps: int, workers: int, seed: int, subprocess: bool) -> int:
    kwargs = {"vec_env_cls": SubprocVecEnv, "vec_env_kwargs": {"start_method": "spawn"}} if subprocess else {
        "vec_env_cls": DummyVecEnv}
    env = make_vec_env("CartPole-v1", n_envs=workers, seed=seed, **kwargs)
    try:
        model = PPO("MlpPolicy", env, seed=seed)
        model.learn(steps)
        return model.num_timesteps
    finally:
        env.close()


def forward_cost(workers: int) -> tuple[float, float]:
    """CPU microseconds of one ``policy(obs)`` (PPO's acting pass) with a batch of 1 and of ``workers``."""
    model = PPO("MlpPolicy", "CartPole-v1", seed=0)
    out = []
    for batch in (1, workers):
        obs = torch.zeros((batch, 4))

        def one() -> None:
            with torch.no_grad():
                model.policy(obs)

        out.append(min(timeit.Timer(one, timer=time.process_time).repeat(5, 500)) / 500 * 1e6)
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sides", default="all",
                        help="comma-separated sides to run (xdoe, 'xdoe parallel', 'SB3 DummyVecEnv', "
                             "'SB3 SubprocVecEnv'), default all; ratios are printed for the pairs run")
    args = parser.parse_args()
    torch.set_num_threads(1)  # what SB3Brain's torch_threads default sets on the xdoe side
    n, steps = args.workers, whole_rollouts("PPO", args.steps, args.workers)
    sides = {
        "xdoe": lambda seed: xdoe_side(steps, n, seed, parallel=False),
        "xdoe parallel": lambda seed: xdoe_side(steps, n, seed, parallel=True),
        "SB3 DummyVecEnv": lambda seed: sb3_side(steps, n, seed, subprocess=False),
        "SB3 SubprocVecEnv": lambda seed: sb3_side(steps, n, seed, subprocess=True),
    }
    if args.sides != "all":
        wanted = [name.strip() for name in args.sides.split(",")]
        unknown = sorted(set(wanted) - set(sides))
        if unknown:
            parser.error(f"unknown sides: {', '.join(unknown)}; known: {', '.join(sides)}")
        sides = {name: side for name, side in sides.items() if name in wanted}
    xdoe_side(64, 1, 0, parallel=False)  # warm-up: first-use imports on neither side's clock
    print(f"PPO on CartPole-v1, {n} environment copies, {steps} transitions per run "
          f"({args.steps} rounded up to whole rollouts of {steps // whole_rollouts('PPO', 1, n)} x "
          f"{whole_rollouts('PPO', 1, n)})", flush=True)
    figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            wall, cpu, done = timed(lambda: sides[name](r))
            figures[name].append((wall, cpu, done))
            print(f"repeat {r} {name}: {done} transitions, {wall:.1f} s wall, {cpu:.1f} s CPU "
                  f"(this process and its children): {done / cpu:.0f} per CPU-second, "
                  f"{done / wall:.0f} per wall-second", flush=True)
    rates = {name: (statistics.median(d / c for _, c, d in f), statistics.median(d / w for w, _, d in f))
             for name, f in figures.items()}
    print(f"medians of {args.repeats} repeats (transitions per second):")
    for name, (cpu, wall) in rates.items():
        print(f"  {name:18s} {cpu:7.0f} per CPU-second {wall:7.0f} per wall-second")
    for ours, theirs in (("xdoe", "SB3 DummyVecEnv"), ("xdoe parallel", "SB3 SubprocVecEnv"),
                         ("xdoe", "SB3 SubprocVecEnv")):
        if ours not in rates or theirs not in rates:
            continue
        print(f"{ours} / {theirs}: {rates[ours][0] / rates[theirs][0]:.3f} of the throughput per CPU-second, "
              f"{rates[ours][1] / rates[theirs][1]:.3f} per wall-second (target >= {TARGET})")
    one, batch = forward_cost(n)
    print(f"one policy(obs) forward pass: batch of 1 {one:.0f} us CPU, batch of {n} {batch:.0f} us CPU: "
          f"{n} batch-1 passes cost {n * one / batch:.2f}x one batch-{n} pass")


if __name__ == "__main__":
    main()
