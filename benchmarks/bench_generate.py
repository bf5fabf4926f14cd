"""Speed and memory of xgen's generation (issue 2).

Prints:
1. the time to write 4096 run files (6 factors x 4 levels, full factorial),
   split into design, expansion + canonical YAML, and the whole ``write_runs``;
2. peak RSS and tracemalloc peak while writing 10,000 and 100,000 run
   documents (each size in its own process), to show memory stays flat;
3. the design benchmarks (``benchmarks/bench_designs.py``) when present.

Run: ``python benchmarks/bench_generate.py [--quick]`` (``--quick`` skips 100,000).
Outputs go to temporary directories in ``$XDOE_BENCH_DIR`` (default: the
working directory), removed afterwards; file creation speed depends a lot on
that file system.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: where outputs are written (temporary directories); default: the working directory
BENCH_DIR = os.environ.get("XDOE_BENCH_DIR", ".")


def document(levels_per_factor: int, factors: int, named: bool = True) -> dict:
    """An experiment with ``factors`` named factors of ``levels_per_factor`` levels."""
    names = [f"f{i}" for i in range(factors)]
    return {
        "uid": "bench",
        "seed": 1,
        "factors": {n: {"levels": [round(0.1 * (j + 1), 3) for j in range(levels_per_factor)]} for n in names},
        "definitions": {
            "environments": {
                "env": {
                    "environment": {
                        "name": "xdoe.environments:DummyEnvironment",
                        "uid": "env",
                        "params": {"length": 10, **{n: f"${{{n}}}" for n in names[: factors // 2]}},
                    },
                    "reward": {"name": "", "params": {}},
                }
            },
            "agents": {
                "agent": {
                    "name": "agent",
                    "brain": {"name": "xdoe.agents:QLearningBrain", "params": {n: f"${{{n}}}" for n in names[factors // 2 :]}},
                    "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
                    "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
                }
            },
            "sensors": {"all": {"env": [0, 1, 2, 3]}},
            "actuators": {"all": {"env": [0, 1]}},
            "simulation": {
                "vanilla": {
                    "name": "xdoe.simulation:VanillaSimController",
                    "conditions": [{"name": "xdoe.conditions:EnvironmentTerminationCondition", "params": {}}],
                }
            },
            "phase_config": {"train": {"mode": "train", "worker": 1, "episodes": 100}, "test": {"mode": "test", "episodes": 10}},
            "run_config": {"condition": {"name": "xdoe.conditions:MaxEpisodesTerminationCondition", "params": {}}},
        },
        "schedule": [
            {
                "training": {
                    "environments": [["env"]],
                    "agents": [["agent"]],
                    "sensors": {"agent": ["all"]},
                    "actuators": {"agent": ["all"]},
                    "simulation": ["vanilla"],
                    "phase_config": ["train"],
                }
            },
            {"testing": {"phase_config": ["test"]}},
        ],
    }


def bench_4096() -> None:
    from xdoe.design.runfiles import prepare, write_runs

    doc = document(4, 6)
    t0 = time.perf_counter()
    experiment, design, runs = prepare(doc)
    t1 = time.perf_counter()
    for k in range(len(runs)):
        runs.dump(k)
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=BENCH_DIR, prefix=".bench-") as tmp:
        t3 = time.perf_counter()
        write_runs(runs, Path(tmp) / "out")
        t4 = time.perf_counter()
        files = len(list((Path(tmp) / "out").glob("run-*.yaml")))
        same = write_runs(runs, Path(tmp) / "out")
        t5 = time.perf_counter()
        _, _, twice = prepare({**doc, "repetitions": 2})
        t6 = time.perf_counter()
        extended = write_runs(twice, Path(tmp) / "out")
        t7 = time.perf_counter()
    print(f"4096 runs (6 factors x 4 levels, {design.method}): {files} files")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"  load + design:                   {t1 - t0:6.3f} s")
    print(f"  expand + canonical YAML (no IO): {t2 - t1:6.3f} s = {(t2 - t1) / len(runs) * 1e6:.0f} us per run   "
          "(part of the 0.5 s whole-process target of bench_startup.py)")
    print(f"  write_runs (files, csv, manifest, sha256, atomic rename): {t4 - t3:6.3f} s   (target < 2 s)")
    print(f"  again, {same.status} (every file compared):           {t5 - t4:6.3f} s   (target < 2 s)")
    print(f"  repetitions 1 -> 2, {extended.status} ({extended.plan.summary()}): "
          f"{t7 - t6:6.3f} s   (target < 2 x the first write)")


def _memory_child(points: int, trace: bool) -> None:
    """Runs in a child process: write ``points`` runs, print figures as JSON."""
    from xdoe.design.runfiles import prepare, write_runs

    # 10**k points: k factors with 10 levels each
    factors = len(str(points)) - 1
    assert 10**factors == points
    experiment, design, runs = prepare(document(10, factors))
    with tempfile.TemporaryDirectory(dir=BENCH_DIR, prefix=".bench-") as tmp:
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if trace:
            tracemalloc.start()
        t0 = time.perf_counter()
        write_runs(runs, Path(tmp) / "out")
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] if trace else None
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"points": points, "seconds": elapsed, "tracemalloc_peak": peak, "rss_before_kb": rss_before, "maxrss_kb": rss}))


def bench_memory(sizes: list[int]) -> None:
    print("memory while writing (each size in a fresh process):")
    for points in sizes:
        figures = {}
        for trace in (False, True):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(points), "1" if trace else "0"],
                capture_output=True,
                text=True,
                check=True,
            )
            figures[trace] = json.loads(proc.stdout.strip().splitlines()[-1])
        plain, traced = figures[False], figures[True]
        print(
            f"  {points:>7} runs: {plain['seconds']:6.1f} s, peak RSS {plain['maxrss_kb'] / 1024:6.1f} MiB "
            f"(before writing {plain['rss_before_kb'] / 1024:6.1f} MiB), "
            f"tracemalloc peak during writing {traced['tracemalloc_peak'] / 2**20:6.2f} MiB"
        )


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        _memory_child(int(sys.argv[2]), sys.argv[3] == "1")
        return
    quick = "--quick" in sys.argv
    bench_4096()
    bench_memory([10_000] if quick else [10_000, 100_000])
    designs = HERE / "bench_designs.py"
    if designs.exists():
        print(f"\n--- {designs.name} ---", flush=True)
        subprocess.run([sys.executable, str(designs), *(["--repeats", "1"] if quick else [])], check=False)


if __name__ == "__main__":
    main()
