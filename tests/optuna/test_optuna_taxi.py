"""issue 37, "Done when": a Taxi study with ``design: {method: optuna}`` and
a successive-halving prune rule runs under ``--jobs 2``, is killed twice
(SIGKILL of xrun's process group in the middle of a run's training, a
quarter of the study's episodes in and again a quarter after the restart,
held there by ``held_environments.HeldGymnasiumEnvironment``) and restarted,
and ends with the same trials (parameters, states, values, intermediate
values) and the same rung decisions as an unkilled ``--jobs 2`` study of the same seed -- and as an
unkilled ``--jobs 1`` one (``batch_runs``: each batch is judged against the
batches before it, docs/pruning.md); nothing runs twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kill_study
from taxi_study import UID, document

TRIALS, BATCH, REPS = 8, 2, 2
PRUNE = {"method": "successive_halving", "min_steps": 1200, "reduction_factor": 3, "metric": "reward",
         "batch_runs": BATCH * REPS}
DESIGN = {"method": "optuna", "sampler": "tpe", "trials": TRIALS, "batch": BATCH, "startup_trials": 4}


def _study(folder: Path, jobs: int, kills: list[int] | None = None) -> dict[str, Any]:
    data = document(DESIGN, repetitions=REPS, prune=PRUNE)
    env = data["definitions"]["environments"]["taxi"]["environment"]
    env["name"] = "held_environments:HeldGymnasiumEnvironment"  # killable where asked
    return kill_study.study(folder, data, UID, jobs, kills)


@pytest.mark.slow
def test_a_taxi_study_killed_twice_under_two_jobs_ends_as_the_unkilled_one(tmp_path: Path) -> None:
    runs = TRIALS * REPS
    unkilled = _study(tmp_path / "unkilled", 2)
    quarter = len(unkilled["store"]["episodes"]) // 4  # killed in a run a quarter in, then a quarter after that
    killed = _study(tmp_path / "killed", 2, [quarter, quarter])
    for study in (unkilled, killed):
        kill_study.ran_once(study["store"], runs)
    states = [t[1] for t in unkilled["trials"]]
    assert len(states) == TRIALS and "PRUNED" in states and "COMPLETE" in states  # both kinds of decision
    assert killed["trials"] == unkilled["trials"]  # same parameters asked, states, values, intermediate values
    assert killed["store"]["done"] == unkilled["store"]["done"]  # each run finished or pruned alike
    assert killed["store"]["rungs"] == unkilled["store"]["rungs"]  # same decisions, values, peers seen
    assert killed["store"]["episodes"] == unkilled["store"]["episodes"]
    assert killed["trial_runs"] == unkilled["trial_runs"]
    one_job = _study(tmp_path / "one-job", 1)
    assert one_job["trials"] == unkilled["trials"] and one_job["store"]["rungs"] == unkilled["store"]["rungs"]
