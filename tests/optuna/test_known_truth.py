"""Known truth for adaptive designs (issue 37, item 5).

* On Branin's function (minimum 0.397887) and the noisy quadratic of
  ``optuna_truth`` (maximum 10), xdoe's seeded TPE (the sampler ``xrun
  optimize`` asks, told the formula plus noise, :func:`optuna_truth.sampler_path`)
  reaches within a stated tolerance of the optimum in fewer runs than the
  smallest full grid holding such a point and than random search (median
  over 9 seeds, one run per trial; the quadratic through ``xrun optimize``
  itself: ``test_optimize.py``).
* Successive halving on a small Taxi grid keeps the grid's best
  configuration while spending at most half the environment steps.

Steepest ascent climbing a planted slope and confirmation runs flagging a
deliberately wrong model: ``tests/analysis/test_sequential.py``.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

import optuna_truth

SEEDS = range(1, 10)
TRIALS, BATCH, STARTUP = 80, 4, 8
NEVER = 10 ** 6


def _runs_to_reach(values: list[float], reached: Any) -> int:
    return next((i + 1 for i, v in enumerate(values) if reached(v)), NEVER)


@pytest.mark.parametrize("problem", ["branin", "quadratic"])
def test_tpe_reaches_the_optimum_in_fewer_runs_than_the_grid_and_random_search(problem: str) -> None:
    if problem == "branin":
        f, ranges, best, direction, tolerance = (optuna_truth.branin, optuna_truth.BRANIN_RANGES,
                                                 optuna_truth.BRANIN_MINIMUM, "minimize", 0.5)
    else:
        f, ranges, best, direction, tolerance = (optuna_truth.truth, optuna_truth.RANGES, optuna_truth.MAXIMUM,
                                                 "maximize", 0.25)
    sign = 1.0 if direction == "maximize" else -1.0

    def reached(v: float) -> bool:
        return sign * v >= sign * best - tolerance

    grid = optuna_truth.grid_runs(tolerance, f, ranges, best, direction)
    median = {}
    for sampler in ("tpe", "random"):
        runs = [_runs_to_reach(optuna_truth.sampler_path(sampler, seed, TRIALS, BATCH, f=f, ranges=ranges,
                                                         direction=direction, startup_trials=STARTUP), reached)
                for seed in SEEDS]
        median[sampler] = statistics.median(runs)
    assert grid == {"branin": 100, "quadratic": 216}[problem]  # 10 x 10; 6 x 6 x 6
    assert median["tpe"] <= TRIALS  # reached, in the median
    assert median["tpe"] < grid and median["tpe"] < median["random"], (median, grid)


TAXI_FACTORS = {"alpha": {"levels": [0.05, 0.2, 0.9]}, "epsilon": {"levels": [0.05, 0.1]}}
HALVING = {"method": "successive_halving", "min_steps": 5000, "reduction_factor": 2, "metric": "reward"}


def _taxi_grid(folder: Path, prune: dict | None) -> tuple[dict, int, list[str]]:
    """``(xrun analyze's best point, environment steps of every phase, pruned runs)`` of the grid."""
    from click.testing import CliRunner

    from taxi_study import document
    from xdoe.cli._xrun import main
    from xdoe.design.runfiles import generate
    from xdoe.results import load

    folder.mkdir()
    (folder / "doc.json").write_text(json.dumps(document("full_factorial", repetitions=2, episodes=600,
                                                         prune=prune, factors=TAXI_FACTORS)))
    generate(folder / "doc.json", folder / "out")
    url = f"sqlite:///{folder / 'xrun.sqlite'}"
    done = CliRunner().invoke(main, ["experiment-start", str(folder / "out"), "--in-process", "-q", "--no-laydown",
                                     "--store", url, "--results", str(folder / "results")])
    assert done.exit_code == 0, done.output
    frame = load(url)
    steps = int(frame.drop_duplicates(["run", "phase", "worker", "episode"])["steps"].sum())
    done = CliRunner().invoke(main, ["analyze", str(folder / "out"), "--store", url, "--format", "json"])
    assert done.exit_code == 0, done.output
    best = json.loads(done.stdout[done.stdout.index("{"):done.stdout.rindex("}") + 1])["best"]
    return best, steps, sorted(u for u, s in (frame.attrs.get("xdoe_left_out") or {}).items() if s == "pruned")


@pytest.mark.slow
def test_successive_halving_on_a_taxi_grid_keeps_the_best_with_at_most_half_the_steps(tmp_path: Path) -> None:
    best, steps, pruned = _taxi_grid(tmp_path / "grid", None)
    assert not pruned and best["levels"] == {"alpha": 0.9, "epsilon": 0.05}  # the fastest learner, by the test phase
    kept, halved, cut = _taxi_grid(tmp_path / "halving", HALVING)
    assert kept["levels"] == best["levels"] and kept["n"] == best["n"] == 2  # both its runs ran to the end
    assert kept["scores"] == best["scores"]  # the same runs: pruning changed nothing for them
    assert len(cut) >= 4 and halved <= steps / 2, (halved, steps, cut)
