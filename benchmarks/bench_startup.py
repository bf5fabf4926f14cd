"""Whole-process times of the commands users start by hand (issue 16).

Each figure is a fresh process, measured side by side with its reference,
interleaved round by round so that a change of load hits all of them alike:

- ``python -c pass``: the interpreter's own start-up (the floor);
- ``xgen check`` and ``xgen generate --dry-run`` of a small full-factorial
  document (``experiments/dummy.yaml``; target <= 0.3 s);
- ``xgen generate`` of 4096 run files (6 factors x 4 levels, full factorial,
  the document of ``bench_generate.py``; target <= 0.5 s), into the temporary
  folder and, to show what the file system costs, into ``/dev/shm`` (tmpfs;
  on this VM's ext4 creating 4096 files alone takes 0.1-2.7 s of kernel time,
  depending on the load of the host);
- ``xrun experiment-start`` of a one-step run (``DummyEnvironment`` of length
  1, one episode, a new SQLite store each round; target <= 0.35 s), three
  ways: *cold* (a new results root: ``laydown.svg`` is drawn with
  matplotlib), *warm* (a results root whose ``.laydown`` cache holds this run
  structure, drawn in round 0: the diagram is hard-linked) and
  ``--no-laydown``;
- the *import floor* of a run: a fresh process importing the libraries the
  run path imports (click, ruamel.yaml, pydantic, numpy, gymnasium,
  SQLAlchemy Core with the SQLite dialect: :data:`LIBRARIES`), and
  the one-step run beside it as ``startup_budget.py`` counts it
  (``--no-laydown --in-process``: one process). Issue 35's target: the run's
  CPU at most 1.3x the floor's (printed as the median of the per-round
  ratios; ``startup_budget.py`` gives the same ratio in instructions).

Printed per figure: the median wall time and the median CPU time (user +
system of the child, from ``resource.getrusage(RUSAGE_CHILDREN)``), with
[min-max], the median user and system times apart, the 1-minute load average
while it was measured, and the target beside it. On a shared machine the CPU time is the steadier figure: the wall
time includes waiting for a core.

The commands run the console scripts' code with the interpreter directly
(``python -c "from xdoe.cli._xgen import main; main()"``), not through a
shim such as pyenv's (a bash script that costs ~50 ms by itself). Bytecode
is compiled first (``compileall``) as an installed package has it; run with
``--no-compile`` to measure without it.

``--baseline SRC`` also runs every command with ``PYTHONPATH=SRC`` (for
example an unpacked ``git archive <commit> src``), interleaved with the
current code, so a before/after comparison sees the same load.

Usage: ``python benchmarks/bench_startup.py [--repeats R] [--only NAME ...] [--baseline SRC]``
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_generate import document as generate_document  # noqa: E402

#: the libraries a run imports (the import floor of a run; ``startup_budget.py`` counts them one by one)
LIBRARIES = [("click", "import click"), ("ruamel.yaml", "import ruamel.yaml"),
             ("pydantic", "from pydantic import BaseModel"), ("numpy", "import numpy"),
             ("gymnasium", "import gymnasium"),
             ("sqlalchemy (Core + sqlite)", "import sqlalchemy, sqlalchemy.dialects.sqlite")]
XGEN = "from xdoe.cli._xgen import main; main()"
XRUN = "from xdoe.cli._xrun import main; main()"

XRUN_COLD = "xrun experiment-start, one step, cold"
XRUN_WARM = "xrun experiment-start, one step, warm"
XRUN_BARE = "xrun experiment-start, one step, --no-laydown"
XRUN_ONE = "xrun experiment-start, one step, --no-laydown --in-process"
FLOOR = "import floor (the run's libraries)"
FLOOR_TARGET = 1.3  # issue 35: a one-step run's CPU / its import floor's
TARGETS = {"xgen check": 0.3, "xgen generate --dry-run": 0.3, "xgen generate, 4096 files": 0.5,
           "xgen generate, 4096 files, tmpfs": 0.5, XRUN_COLD: 0.35, XRUN_WARM: 0.35, XRUN_BARE: 0.35}
SHM = Path("/dev/shm")
_SHM_OUTPUTS: list[Path] = []  # removed at the end


def one_step_run() -> dict:
    """A run document of one episode of one step (DummyEnvironment, random agent)."""
    return {
        "uid": "one-step",
        "experiment_uid": "startup",
        "seed": 3,
        "schedule": [{
            "training": {
                "environments": [{"environment": {"name": "xdoe.environments:DummyEnvironment", "uid": "env",
                                                  "params": {"length": 1, "sensors": 2, "actuators": 1}}}],
                "agents": [{
                    "name": "random",
                    "brain": {"name": "xdoe.agents:DummyBrain", "params": {}},
                    "muscle": {"name": "xdoe.agents:DummyMuscle", "params": {}},
                    "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
                }],
                "simulation": {"name": "xdoe.simulation:VanillaSimController",
                               "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition"}]},
                "phase_config": {"mode": "train", "worker": 1, "episodes": 1},
            }
        }],
    }


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall, user and system seconds of one child process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def commands(tmp: Path) -> dict[str, tuple[list[str] | None, Path]]:
    """name -> (argv, or None when the argv is made per round; working directory)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    with open(tmp / "big.yaml", "w") as fh:
        yaml.dump(generate_document(4, 6), fh)
    with open(tmp / "one.yaml", "w") as fh:
        yaml.dump(one_step_run(), fh)
    py = sys.executable
    dummy = str(ROOT / "experiments" / "dummy.yaml")
    return {
        "python -c pass": ([py, "-c", "pass"], tmp),
        "xgen check": ([py, "-c", XGEN, "check", dummy], tmp),
        "xgen generate --dry-run": ([py, "-c", XGEN, "generate", dummy, "--dry-run", "-o", str(tmp / "dry")], tmp),
        "xgen generate, 4096 files": (None, tmp),
        **({"xgen generate, 4096 files, tmpfs": (None, tmp)} if SHM.is_dir() else {}),
        XRUN_COLD: (None, tmp),
        XRUN_WARM: (None, tmp),
        XRUN_BARE: (None, tmp),
        XRUN_ONE: (None, tmp),
        FLOOR: ([py, "-c", "\n".join(statement for _, statement in LIBRARIES)], tmp),
    }


def argv_for(name: str, tmp: Path, round_: str) -> list[str]:
    py = sys.executable
    if name.startswith("xgen generate, 4096 files"):  # a new output folder each round
        out = tmp / f"out-{round_}"
        if name.endswith("tmpfs"):
            out = Path(tempfile.mkdtemp(dir=SHM, prefix="xdoe-startup-"))
            _SHM_OUTPUTS.append(out)
        return [py, "-c", XGEN, "generate", str(tmp / "big.yaml"), "-q", "-o", str(out / "o")]
    # a new store each round: creating it is part of a user's first run
    results = tmp / (f"results-{round_}" if name == XRUN_COLD else "results")  # cold: nothing drawn yet
    extra = ["--no-laydown"] if name == XRUN_BARE else ["--no-laydown", "--in-process"] if name == XRUN_ONE else []
    return [py, "-c", XRUN, "experiment-start", str(tmp / "one.yaml"), "--quiet", *extra,
            "--store", f"sqlite:///{tmp / f'store-{round_}.sqlite'}", "--results", str(results)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds; medians are printed (default 5)")
    parser.add_argument("--no-compile", action="store_true", help="do not compile xdoe's bytecode first")
    parser.add_argument("--only", nargs="*", default=None, help="names (substrings) of the figures to measure")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree (the folder holding xdoe/) to measure side by side")
    args = parser.parse_args()
    import xdoe

    variants: dict[str, dict[str, str] | None] = {"": None}
    if args.baseline is not None:
        variants["baseline: "] = {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}
    if not args.no_compile:
        compileall.compile_dir(Path(xdoe.__file__).parent, quiet=1)
        if args.baseline is not None:
            compileall.compile_dir(args.baseline / "xdoe", quiet=1)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  python {sys.version.split()[0]}  xdoe from {Path(xdoe.__file__).parent}")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="xdoe-startup-") as d:
        tmp = Path(d)
        table = commands(tmp)
        names = [n for n in table if n == "python -c pass" or args.only is None or any(o in n for o in args.only)]
        rows = [(label + name, name, env) for name in names for label, env in variants.items()
                if not (label and name in ("python -c pass", XRUN_BARE, XRUN_ONE, FLOOR))]  # the baseline may lack them
        walls: dict[str, list[float]] = {row[0]: [] for row in rows}
        users: dict[str, list[float]] = {row[0]: [] for row in rows}
        systems: dict[str, list[float]] = {row[0]: [] for row in rows}
        loads: dict[str, list[float]] = {row[0]: [] for row in rows}
        try:
            for round_ in range(args.repeats + 1):  # round 0 warms the file cache and is not counted
                for row, (key, name, env) in enumerate(rows):  # a store (and cold results root) per row and round
                    argv, cwd = table[name]
                    wall, user, system = timed(argv if argv is not None else argv_for(name, tmp, f"{round_}-{row}"),
                                               cwd, env)
                    if round_:
                        walls[key].append(wall)
                        users[key].append(user)
                        systems[key].append(system)
                        loads[key].append(os.getloadavg()[0])
        finally:
            for out in _SHM_OUTPUTS:
                shutil.rmtree(out, ignore_errors=True)
    med = statistics.median
    print(f"medians of {args.repeats} rounds [min-max], seconds; wall | CPU = user + sys | load (1 min)")
    for key, name, _ in rows:
        w = walls[key]
        c = [u + y for u, y in zip(users[key], systems[key])]
        target = f"  target <= {TARGETS[name]} s" if name in TARGETS and key == name else ""
        print(f"  {key:44s} {med(w):5.2f} [{min(w):.2f}-{max(w):.2f}] | {med(c):5.2f} [{min(c):.2f}-{max(c):.2f}]"
              f" = {med(users[key]):.2f} + {med(systems[key]):.2f} | {med(loads[key]):4.1f}{target}")
    if XRUN_ONE in walls and FLOOR in walls:
        ratios = [(u + y) / (fu + fy) for u, y, fu, fy in zip(users[XRUN_ONE], systems[XRUN_ONE], users[FLOOR],
                                                               systems[FLOOR])]
        print(f"one-step run / import floor, CPU: {med(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}]"
              f"  target <= {FLOOR_TARGET} (issue 35)")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
