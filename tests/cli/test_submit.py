"""``xrun submit --slurm``: options, refusals with exit code 2, dry runs; a real submission when a cluster runs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from slurm_fixtures import SlurmCluster, slurm_cluster  # noqa: F401  (pytest fixture)

from xdoe.cli._submit import submit_command
from xdoe.campaign.backends._slurm import wait_for

PG = "postgresql+psycopg://xdoe:secret@db.example.org/campaign"


def _outputs(root: Path, n: int) -> Path:
    """``n`` run documents of a dummy study, as xgen writes them (its manifest beside them)."""
    from dummy_study import dummy_study
    from ruamel.yaml import YAML

    from xdoe.design.runfiles import generate

    experiment = root / "study.yaml"
    with open(experiment, "w") as fh:
        YAML().dump(dummy_study("study", 3, "full_factorial", {"length": {"levels": list(range(2, n + 2))}}), fh)
    out = root / "_outputs"
    generate(experiment, out)
    assert len(list(out.glob("run-*.yaml"))) == n
    return out


def _invoke(args: list[str], env: dict[str, str | None] | None = None):
    return CliRunner().invoke(submit_command, args, env={"XRUN_STORE": None, **(env or {})}, catch_exceptions=False)


def test_help_names_every_option() -> None:
    result = _invoke(["--help"])
    assert result.exit_code == 0
    for option in ("--slurm", "--partition", "--time", "--cpus-per-task", "--mem", "--array-parallelism",
                   "--runs-per-task", "--store", "--allow-sqlite", "--dry-run"):
        assert option in result.output


def test_dry_run_prints_every_script_and_writes_nothing(tmp_path: Path) -> None:
    out = _outputs(tmp_path, 5)
    result = _invoke(
        [str(out), "--slurm", "-p", "short", "-t", "10:00", "--mem", "1G", "--runs-per-task", "2",
         "--array-parallelism", "4", "--dry-run"],
        env={"XRUN_STORE": PG},
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.count("#!/bin/bash") == 1  # 3 tasks fit one array
    assert "#SBATCH --array=0-2%4" in result.stdout and "#SBATCH --partition=short" in result.stdout
    assert "secret" not in result.stdout and "xdoe:***@db.example.org" in result.stdout
    assert "5 runs in 3 tasks as 1 job array(s)" in result.stderr
    assert not (out / "slurm").exists()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--dry-run"], {"XRUN_STORE": PG}, "--slurm"),
        (["--slurm", "--dry-run"], {}, "XRUN_STORE"),
        (["--slurm", "--dry-run", "--store", "sqlite:///_outputs/xrun.sqlite"], {}, "SQLite file, refused"),
        (["--slurm", "--dry-run", "--runs-per-task", "0"], {"XRUN_STORE": PG}, "runs-per-task"),
    ],
)
def test_bad_input_exits_2_without_traceback(tmp_path: Path, args: list[str], env: dict, message: str) -> None:
    out = _outputs(tmp_path, 2)
    result = _invoke([str(out), *args], env=env)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_file_and_empty_directory_exit_2(tmp_path: Path) -> None:
    result = _invoke([str(tmp_path / "nope.yaml"), "--slurm", "--dry-run"], env={"XRUN_STORE": PG})
    assert result.exit_code == 2 and "no such file" in result.output
    result = _invoke([str(tmp_path), "--slurm", "--dry-run"], env={"XRUN_STORE": PG})
    assert result.exit_code == 2 and "no run files" in result.output


def test_a_document_that_cannot_run_is_refused_before_anything_is_submitted(tmp_path: Path) -> None:
    out = _outputs(tmp_path, 3)
    broken = sorted(out.glob("run-*.yaml"))[1]
    broken.write_text(broken.read_text().replace("xdoe.agents:DummyMuscle", "xdoe.agents:DumyMuscle"))
    result = _invoke([str(out), "--slurm", "--dry-run"], env={"XRUN_STORE": PG})
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: {broken}:") and "DumyMuscle" in line and "did you mean DummyMuscle" in line
    assert "#!/bin/bash" not in result.output and not (out / "slurm").exists()
    assert "Traceback" not in result.output


def test_sqlite_is_accepted_with_allow_sqlite(tmp_path: Path) -> None:
    out = _outputs(tmp_path, 1)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    result = _invoke([str(out), "--slurm", "--dry-run", "--store", url, "--allow-sqlite"])
    assert result.exit_code == 0, result.output
    assert f"export XRUN_STORE={url}" in result.stdout


@pytest.mark.slurm
def test_submit_prints_the_job_ids(slurm_cluster: SlurmCluster, tmp_path: Path, monkeypatch) -> None:
    out = _outputs(tmp_path, 3)
    monkeypatch.chdir(tmp_path)
    result = _invoke([str(out), "--slurm", "--store", PG, "--time", "1"])
    assert result.exit_code == 0, result.output
    job_ids = re.findall(r"submitted job array (\d+)", result.stdout)
    assert len(job_ids) == 1
    (submission,) = (out / "slurm").iterdir()
    assert (submission / "tasks.tsv").read_text().count("\n") == 3
    # its task would run `xrun experiment-start` against a store that does not exist
    subprocess.run(["scancel", *job_ids], check=True)
    wait_for(job_ids, timeout=60)
