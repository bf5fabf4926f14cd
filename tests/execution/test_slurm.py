"""SLURM job arrays without a cluster: planning, the rendered script, store checks, dry runs."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slurm_fixtures import run_files
from xdoe.errors import InputError
from xdoe.campaign.backends._sbatch import (
    DEFAULT_MAX_ARRAY_SIZE,
    ArrayChunk,
    SlurmError,
    SlurmOptions,
    check_store_for_slurm,
    max_array_size,
    plan_arrays,
    render_sbatch,
    task_list_text,
)
from xdoe.campaign.backends._slurm import submit

GOLDEN = Path(__file__).parent / "data" / "sbatch_golden.sh"
PG = "postgresql+psycopg://xdoe:secret@db.example.org:5432/campaign"


def _files(n: int, root: Path = Path("/campaign/_outputs")) -> list[Path]:
    return [root / f"run-study-{i:04d}.yaml" for i in range(n)]


# --- plan_arrays ----------------------------------------------------------------------


def test_plan_chunks_at_the_default_max_array_size() -> None:
    chunks = plan_arrays(_files(2500), 1, DEFAULT_MAX_ARRAY_SIZE)
    assert [c.size for c in chunks] == [1001, 1001, 498]
    assert [c.offset for c in chunks] == [0, 1001, 2002]
    assert [c.number for c in chunks] == [0, 1, 2]
    # the highest array index is MaxArraySize - 1 = 1000
    assert max(c.size - 1 for c in chunks) == 1000
    assert chunks[1].tasks[0] == (Path("/campaign/_outputs/run-study-1001.yaml"),)


def test_plan_exactly_max_array_size_tasks_is_one_array() -> None:
    assert [c.size for c in plan_arrays(_files(1001), 1, 1001)] == [1001]
    assert [c.size for c in plan_arrays(_files(1002), 1, 1001)] == [1001, 1]


def test_plan_groups_runs_per_task_in_order() -> None:
    files = _files(7)
    chunks = plan_arrays(files, 2, 3)
    assert [c.offset for c in chunks] == [0, 3]
    assert chunks[0].tasks == ((files[0], files[1]), (files[2], files[3]), (files[4], files[5]))
    assert chunks[1].tasks == ((files[6],),)
    assert [c.n_runs for c in chunks] == [6, 1]


@given(n=st.integers(1, 300), per_task=st.integers(1, 9), max_size=st.integers(1, 40))
def test_plan_covers_every_run_once_in_order(n: int, per_task: int, max_size: int) -> None:
    files = _files(n)
    chunks = plan_arrays(files, per_task, max_size)
    flat = [f for c in chunks for task in c.tasks for f in task]
    assert flat == files
    offset = 0
    for c in chunks:
        assert 1 <= c.size <= max_size
        assert c.offset == offset
        assert all(1 <= len(t) <= per_task for t in c.tasks)
        offset += c.size
    assert offset == -(-n // per_task)


@pytest.mark.parametrize(
    ("files", "per_task", "max_size", "message"),
    [([], 1, 10, "no run files"), (_files(2), 0, 10, "runs per task"), (_files(2), 1, 0, "MaxArraySize = 0")],
)
def test_plan_rejects_bad_input(files: list[Path], per_task: int, max_size: int, message: str) -> None:
    with pytest.raises(InputError, match=message):
        plan_arrays(files, per_task, max_size)


def test_task_list_has_one_tab_separated_line_per_task() -> None:
    chunks = plan_arrays(_files(5), 2, 2)
    lines = task_list_text(chunks).splitlines()
    assert lines == [
        "/campaign/_outputs/run-study-0000.yaml\t/campaign/_outputs/run-study-0001.yaml",
        "/campaign/_outputs/run-study-0002.yaml\t/campaign/_outputs/run-study-0003.yaml",
        "/campaign/_outputs/run-study-0004.yaml",
    ]
    with pytest.raises(InputError, match="tabs or line breaks"):
        task_list_text(plan_arrays([Path("/a\tb/run.yaml")], 1, 10))


# --- render_sbatch ----------------------------------------------------------------------


def _golden_script() -> str:
    chunk = plan_arrays(_files(2500), 2, 1001)[1]
    options = SlurmOptions(
        partition="short",
        time="2:00:00",
        cpus_per_task=2,
        mem="4G",
        array_parallelism=50,
        runs_per_task=2,
        store_url=PG,
        results=Path("/campaign/results"),
        job_name="xrun-study",
        sbatch_args=("--account=proj1",),
        python="/opt/venv/bin/python",
    )
    task_list = Path("/campaign/_outputs/slurm/20250101-120000/tasks.tsv")
    return render_sbatch(chunk, options, task_list, workdir=Path("/campaign"), n_tasks=1250)


def test_render_matches_the_golden_file() -> None:
    script = _golden_script()
    if os.environ.get("XDOE_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(script, encoding="utf-8")
    assert script == GOLDEN.read_text(encoding="utf-8"), "re-create with XDOE_UPDATE_GOLDEN=1 after checking the diff"


def test_rendered_script_is_valid_bash() -> None:
    proc = subprocess.run(["bash", "-n"], input=_golden_script(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_render_minimal_options_leave_resources_to_the_cluster() -> None:
    chunk = ArrayChunk(number=0, offset=0, tasks=((Path("/o/run-a.yaml"),),))
    script = render_sbatch(chunk, SlurmOptions(python="/py"), Path("/o/slurm/s/tasks.tsv"))
    sbatch_lines = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    assert sbatch_lines == [
        "#SBATCH --job-name=xrun",
        "#SBATCH --array=0-0",
        "#SBATCH --output=/o/slurm/s/logs/%A_%a.out",
    ]
    assert "export XRUN_STORE" not in script
    assert '/py -m xdoe.cli._xrun experiment-start --store "$XRUN_STORE" --quiet "${FILES[@]}"' in script


def test_render_substitutes_a_task_command_and_quotes_paths() -> None:
    chunk = ArrayChunk(number=0, offset=4, tasks=((Path("/o/run-a.yaml"),),))
    options = SlurmOptions(python="/my venv/bin/python", task_command="{python} -c 'print(1)'")
    script = render_sbatch(chunk, options, Path("/my dir/tasks.tsv"))
    assert "'/my venv/bin/python' -c 'print(1)' \"${FILES[@]}\"" in script
    assert '#SBATCH --output="/my dir/logs/%A_%a.out"' in script
    assert "TASK_LIST='/my dir/tasks.tsv'" in script
    assert "OFFSET=4" in script


def test_the_task_prologue_picks_its_line_by_offset(tmp_path: Path) -> None:
    """Run the rendered script with bash (no SLURM): array index 1 of a chunk at offset 2 is task 3."""
    files = [tmp_path / f"run {i}.yaml" for i in range(8)]  # a space in every name
    chunk = plan_arrays(files, 2, 2)[1]
    (tmp_path / "tasks.tsv").write_text(task_list_text(plan_arrays(files, 2, 2)))
    options = SlurmOptions(task_command="printf '%s\\n'")
    script = render_sbatch(chunk, options, tmp_path / "tasks.tsv")
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_JOB_ID": "77"}
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1:] == [str(files[6]), str(files[7])]
    env["SLURM_ARRAY_TASK_ID"] = "2"  # beyond the task list
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "no line 5" in proc.stderr


@pytest.mark.parametrize(
    "kwargs",
    [
        {"partition": "a b"},
        {"mem": "1G\n#SBATCH --x"},
        {"time": "$(rm -rf /)"},
        {"runs_per_task": 0},
        {"array_parallelism": -1},
        {"sbatch_args": ("account=x",)},
    ],
)
def test_options_refuse_values_that_would_change_the_script(kwargs: dict) -> None:
    with pytest.raises(InputError):
        SlurmOptions(**kwargs)


# --- the store ----------------------------------------------------------------------------


def test_sqlite_store_is_refused_with_an_explanation() -> None:
    with pytest.raises(InputError) as info:
        check_store_for_slurm("sqlite:///_outputs/xrun.sqlite", allow_sqlite=False)
    message = str(info.value)
    assert "SQLite" in message and "file locks" in message and "PostgreSQL" in message
    assert "--allow-sqlite" in message


def test_sqlite_store_is_accepted_when_allowed_but_never_in_memory() -> None:
    url = "sqlite:////shared/xrun.sqlite"
    assert check_store_for_slurm(url, allow_sqlite=True) == url
    with pytest.raises(InputError, match="in-memory"):
        check_store_for_slurm("sqlite://", allow_sqlite=True)


def test_missing_or_malformed_store_is_refused() -> None:
    with pytest.raises(InputError, match="XRUN_STORE"):
        check_store_for_slurm(None)
    with pytest.raises(InputError, match="cannot be parsed"):
        check_store_for_slurm("not a url")
    assert check_store_for_slurm(PG) == PG


# --- max_array_size -------------------------------------------------------------------------


def _executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_max_array_size_defaults_when_scontrol_is_missing_or_fails(tmp_path: Path) -> None:
    assert max_array_size(str(tmp_path / "no-scontrol")) == DEFAULT_MAX_ARRAY_SIZE
    failing = _executable(tmp_path / "scontrol", "#!/bin/sh\necho 'slurm_load_ctl_conf error' >&2\nexit 1\n")
    assert max_array_size(failing) == DEFAULT_MAX_ARRAY_SIZE


def test_max_array_size_reads_scontrol_show_config(tmp_path: Path) -> None:
    # the layout of `scontrol show config` (slurm 22.05)
    config = "Configuration data as of 2025-01-01T00:00:00\nMaxArraySize            = 4001\nMaxJobCount = 10000\n"
    fake = _executable(tmp_path / "scontrol", f"#!/bin/sh\ncat <<'EOF'\n{config}EOF\n")
    assert max_array_size(fake) == 4001


# --- submit without submitting -----------------------------------------------------------------



def test_dry_run_writes_and_submits_nothing(tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 5)
    before = sorted(tmp_path.rglob("*"))
    arrays = submit(
        files,
        SlurmOptions(store_url=PG, runs_per_task=2),
        dry_run=True,
        workdir=tmp_path,
        max_array_size=2,
        sbatch=str(tmp_path / "sbatch-must-not-run"),
    )
    assert sorted(tmp_path.rglob("*")) == before
    assert [a.job_id for a in arrays] == [None, None]
    assert [a.chunk.offset for a in arrays] == [0, 2]
    assert arrays[0].script_path.parent.parent == tmp_path / "_outputs" / "slurm"
    assert "#SBATCH --array=0-1" in arrays[0].script and "OFFSET=2" in arrays[1].script
    assert f"#SBATCH --chdir={tmp_path}" in arrays[0].script


def test_submit_refuses_sqlite_and_missing_files_before_writing(tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 2)
    with pytest.raises(InputError, match="SQLite"):
        submit(files, SlurmOptions(store_url="sqlite:///x.sqlite"), workdir=tmp_path, max_array_size=10)
    with pytest.raises(InputError, match="not found: .*run-nope.yaml"):
        submit([*files, tmp_path / "run-nope.yaml"], SlurmOptions(store_url=PG), max_array_size=10)
    assert not (tmp_path / "_outputs" / "slurm").exists()


def test_submit_without_sbatch_says_what_to_do_and_cleans_up(tmp_path: Path) -> None:
    files = run_files(tmp_path / "_outputs", 2)
    with pytest.raises(SlurmError, match="not found on PATH.*login node"):
        submit(files, SlurmOptions(store_url=PG), workdir=tmp_path, max_array_size=10, sbatch=str(tmp_path / "nosbatch"))
    assert list((tmp_path / "_outputs" / "slurm").iterdir()) == []


def test_default_python_is_the_submitters() -> None:
    assert SlurmOptions().python == sys.executable
