"""Every way plugin code can fail ends only its own run (issue 10): an
exception, ``sys.exit()``, a ``KeyboardInterrupt`` nobody pressed, a native
crash (SIGSEGV), SIGKILL — with ``--jobs 1`` and ``--jobs 2`` the failing run
is marked failed with one line naming the run and the cause, and every other
run finishes. A full disk stops the campaign cleanly (one line naming the
folder, the run resumable, no temporary files left) and the next start, once
there is room, finishes everything. A run claimed by a process that was
SIGKILLed is taken over, so exit 0 means every run finished.

The plugin is ``tests/execution/crash_components.py``; xrun runs in a real
subprocess, so a regression that crashes it cannot take pytest with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
COMPONENTS = HERE.parent / "execution"
if str(COMPONENTS) not in sys.path:
    sys.path.insert(0, str(COMPONENTS))

import hold  # noqa: E402
from scale_components import countdown_run, write_runs  # noqa: E402

from xdoe.store import Store  # noqa: E402

CAUSES = {
    "raise": "RuntimeError: plugin exploded",
    "exit": "plugin code called sys.exit(3)",
    "keyboard": "plugin code raised KeyboardInterrupt",
    "segv": "killed by SIGSEGV",
    "kill": "killed by SIGKILL",
}



def _xrun(cwd: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xdoe.cli._xrun", *args], cwd=cwd, env=hold.child_env(),
                          capture_output=True, text=True, timeout=timeout)


def _crashing(uid: str, how: str, **params: object) -> dict:
    doc = countdown_run(uid, episodes=3, length=4)
    env = doc["schedule"][0]["training"]["environments"][0]["environment"]
    env["name"] = "crash_components:CrashingEnvironment"
    env["params"] = {"length": 4, "how": how, "at_episode": 1, **params}
    return doc


def _statuses(url: str) -> dict[str, list[str]]:
    with Store(url) as store:
        out: dict[str, list[str]] = {}
        for inst in sorted(store.runs.instances(), key=lambda i: i.id):
            out.setdefault(inst.run_uid, []).append(inst.status)
        return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_failing_plugin_fails_only_its_run(tmp_path, jobs):
    docs = [countdown_run("ok-0", seed=0)]
    for how in CAUSES:
        docs += [_crashing(f"bad-{how}", how), countdown_run(f"ok-{how}", seed=len(docs))]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    args = ("experiment-start", "--jobs", jobs, "--store", url, "--results", str(tmp_path / "results"), *files)
    proc = _xrun(tmp_path, *args)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = sorted(line for line in proc.stderr.splitlines() if line.strip())
    assert len(lines) == len(CAUSES), proc.stderr
    for line, (how, cause) in zip(lines, sorted(CAUSES.items())):
        assert line.startswith(f"run bad-{how} failed: ") and cause in line, line
    expected = {doc["uid"]: ["failed" if doc["uid"].startswith("bad") else "finished"] for doc in docs}
    assert _statuses(url) == expected
    with Store(url) as store:
        for how, cause in CAUSES.items():
            (bad,) = store.runs.instances(run_uid=f"bad-{how}")
            assert cause in (bad.error or "")
            # the summary counts the episodes the failed run stored: episode 0 of
            # training, committed when it ended, also by a process that died (issue 25)
            stored = len(list(store.runs.episodes(f"bad-{how}")))
            assert stored == 1
            row = next(line for line in proc.stdout.splitlines() if f" bad-{how} " in line)
            assert row.split("│")[3].strip() == str(stored), row
    if jobs == "1":  # started again: each fails alone again, the finished runs are skipped
        again = _xrun(tmp_path, *args)
        assert again.returncode == 1, again.stderr
        statuses = _statuses(url)
        assert all(statuses[f"bad-{how}"] == ["failed", "failed"] for how in CAUSES), statuses
        assert all(statuses[f"ok-{how}"] == ["finished"] for how in CAUSES), statuses


def test_a_native_crash_in_the_preflight_check_fails_only_its_run(tmp_path):
    """``--jobs 2``: the first worker of the campaign's pool constructs the
    components for the preflight check; a constructor that crashes natively
    there (SIGSEGV) kills that worker, not xrun: the pool is replaced, the
    run fails with the crash, the other runs finish."""
    docs = [countdown_run("ok-0", seed=0), _crashing("bad-segv", "segv", at_episode=-1),
            countdown_run("ok-1", seed=1)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    proc = _xrun(tmp_path, "experiment-start", "--jobs", "2", "-q", "--store", url,
                 "--results", str(tmp_path / "results"), *files)
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        "run bad-segv failed: worker process died (killed by SIGSEGV)"], proc.stderr
    assert _statuses(url) == {"ok-0": ["finished"], "ok-1": ["finished"], "bad-segv": ["failed"]}


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 1 MiB tmpfs under ``tmp_path`` (root only; skipped where mounting is
    not permitted), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def _temp_files(folder: Path) -> list[Path]:
    """Temporary and hidden files left behind (the laydown cache folder is
    meant to be there; a scratch drawing in it is not)."""
    return [p for p in folder.rglob("*") if (".tmp" in p.name or p.name.startswith(".")) and p.name != ".laydown"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_results_disk_stops_the_campaign_cleanly(tmp_path, tiny_disk, jobs):
    results = tiny_disk / "results"
    docs = [countdown_run("ok-0", seed=0),
            _crashing("filler", "fill", fill_dir=str(tiny_disk), marker=str(tmp_path / "filled")),
            countdown_run("ok-1", seed=1), countdown_run("ok-2", seed=2)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    args = ("experiment-start", "--jobs", jobs, "--store", url, "--results", str(results), *files)
    proc = _xrun(tmp_path, *args)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "cannot release a claim" not in out
    full = [line for line in proc.stderr.splitlines() if "no space left on device" in line]
    assert full and str(results) in full[0], proc.stderr
    statuses = _statuses(url)
    if jobs == "1":  # finished runs are kept, no run starts after the full disk
        assert statuses == {"ok-0": ["finished"], "filler": ["interrupted"]}, statuses
    else:  # the runs in flight beside "filler" finished or hit the full disk too
        assert statuses["filler"] == ["interrupted"], statuses
        assert all(s in (["finished"], ["interrupted"]) for s in statuses.values()), statuses
    assert _temp_files(results) == []
    # room again: the next start resumes the interrupted run and finishes everything
    (tiny_disk / "filler").unlink()
    again = _xrun(tmp_path, *args)
    assert again.returncode == 0, (again.stdout, again.stderr)
    statuses = _statuses(url)
    assert all(s[-1] == "finished" for s in statuses.values()) and len(statuses) == 4, statuses
    assert statuses["filler"] == ["finished"], statuses  # the same instance, resumed


def test_a_full_store_disk_names_the_store_not_the_claim(tmp_path, tiny_disk):
    docs = [countdown_run("ok-0", seed=0),
            _crashing("filler", "fill", fill_dir=str(tiny_disk), marker=str(tmp_path / "filled")),
            countdown_run("ok-1", seed=1)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tiny_disk / 'x.sqlite'}"
    proc = _xrun(tmp_path, "experiment-start", "--store", url, "--results", str(tmp_path / "results"),
                 *files)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "cannot release a claim" not in out, out
    assert any(str(tiny_disk) in line and "full" in line for line in proc.stderr.splitlines()), proc.stderr
    (tiny_disk / "filler").unlink(missing_ok=True)
    statuses = _statuses(url)
    assert statuses["ok-0"] == ["finished"]
    assert statuses["filler"] == ["running"]  # nothing could record its end: its dead process makes it resumable
    assert "ok-1" not in statuses  # the campaign stopped


@pytest.mark.slow
def test_a_claim_of_a_sigkilled_process_is_taken_over(tmp_path):
    """The claim holder runs "slow" until :mod:`hold` holds it (its second
    episode start): it cannot end before the second process waits for it."""
    slow = countdown_run("slow", episodes=10, length=5, held=True)
    files = write_runs(tmp_path / "runs", [slow, countdown_run("quick", seed=3)])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--quiet", "--store", url,
            "--results", str(tmp_path / "results")]

    def wait_until(what: str, status: str, proc: subprocess.Popen) -> None:
        deadline = time.monotonic() + 120
        while not ((tmp_path / "x.sqlite").exists() and _statuses(url).get(what, [""])[-1] == status):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)

    hold.request(tmp_path / "hold", 1, least=1)  # least: not in xrun's preflight check, which starts its environments
    first = subprocess.Popen([*argv, files[0]], cwd=tmp_path, env=hold.child_env(tmp_path / "hold"), start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert hold.wait_held(first, tmp_path / "hold"), first.communicate()
        assert _statuses(url)["slow"] == ["running"]
        # the second process finds "slow" claimed, runs "quick", then waits for "slow"
        second = subprocess.Popen([*argv, *files], cwd=tmp_path, env=hold.child_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        wait_until("quick", "finished", second)
        assert _statuses(url)["slow"] == ["running"]
        os.killpg(first.pid, signal.SIGKILL)  # the claim holder dies without a word
        out, err = second.communicate(timeout=240)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        first.communicate()
    assert second.returncode == 0, (out, err)
    statuses = _statuses(url)
    assert statuses["quick"] == ["finished"]
    assert statuses["slow"] == ["finished"], statuses  # the same instance, resumed


def test_status_cuts_long_errors_to_one_line_and_shows_them_in_full_on_request(tmp_path):
    from click.testing import CliRunner

    from xdoe.cli._xrun import main
    from xdoe.execution import run

    message = "the simulator diverged " + "because of a very long explanation " * 8
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    with Store(url) as store:
        assert run(_crashing("bad", "raise", message=message), store=store, results=tmp_path).status == "failed"
        assert run(countdown_run("fine"), store=store, results=tmp_path).status == "finished"
    runner = CliRunner()
    table = runner.invoke(main, ["status", "--store", url], env={"COLUMNS": "80"}, terminal_width=80)
    assert table.exit_code == 1, table.output
    lines = table.output.splitlines()
    assert max(map(len, lines)) <= 80
    (row,) = [line for line in lines if " bad " in line]
    assert "environmen" in row and "…" in row  # one line, cut
    assert len([line for line in lines if line.startswith("│")]) == 2  # no continuation lines
    wide = runner.invoke(main, ["status", "--store", url], env={"COLUMNS": "160"})
    (row,) = [line for line in wide.output.splitlines() if " bad " in line]
    assert "RuntimeError: the simulator" in row and "…" in row and len(row) <= 160
    as_json = runner.invoke(main, ["status", "--store", url, "--format", "json"])
    data = __import__("json").loads(as_json.output)
    assert as_json.exit_code == 1 and data["counts"]["failed"] == data["counts"]["finished"] == 1
    (bad,) = [r for r in data["runs"] if r["run"] == "bad"]
    full = "environment 'cd': update raised RuntimeError: " + " ".join(message.split())
    assert bad["reason"] == full
    for args in (["status", "bad"], ["status", "--run", "bad"]):
        one = runner.invoke(main, [*args, "--store", url], terminal_width=80)
        assert one.exit_code == 1, one.output
        text = " ".join(one.output.split())
        assert f"reason: {full}" in text
        assert "Traceback (most recent call last)" in one.output and "fine" not in one.output
    missing = runner.invoke(main, ["status", "--run", "nope", "--store", url])
    assert missing.exit_code == 2 and "no run 'nope'" in missing.output


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte; the filler file."""
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_disk_full_at_start_stops_the_campaign_with_no_run_left_running(tmp_path, tiny_disk, jobs):
    """Issue 25, item 6: the disk is still full when xrun starts (again)."""
    results = tiny_disk / "results"
    files = write_runs(tmp_path / "runs", [countdown_run(f"ok-{i}", seed=i) for i in range(4)])
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    args = ("experiment-start", "--jobs", jobs, "--store", url, "--results", str(results), *files)
    filler = _fill(tiny_disk)
    proc = _xrun(tmp_path, *args)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "Errno 28" not in out and "failed" not in proc.stderr, out
    full = [line for line in proc.stderr.splitlines() if "no space left on device" in line]
    assert full and str(tiny_disk) in full[0], proc.stderr
    statuses = _statuses(url) if (tmp_path / "x.sqlite").exists() else {}
    assert all(s == ["interrupted"] for s in statuses.values()), statuses  # none running, none failed
    assert len(statuses) <= int(jobs)  # the campaign stopped: no run started after the full disk
    filler.unlink()
    again = _xrun(tmp_path, *args)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert all(s[-1] == "finished" and len(s) == 1 for s in _statuses(url).values())  # resumed, not redone


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sigterm_killed_worker_is_named(tmp_path, jobs):
    """Issue 25, item 6: "worker process died (killed by SIGTERM)", not a bare "died"."""
    docs = [countdown_run("term", episodes=3, length=4), countdown_run("ok", seed=2)]
    env = docs[0]["schedule"][0]["training"]["environments"][0]["environment"]
    env["name"] = "crash_components:CrashingEnvironment"
    env["params"] = {"length": 4, "how": "term", "at_episode": 1}
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    proc = _xrun(tmp_path, "experiment-start", "--jobs", jobs, "--store", url, "--results",
                 str(tmp_path / "results"), *files)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "run term failed: worker process died (killed by SIGTERM)" in proc.stderr, proc.stderr
    assert _statuses(url) == {"term": ["failed"], "ok": ["finished"]}


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_inherited_ignored_sigint_still_stops_the_campaign_like_ctrl_c(tmp_path, jobs):
    """Issue 25, item 6: ``nohup xrun ... &`` (SIGINT ignored at start), then a
    group SIGINT: the run in flight is interrupted and the campaign stops.
    The SIGINT comes where :mod:`hold` holds each run in flight (its second
    episode start), not at a state polled for while the runs go on."""
    docs = [countdown_run(f"run-{i}", seed=i, episodes=10, length=5, held=True) for i in range(4)]
    files = write_runs(tmp_path / "runs", docs)
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    argv = [sys.executable, "-m", "xdoe.cli._xrun", "experiment-start", "--jobs", jobs, "--store", url,
            "--results", str(tmp_path / "results"), *files]
    hold.request(tmp_path / "hold", 1, least=1, every=True)
    proc = subprocess.Popen(argv, cwd=tmp_path, env=hold.child_env(tmp_path / "hold"), start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert len(hold.wait_held(proc, tmp_path / "hold", int(jobs))) == int(jobs), proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode != 0
    assert "KeyboardInterrupt" not in out + err and "failed" not in err, (out, err)
    statuses = _statuses(url)
    assert "interrupted" in sum(statuses.values(), []), statuses
    assert all(s in (["interrupted"], ["finished"]) for s in statuses.values()), statuses
    assert len(statuses) < len(docs), statuses  # the campaign stopped
