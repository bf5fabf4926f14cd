"""xrun at scale on the command line: --jobs, concurrent xrun processes
sharing files and a store (work claiming), xrun submit --slurm end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

HERE = Path(__file__).resolve().parent
COMPONENTS = HERE.parent / "execution"
if str(COMPONENTS) not in sys.path:
    sys.path.insert(0, str(COMPONENTS))

from scale_components import countdown_run, write_runs  # noqa: E402
from slurm_fixtures import SlurmCluster, slurm_cluster  # noqa: E402,F401  (pytest fixture)

from xdoe.cli._xrun import main  # noqa: E402
from xdoe.store import Store  # noqa: E402


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(COMPONENTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    return env


def _episodes(url: str) -> dict[str, list]:
    with Store(url) as store:
        rows: dict[str, list] = {}
        for r in store.runs.episodes():
            rows.setdefault(r["run"], []).append((r["phase"], r["worker"], r["episode"], r["reward"]))
        return rows


def test_jobs_2_runs_everything_with_the_same_results_as_jobs_1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = write_runs(tmp_path / "runs", [countdown_run(f"j{i}", seed=i, episodes=2 + i, worker=2)
                                           for i in range(4)])
    one, two = f"sqlite:///{tmp_path / 'one.sqlite'}", f"sqlite:///{tmp_path / 'two.sqlite'}"
    r1 = CliRunner().invoke(main, ["experiment-start", "--store", one, *files])
    r2 = CliRunner().invoke(main, ["experiment-start", "--jobs", "2", "--store", two, *files])
    assert r1.exit_code == 0, r1.output
    assert r2.exit_code == 0, r2.output
    assert r2.stdout.count("finished") == 4 and "xrun summary" in r2.stdout
    assert _episodes(one) == _episodes(two) and len(_episodes(two)) == 4
    # started again: every run is finished already, nothing runs, exit 0
    r3 = CliRunner().invoke(main, ["experiment-start", "-j", "2", "--store", two, *files])
    assert r3.exit_code == 0 and r3.stdout.count("skipped") == 4, r3.output
    with Store(two) as store:
        assert Counter(i.run_uid for i in store.runs.instances()) == Counter({f"j{i}": 1 for i in range(4)})


def _summary_rows(output: str) -> list[tuple[str, str, str]]:
    """(run, status, episodes) of each row of the summary table."""
    rows = []
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) >= 3 and cells[0] and cells[1] in ("finished", "skipped", "failed", "claimed"):
            rows.append((cells[0], cells[1], cells[2]))
    return rows


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_results_are_matched_to_their_documents_not_to_file_names(tmp_path, monkeypatch, jobs):
    # two documents of the same file name and uid in different folders, and one file named twice
    # (relative with ./ and absolute); the first document is the slowest, so it finishes last
    monkeypatch.chdir(tmp_path)
    write_runs(tmp_path / "a", [countdown_run("same", episodes=3, length=5, sleep=0.04)])
    write_runs(tmp_path / "b", [countdown_run("same", episodes=1, length=2)])
    write_runs(tmp_path, [countdown_run("x", episodes=2, length=2)])
    files = ["a/run-same.yaml", "b/run-same.yaml", "./run-x.yaml", str(tmp_path / "run-x.yaml")]
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    result = CliRunner().invoke(main, ["experiment-start", "--jobs", jobs, "--store", url, *files])
    assert result.exit_code == 0, result.output
    # in the order of FILES, each row the result of its own document (episodes: training + 1 test)
    assert _summary_rows(result.stdout) == [("same", "finished", "4"), ("same", "finished", "2"),
                                            ("x", "finished", "3"), ("x", "skipped", "0")], result.stdout


def test_a_killed_run_fails_alone_and_the_exit_code_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = write_runs(tmp_path / "runs", [countdown_run("fine-1"), countdown_run("dies", kill_at_episode=1),
                                           countdown_run("fine-2")])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    result = CliRunner().invoke(main, ["experiment-start", "--jobs", "2", "--store", url, *files])
    assert result.exit_code == 1, result.output
    assert "run dies failed: worker process died" in result.stderr
    with Store(url) as store:
        assert {i.run_uid: i.status for i in store.runs.instances()} == {
            "fine-1": "finished", "dies": "failed", "fine-2": "finished"}


def test_two_xrun_processes_on_the_same_files_run_each_run_once(tmp_path, store_url):
    docs = [countdown_run(f"c{i}", seed=i, episodes=3, length=5, sleep=0.02) for i in range(8)]
    files = write_runs(tmp_path / "runs", docs)
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--store", store_url,
            "--results", str(tmp_path / "results"), *files]
    procs = [subprocess.Popen(argv, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with Store(store_url) as store:
        instances = store.runs.instances()
    assert Counter(i.run_uid for i in instances) == Counter({f"c{i}": 1 for i in range(8)})
    assert {i.status for i in instances} == {"finished"}
    assert len({i.pid for i in instances}) == 2  # both processes did some of the work


@pytest.mark.slurm
@pytest.mark.postgres
def test_submit_slurm_records_every_run_exactly_once(slurm_cluster: SlurmCluster, tmp_path, postgres_admin):
    from xdoe.campaign.backends._slurm import wait_for
    from xdoe.store.testing import temporary_schema

    files = write_runs(tmp_path / "_outputs", [countdown_run(f"s{i:02d}", seed=i) for i in range(10)])
    with temporary_schema(postgres_admin) as url:
        Store(url).close()  # create the tables once, before the tasks race for it
        proc = subprocess.run(
            [sys.executable, "-m", "xdoe.cli._xrun", "submit", "--slurm", "--store", url, "--runs-per-task", "2",
             "--results", str(tmp_path / "results"), str(tmp_path / "_outputs")],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        job_ids = re.findall(r"submitted job array (\d+)", proc.stdout + proc.stderr)
        assert job_ids, proc.stdout + proc.stderr
        wait_for(job_ids, timeout=300)
        with Store(url) as store:
            instances = store.runs.instances()
        assert Counter(i.run_uid for i in instances) == Counter({f"s{i:02d}": 1 for i in range(10)})
        assert {i.status for i in instances} == {"finished"}, [(i.run_uid, i.error) for i in instances]
