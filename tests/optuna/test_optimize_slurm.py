"""``xrun optimize --slurm`` (issue 37, item 1) on a real single-node SLURM
cluster with a PostgreSQL store (a schema of its own, dropped after):

* a small TPE study run with ``--slurm`` ends with the trials, values and
  run files of the same study under ``--jobs 1``;
* the driver SIGKILLed while a batch's array task is held in the middle of a
  run (:mod:`hold`; the array task inherits ``XDOE_TEST_HOLD`` through
  SLURM's default ``--export=ALL``) and started again re-attaches to that
  array instead of submitting again, and ends with the same trials, each run
  finished once with its episodes once;
* the same run file submitted twice while its first task holds it: the
  second task waits on the store's claim and then skips it;
* ``--slurm`` beside ``--jobs 2``, ``--dask``, ``--in-process`` or with a
  SQLite store is refused (exit 2) before anything is written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import click
import pytest
from click.testing import CliRunner
from slurm_fixtures import SlurmCluster, slurm_cluster  # noqa: F401  (pytest fixture)

import hold
import kill_study
from optimize_study import campaign, same_files
from optuna_truth import document
from xdoe.cli._xrun import main
from xdoe.store.testing import temporary_schema

UID = "quad"
TRIALS, BATCH, EPISODES = 4, 2, 8
DESIGN = {"method": "optuna", "sampler": "tpe", "trials": TRIALS, "batch": BATCH, "startup_trials": 2}
HANG = 600  # seconds: a hang guard only, never a moment of the test


def _data() -> dict[str, Any]:
    """The noisy quadratic with an environment :mod:`hold` can hold (the same episodes without a hold)."""
    data = document(DESIGN, episodes=EPISODES)
    data["definitions"]["environments"]["f"]["environment"]["name"] = "held_environments:HeldFunctionEnvironment"
    return data


def _slurm_command(doc: Path, out: Path, url: str) -> list[str]:
    return [sys.executable, "-c", "from xdoe.cli._xrun import main; main()", "optimize", str(doc), "-o", str(out),
            "--slurm", "--store", url, "--no-laydown", "--job-name", "xdoe-test-optimize", "-t", "10"]


@pytest.fixture
def pg_url(postgres_admin: str) -> Iterator[str]:
    with temporary_schema(postgres_admin, prefix="xdoe_s6_slurm") as url:
        yield url


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """The test's hold folder; whatever holds there when the test ends (it failed) is released, so that
    no array task is left holding a CPU of the cluster until its time limit."""
    folder = tmp_path / "hold"
    yield folder
    if hold.held(folder):
        hold.release(folder, hold.held(folder))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The study under ``--jobs 1`` (a SQLite store): its trials, store and folder."""
    folder = tmp_path_factory.mktemp("jobs1")
    state = kill_study.study(folder / "study", _data(), UID, 1)
    return {**state, "out": folder / "study" / "out"}


def _same_trials(got: list[tuple], expected: list[tuple]) -> None:
    """The same trials asked (numbers, states, parameters) and told the same values, up to the last bits
    of a database's ``avg`` (its summation order follows its plan; PostgreSQL here, SQLite there)."""
    assert [t[:3] for t in got] == [t[:3] for t in expected]
    assert [t[3] for t in got] == [pytest.approx(t[3], rel=1e-12, abs=1e-12) for t in expected]


def _lines_until(proc: subprocess.Popen, text: str, count: int = 1) -> list[str]:
    """The driver's stdout lines up to the ``count``-th holding ``text`` (read as they come, no polling)."""
    seen, lines = 0, []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        seen += text in line
        if seen == count:
            return lines
    raise AssertionError(f"the driver ended (exit {proc.wait()}) before {count} line(s) with {text!r}: "
                         f"{''.join(lines)}{proc.stderr.read() if proc.stderr else ''}")


def _finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, out + err
    return out


@pytest.mark.slow
@pytest.mark.slurm
@pytest.mark.postgres
def test_a_study_under_slurm_ends_as_under_jobs_1(slurm_cluster: SlurmCluster, pg_url: str, tmp_path: Path,
                                                  reference: dict[str, Any]) -> None:
    doc, out = campaign(tmp_path, _data())
    done = subprocess.run(_slurm_command(doc, out, pg_url), env=kill_study.ENV, cwd=tmp_path, capture_output=True,
                          text=True, timeout=HANG)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("submitted job array") == TRIALS // BATCH  # one array per batch
    assert "task(s) left the queue" in done.stdout  # progress lines while waiting
    _same_trials(kill_study.trials(out, UID), reference["trials"])  # the same points asked, values told
    same_files(reference["out"], out, TRIALS)
    state = kill_study.store(pg_url)
    kill_study.ran_once(state, TRIALS)
    assert state["episodes"] == reference["store"]["episodes"]


def _held_driver(tmp_path: Path, pg_url: str, folder: Path) -> tuple[Path, Path, list[str], subprocess.Popen]:
    """``(document, output, command, driver)``: the study's ``--slurm`` driver
    started in a session of its own, with one array task of its first batch
    to hold at the episode start of a run with hold.LEAST episodes recorded."""
    doc, out = campaign(tmp_path, _data())
    hold.request(folder, 1, least=hold.LEAST)
    command = _slurm_command(doc, out, pg_url)
    driver = subprocess.Popen(command, env={**kill_study.ENV, hold.HOLD: str(folder)}, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return doc, out, command, driver


@pytest.mark.slow
@pytest.mark.slurm
@pytest.mark.postgres
def test_a_killed_driver_started_again_reattaches_and_runs_nothing_twice(
        slurm_cluster: SlurmCluster, pg_url: str, tmp_path: Path, held: Path, reference: dict[str, Any]) -> None:
    folder = held
    doc, out, command, driver = _held_driver(tmp_path, pg_url, folder)
    lines = _lines_until(driver, "submitted job array")  # printed after jobs.json is written
    array = lines[-1].split("submitted job array ")[1].split(":")[0]
    pids = hold.wait_held(driver, folder, timeout=HANG)
    assert len(pids) == 1 and driver.poll() is None
    assert max(kill_study.store(pg_url)["live"], default=0) >= hold.LEAST  # a run held in its training
    os.killpg(driver.pid, signal.SIGKILL)
    driver.communicate()
    kill_study.wait_gone(driver.pid)

    for signum in (signal.SIGINT, None):  # Ctrl-C stops waiting only; then a driver waits to the end
        # started with SIGINT ignored, as `nohup xrun optimize ... &` from a script is: SIGINT still stops it
        again = subprocess.Popen(command, env=kill_study.ENV, cwd=tmp_path, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        lines = _lines_until(again, f"re-attached to job array {array}")
        assert not [line for line in lines if "submitted job array" in line]  # the queued batch not submitted again
        if signum is not None:
            again.send_signal(signum)
            _, err = again.communicate(timeout=HANG)
            assert again.returncode == 130, err
            assert f"job array(s) {array} keep running" in err and "re-attaches" in err and "resume with:" in err
    hold.release(folder, pids)  # the held array task goes on; the driver waits for it
    _finish(again)

    assert len(list((out / "slurm").iterdir())) == TRIALS // BATCH  # one submission per batch, none twice
    _same_trials(kill_study.trials(out, UID), reference["trials"])
    same_files(reference["out"], out, TRIALS)
    state = kill_study.store(pg_url)
    kill_study.ran_once(state, TRIALS)
    assert state["episodes"] == reference["store"]["episodes"]  # every episode once, as unkilled


@pytest.mark.slow
@pytest.mark.slurm
@pytest.mark.postgres
def test_a_run_failed_in_its_array_task_leaves_its_trial_waiting(
        slurm_cluster: SlurmCluster, pg_url: str, tmp_path: Path, held: Path, reference: dict[str, Any]) -> None:
    folder = held
    doc, out, command, driver = _held_driver(tmp_path, pg_url, folder)
    (pid,) = hold.wait_held(driver, folder, timeout=HANG)
    os.kill(pid, signal.SIGKILL)  # the run's worker process in its array task: the run fails there
    out_text, err = driver.communicate(timeout=HANG)
    assert driver.returncode == 1, out_text + err
    assert "have runs that did not finish (failed or interrupted" in err and "their trials wait" in err
    assert kill_study.trials(out, UID)[0][1] in ("RUNNING", "COMPLETE")  # told only when all its runs finished
    assert any(t[1] == "RUNNING" for t in kill_study.trials(out, UID))  # the failed run's trial waits
    _finish(subprocess.Popen(command, env=kill_study.ENV, cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True))  # the failed run runs again, the finished not
    _same_trials(kill_study.trials(out, UID), reference["trials"])
    state = kill_study.store(pg_url)
    kill_study.ran_once(state, TRIALS)
    assert sorted(status for _, status in state["instances"]).count("failed") == 1
    assert state["episodes"] == reference["store"]["episodes"]


@pytest.mark.slow
@pytest.mark.slurm
@pytest.mark.postgres
def test_a_run_submitted_twice_runs_once(slurm_cluster: SlurmCluster, pg_url: str, tmp_path: Path, held: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's claims, not the driver's bookkeeping, keep a run from running twice."""
    from xdoe.campaign.backends import SlurmBackend, SlurmOptions

    _, out = campaign(tmp_path, _data())
    first_file = sorted(out.glob("run-*.yaml"))[:1]
    folder = held
    hold.request(folder, 1, least=hold.LEAST)
    monkeypatch.setenv("PYTHONPATH", kill_study.ENV["PYTHONPATH"])  # what sbatch exports to the array tasks
    monkeypatch.setenv(hold.HOLD, str(folder))
    monkeypatch.chdir(tmp_path)
    options = {"store_url": pg_url, "results": out / "results", "job_name": "xdoe-test-twice", "time": "10"}
    (first,) = SlurmBackend(SlurmOptions(**options, run_args=("--no-laydown",))).submit_files(first_file)
    deadline = time.monotonic() + HANG
    while not hold.held(folder):  # until the first task holds the run (hang guard only)
        assert time.monotonic() < deadline and not first.done(), "the first task ended without holding"
        time.sleep(0.05)
    # the same file again, by a task that says what it waits for (no --quiet)
    loud = '{python} -m xdoe.cli._xrun experiment-start --store "$XRUN_STORE" --no-laydown'
    (second,) = SlurmBackend(SlurmOptions(**options, task_command=loud)).submit_files(first_file)
    log = second.array.script_path.parent / "logs" / f"{second.job_id}_0.out"
    while not (log.exists() and "another process holds" in log.read_text()):  # it waits on the claim
        assert time.monotonic() < deadline and not second.done(), log.read_text() if log.exists() else "no log"
        time.sleep(0.05)
    hold.release(folder, hold.held(folder))
    first.wait(HANG)
    second.wait(HANG)
    assert second.states() in ({"0": "COMPLETED"}, {})  # {}: the controller forgot it already
    assert "skipped" in log.read_text() or "finished" in log.read_text()
    state = kill_study.store(pg_url)
    kill_study.ran_once(state, 1)
    assert [i for i in state["instances"]] == [(first_file[0].stem[len("run-"):], "finished")]  # one instance


@pytest.mark.parametrize("args, message", [
    (["--jobs", "2"], "--jobs 2"),
    (["--dask", "local"], "--dask"),
    (["--in-process"], "--in-process"),
    ([], "SQLite file, refused"),  # the default store beside the output folder
])
def test_slurm_refusals_exit_2_and_write_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    doc, out = campaign(tmp_path, _data())
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    store = [] if not args else ["--store", "postgresql+psycopg://nobody@127.0.0.1:1/none"]
    done = CliRunner().invoke(main, ["optimize", str(doc), "-o", str(out), "--slurm", *store, *args])
    assert done.exit_code == 2, done.output
    assert message in done.output and "Traceback" not in done.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_submit_and_optimize_share_one_definition_of_the_slurm_options() -> None:
    from xdoe.cli._submit import submit_command

    optimize = main.commands["optimize"]
    names = ["partition", "time_limit", "cpus_per_task", "mem", "array_parallelism", "runs_per_task",
             "allow_sqlite", "job_name", "sbatch_args"]
    mine = {p.name: p for p in optimize.params}
    theirs = {p.name: p for p in submit_command.params}
    for name in names:
        a, b = mine[name], theirs[name]
        assert (a.opts, a.help, a.default, a.metavar, type(a.type)) == (
            b.opts, b.help, b.default, b.metavar, type(b.type))
    # the names xrun optimize takes out of its parameters are exactly those the options give
    from xdoe.cli._submit import SLURM_PARAMETERS, slurm_options

    given = [p.name for p in click.command()(slurm_options()(lambda **kw: None)).params]
    assert given == names == list(SLURM_PARAMETERS)
