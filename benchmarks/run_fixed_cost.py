"""A run's fixed cost in instructions (issue 35, the 64-run Taxi grid): what
one more run costs beyond its steps, for ``xrun`` and for the plain loop of
``bench_hydra.py``, independent of the machine's load.

Whole processes under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``),
each run of ``bench_hydra.write_runs`` with ``--episodes`` episodes (1: ~195
Taxi steps), ``--runs`` of them and 8 of them; the difference over the extra
runs is the cost of one run (its steps included, the process's start-up
left out):

- ``plain``: ``bench_hydra.plain_run`` of each design point in one process
  (``gymnasium.make`` per run, then the loop);
- ``xrun``: ``xrun experiment-start --in-process --no-laydown --quiet`` of
  the run documents with a new SQLite store and results root (one process:
  the count is complete). The run's clock-driven hooks (the 2-s live tick and
  the 10-s heartbeat) are set to fire never, as ``step_loop_cachegrind.py``
  does: under valgrind the clock runs ~50x slower against the work, so they
  would fire ~50x as often per run as in a normal one.

Printed: instructions per run of each, their difference (xrun's fixed work
over the plain loop's, with the step's own excess in it: ~12k instructions a
step, ``step_loop_cachegrind.py``) and the start-up of each process (its
total minus its runs). Takes ~5 minutes on a 2-core machine. Needs
``valgrind``.

Usage: ``python benchmarks/run_fixed_cost.py [--runs N] [--episodes E]``
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

XRUN = ("import math; from xdoe.execution import _hooks; "
        "_hooks.LIVE_SECONDS = _hooks.HEARTBEAT_SECONDS = math.inf; "
        "from xdoe.cli._xrun import main; main()")
PLAIN = ("import sys; sys.path.insert(0, {here!r}); from bench_hydra import grid, plain_run; "
         "print(sum(plain_run(a, g, e, {episodes}, 1000 + i) for i, (a, g, e) in enumerate(grid()[:{runs}])))")


def instructions(argv: list[str], cwd: Path) -> int:
    """Instructions of ``argv``'s process (callgrind's total)."""
    out = cwd / "callgrind.out"
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=no", f"--callgrind-out-file={out}", *argv],
                          cwd=cwd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed:\n{proc.stderr[-2000:]}")
    match = re.search(r"^summary:\s*(\d+)", out.read_text(), re.MULTILINE)
    assert match is not None, "no callgrind summary"
    return int(match.group(1))


def measure(kind: str, runs: int, episodes: int, tmp: Path) -> int:
    """Instructions of ``kind`` (``plain`` or ``xrun``) over the first ``runs`` design points."""
    work = tmp / f"{kind}-{runs}"
    work.mkdir()
    if kind == "plain":
        return instructions([sys.executable, "-c", PLAIN.format(here=str(HERE), episodes=episodes, runs=runs)], work)
    from bench_hydra import write_runs

    write_runs(work / "all", episodes)
    (work / "runs").mkdir()
    for path in sorted((work / "all").glob("run-*.yaml"))[:runs]:
        path.rename(work / "runs" / path.name)
    return instructions([sys.executable, "-c", XRUN, "experiment-start", str(work / "runs"), "--quiet",
                         "--in-process", "--no-laydown", "--store", f"sqlite:///{work / 'store.sqlite'}",
                         "--results", str(work / "results")], work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=64, help="runs of the larger process (at most 64; default 64)")
    parser.add_argument("--episodes", type=int, default=1, help="episodes per run (default 1)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    small = 8
    if not small < args.runs <= 64:
        raise SystemExit(f"--runs must be in {small + 1}..64")
    with tempfile.TemporaryDirectory(prefix="xdoe-fixed-") as name:
        tmp = Path(name)
        jobs = [(kind, n) for kind in ("plain", "xrun") for n in (small, args.runs)]
        with ThreadPoolExecutor(max_workers=2) as pool:
            got = dict(zip(jobs, pool.map(lambda job: measure(job[0], job[1], args.episodes, tmp), jobs)))
    extra = args.runs - small
    per = {kind: (got[(kind, args.runs)] - got[(kind, small)]) / extra for kind in ("plain", "xrun")}
    print(f"instructions per run of {args.episodes} episode(s) (callgrind; {args.runs} runs - {small} runs, "
          f"/ {extra})")
    for kind in ("plain", "xrun"):
        start = got[(kind, small)] - small * per[kind]
        print(f"  {kind:6s} {per[kind] / 1e6:8.1f} M per run   start-up {start / 1e9:6.2f} G   "
              f"({got[(kind, small)] / 1e9:.3f} G / {got[(kind, args.runs)] / 1e9:.3f} G)")
    print(f"  xrun - plain {(per['xrun'] - per['plain']) / 1e6:6.1f} M per run")


if __name__ == "__main__":
    main()
