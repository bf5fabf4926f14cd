"""Adaptive designs (issue 37): runs to reach the optimum of a known-truth
problem, Optuna's samplers against the full grid.

Run: ``python benchmarks/bench_optuna.py [--seeds 7] [--trials 60] [--batch 5] [--real 3]
[--figure docs/images/optuna-truth.png]``.

The problem is ``tests/optuna/optuna_truth.py``: a noisy quadratic in three
continuous factors, maximum 10 at (2.6, 7.3, 1.5), N(0, 0.1^2) per episode.
For each tolerance (0.25, 0.5, 1.0) it prints the runs the smallest full grid
(n x n x n, ends included) needs to hold a point within it, and per sampler
the median (and range) over seeds of the runs until the first trial whose
*true* value is within it (one run per trial).

Two ways: the sampler path alone (default: xdoe's per-trial seeded samplers,
:func:`xdoe.design._optuna._ask`, told the formula plus noise drawn here, two
episodes' mean) and, with ``--real K``, the first K seeds of TPE through
``xrun optimize`` (the executor, the store, the journal) -- the numbers
``tests/optuna/test_optimize.py`` checks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "optuna"), str(ROOT / "tests" / "analysis")]

import optuna_truth  # noqa: E402

TOLERANCES = (0.25, 0.5, 1.0)


def sampler_path(sampler: str, seed: int, trials: int, batch: int) -> list[float]:
    """The true values of the trials asked, in order (responses simulated:
    :func:`optuna_truth.sampler_path`, two episodes' mean as noise)."""
    return optuna_truth.sampler_path(sampler, seed, trials, batch, noise=0.1 / np.sqrt(2))


def real_path(seed: int, trials: int, batch: int) -> list[float]:
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate

    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "doc.yaml"
        doc.write_text(json.dumps(optuna_truth.document(
            {"method": "optuna", "sampler": "tpe", "trials": trials, "batch": batch}, seed=seed)))
        out = Path(tmp) / "out"
        generate(doc, out)
        done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(out), "--in-process", "-q", "--no-laydown"])
        assert done.exit_code == 0, done.output
        points = json.loads((out / "manifest.json").read_text())["design"]["doe"]["points"]
        return [optuna_truth.truth(**p["natural"]) for p in points]


def first_within(values: list[float], tolerance: float) -> int | None:
    for i, v in enumerate(values):
        if v >= optuna_truth.MAXIMUM - tolerance:
            return i + 1
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=7)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--samplers", default="tpe,random,gp")
    parser.add_argument("--real", type=int, default=0, help="also TPE through xrun optimize for the first K seeds")
    parser.add_argument("--figure", default=None)
    args = parser.parse_args()
    grid = {tol: optuna_truth.grid_runs(tol) for tol in TOLERANCES}
    rows: dict[str, dict[float, list[int | None]]] = {}
    for sampler in args.samplers.split(","):
        start = time.perf_counter()
        runs = [sampler_path(sampler, seed, args.trials, args.batch) for seed in range(1, args.seeds + 1)]
        rows[sampler] = {tol: [first_within(v, tol) for v in runs] for tol in TOLERANCES}
        print(f"# {sampler}: {time.perf_counter() - start:.1f} s for {args.seeds} seeds", file=sys.stderr)
    if args.real:
        start = time.perf_counter()
        runs = [real_path(seed, args.trials, args.batch) for seed in range(1, args.real + 1)]
        rows["tpe (xrun optimize)"] = {tol: [first_within(v, tol) for v in runs] for tol in TOLERANCES}
        print(f"# xrun optimize: {time.perf_counter() - start:.1f} s for {args.real} seeds", file=sys.stderr)
    print(f"runs until a trial within the tolerance of the maximum (median [min, max] over seeds; "
          f"'>{args.trials}': not reached in {args.trials} trials), batches of {args.batch}\n")
    print("| | " + " | ".join(f"within {t}" for t in TOLERANCES) + " |")
    print("|---|" + "---|" * len(TOLERANCES))
    print("| full grid | " + " | ".join(f"{grid[t]} ({round(grid[t] ** (1 / 3))}^3)" for t in TOLERANCES) + " |")
    cap = args.trials + 1

    def cell(found: list[int | None]) -> str:
        vals = [cap if f is None else f for f in found]
        med = statistics.median(vals)
        text = f">{args.trials}" if med >= cap else f"{med:g}"
        return f"{text} [{min(vals)}, {'>' + str(args.trials) if max(vals) >= cap else max(vals)}]"

    for name, by_tol in rows.items():
        print(f"| {name} ({len(next(iter(by_tol.values())))} seeds) | "
              + " | ".join(cell(by_tol[t]) for t in TOLERANCES) + " |")
    if args.figure:
        from xdoe.analysis._figure import PALETTE, new_figure, save

        fig = new_figure(7.0, 4.0)
        ax = fig.add_subplot(1, 1, 1)
        x = np.arange(len(TOLERANCES))
        width = 0.8 / (len(rows) + 1)
        ax.bar(x, [grid[t] for t in TOLERANCES], width, color="#999999", label="full grid")
        for k, (name, by_tol) in enumerate(rows.items(), 1):
            meds = [statistics.median([cap if f is None else f for f in by_tol[t]]) for t in TOLERANCES]
            ax.bar(x + k * width, meds, width, color=PALETTE[k - 1], label=f"{name} (median)")
        ax.set_xticks(x + width * len(rows) / 2, [f"within {t}" for t in TOLERANCES])
        ax.set_yscale("log")
        ax.set_ylabel("runs to reach the tolerance")
        ax.set_title("Noisy quadratic, 3 factors: runs to the optimum, Optuna samplers vs the full grid", fontsize=9)
        ax.legend(fontsize=8)
        save(fig, args.figure)
        print(f"\nwrote {args.figure}", file=sys.stderr)


if __name__ == "__main__":
    main()
