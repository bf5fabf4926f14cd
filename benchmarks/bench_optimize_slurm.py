"""``xrun optimize --slurm`` (issue 37, item 1): wall time per batch of an
adaptive study under ``--slurm`` beside the same study under ``--jobs 1``.

Run: ``SLURM_CONF=... XDOE_TEST_POSTGRES_URL=postgresql+psycopg://... python
benchmarks/bench_optimize_slurm.py [--trials 8] [--batch 2] [--rounds 2]``.

The study is ``tests/optuna/optuna_truth.py``'s noisy quadratic (TPE, one
run of 8 one-step episodes per trial): the runs themselves take
milliseconds, so the figure is what a batch costs beyond its runs: under
``--jobs 1`` a worker process and the store (SQLite beside the output);
under ``--slurm`` sbatch, the scheduler starting the array tasks, each task's
``xrun experiment-start`` (a Python start-up, the store, PostgreSQL in a
schema of its own, dropped after) and the driver's look at the queue once
a second. Both end with the same trials (checked). Prints the medians over
``--rounds`` and each round's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "optuna"), str(ROOT / "tests")]

import optuna_truth  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(ROOT / "tests" / "optuna"), str(ROOT / "tests"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def study(folder: Path, trials: int, batch: int, extra: list[str]) -> tuple[float, list]:
    """Wall seconds of ``xrun optimize`` of the study in ``folder`` with ``extra``, and its trials."""
    from xdoe.design._optuna import OptunaSettings, open_study
    from xdoe.design.runfiles import generate

    folder.mkdir()
    doc = folder / "doc.yaml"
    doc.write_text(json.dumps(optuna_truth.document(
        {"method": "optuna", "sampler": "tpe", "trials": trials, "batch": batch, "startup_trials": batch},
        episodes=8)))
    generate(doc, folder / "out")
    command = [sys.executable, "-m", "xdoe.cli._xrun", "optimize", str(doc), "-o", str(folder / "out"), "-q",
               "--no-laydown", *extra]
    start = time.perf_counter()
    done = subprocess.run(command, env=ENV, cwd=folder, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stdout + done.stderr
    journal = open_study(folder / "out" / "optuna-quad.journal", "quad", OptunaSettings())
    return seconds, [(t.number, t.params) for t in journal.get_trials(deepcopy=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from xdoe.store.testing import postgres_admin_url, temporary_schema

    admin, reason = postgres_admin_url(start_server=False)
    if admin is None:
        sys.exit(f"no PostgreSQL server: {reason}")
    batches = -(-args.trials // args.batch)
    local, slurm = [], []
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="xdoe-bench-slurm-") as tmp, \
                temporary_schema(admin, prefix="xdoe_bench_slurm") as url:
            t_local, trials_local = study(Path(tmp) / "jobs1", args.trials, args.batch, ["--jobs", "1"])
            t_slurm, trials_slurm = study(Path(tmp) / "slurm", args.trials, args.batch,
                                          ["--slurm", "--store", url, "--job-name", "xdoe-bench", "-t", "10"])
        assert trials_local == trials_slurm, "the two ran different trials"
        local.append(t_local / batches)
        slurm.append(t_slurm / batches)
        print(f"round {r + 1}: per batch --jobs 1 {t_local / batches:.2f} s, --slurm {t_slurm / batches:.2f} s")
    print(f"{args.trials} trials in {batches} batches of {args.batch} (one run each), median of {args.rounds}: "
          f"per batch --jobs 1 {statistics.median(local):.2f} s, --slurm {statistics.median(slurm):.2f} s "
          f"(+{statistics.median(slurm) - statistics.median(local):.2f} s per batch)")


if __name__ == "__main__":
    main()
