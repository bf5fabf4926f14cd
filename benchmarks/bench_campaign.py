"""A campaign of many short runs, whole process (issue 23.4): what a run
costs besides its steps (claiming, deciding run/skip/resume, opening the
store, hashing the document, recording the instance).

The campaign: ``--runs`` run files of one episode of ``--length`` steps each
(``DummyEnvironment``, random agent, the document of ``bench_startup.py``
with a seed and uid per run), written as xgen writes them. Timed, each round
in fresh processes with a new SQLite store and results folder, interleaved
with the baseline when ``--baseline SRC`` is given (e.g. an unpacked
``git archive <commit> src``):

- ``xrun experiment-start --quiet --no-laydown`` (runs in one worker process);
- the same with ``--jobs 2``;
- the same again on the finished store (every run skipped).

Printed: medians [min-max] of wall time and of CPU time (user + system of
the child processes, ``resource.getrusage(RUSAGE_CHILDREN)``), and the
1-minute load average. On a shared machine the CPU time is the steadier
figure.

Usage: ``python benchmarks/bench_campaign.py [--runs N] [--repeats R] [--baseline SRC]``
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_jobs import timed  # noqa: E402
from bench_startup import one_step_run  # noqa: E402

XRUN = "from xdoe.cli._xrun import main; main()"


def write_campaign(directory: Path, runs: int, length: int) -> list[Path]:
    """``runs`` run files (canonical YAML), one episode of ``length`` steps each."""
    from xdoe.documents import dump_canonical

    files = []
    for i in range(runs):
        doc = copy.deepcopy(one_step_run())
        doc["uid"], doc["seed"] = f"many-{i:04d}", 1000 + i
        doc["schedule"][0]["training"]["environments"][0]["environment"]["params"]["length"] = length
        path = directory / f"run-many-{i:04d}.yaml"
        path.write_text(dump_canonical(doc))
        files.append(path)
    return files


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} s [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--length", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None, help="an older src folder, measured alongside")
    args = parser.parse_args()
    sources: dict[str, Path | None] = {"current": Path(__file__).resolve().parents[1] / "src"}
    if args.baseline is not None:
        sources["baseline"] = args.baseline.resolve()
    envs = {label: dict(os.environ, **({} if src is None else {"PYTHONPATH": str(src)})) for label, src in sources.items()}
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        root = Path(tmp)
        files = write_campaign(root, args.runs, args.length)
        names = [str(f) for f in files]
        load = os.getloadavg()[0]
        for round_ in range(args.repeats):
            for label, env in envs.items():
                for jobs in ("1", "2"):
                    work = root / f"{label}-{jobs}-{round_}"
                    work.mkdir()
                    xrun = [sys.executable, "-c", XRUN, "experiment-start", *names, "--quiet", "--no-laydown",
                            "--jobs", jobs, "--store", f"sqlite:///{work / 'xrun.sqlite'}", "--results",
                            str(work / "results")]
                    # the xrun process alone (children's user + system CPU), as measured before the one timed()
                    figures.setdefault((label, f"--jobs {jobs}"), []).append(timed([xrun], root, env, reap=False)[:2])
                    if jobs == "1":
                        figures.setdefault((label, "all skipped"), []).append(timed([xrun], root, env, reap=False)[:2])
        load = (load + os.getloadavg()[0]) / 2
    print(f"{args.runs} runs of one episode of {args.length} steps, {args.repeats} rounds, load {load:.1f}")
    for (label, what), values in figures.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(f"  {label:8s} {what:12s} wall {summary(walls)}  cpu {summary(cpus)}")


if __name__ == "__main__":
    main()
