"""Per-run overhead of an xrun campaign against Hydra multirun (issue 26.3).

The grid: 64 Taxi-v4 Q-learning runs of ``--episodes`` (5) episodes each,
alpha x gamma x epsilon = 4 x 4 x 4 levels, one seed per run. The same work
three ways, each a fresh process (start-up included), side by side and
interleaved round by round (the order rotates), ``--repeats`` rounds:

- ``plain``: one Python process running the 64 runs one after another with
  a hand-written loop (``gymnasium.make`` per run, epsilon-greedy actions with
  random tie-breaking, the Watkins update: the loop of ``bench_execute.py``);
- ``xrun``: ``xrun experiment-start`` of the 64 run documents (the learner of
  ``bench_execute.py``), quiet, one job (the runs in one worker process), a new
  SQLite store and a new results root each round (so the first run draws
  ``laydown.svg``, as in a user's first campaign); also ``--no-laydown``;
- ``hydra``: Hydra's multirun with its basic launcher (the runs one after
  another in one process) over the same grid, of a small Hydra app whose
  task is the plain loop of one run (``hydra_app.py``, written next to the
  outputs); Hydra writes its usual per-job output folder, config files and log.

``--jobs 2`` measures the parallel pair instead (``--jobs 1 2``: both, in
the same rounds): ``xrun --jobs 2`` against Hydra's joblib launcher
(``hydra/launcher=joblib hydra.launcher.n_jobs=2``, the
``hydra-joblib-launcher`` plugin: joblib's loky processes). Issue 35's
target: on the 64-run grid of 300 episodes (``--episodes 300``) xrun takes
at most 0.9x Hydra's time in both pairs; the ratios xrun / Hydra are printed
round by round.

Hydra is installed into its own virtual environment under ``/tmp``
(``python -m venv --system-site-packages``, then ``pip install hydra-core
hydra-joblib-launcher``;
reused when present), which sees this interpreter's numpy and gymnasium, so
the loop runs on the same libraries.

The per-run overhead of a tool is (its time - the plain process's time) / 64,
in CPU time (user + system of every process, the steadier figure on a shared
machine) and in wall time. The step counts are printed: the runs draw from
different random streams (xrun derives each component's seed from the run's),
so the three do not take exactly the same steps; the overhead is also given
with the plain time scaled to each tool's steps.

Usage: ``python benchmarks/bench_hydra.py [--repeats R] [--episodes N] [--jobs 1 2] [--no-laydown] [--venv DIR]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
XRUN = "from xdoe.cli._xrun import main; main()"
ALPHAS = (0.1, 0.2, 0.4, 0.8)
GAMMAS = (0.9, 0.95, 0.98, 0.99)
EPSILONS = (0.05, 0.1, 0.2, 0.3)
HYDRA = ("hydra-core", "hydra-joblib-launcher")

APP = '''"""The Hydra app of bench_hydra.py: one run of the plain Q-learning loop."""
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

sys.path.insert(0, {here!r})
from bench_hydra import plain_run  # noqa: E402


@hydra.main(version_base=None, config_path=".", config_name="config")
def main(cfg: DictConfig) -> None:
    steps = plain_run(cfg.alpha, cfg.gamma, cfg.epsilon, cfg.episodes, cfg.seed + HydraConfig.get().job.num)
    print("steps", steps, flush=True)


if __name__ == "__main__":
    main()
'''


def grid() -> list[tuple[float, float, float]]:
    """The 64 design points (alpha, gamma, epsilon), in a fixed order."""
    return list(itertools.product(ALPHAS, GAMMAS, EPSILONS))


def plain_run(alpha: float, gamma: float, epsilon: float, episodes: int, seed: int) -> int:
    """One run of the hand-written loop (``bench_execute.plain_loop`` with
    these parameters); returns its steps."""
    sys.path.insert(0, str(HERE))
    from bench_execute import plain_loop

    return plain_loop(episodes, seed, alpha=alpha, gamma=gamma, epsilon=epsilon)[0]


def plain_campaign(episodes: int) -> None:
    """The 64 runs in this process; prints the total steps."""
    total = sum(plain_run(a, g, e, episodes, 1000 + i) for i, (a, g, e) in enumerate(grid()))
    print("steps", total)


def write_runs(directory: Path, episodes: int) -> None:
    """The 64 run documents (the learner of ``bench_execute.py``), canonical YAML."""
    import copy

    sys.path.insert(0, str(HERE))
    from bench_execute import document

    from xdoe.documents import dump_canonical

    directory.mkdir()
    for i, (alpha, gamma, epsilon) in enumerate(grid()):
        doc = copy.deepcopy(document(episodes, seed=1000 + i))
        doc["uid"] = f"grid-{i:02d}"
        agent = doc["schedule"][0]["training"]["agents"][0]
        agent["brain"]["params"].update(alpha=alpha, gamma=gamma)
        agent["muscle"]["params"]["epsilon"] = epsilon
        (directory / f"run-grid-{i:02d}.yaml").write_text(dump_canonical(doc))


def hydra_venv(venv: Path) -> Path:
    """The venv's python, with Hydra installed (created once)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    check = "import hydra, hydra_plugins.hydra_joblib_launcher"
    if subprocess.run([str(python), "-c", check], capture_output=True).returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *HYDRA], check=True)
    return python


def store_steps(url: str) -> int:
    from xdoe.store import Store

    with Store(url, create=False) as db:
        return int(sum(e["steps"] for e in db.runs.episodes()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds; medians are printed (default 3)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per run (default 5)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1], choices=[1, 2],
                        help="1: xrun --jobs 1 against Hydra's basic launcher; 2: xrun --jobs 2 against "
                             "Hydra's joblib launcher (n_jobs=2); both: --jobs 1 2 (default 1)")
    parser.add_argument("--no-laydown", action="store_true", help="also xrun --no-laydown (--jobs 1)")
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "xdoe-bench-hydra-venv",
                        help="Hydra's virtual environment (made when missing)")
    args = parser.parse_args()
    import xdoe

    sys.path.insert(0, str(HERE))
    from bench_jobs import timed  # the one timer: every process a command starts (a subreaper)

    python = hydra_venv(args.venv)
    version = subprocess.run([str(python), "-c", "import hydra; print(hydra.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    runs = len(grid())
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  python {sys.version.split()[0]}  xdoe from {Path(xdoe.__file__).parent}"
          f"  hydra-core {version} ({args.venv})")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    steps: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="xdoe-hydra-") as d:
        tmp = Path(d)
        write_runs(tmp / "runs", args.episodes)
        (tmp / "hydra_app.py").write_text(APP.format(here=str(HERE)))
        (tmp / "config.yaml").write_text(f"alpha: 0.1\ngamma: 0.9\nepsilon: 0.1\nepisodes: {args.episodes}\nseed: 1000\n")
        sweep = [f"alpha={','.join(map(str, ALPHAS))}", f"gamma={','.join(map(str, GAMMAS))}",
                 f"epsilon={','.join(map(str, EPSILONS))}"]
        plain = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); "
                 f"from bench_hydra import plain_campaign; plain_campaign({args.episodes})"]
        names = ["plain"]
        if 1 in args.jobs:
            names += ["xrun", *(["xrun --no-laydown"] if args.no_laydown else []), "hydra"]
        if 2 in args.jobs:
            names += ["xrun --jobs 2", "hydra joblib"]
        for round_ in range(args.repeats):
            got = {}
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # the order rotates
                if name == "plain":
                    wall, cpu, (out,) = timed([plain], tmp)
                    n = int(out.split()[-1])
                elif name.startswith("xrun"):
                    tag = name.replace(" ", "").replace("-", "")
                    url = f"sqlite:///{tmp / f'{tag}-{round_}.sqlite'}"
                    extra = ["--no-laydown"] if "no-laydown" in name else []
                    extra += ["--jobs", "2"] if "jobs 2" in name else []
                    wall, cpu, _ = timed([[sys.executable, "-c", XRUN, "experiment-start", str(tmp / "runs"),
                                           "--quiet", *extra, "--store", url,
                                           "--results", str(tmp / f"results-{tag}-{round_}")]], tmp)
                    n = store_steps(url)
                else:
                    launcher = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"] if "joblib" in name else []
                    wall, cpu, (out,) = timed([[str(python), str(tmp / "hydra_app.py"), "-m", *sweep, *launcher,
                                                f"hydra.sweep.dir={tmp / f'multirun-{name[-6:]}-{round_}'}"]], tmp)
                    counts = [int(line.split()[1]) for line in out.splitlines() if line.startswith("steps ")]
                    assert len(counts) == runs, f"hydra ran {len(counts)} jobs"
                    n = sum(counts)
                walls.setdefault(name, []).append(wall)
                cpus.setdefault(name, []).append(cpu)
                steps.setdefault(name, []).append(n)
                got[name] = (wall, cpu)
            print(f"  round {round_ + 1}: " + ", ".join(f"{k} {w:.2f} s ({c:.2f} s CPU)" for k, (w, c) in got.items()),
                  flush=True)
    med = statistics.median
    print(f"{runs} runs x {args.episodes} episodes; medians of {args.repeats} rounds [min-max]")
    print(f"  {'':22s} {'wall (s)':>20s} {'CPU (s)':>20s} {'steps':>8s}")
    for name in names:
        w, c = walls[name], cpus[name]
        print(f"  {name:22s} {med(w):7.2f} [{min(w):.2f}-{max(w):.2f}] {med(c):7.2f} [{min(c):.2f}-{max(c):.2f}]"
              f" {med(steps[name]):8.0f}")
    print("per-run overhead: (tool - plain) / 64, round by round; ms [min-max]")
    for name in names[1:]:
        per = {"CPU": [(c - p) / runs * 1000 for c, p in zip(cpus[name], cpus["plain"])],
               "wall": [(w - p) / runs * 1000 for w, p in zip(walls[name], walls["plain"])],
               "CPU, plain scaled to its steps": [(c - p * s / ps) / runs * 1000 for c, p, s, ps in
                                                  zip(cpus[name], cpus["plain"], steps[name], steps["plain"])]}
        print(f"  {name:22s} " + "; ".join(f"{k} {med(v):6.1f} [{min(v):.1f}-{max(v):.1f}]" for k, v in per.items()))
    pairs = [("xrun", "hydra"), ("xrun --jobs 2", "hydra joblib")]
    print("xrun / Hydra, round by round (target <= 0.9, issue 35); median [min-max]")
    for a, b in pairs:
        if a in walls and b in walls:
            for kind, got in (("wall", walls), ("CPU", cpus)):
                r = [x / y for x, y in zip(got[a], got[b])]
                print(f"  {a:15s} / {b:13s} {kind:4s} {med(r):.3f} [{min(r):.3f}-{max(r):.3f}]")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
