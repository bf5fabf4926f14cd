"""Adaptive campaigns (issue 37, item 5) against the tools they are compared
with, each figure printed beside its reference.

1. **Overhead per trial against Optuna alone.** The noisy quadratic of
   ``tests/optuna/optuna_truth.py`` (one-step episodes paying the formula
   plus N(0, 0.1^2), two episodes per run, one run per trial), ``--trials``
   TPE trials in batches of ``--batch``:

   - ``xrun optimize`` (``--in-process``, and with each batch's runs in a
     worker process, ``--jobs 1``): every trial written as run documents,
     run by the executor, recorded in a fresh SQLite store, read back and
     told to the study in its journal;
   - the reference: a hand-written Optuna loop, the same TPE sampler
     (``TPESampler``, the same ``n_startup_trials``, seeded with the
     document's seed; xdoe seeds a sampler per trial from it), asking a batch,
     calling the same formula plus the same noise (two episodes' mean), telling
     the batch in trial order, in memory.

   Per trial, after a warm-up round (imports): wall and CPU time (this process; ``--jobs 1`` adds its worker
   processes' CPU time, from ``resource.getrusage(RUSAGE_CHILDREN)``); the
   overhead is xdoe's minus Optuna's.

2. **Steps saved by successive halving against Ray Tune's ASHA, on the same
   grid**: the Taxi grid of ``tests/optuna/test_known_truth.py`` (alpha
   0.05, 0.2, 0.9 x epsilon 0.05, 0.1, two repetitions, 600 training
   episodes of at most 60 steps, gamma 0.99), rungs at 5,000 x 2^k training
   steps, the value at a rung the mean training reward of the episodes since
   the previous rung, one run at a time in xdoe's run order. xdoe: ``xrun
   experiment-start`` of the grid, unpruned and with ``run_config.prune``
   (``successive_halving``, ``min_steps: 5000``, ``reduction_factor: 2``).
   Ray Tune: a function trainable doing the same tabular Q-learning (the loop
   of ``bench_execute.plain_loop``: epsilon-greedy with random tie-breaking,
   the Watkins update), reporting after every episode, under ``FIFOScheduler``
   and ``ASHAScheduler(time_attr="steps", grace_period=5000,
   reduction_factor=2)``, ``max_concurrent_trials=1``. Ray runs in its own
   virtual environment (``python -m venv --system-site-packages DIR``, then
   ``pip install "ray[tune]"``; created when missing, reused when present;
   ``--system-site-packages`` so that it sees this interpreter's numpy and
   gymnasium). Figures: training steps spent, the share of the unpruned
   grid's, and how many runs of the grid's best setting (by xdoe's test
   phase: alpha 0.9, epsilon 0.05) ran to the end.

Usage: ``python benchmarks/bench_adaptive.py [--trials 40] [--batch 4] [--repeats 3] [--venv /tmp/venv-ray]
[--skip-ray]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "tests" / "optuna"), str(ROOT / "tests" / "analysis")]

import optuna_truth  # noqa: E402

SEED = 11
STARTUP = 10
ALPHAS, EPSILONS, REPS, EPISODES = (0.05, 0.2, 0.9), (0.05, 0.1), 2, 600
GRACE, RF = 5000, 2
BEST = {"alpha": 0.9, "epsilon": 0.05}

RAY_APP = '''"""The Ray Tune side of bench_adaptive.py (run in the Ray venv)."""
import json
import sys
import tempfile
import time


def taxi(config):
    import gymnasium
    import numpy as np
    from ray import tune

    alpha, epsilon, gamma, seed = config["alpha"], config["epsilon"], 0.99, config["seed"]
    env = gymnasium.make("Taxi-v4", max_episode_steps=60)
    rng = np.random.default_rng(seed)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    n = int(env.action_space.n)
    steps, since, rung = 0, [], config["grace"]
    obs, _ = env.reset(seed=seed)
    for episode in range(config["episodes"]):
        if episode:
            obs, _ = env.reset()
        done, total = False, 0.0
        while not done:
            if rng.random() < epsilon:
                action = int(rng.integers(n))
            else:
                row = q[obs].tolist()
                best = max(row)
                ties = [i for i, v in enumerate(row) if v == best]
                action = ties[int(rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
            obs2, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            target = float(reward) + (0.0 if done else gamma * max(q[obs2].tolist()))
            q[obs, action] += alpha * (target - q[obs, action])
            obs, steps, total = obs2, steps + 1, total + float(reward)
        since.append(total)
        value = sum(since) / len(since)  # xdoe's rung value: the mean since the previous rung
        if steps >= rung:
            while steps >= rung:
                rung *= config["rf"]
            since = []
        tune.report({"steps": steps, "reward": value, "complete": episode == config["episodes"] - 1})


def main():
    args = json.loads(sys.argv[1])
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    out = {"ray": ray.__version__}
    for name in ("fifo", "asha"):
        scheduler = (ASHAScheduler(time_attr="steps", max_t=10 ** 9, grace_period=args["grace"],
                                   reduction_factor=args["rf"]) if name == "asha" else FIFOScheduler())
        space = {"point": tune.grid_search(args["points"])}  # one list: xdoe's run order
        start = time.perf_counter()
        tuner = tune.Tuner(lambda c: taxi({**c["point"], "episodes": args["episodes"], "grace": args["grace"],
                                             "rf": args["rf"]}),
                           param_space=space,
                           tune_config=tune.TuneConfig(metric="reward", mode="max", scheduler=scheduler,
                                                       max_concurrent_trials=1),
                           run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(), verbose=0))
        results = tuner.fit()
        out[name] = {"wall": time.perf_counter() - start,
                     "trials": [{**r.config["point"], "steps": r.metrics["steps"],
                                 "complete": bool(r.metrics.get("complete"))} for r in results]}
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
'''


# ------------------------------------------------------------------ 1. overhead per trial

def optuna_alone(trials: int, batch: int) -> tuple[float, float, list[float]]:
    """``(wall s, CPU s, true values in trial order)`` of the hand-written Optuna loop."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    start, cpu = time.perf_counter(), time.process_time()
    dists = {name: optuna.distributions.FloatDistribution(lo, hi) for name, (lo, hi) in optuna_truth.RANGES.items()}
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=SEED, n_startup_trials=STARTUP))
    rng = np.random.default_rng([SEED, 99])
    values = []
    for _ in range(0, trials, batch):
        asked = [study.ask(dists) for _ in range(min(batch, trials - len(values)))]
        for trial in asked:
            true = optuna_truth.truth(**trial.params)
            values.append(true)
            study.tell(trial, true + float(rng.normal(0, 0.1, 2).mean()))
    return time.perf_counter() - start, time.process_time() - cpu, values


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def xdoe_optimize(trials: int, batch: int, mode: str) -> tuple[float, float, list[float]]:
    """``(wall s, CPU s, true values in trial order)`` of ``xrun optimize`` (``mode``: in-process or jobs)."""
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "doc.yaml"
        doc.write_text(json.dumps(optuna_truth.document(
            {"method": "optuna", "sampler": "tpe", "trials": trials, "batch": batch, "startup_trials": STARTUP},
            seed=SEED)))
        out = Path(tmp) / "out"
        start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        generate(doc, out)
        how = ["--in-process"] if mode == "in-process" else ["--jobs", "1"]
        env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "optuna"), str(ROOT / "tests" / "analysis"),
                                              os.environ.get("PYTHONPATH", "")])}
        done = CliRunner(env=env).invoke(main, ["optimize", str(doc), "-o", str(out), *how, "-q", "--no-laydown"])
        wall, used = time.perf_counter() - start, time.process_time() - cpu + _children_cpu() - children
        assert done.exit_code == 0, done.output
        points = json.loads((out / "manifest.json").read_text())["design"]["doe"]["points"]
    return wall, used, [optuna_truth.truth(**p["natural"]) for p in points]


def overhead(trials: int, batch: int, repeats: int) -> None:
    rows: dict[str, list[tuple[float, float]]] = {"optuna": [], "in-process": [], "jobs": []}
    optuna_alone(batch, batch)  # warm-up, not counted: imports, first store
    xdoe_optimize(batch, batch, "in-process")
    for _ in range(repeats):  # interleaved rounds
        for name in rows:
            wall, cpu, values = (optuna_alone(trials, batch) if name == "optuna"
                                 else xdoe_optimize(trials, batch, name))
            assert len(values) == trials
            rows[name].append((wall / trials * 1e3, cpu / trials * 1e3))
    ref_wall = statistics.median(w for w, _ in rows["optuna"])
    ref_cpu = statistics.median(c for _, c in rows["optuna"])
    print(f"1. per trial, {trials} TPE trials in batches of {batch}, one run of 2 one-step episodes each "
          f"(median of {repeats} interleaved rounds)\n")
    print("| | wall per trial | CPU per trial | overhead per trial (wall / CPU) | reference: Optuna alone |")
    print("|---|---:|---:|---:|---:|")
    for name, label in (("in-process", "xrun optimize --in-process"), ("jobs", "xrun optimize --jobs 1")):
        wall = statistics.median(w for w, _ in rows[name])
        cpu = statistics.median(c for _, c in rows[name])
        print(f"| {label} | {wall:.1f} ms | {cpu:.1f} ms | {wall - ref_wall:.1f} / {cpu - ref_cpu:.1f} ms | "
              f"{ref_wall:.2f} ms wall, {ref_cpu:.2f} ms CPU |")
    print()


# ------------------------------------------------------------------ 2. successive halving vs ASHA

def _points() -> list[dict]:
    """The grid's runs in xdoe's order (every point, then every point again: repetition 1)."""
    return [{"alpha": a, "epsilon": e, "seed": 1 + rep} for rep in range(REPS) for a in ALPHAS for e in EPSILONS]


def xdoe_grid(prune: dict | None) -> dict:
    """Training steps, runs and the runs of the best setting that ran to the end, of xrun experiment-start."""
    from click.testing import CliRunner

    from taxi_study import document
    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate
    from xdoe.results import LEFT_OUT_ATTR, load

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        factors = {"alpha": {"levels": list(ALPHAS)}, "epsilon": {"levels": list(EPSILONS)}}
        (folder / "doc.json").write_text(json.dumps(document("full_factorial", repetitions=REPS, episodes=EPISODES,
                                                             prune=prune, factors=factors)))
        generate(folder / "doc.json", folder / "out")
        url = f"sqlite:///{folder / 'xrun.sqlite'}"
        start = time.perf_counter()
        done = CliRunner().invoke(main, ["experiment-start", str(folder / "out"), "--in-process", "-q",
                                         "--no-laydown", "--store", url, "--results", str(folder / "results")])
        wall = time.perf_counter() - start
        assert done.exit_code == 0, done.output
        frame = load(url)
    train = frame[frame["phase"] == "training"].drop_duplicates(["run", "phase", "worker", "episode"])
    pruned = {run for run, status in (frame.attrs.get(LEFT_OUT_ATTR) or {}).items() if status == "pruned"}
    best_runs = set(train.loc[(train["alpha"] == BEST["alpha"]) & (train["epsilon"] == BEST["epsilon"]), "run"])
    return {"steps": int(train["steps"].sum()), "runs": int(train["run"].nunique()), "pruned": len(pruned),
            "best_kept": len(best_runs - pruned), "wall": wall}


def ray_python(venv: Path) -> Path:
    """The venv's python, with Ray Tune installed (created once)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    if subprocess.run([str(python), "-c", "import ray.tune"], capture_output=True).returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "ray[tune]"], check=True)
    return python


def ray_grid(python: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "ray_app.py"
        app.write_text(RAY_APP)
        args = {"points": _points(), "episodes": EPISODES, "grace": GRACE, "rf": RF}
        done = subprocess.run([str(python), str(app), json.dumps(args)], capture_output=True, text=True,
                              env={**os.environ, "RAY_DEDUP_LOGS": "0", "PYTHONPATH": ""})
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"Ray Tune failed:\n{done.stderr[-3000:]}")
    out = json.loads(line[len("RESULT "):])
    summary = {"ray": out["ray"]}
    for name in ("fifo", "asha"):
        trials = out[name]["trials"]
        summary[name] = {"steps": sum(t["steps"] for t in trials), "runs": len(trials),
                         "pruned": sum(not t["complete"] for t in trials), "wall": out[name]["wall"],
                         "best_kept": sum(t["complete"] for t in trials
                                          if t["alpha"] == BEST["alpha"] and t["epsilon"] == BEST["epsilon"])}
    return summary


def halving(venv: Path, skip_ray: bool) -> None:
    full = xdoe_grid(None)
    cut = xdoe_grid({"method": "successive_halving", "min_steps": GRACE, "reduction_factor": RF, "metric": "reward"})
    print(f"2. training steps on the Taxi grid ({len(ALPHAS)} alpha x {len(EPSILONS)} epsilon x {REPS} "
          f"repetitions, {EPISODES} episodes), rungs at {GRACE:,} x {RF}^k steps, one run at a time\n")
    print("| | unpruned grid | with early stopping | share | runs stopped early | runs of the best setting "
          "run to the end | wall (pruned) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| xdoe `successive_halving` | {full['steps']:,} | {cut['steps']:,} | "
          f"{cut['steps'] / full['steps']:.1%} | {cut['pruned']} of {cut['runs']} | {cut['best_kept']} of {REPS} | "
          f"{cut['wall']:.1f} s |")
    if skip_ray:
        return
    ray = ray_grid(ray_python(venv))
    fifo, asha = ray["fifo"], ray["asha"]
    print(f"| reference: Ray Tune {ray['ray']} `ASHAScheduler` | {fifo['steps']:,} | {asha['steps']:,} | "
          f"{asha['steps'] / fifo['steps']:.1%} | {asha['pruned']} of {asha['runs']} | {asha['best_kept']} of {REPS} | "
          f"{asha['wall']:.1f} s |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "venv-ray")
    parser.add_argument("--skip-ray", action="store_true", help="only xdoe's side of part 2")
    parser.add_argument("--parts", default="overhead,halving",
                        help="which parts, comma-separated: overhead (1.), halving (2.)")
    args = parser.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}\n")
    parts = set(args.parts.split(","))
    if "overhead" in parts:
        overhead(args.trials, args.batch, args.repeats)
    if "halving" in parts:
        halving(args.venv, args.skip_ray)
    print(f"# load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
