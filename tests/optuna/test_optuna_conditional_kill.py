"""A conditional adaptive study with a pruner, killed (issue 37): a Taxi
study whose ``epsilon`` applies on one branch of ``explore`` only
(:func:`taxi_study.conditional_document`), ``design: {method: optuna}`` and
successive halving with ``batch_runs``, run under ``--jobs 2``, killed twice
(SIGKILL of xrun's process group in the middle of a run's training, where
``held_environments.HeldGymnasiumEnvironment`` holds it) and restarted, ends
with the unkilled study's trials (the conditional parameters asked where they apply), rung
decisions and episodes; nothing runs twice."""

from __future__ import annotations

from pathlib import Path

import pytest

import kill_study
from taxi_study import UID, conditional_document

TRIALS, BATCH, REPS = 8, 2, 2
PRUNE = {"method": "successive_halving", "min_steps": 1200, "reduction_factor": 3, "metric": "reward",
         "batch_runs": BATCH * REPS}
DESIGN = {"method": "optuna", "sampler": "tpe", "trials": TRIALS, "batch": BATCH, "startup_trials": 4}


@pytest.mark.slow
def test_a_conditional_study_with_a_pruner_killed_twice_ends_as_the_unkilled_one(tmp_path: Path) -> None:
    runs = TRIALS * REPS
    data = conditional_document(DESIGN, repetitions=REPS, prune=PRUNE)
    env = data["definitions"]["environments"]["taxi"]["environment"]
    env["name"] = "held_environments:HeldGymnasiumEnvironment"  # killable where asked
    unkilled = kill_study.study(tmp_path / "unkilled", data, UID, 2)
    quarter = len(unkilled["store"]["episodes"]) // 4  # killed in a run a quarter in, then a quarter after that
    killed = kill_study.study(tmp_path / "killed", data, UID, 2, [quarter, quarter])
    for study in (unkilled, killed):
        kill_study.ran_once(study["store"], runs)
    trials = unkilled["trials"]
    assert len(trials) == TRIALS and {"PRUNED", "COMPLETE"} <= {t[1] for t in trials}  # both kinds of decision
    # the conditional parameter is asked exactly where it applies, on both branches
    branches = {t[2]["explore"] for t in trials}
    assert len(branches) == 2
    assert all(("epsilon" in params) == (params["explore"] == 0) for _, _, params, _, _ in trials)
    assert killed["trials"] == trials  # same parameters asked, states, values, intermediate values
    assert killed["store"]["done"] == unkilled["store"]["done"]  # each run finished or pruned alike
    assert killed["store"]["rungs"] == unkilled["store"]["rungs"]  # same decisions, values, peers seen
    assert killed["store"]["episodes"] == unkilled["store"]["episodes"]
    assert killed["trial_runs"] == unkilled["trial_runs"]
