"""``--jobs`` on a small real campaign, whole process (issues 16 and 26.3).

The campaign: 4 Taxi-v4 Q-learning runs of 600 episodes (the learner only,
alpha 0.1 / 0.5 x 2 repetitions; ``--runs`` takes more repetitions), the
documents of ``bench_execute.py``. Measured side by side, interleaved round by
round (each in fresh processes, each with a new SQLite store, start-up included):

- the machine's two-process capacity: how much faster a pure-Python busy loop
  finishes twice in two processes than twice in one (2.0 on two free cores;
  it bounds every parallel speed-up below). It measures the CPU alone: the
  loop touches no memory beyond a few objects;
- the workload's two-process capacity: the same four runs as hand-written
  gymnasium Q-learning loops (``bench_execute.plain_loop``, the plain loop of
  ``bench_hydra.py`` and ``step_loop_cachegrind.py``; the same parameters and
  seeds as numbers, not xrun's seeding, so the runs' lengths differ a little
  from xrun's), run twice one after another in one process against once in
  each of two processes at once. Each process imports gymnasium first and
  then waits; the time is taken from the moment all of them are told to go to
  the moment the last one is done, so it holds the loops alone (a Taxi step
  also measures the memory system: the caches the two processes share;
  ``gymnasium.make("Taxi-v4")`` is called once before the go, so the
  environment's module is imported outside the time too);
- ``xrun experiment-start --jobs 1`` on the files;
- ``xrun experiment-start --jobs 2`` on the files (issue 35.3's target: ``jobs2/jobs1``
  >= 0.95 of the capacity measured in the same round; issue 26.3's was 0.885;
  printed against each of the two capacities);
- two separate ``xrun experiment-start`` processes started together, each on
  half of the files, sharing one store (target: ``--jobs 2`` >= 0.95x their speed).

Printed: medians [min-max] of wall time and of CPU time (user + system of all
child processes, ``resource.getrusage(RUSAGE_CHILDREN)``), and the ratios
computed round by round, among them ``jobs2/jobs1`` divided by each of the two
capacities measured in the same round: on a shared machine the capacity drops
when other processes compete, and this share of it is the comparable figure.
The busy loop's is the issue's reference; the workload's says how much of the
remaining gap is the memory system's rather than xrun's.

``--baseline SRC`` also measures ``--jobs 2`` and ``--jobs 1`` with
``PYTHONPATH=SRC`` (e.g. an unpacked ``git archive <commit> src``) in the same rounds.

On a machine shared by several login sessions, Linux's autogroup scheduling
gives each session its share of the cores, however many processes it runs:
the capacity then falls towards 1 and no wall-time speed-up can show (the CPU
times stay comparable).

``--startup`` measures instead, in CPU seconds (fresh processes, medians of
``--repeats``; with ``--baseline`` for both trees), the pieces of ``--jobs 2``'s
start-up, which on two free cores give the time before the first run can
start whatever other processes do: the parent's CPU until it starts the
forkserver, the forkserver's (a Python start-up and the preload of the modules
it is given), and the parent's CPU until it hands out its first run (its
documents read and checked, the store created; the forkserver and the
component check run meanwhile, their CPU not counted). The first run starts
after max(parent until forkserver + forkserver, parent until first run) plus
a fork, when the parent reads its documents while the forkserver loads (since
issue 35.3; before, it waited for the forkserver first). It also prints the
wall time from the parent's start to its first run handed out, measured
(on a loaded machine it includes waiting for a core).

``--idle`` measures instead how long the workers of ``--jobs 2`` sit idle
between two of their runs (fresh processes, ``--repeats`` rounds; with
``--baseline`` for both trees in the same rounds): from the store's
``run_instance`` rows, per worker process (its pid), the time from the end
of one of its runs to the start of its next. What the parent does between
handing out runs (reading a result, drawing ``laydown.svg``) shows here,
whatever the load: on a quiet machine it is what the campaign waits for.
Each run of it has a new results root, so its first result draws
``laydown.svg`` (as a user's first campaign; the rounds of the wall-time
comparison share one results root, so only their first command draws).

``--timeline`` measures instead where the wall time of ``--jobs 1`` and
``--jobs 2`` goes (fresh processes, ``--repeats`` rounds, both in each round;
with ``--baseline`` for both trees), from the store's ``run_instance`` rows
and the command's wall time (every process it starts waited for): the
start-up (command started to the first run's instance started: Python,
reading and checking the documents, the store created, the run claimed), the
second worker busy (to the first run of the second worker process), the
runs (first start to last end), the idle time between runs (sum over the
workers) and the tail (last run ended to the last process exited: the
result back to ``xrun``, the summary, the pool's shutdown, the exit of
``xrun`` and of the forkserver). The start-up and the tail are the serial
part that caps ``jobs2/jobs1``: with ``F`` seconds of them in both and ``W``
seconds of runs, ``jobs2/jobs1 / capacity`` is at most
``(F + W) / (F + W / c) / c`` at capacity ``c``.

Usage: ``python benchmarks/bench_jobs.py [--repeats R] [--episodes N] [--runs R] [--baseline SRC] [--startup | --idle | --timeline]``
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_execute import document  # noqa: E402

XRUN = "from xdoe.cli._xrun import main; main()"
BUSY = "x = 0\nfor i in range(6_000_000):\n    x = (x + i * i) % 1000003\n"


def run_parameters(runs: int = 4) -> list[tuple[float, int]]:
    """(alpha, seed) of each run of the campaign, in the order of its files."""
    return [(alpha, 11 + repetition) for alpha in (0.1, 0.5) for repetition in range(max(1, runs // 2))]


def campaign(directory: Path, episodes: int, runs: int = 4) -> list[str]:
    """The run files: alpha 0.1 / 0.5 x ``runs // 2`` repetitions (seeds)."""
    from ruamel.yaml import YAML

    files = []
    for alpha, seed in run_parameters(runs):
        doc = copy.deepcopy(document(episodes, seed=seed))
        doc["uid"] = f"taxi-a{alpha}-r{seed - 11}"
        doc["schedule"][0]["training"]["agents"][0]["brain"]["params"]["alpha"] = alpha
        path = directory / f"run-{doc['uid']}.yaml"
        with open(path, "w") as fh:
            YAML().dump(doc, fh)
        files.append(str(path))
    return files


# The workload's capacity: a process running the campaign's runs as plain loops ``times`` times
# over; it imports what the loop needs, says "ready", waits for a line, runs, says "done CPU".
PLAIN = """
import sys, time
sys.path.insert(0, sys.argv[1])
import gymnasium
from bench_execute import plain_loop
runs, episodes, times = eval(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
gymnasium.make("Taxi-v4").close()  # the environment's module imported before the clock starts
print("ready", flush=True)
sys.stdin.readline()
cpu = time.process_time()
for _ in range(times):
    for alpha, seed in runs:
        plain_loop(episodes, seed, alpha=alpha)
print("done", time.process_time() - cpu, flush=True)
"""


def plain_loops(processes: int, times: int, episodes: int, runs: int) -> tuple[float, float]:
    """Wall seconds from "go" to the last process done, and the loops' CPU
    seconds (summed), of ``processes`` fresh processes each running the
    campaign's runs as plain loops ``times`` times over (see ``PLAIN``)."""
    argv = [sys.executable, "-c", PLAIN, str(HERE), repr(run_parameters(runs)), str(episodes), str(times)]
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(processes)]
    for p in procs:
        if p.stdout is None or p.stdout.readline().strip() != "ready":
            raise SystemExit("the plain loop's process did not start")
    start = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    lines = []
    for p in procs:  # the last "done" read: the clock stops (not at the processes' exits)
        assert p.stdout is not None
        lines.append(p.stdout.readline().split())
    wall = time.perf_counter() - start
    for p, line in zip(procs, lines):
        if p.wait() != 0 or not line or line[0] != "done":
            raise SystemExit("the plain loop's process failed")
    return wall, sum(float(line[1]) for line in lines)


# Runs one command as a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER): processes
# the command leaves behind (multiprocessing's forkserver exits just after xrun) are
# reparented to it and waited for, so their CPU time counts in RUSAGE_CHILDREN too.
REAPER = """
import ctypes, os, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
code = subprocess.call(sys.argv[1:])
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
sys.exit(code)
"""


def timed(commands: list[list[str]], cwd: Path, env: dict[str, str] | None = None, *,
          reap: bool = True) -> tuple[float, float, list[str]]:
    """Wall and CPU seconds of ``commands`` started together, with every process
    they start (see ``REAPER``; ``reap=False``: the commands alone, a process
    they leave behind unwaited is not counted), and each one's standard
    output; each must succeed. The one timer of the process benchmarks
    (``bench_jobs``, ``bench_execute``, ``bench_campaign``, ``bench_hydra``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", REAPER, *c] if reap else c, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for c in commands]
    outputs = [p.communicate() for p in procs]
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for c, p, (out, err) in zip(commands, procs, outputs):
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(c)} failed ({p.returncode}):\n{out[-3000:]}{err[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), [o for o, _ in outputs]


# xrun --jobs 2, stopped at a point of its start-up: prints the CPU seconds of the process so
# far and, at the forkserver's start, the modules the forkserver would preload; "submit" stops
# when the first run is handed to the pool (the forkserver and the preflight check meanwhile run
# for real: whatever this process waits for costs it no CPU)
STOPPED = """
import os, sys, time
T0 = time.perf_counter()
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import forkserver
ensure_running, submit = forkserver.ensure_running, ProcessPoolExecutor.submit
def at_forkserver(*args, **kwargs):
    print("cpu", time.process_time(), flush=True)
    print("preload", ",".join(forkserver._forkserver._preload_modules), flush=True)
    if sys.argv[1] == "forkserver":
        os._exit(0)
    return ensure_running(*args, **kwargs)
def at_submit(self, fn, *args, **kwargs):
    if getattr(fn, "__name__", "") == "_pool_task":
        print("cpu", time.process_time(), flush=True)
        print("wall", time.perf_counter() - T0, flush=True)
        os._exit(0)
    return submit(self, fn, *args, **kwargs)
forkserver.ensure_running = at_forkserver
ProcessPoolExecutor.submit = at_submit
from xdoe.cli._xrun import main
main(sys.argv[2:])
"""
PRELOAD = "import sys\nfor m in sys.argv[1].split(','):\n    try:\n        __import__(m)\n    except ImportError:\n        pass\n"


def startup(files: list[str], tmp: Path, repeats: int, variants: dict[str, dict[str, str] | None]) -> None:
    """``--startup``: the CPU pieces of ``--jobs 2``'s start-up (see the module docstring)."""
    def cpu_of(argv: list[str], env: dict[str, str] | None) -> tuple[float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout

    got: dict[str, list[float]] = {}
    for round_ in range(repeats):
        for label, env in variants.items():
            for stop in ("forkserver", "submit"):
                store = tmp / f"startup-{label or 'now'}-{stop}-{round_}.sqlite"
                _, out = cpu_of([sys.executable, "-c", STOPPED, stop, *xrun(files, store, tmp / "results", 2)[3:]], env)
                lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
                got.setdefault(f"{label}parent until the forkserver starts" if stop == "forkserver"
                               else f"{label}parent until its first run", []).append(
                    float(out.split("cpu ")[1].split()[0] if stop == "forkserver" else out.split("cpu ")[-1].split()[0]))
                if stop == "forkserver":
                    cpu, _ = cpu_of([sys.executable, "-c", PRELOAD, lines["preload"]], env)
                    got.setdefault(f"{label}forkserver (start-up and preload)", []).append(cpu)
                else:  # wall time, whatever else the machine runs: what the first run waited for
                    got.setdefault(f"{label}wall until the first run is handed out", []).append(float(lines["wall"]))
    med = statistics.median
    print(f"--jobs 2 start-up pieces, CPU seconds (the wall line: seconds), medians of {repeats} [min-max]")
    for name, values in got.items():
        print(f"  {name:48s} {med(values):6.3f} [{min(values):.3f}-{max(values):.3f}]")
    print(f"  (load average now {os.getloadavg()[0]:.1f})")
    for label in variants:
        first = max(med(got[f"{label}parent until the forkserver starts"]) + med(got[f"{label}forkserver (start-up and preload)"]),
                    med(got[f"{label}parent until its first run"]))
        print(f"  {label or 'now: '}first run can start after ~{first:.2f} s on two free cores")


def instances(store: Path) -> dict[int, list[tuple[float, float]]]:
    """Per worker process (pid): the (start, end) epoch seconds of its runs,
    in order, from the store's ``run_instance`` rows."""
    import sqlite3
    from datetime import datetime

    with sqlite3.connect(store) as con:
        rows = con.execute("SELECT pid, start, \"end\" FROM run_instance ORDER BY start").fetchall()
    runs: dict[int, list[tuple[float, float]]] = {}
    for pid, start, end in rows:
        runs.setdefault(pid, []).append((datetime.fromisoformat(start).timestamp(),
                                         datetime.fromisoformat(end).timestamp()))
    return runs


def idle(files: list[str], tmp: Path, repeats: int, variants: dict[str, dict[str, str] | None]) -> None:
    """``--idle``: the workers' idle time between their runs (see the module docstring)."""
    got: dict[str, list[float]] = {}
    for round_ in range(repeats):
        for label, env in variants.items():
            name = f"idle-{label.strip(': ') or 'now'}-{round_}"  # a new results root: laydown.svg drawn once
            store = tmp / f"{name}.sqlite"
            timed([xrun(files, store, tmp / f"{name}-results", 2)], tmp, env)
            runs = instances(store)
            gaps = [b[0] - a[1] for mine in runs.values() for a, b in zip(mine, mine[1:])]
            got.setdefault(label, []).append(sum(gaps))
            print(f"  round {round_ + 1} {label or 'now: '}idle between runs "
                  f"{', '.join(f'{g:.2f}' for g in gaps)} s (sum {sum(gaps):.2f} s; "
                  f"load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"--jobs 2, the workers' idle time between their runs (sum over workers), medians of {repeats} [min-max]")
    for label, values in got.items():
        print(f"  {label or 'now: ':12s}{statistics.median(values):6.2f} s [{min(values):.2f}-{max(values):.2f}]")


def timeline(files: list[str], tmp: Path, repeats: int, variants: dict[str, dict[str, str] | None]) -> None:
    """``--timeline``: where the wall time of ``--jobs 1`` and ``--jobs 2`` goes (see the module docstring)."""
    pieces = ("start-up", "second worker busy", "runs", "idle between runs", "tail", "wall")
    got: dict[str, list[float]] = {}
    for round_ in range(repeats):
        for label, env in variants.items():
            for jobs in (1, 2):
                name = f"tl-{label.strip(': ') or 'now'}-j{jobs}-{round_}"
                store = tmp / f"{name}.sqlite"
                begin = time.time()
                wall, _, _ = timed([xrun(files, store, tmp / "results", jobs)], tmp, env)
                runs = instances(store)
                firsts = sorted(mine[0][0] for mine in runs.values())
                start, end = firsts[0], max(e for mine in runs.values() for _, e in mine)
                values = (start - begin, (firsts[1] if len(firsts) > 1 else start) - begin, end - start,
                          sum(b[0] - a[1] for mine in runs.values() for a, b in zip(mine, mine[1:])),
                          begin + wall - end, wall)
                for piece, value in zip(pieces, values):
                    got.setdefault(f"{label}--jobs {jobs}: {piece}", []).append(value)
                print(f"  round {round_ + 1} {label}--jobs {jobs}: " + ", ".join(
                    f"{p} {v:.3f}" for p, v in zip(pieces, values)) + f" s (load {os.getloadavg()[0]:.1f})", flush=True)
    med = statistics.median
    print(f"where the wall time goes, seconds, medians of {repeats} [min-max]")
    for name, values in got.items():
        print(f"  {name:48s} {med(values):6.3f} [{min(values):.3f}-{max(values):.3f}]")


def xrun(files: list[str], store: Path, results: Path, jobs: int) -> list[str]:
    return [sys.executable, "-c", XRUN, "experiment-start", *files, "--quiet", "--jobs", str(jobs),
            "--store", f"sqlite:///{store}", "--results", str(results)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="rounds; medians are printed (default 3)")
    parser.add_argument("--episodes", type=int, default=600)
    parser.add_argument("--runs", type=int, default=4, help="runs in the campaign (even; default 4)")
    parser.add_argument("--baseline", type=Path, default=None, help="a source tree to measure side by side")
    parser.add_argument("--startup", action="store_true", help="measure the CPU pieces of --jobs 2's start-up")
    parser.add_argument("--idle", action="store_true", help="measure the idle time of --jobs 2's workers between runs")
    parser.add_argument("--timeline", action="store_true",
                        help="measure where the wall time of --jobs 1 and --jobs 2 goes (start-up, runs, tail)")
    args = parser.parse_args()
    base_env = None if args.baseline is None else {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}
    import xdoe

    print(f"{time.strftime('%Y-%m-%d %H:%M')}  python {sys.version.split()[0]}  xdoe from {Path(xdoe.__file__).parent}")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {"capacity (busy loop)": [], "capacity (Taxi plain loops)": [],
                                      "jobs2/jobs1": [], "jobs2/jobs1 / capacity (busy loop)": [],
                                      "jobs2/jobs1 / capacity (Taxi)": [], "jobs2 vs separate": []}
    with tempfile.TemporaryDirectory(prefix="xdoe-jobs-") as d:
        tmp = Path(d)
        files = campaign(tmp, args.episodes, args.runs)
        half = len(files) // 2
        if args.idle:
            idle(files, tmp, args.repeats, {"": None, **({"baseline: ": base_env} if base_env else {})})
            return
        if args.timeline:
            timeline(files, tmp, args.repeats, {"": None, **({"baseline: ": base_env} if base_env else {})})
            return
        if args.startup:
            startup(files, tmp, args.repeats, {"": None, **({"baseline: ": base_env} if base_env else {})})
            return
        py = [sys.executable, "-c", BUSY]
        for round_ in range(args.repeats):
            got: dict[str, float] = {}
            for name, commands in (
                ("busy loop x2, one process", [[sys.executable, "-c", BUSY * 2]]),
                ("busy loop x2, two processes", [py, py]),
                ("--jobs 1", [xrun(files, tmp / f"j1-{round_}.sqlite", tmp / "results", 1)]),
                ("--jobs 2", [xrun(files, tmp / f"j2-{round_}.sqlite", tmp / "results", 2)]),
                ("2 separate xrun processes", [xrun(files[:half], tmp / f"sep-{round_}.sqlite", tmp / "results", 1),
                                               xrun(files[half:], tmp / f"sep-{round_}.sqlite", tmp / "results", 1)]),
            ) + ((
                ("baseline: --jobs 1", [xrun(files, tmp / f"bj1-{round_}.sqlite", tmp / "results", 1)]),
                ("baseline: --jobs 2", [xrun(files, tmp / f"bj2-{round_}.sqlite", tmp / "results", 2)]),
            ) if base_env is not None else ()):
                wall, cpu, _ = timed(commands, tmp, base_env if name.startswith("baseline") else None)
                walls.setdefault(name, []).append(wall)
                cpus.setdefault(name, []).append(cpu)
                got[name] = wall
            for name, processes, times in (("Taxi plain loops x2, one process", 1, 2),
                                           ("Taxi plain loops x2, two processes", 2, 1)):
                wall, cpu = plain_loops(processes, times, args.episodes, args.runs)
                walls.setdefault(name, []).append(wall)
                cpus.setdefault(name, []).append(cpu)
                got[name] = wall
            capacity = got["busy loop x2, one process"] / got["busy loop x2, two processes"]
            taxi = got["Taxi plain loops x2, one process"] / got["Taxi plain loops x2, two processes"]
            ratios["capacity (busy loop)"].append(capacity)
            ratios["capacity (Taxi plain loops)"].append(taxi)
            ratios["jobs2/jobs1"].append(got["--jobs 1"] / got["--jobs 2"])
            ratios["jobs2/jobs1 / capacity (busy loop)"].append(got["--jobs 1"] / got["--jobs 2"] / capacity)
            ratios["jobs2/jobs1 / capacity (Taxi)"].append(got["--jobs 1"] / got["--jobs 2"] / taxi)
            ratios["jobs2 vs separate"].append(got["2 separate xrun processes"] / got["--jobs 2"])
            if base_env is not None:
                ratios.setdefault("baseline: jobs2/jobs1", []).append(got["baseline: --jobs 1"] / got["baseline: --jobs 2"])
                ratios.setdefault("baseline: jobs2/jobs1 / capacity (busy loop)", []).append(
                    got["baseline: --jobs 1"] / got["baseline: --jobs 2"] / capacity)
                ratios.setdefault("baseline: jobs2/jobs1 / capacity (Taxi)", []).append(
                    got["baseline: --jobs 1"] / got["baseline: --jobs 2"] / taxi)
            print(f"  round {round_ + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in got.items()), flush=True)
    med = statistics.median
    print(f"{args.episodes} episodes per run, {len(files)} runs; medians of {args.repeats} rounds [min-max]; "
          "wall | CPU (s; the plain loops' lines: the loops alone, see the module docstring)")
    for name in walls:
        w, c = walls[name], cpus[name]
        print(f"  {name:44s} {med(w):6.2f} [{min(w):.2f}-{max(w):.2f}] | {med(c):6.2f} [{min(c):.2f}-{max(c):.2f}]")
    for name, values in ratios.items():
        target = "   target >= 0.95" + (" (issue 35)" if "/ capacity" in name else "") \
            if "/ capacity" in name or name == "jobs2 vs separate" else ""
        print(f"  {name:44s} {med(values):6.2f} [{min(values):.2f}-{max(values):.2f}]{target}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
