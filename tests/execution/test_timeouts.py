"""Issue 25, item 5: per-run and per-step time limits. A plugin whose
``update()`` never returns (tests/execution/hang_components.py) fails its
run with ``no progress for N s in HangingEnvironment.update`` — in process
through ``phase_config.step_timeout``, under ``xrun --run-timeout`` with
``--jobs 1`` and ``--jobs 2`` (a plugin that swallows the limit's exception
gets its worker process killed) — while the other runs finish; the limits
are validated as positive numbers; a hung run's claim heartbeat stops."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scale_components import countdown_run, write_runs
from xdoe.errors import DocumentError
from xdoe.execution import load_plan, run
from xdoe.store import ClaimHeartbeat, Store

HERE = Path(__file__).resolve().parent


def _hanging(uid: str, how: str = "sleep", **config: object) -> dict:
    doc = countdown_run(uid, episodes=3, length=4)
    training = doc["schedule"][0]["training"]
    training["environments"][0]["environment"].update(
        name="hang_components:HangingEnvironment", params={"length": 4, "how": how})
    training["phase_config"].update(config)
    return doc


@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_step_timeout_fails_a_run_whose_update_never_returns(tmp_path: Path, how: str) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    started = time.monotonic()
    result = run(_hanging("hang", how, step_timeout=0.5), store=url, results=tmp_path)
    assert time.monotonic() - started < 30
    assert result.status == "failed"
    assert result.error == "no progress for 0.5 s in HangingEnvironment.update (phase_config.step_timeout)"
    with Store(url) as store:
        (inst,) = store.runs.instances()
        assert inst.status == "failed" and inst.error == result.error
        assert len(list(store.runs.episodes("hang"))) == 1  # episode 0 finished before the hang
    fine = run(countdown_run("fine"), store=url, results=tmp_path)
    assert fine.status == "finished"  # the limit was removed with its run


def test_a_run_timeout_lets_a_slow_but_moving_run_fail_without_blaming_a_call(tmp_path: Path) -> None:
    slow = countdown_run("slow", episodes=200, length=5, sleep=0.01)
    slow["run_config"] = {"timeout": 1}
    result = run(slow, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert result.status == "failed"
    assert result.error.startswith("the run took more than its run timeout of 1 s"), result.error


def _xrun(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("XRUN_STORE", None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    return done, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_xrun_run_timeout_fails_hung_runs_and_finishes_the_campaign(tmp_path: Path, jobs: str) -> None:
    docs = [countdown_run("ok-0", seed=0), _hanging("hang-sleep"), _hanging("hang-stubborn", "stubborn"),
            countdown_run("ok-1", seed=1)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    done, took = _xrun(tmp_path, "--jobs", jobs, "--run-timeout", "4", "--store", url,
                       "--results", str(tmp_path / "results"), *files)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert took < 120
    lines = sorted(line for line in done.stderr.splitlines() if line.startswith("run "))
    # N: the seconds update() had been stuck when the run's 4 s were up (its start took the rest)
    assert [re.sub(r"for \d s", "for N s", line) for line in lines] == [
        f"run hang-{how} failed: no progress for N s in HangingEnvironment.update (run timeout 4 s)"
        for how in ("sleep", "stubborn")], done.stderr
    with Store(url) as store:
        status = {i.run_uid: (i.status, i.error) for i in store.runs.instances()}
    assert status["ok-0"][0] == status["ok-1"][0] == "finished", status
    assert status["hang-sleep"] == ("failed", lines[0].split(": ", 1)[1]), status
    assert status["hang-stubborn"] == ("failed", lines[1].split(": ", 1)[1]), status


@pytest.mark.parametrize("where, value", [
    ("step", 0), ("step", -1), ("step", "5"), ("step", True), ("step", float("inf")), ("run", 0), ("run", "1m")])
def test_time_limits_must_be_positive_numbers(where: str, value: object) -> None:
    doc = countdown_run("limits")
    if where == "step":
        doc["schedule"][0]["training"]["phase_config"]["step_timeout"] = value
        key = "step_timeout"
    else:
        doc["run_config"] = {"timeout": value}
        key = "run_config.timeout"
    with pytest.raises(DocumentError, match=key.replace(".", r"\.")):
        load_plan(doc)


def test_valid_limits_reach_the_plan_and_absent_ones_change_nothing() -> None:
    doc = countdown_run("limits")
    doc["run_config"] = {"timeout": 90}
    doc["schedule"][0]["training"]["phase_config"]["step_timeout"] = 2.5
    plan = load_plan(doc)
    assert plan.timeout == 90 and [p.step_timeout for p in plan.phases] == [2.5, 2.5]  # inherited by testing
    plain = load_plan(countdown_run("limits"))
    assert plain.timeout is None and all(p.step_timeout is None for p in plain.phases)
    assert "step_timeout" not in plain.phases[0].config
    assert "step_timeout" not in plain.document["schedule"][0]["training"]["phase_config"]


def test_the_claim_heartbeat_stops_while_the_run_is_hung(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as store:
        assert store.runs.claim_run("r", "h", owner="me", stale_after=60)
        hung = True
        with ClaimHeartbeat(store.runs, "r", "h", owner="me", interval=0.05, alive=lambda: not hung) as beat:
            time.sleep(0.4)
            assert beat.beats == 0
            hung = False
            deadline = time.monotonic() + 30  # beats again: polled, not after a sleep a loaded machine outruns
            while beat.beats == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
        assert beat.beats > 0


@pytest.mark.parametrize("line, error", [
    ("    train: {mode: train, worker: 1, episodes: 3, step_timeout: 0}",
     "definitions.phase_config.train.step_timeout: Input should be greater than 0 (got 0)"),
    ("    train: {mode: train, worker: 1, episodes: 3, step_timeout: -2.5}",
     "definitions.phase_config.train.step_timeout: Input should be greater than 0 (got -2.5)"),
])
def test_xgen_check_refuses_a_time_limit_that_is_not_positive(tmp_path: Path, line: str, error: str) -> None:
    from click.testing import CliRunner

    from xdoe.cli._xgen import main as xgen

    text = (HERE.parents[1] / "experiments" / "dummy.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("    train: {mode: train, worker: 1, episodes: 3}", line))
    result = CliRunner().invoke(xgen, ["check", str(bad)])
    assert result.exit_code == 2
    assert f"error: {bad}:44: {error}" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_xrun_kills_a_worker_whose_watchdog_cannot_end_its_run(tmp_path: Path, jobs: str) -> None:
    """A plugin that blocks every signal (SIGALRM too) is killed by its own
    watchdog after GRACE; one that blocks in C code holding the GIL (no thread
    of its process runs) is SIGKILLed by xrun's process GRACE + MARGIN after
    its limit. Both runs fail with the limit's message; the others finish."""
    from xdoe.execution._watchdog import GRACE, MARGIN

    docs = [countdown_run("ok-0", seed=0), _hanging("hang-masked", "masked", step_timeout=1),
            _hanging("hang-gil", "gil", step_timeout=1), countdown_run("ok-1", seed=1)]
    for doc in docs[1:3]:  # updates of 0.05 s before the hang: the watchdog sees update running
        doc["schedule"][0]["training"]["environments"][0]["environment"]["params"].update(sleep=0.05, at_episode=2)
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    done, took = _xrun(tmp_path, "--jobs", jobs, "--store", url, "--results", str(tmp_path / "results"), *files)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert took < 2 * (1 + GRACE + MARGIN) + 40  # the gil run would sleep 120 s
    lines = sorted(line for line in done.stderr.splitlines() if line.startswith("run "))
    assert lines == [f"run hang-{how} failed: no progress for 1 s in HangingEnvironment.update "
                     "(phase_config.step_timeout)" for how in ("gil", "masked")], done.stderr
    with Store(url) as store:
        status = {i.run_uid: (i.status, i.error) for i in store.runs.instances()}
    assert status["ok-0"][0] == status["ok-1"][0] == "finished", status
    for how in ("gil", "masked"):
        assert status[f"hang-{how}"] == ("failed", "no progress for 1 s in HangingEnvironment.update "
                                                   "(phase_config.step_timeout)"), status


@pytest.mark.parametrize("how", ["sleep", pytest.param("gil", marks=pytest.mark.slow)])
def test_step_timeout_holds_in_parallel_workers(tmp_path: Path, how: str) -> None:
    """--parallel-workers: the workers of a phase run in their own processes;
    a hung update there fails the run within its step_timeout (``sleep``: the
    worker's watchdog; ``gil``: C code holding the GIL, killed by the run
    process GRACE + MARGIN later)."""
    from xdoe.execution import parallel_workers
    from xdoe.execution._watchdog import GRACE, MARGIN

    doc = _hanging("par", how, step_timeout=0.5)
    doc["schedule"][0]["training"]["phase_config"]["worker"] = 2
    # updates of 0.02 s before the hang: the watchdog sees update running
    doc["schedule"][0]["training"]["environments"][0]["environment"]["params"].update(sleep=0.02, at_episode=2)
    started = time.monotonic()
    with parallel_workers():
        result = run(doc, store=f"sqlite:///{tmp_path / 'x.sqlite'}", results=tmp_path)
    assert time.monotonic() - started < 0.5 + GRACE + MARGIN + 30
    assert result.status == "failed", result.error
    assert re.fullmatch(r"no progress for 0\.5 s in HangingEnvironment\.update \(phase_config\.step_timeout\) "
                        r"in parallel worker [01]", result.error), result.error


@pytest.mark.slow
def test_a_gil_hang_the_watchdog_never_saw_names_the_limit_and_its_real_wall_time(tmp_path: Path) -> None:
    """Issue 33: C code holding the GIL from the first update on (the watchdog
    never sees the call) failed with a message vaguer than documented and the
    summary showed ``0.00 s``: the message names the limit, the summary the
    time the run ran until xrun killed its worker."""
    from xdoe.execution._watchdog import GRACE

    doc = _hanging("hang-gil", "gil", step_timeout=1)
    doc["schedule"][0]["training"]["environments"][0]["environment"]["params"]["at_episode"] = 0
    files = write_runs(tmp_path / "runs", [doc])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    done, _took = _xrun(tmp_path, "--store", url, "--results", str(tmp_path / "results"), *files)
    assert done.returncode == 1, (done.stdout, done.stderr)
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("run ")]
    assert line.startswith("run hang-gil failed: no progress for 1 s (phase_config.step_timeout)"), line
    assert "outside a component call" not in line
    (row,) = [row for row in done.stdout.splitlines() if "hang-gil" in row]
    wall = float(re.search(r"([0-9.]+) s\b", row).group(1))  # type: ignore[union-attr]
    assert wall >= 1 + GRACE, row  # killed GRACE + MARGIN after the 1 s limit: never 0.00 s
    assert wall < 120, row  # the C call would have slept 120 s
