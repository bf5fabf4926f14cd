"""SLURM job arrays on a real (single-node) cluster: chunking with offsets, every task once."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest
from slurm_fixtures import SlurmCluster, run_files, slurm_cluster  # noqa: F401  (pytest fixture)

from xdoe.campaign.backends._sbatch import SlurmError, SlurmOptions, max_array_size
from xdoe.campaign.backends._slurm import job_states, submit, wait_for

pytestmark = pytest.mark.slurm

# Each task's command gets its run files as arguments; for every file it creates
# "<file>.ran" exclusively (a second execution of the same file would fail the
# task) holding the array job id and index that ran it.
MARK_RUNS = (
    "{python} -c 'import os, sys\n"
    "for f in sys.argv[1:]:\n"
    "    with open(f + \".ran\", \"x\") as out:\n"
    "        out.write(os.environ[\"SLURM_ARRAY_JOB_ID\"] + \" \" + os.environ[\"SLURM_ARRAY_TASK_ID\"])\n"
    "'"
)



def test_max_array_size_of_the_cluster(slurm_cluster: SlurmCluster) -> None:
    proc = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True, check=True)
    line = next(line for line in proc.stdout.splitlines() if line.startswith("MaxArraySize"))
    assert max_array_size() == int(line.split("=")[1])


def test_chunked_arrays_run_every_task_exactly_once(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 9)
    options = SlurmOptions(runs_per_task=2, array_parallelism=3, task_command=MARK_RUNS, job_name="xdoe-test")
    # 9 runs, 2 per task -> 5 tasks; at most 3 per array -> arrays of 3 and 2 tasks (offsets 0 and 3)
    arrays = submit(files, options, workdir=tmp_path, max_array_size=3)
    assert [(a.chunk.offset, a.chunk.size) for a in arrays] == [(0, 3), (3, 2)]
    job_ids = [a.job_id for a in arrays]
    assert all(j and j.isdigit() for j in job_ids)

    wait_for(job_ids, timeout=120)
    for a in arrays:
        assert job_states(a.job_id) == {str(i): "COMPLETED" for i in range(a.chunk.size)}
    for i, f in enumerate(files):
        task = i // 2
        chunk = arrays[task // 3]
        assert Path(f"{f}.ran").read_text() == f"{chunk.job_id} {task - chunk.chunk.offset}"

    submission = arrays[0].script_path.parent
    recorded = json.loads((submission / "jobs.json").read_text())
    assert [a["job_id"] for a in recorded["arrays"]] == job_ids
    assert sorted(p.name for p in submission.iterdir()) == [
        "array-000.sbatch", "array-001.sbatch", "jobs.json", "logs", "tasks.tsv"
    ]
    assert stat.S_IMODE((submission / "array-000.sbatch").stat().st_mode) == 0o600  # may hold the store URL
    logs = sorted(p.name for p in (submission / "logs").iterdir())
    assert logs == sorted(f"{a.job_id}_{i}.out" for a in arrays for i in range(a.chunk.size))
    first_log = (submission / "logs" / f"{job_ids[1]}_1.out").read_text()
    assert "xrun task 4 " in first_log and "1 run file(s)" in first_log


def test_sbatch_errors_carry_slurms_message(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 1)
    options = SlurmOptions(partition="no-such-partition", task_command="true")
    with pytest.raises(SlurmError, match="(?i)sbatch.*failed.*invalid partition"):
        submit(files, options, workdir=tmp_path)
    assert list((tmp_path / "_outputs" / "slurm").iterdir()) == []  # nothing submitted, nothing kept


def test_a_failing_task_is_reported_failed(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 2)
    (array,) = submit(files, SlurmOptions(task_command='test "$SLURM_ARRAY_TASK_ID" = 0 || exit 3; ls'), workdir=tmp_path)
    wait_for([array.job_id], timeout=60)
    assert job_states(array.job_id) == {"0": "COMPLETED", "1": "FAILED"}


def _taxi_document(i: int) -> dict:
    phase = {
        "environments": [
            {"environment": {"name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                             "params": {"env_id": "Taxi-v4", "max_episode_steps": 20}}}
        ],
        "agents": [{
            "name": "learner",
            "brain": {"name": "xdoe.agents:QLearningBrain", "params": {"alpha": 0.5}},
            "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {"epsilon": 0.1}},
            "objective": {"name": "xdoe.agents:RewardObjective", "params": {}},
        }],
        "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
        "phase_config": {"mode": "train", "worker": 1, "episodes": 2},
    }
    return {"uid": f"slurm-e2e-{i:04d}", "experiment_uid": "slurm-e2e", "seed": 100 + i,
            "schedule": [{"training": phase}]}


def test_xrun_experiment_start_tasks_record_every_run_once(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    """The default task command: real run documents through `xrun experiment-start` into one store."""
    from xdoe.store import Store

    out = tmp_path / "_outputs"
    out.mkdir()
    files = []
    for i in range(5):
        f = out / f"run-slurm-e2e-{i:04d}.yaml"
        f.write_text(json.dumps(_taxi_document(i)))  # JSON is YAML
        files.append(f)
    store_url = f"sqlite:///{tmp_path / 'xrun.sqlite'}"
    options = SlurmOptions(runs_per_task=2, store_url=store_url, allow_sqlite=True, results=tmp_path / "results")
    arrays = submit(files, options, workdir=tmp_path, max_array_size=2)
    assert [(a.chunk.offset, a.chunk.size) for a in arrays] == [(0, 2), (2, 1)]
    wait_for([a.job_id for a in arrays], timeout=180)
    logs = arrays[0].script_path.parent / "logs"
    states = {a.job_id: job_states(a.job_id) for a in arrays}
    assert all(s == "COMPLETED" for per_job in states.values() for s in per_job.values()), (
        states, {p.name: p.read_text()[-2000:] for p in logs.iterdir()})
    with Store(store_url) as store:
        instances = store.runs.instances()
    assert sorted(i.run_uid for i in instances) == [f"slurm-e2e-{i:04d}" for i in range(5)]
    assert {i.status for i in instances} == {"finished"}
