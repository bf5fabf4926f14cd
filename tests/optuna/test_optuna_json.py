"""``xrun analyze --format json`` of an optuna study is standard JSON: a best
trial of one run has no standard deviation, ``null`` (it wrote ``NaN``, which
JavaScript's ``JSON.parse`` and other strict readers refuse)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna_truth
from click.testing import CliRunner
from dummy_study import known_truth_study
from optimize_study import campaign, optimize

from xdoe.cli._xrun import main as xrun


def _strict(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_one_run_per_trial_gives_standard_json(tmp_path: Path) -> None:
    design = {"method": "optuna", "sampler": "random", "trials": 4, "batch": 2, "direction": "minimize"}
    data = known_truth_study("branin1", "optuna_truth:branin",
                             {name: {"range": list(r)} for name, r in optuna_truth.BRANIN_RANGES.items()}, design,
                             noise=0.1, seed=5, repetitions=1)
    doc, out = campaign(tmp_path, data)
    optimize(doc, out)
    done = CliRunner().invoke(xrun, ["analyze", str(out), "--format", "json"])
    assert done.exit_code == 0, done.output
    body = _strict(done.stdout)
    best = body["optuna"]["best"]
    assert best["runs"] == 1 and best["spread"]["sd"] is None and best["spread"]["values"] == [best["value"]]
