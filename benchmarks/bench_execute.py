"""Speed of xrun on a Taxi-v4 Q-learning run against a plain gymnasium loop.

Prints steps per second of:

- ``plain``: a hand-written loop — ``gymnasium.make("Taxi-v4")``, epsilon-greedy
  actions with random tie-breaking and the tabular Q-learning update of
  ``xdoe.agents.QLearningBrain`` (Watkins & Dayan 1992) — in this process;
- ``xrun none``: ``xdoe.execution.run`` of the same run (episodes stored, no steps);
- ``xrun all``: the same with every step stored (``store_steps="all"``);

the ratios to the plain loop, also "steady": with the CPU of a one-episode run
(run()'s per-run set-up: store, results files, the environment) taken off
both, the step loop alone, as ``step_loop_cachegrind.py`` counts it (issue 16's targets: >= 0.75 with episode-level
storage, >= 0.5 with every step stored); the whole-process time of
``xrun experiment-start`` of a ``--process-episodes`` run (3000 episodes:
about 65,000 steps; start-up, store creation and the results files included)
against the plain loop of as many episodes in a fresh process (target: steps
per second >= 0.6x the plain process's); the wall time of ``xrun
experiment-start`` on a one-episode run (the one-step start-up target, 0.35
s, is ``bench_startup.py``'s); and the peak Python memory of runs with 1x and
4x the episodes (flat: the recorder buffers at most 1000 rows and flushes).

The machine may be shared: every figure is measured ``--repeats`` times,
interleaved, and the medians are printed with the load average, as steps per
second of wall time and of CPU time (``time.process_time`` in process; user +
system time of the child processes for the whole-process figure; less
disturbed by other processes).

Usage: ``python benchmarks/bench_execute.py [--episodes N] [--repeats R] [--process-episodes N]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ALPHA, GAMMA, EPSILON = 0.5, 0.95, 0.1
HERE = Path(__file__).resolve().parent
#: issue 16's targets: ratio of steps per second to the plain loop
TARGETS = {"none": 0.75, "all": 0.5, "process": 0.6}
_STORE_NUMBERS = itertools.count()


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


def plain_loop(episodes: int, seed: int = 7, *, alpha: float = ALPHA, gamma: float = GAMMA,
               epsilon: float = EPSILON) -> tuple[int, float, float, float]:
    """Steps, wall seconds and CPU seconds of the hand-written loop, and the
    CPU seconds of its set-up (``gymnasium.make`` and the Q-table), which
    ``run()``'s CPU time includes (it constructs the environment) and the
    loop's does not; the ratios are printed both ways.

    It does the same work per step as ``QLearningMuscle`` and
    ``QLearningBrain`` (epsilon-greedy action with uniform tie-breaking, the
    Watkins update with truncation as termination), written the fastest
    plain way we know, with the same idioms as those classes (a Q-table row
    as a Python list for the maximum and the tie check), so that the ratio
    measures what xrun adds and not a difference in Q-learning code.
    """
    import gymnasium

    setup = time.process_time()
    env = gymnasium.make("Taxi-v4")
    rng = np.random.default_rng(seed)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    n_actions = int(env.action_space.n)
    steps = 0
    start, cpu = time.perf_counter(), time.process_time()
    setup = cpu - setup
    obs, _ = env.reset(seed=seed)
    for episode in range(episodes):
        if episode:
            obs, _ = env.reset()
        done = False
        while not done:
            if rng.random() < epsilon:
                action = int(rng.integers(n_actions))
            else:
                row = q[obs].tolist()
                best_value = max(row)
                if row.count(best_value) == 1:
                    action = row.index(best_value)
                else:  # random tie-breaking, the same draw as rng.choice(best)
                    best = [i for i, v in enumerate(row) if v == best_value]
                    action = best[int(rng.integers(len(best)))]
            obs2, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            target = float(reward) + (0.0 if done else gamma * max(q[obs2].tolist()))
            q[obs, action] += alpha * (target - q[obs, action])
            obs = obs2
            steps += 1
    return steps, time.perf_counter() - start, time.process_time() - cpu, setup


def xrun(episodes: int, store_steps: str, tmp: Path) -> tuple[int, float, float]:
    """Steps, wall seconds (the run's own ``wall_time``: from the start of its
    recording to its end) and CPU seconds (of the whole ``run()`` call,
    document loading and store opening included) of an xrun run (``run()``
    draws no lay-down diagram: ``xrun experiment-start`` does)."""
    from xdoe.execution import run
    from xdoe.store import Store

    # a new store each time: a finished run is skipped when started again
    name = f"bench-{store_steps.replace(':', '')}-{episodes}-{next(_STORE_NUMBERS)}.sqlite"
    store = Store(f"sqlite:///{tmp / name}")
    cpu = time.process_time()
    try:
        result = run(document(episodes), store=store, results=tmp / "results", store_steps=store_steps)
        cpu = time.process_time() - cpu
    finally:
        store.close()
    assert result.status == "finished" and result.steps > 0, (result.status, result.traceback)
    return result.steps, result.wall_time, cpu


def peak_memory(episodes: int, tmp: Path) -> float:
    tracemalloc.start()
    xrun(episodes, "none", tmp)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def cli_one_episode(tmp: Path, repeats: int) -> list[float]:
    """Wall seconds of ``xrun experiment-start`` on a one-episode run, each
    in a fresh process (imports included) with a new store."""
    from ruamel.yaml import YAML

    path = tmp / "one.yaml"
    with open(path, "w") as fh:
        YAML().dump(document(1), fh)
    xrun_script = shutil.which("xrun")
    command = [xrun_script] if xrun_script else [sys.executable, "-m", "xdoe.cli._xrun"]
    walls = []
    for i in range(repeats):
        start = time.perf_counter()
        subprocess.run(  # a new store each time: its creation is part of a first run
            [*command, "experiment-start", str(path), "--store", f"sqlite:///{tmp / f'cli-{i}.sqlite'}",
             "--results", str(tmp / "results"), "--quiet"],
            check=True, capture_output=True,
        )
        walls.append(time.perf_counter() - start)
    return walls


def plain_process(episodes: int, steps_file: Path) -> list[str]:
    """The command of a fresh process running :func:`plain_loop` of
    ``episodes`` and writing its steps to ``steps_file``."""
    return [sys.executable, "-c",
            f"import sys; sys.path.insert(0, {str(HERE)!r}); from bench_execute import plain_loop; "
            f"open({str(steps_file)!r}, 'w').write(str(plain_loop({episodes})[0]))"]


def xrun_process(path: Path, store: Path, results: Path, *options: str) -> list[str]:
    """The command of a fresh ``xrun experiment-start --quiet`` process of
    run document ``path`` into SQLite file ``store`` and ``results``."""
    return [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "experiment-start", str(path),
            "--store", f"sqlite:///{store}", "--results", str(results), "--quiet", *options]


def whole_process(episodes: int, tmp: Path, repeats: int) -> dict[str, list[tuple[int, float, float]]]:
    """Steps, wall and CPU seconds (user + system of the child process) of
    the plain loop and of ``xrun experiment-start`` of ``episodes`` episodes,
    each in a fresh process (imports, store creation, results files
    included), interleaved round by round."""
    from bench_jobs import timed  # the child-CPU accounting of bench_jobs.py
    from ruamel.yaml import YAML

    path = tmp / "long.yaml"
    with open(path, "w") as fh:
        YAML().dump(document(episodes), fh)
    steps_file = tmp / "plain-steps.txt"
    plain = plain_process(episodes, steps_file)
    out: dict[str, list[tuple[int, float, float]]] = {"plain": [], "xrun": []}
    for i in range(repeats):
        wall, cpu, _ = timed([plain], tmp)
        out["plain"].append((int(steps_file.read_text()), wall, cpu))
        store = tmp / f"long-{i}.sqlite"
        wall, cpu, _ = timed([xrun_process(path, store, tmp / "results")], tmp)
        with sqlite3.connect(store) as con:
            (steps,) = con.execute("SELECT sum(steps) FROM episode").fetchone()
        out["xrun"].append((int(steps), wall, cpu))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5,
                        help="measurements of each figure; medians are printed (default 5)")
    parser.add_argument("--process-episodes", type=int, default=3000,
                        help="episodes of the whole-process figure (default 3000: about 65,000 steps)")
    args = parser.parse_args()
    policies = ("none", "all")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        xrun(20, "none", tmp)  # warm imports
        # steps per second of wall time and of CPU time (less disturbed by
        # other processes on a shared machine)
        rates: dict[str, list[float]] = {name: [] for name in ("plain", *policies)}
        cpu_rates: dict[str, list[float]] = {name: [] for name in ("plain", *policies)}
        ratios: dict[str, list[float]] = {name: [] for name in policies}
        cpu_ratios: dict[str, list[float]] = {name: [] for name in policies}
        # the plain loop's CPU time with its set-up counted, as run()'s counts its own
        setup_ratios: dict[str, list[float]] = {name: [] for name in policies}
        # the steady step loop: a one-episode run's CPU (run()'s per-run set-up: store,
        # results files, Taxi) taken off both, as step_loop_cachegrind.py counts it
        steady_ratios: dict[str, list[float]] = {name: [] for name in policies}
        for _ in range(args.repeats):
            # interleaved, so that a change of load hits all three alike; each
            # ratio is taken against the plain loop measured just before it
            plain_steps, wall, cpu, setup = plain_loop(args.episodes)
            plain, plain_cpu = plain_steps / wall, plain_steps / cpu
            plain_setup_cpu = plain_steps / (cpu + setup)
            rates["plain"].append(plain)
            cpu_rates["plain"].append(plain_cpu)
            one_steps, _, one_cpu, _ = plain_loop(1)
            plain_steady = (plain_steps - one_steps) / (cpu - one_cpu)
            for policy in policies:
                one_steps, _, one_cpu = xrun(1, policy, tmp)
                steps, wall, cpu = xrun(args.episodes, policy, tmp)
                steady_ratios[policy].append((steps - one_steps) / (cpu - one_cpu) / plain_steady)
                rates[policy].append(steps / wall)
                cpu_rates[policy].append(steps / cpu)
                ratios[policy].append(steps / wall / plain)
                cpu_ratios[policy].append(steps / cpu / plain_cpu)
                setup_ratios[policy].append(steps / cpu / plain_setup_cpu)
        med = statistics.median

        def spread(values: list[float], fmt: str) -> str:
            return f"{med(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"

        # similar step counts: both loops learn alike (they differ only in seeds)
        print(f"{args.episodes} episodes ({plain_steps} steps in the plain loop, {steps} per xrun run); "
              f"medians of {args.repeats}, [min-max]; wall time | CPU time")
        print(f"plain gymnasium loop  : {spread(rates['plain'], ',.0f')} | "
              f"{spread(cpu_rates['plain'], ',.0f')} steps/s")
        for policy in policies:
            target = TARGETS[policy.split(":")[0]]
            print(f"xrun store_steps={policy:<4} : {spread(rates[policy], ',.0f')} | "
                  f"{spread(cpu_rates[policy], ',.0f')} steps/s")
            print(f"    ratio to plain     : {spread(ratios[policy], '.2f')} | "
                  f"{spread(cpu_ratios[policy], '.2f')} (target >= {target}); CPU with the plain "
                  f"loop's set-up counted: {spread(setup_ratios[policy], '.2f')}; steady (a one-episode "
                  f"run's CPU taken off each): {spread(steady_ratios[policy], '.2f')}")
        runs = whole_process(args.process_episodes, tmp, args.repeats)
        for name, label in (("plain", "plain loop, whole process"), ("xrun", "xrun experiment-start   ")):
            rows = runs[name]
            print(f"{label}: {rows[0][0]} steps; {spread([w for _, w, _ in rows], '.2f')} s wall | "
                  f"{spread([c for _, _, c in rows], '.2f')} s CPU")
        ratio_wall = [(x[0] / x[1]) / (p[0] / p[1]) for p, x in zip(runs["plain"], runs["xrun"])]
        ratio_cpu = [(x[0] / x[2]) / (p[0] / p[2]) for p, x in zip(runs["plain"], runs["xrun"])]
        print(f"    steps/s ratio to plain: {spread(ratio_wall, '.2f')} | {spread(ratio_cpu, '.2f')} "
              f"(target >= {TARGETS['process']})")
        walls = cli_one_episode(tmp, args.repeats)
        print(f"xrun experiment-start, one episode: {spread(walls, '.2f')} s wall "
              f"(one-step start-up: bench_startup.py, target <= 0.35 s)")
        # both sizes beyond the recorder's 1000-row buffer, so growth would be a leak
        small, large = peak_memory(args.episodes, tmp), peak_memory(4 * args.episodes, tmp)
        print(f"peak traced memory: {small:.1f} MiB ({args.episodes} episodes), "
              f"{large:.1f} MiB ({4 * args.episodes} episodes)")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
