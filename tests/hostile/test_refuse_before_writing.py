"""Issue 33, item 3: ``xrun experiment-start`` refuses a run document that
cannot run before it creates a store or a results folder: ``load``/``replay``
references to no checkpoint or no run, results or store folders that cannot
be written. One ``error: file:line: key: what`` line (or ``--results ...``),
exit 2, nothing written. (Component names, bases and ids: the shared corpus,
``cases.py``, for ``experiment-check`` and ``experiment-start`` alike.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hostile.cases import Case, _sub, base_run_document
from hostile.test_hostile import _assert_one_line_error, _prepare, _snapshot
from xdoe.cli._xrun import main as xrun

LOAD, REPLAY = "          load: null", "          replay: null"


def _loop(tmp: Path) -> None:
    os.symlink(tmp / "b", tmp / "a")
    os.symlink(tmp / "a", tmp / "b")


def _cases() -> list[Case]:
    base = base_run_document()
    return [
        Case("load_etc_passwd", _sub(base, LOAD, "          load: {path: /etc/passwd}"),
             "is not a checkpoint DummyBrain can load", line=23),
        Case("load_a_folder", _sub(base, LOAD, "          load: {path: /etc}"), "not a checkpoint file but a folder",
             line=23),
        Case("load_a_fifo", _sub(base, LOAD, "          load: {path: pipe}"), "not a checkpoint file but a special",
             setup=lambda tmp: os.mkfifo(tmp / "pipe")),
        Case("load_missing_file", _sub(base, LOAD, "          load: {path: nothing.brain}"), "no checkpoint file"),
        Case("load_a_run_of_no_store", _sub(base, LOAD, "          load: {experiment_run: nope}"), "no run 'nope'",
             line=23),
        Case("replay_a_run_of_no_store", _sub(base, REPLAY, "          replay: [{experiment_run: nope}]"),
             "no run 'nope'", line=31),
        Case("results_under_a_file", base, "is not a folder", args=("--results", "{tmp}/file/results"),
             setup=lambda tmp: (tmp / "file").write_text("keep\n")),
        Case("results_in_proc", base, "special file system", args=("--results", "/proc/xdoe-results")),
        Case("results_through_a_symlink_loop", base, "cannot be resolved", args=("--results", "{tmp}/a/results"),
             setup=_loop),
        Case("store_under_a_file", base, "is not a folder", args=("--store", "sqlite:///{tmp}/file/x.sqlite"),
             setup=lambda tmp: (tmp / "file").write_text("keep\n")),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_experiment_start_refuses_before_writing(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path, args, before = _prepare(case, tmp_path)
    extra = {"--store": f"sqlite:///{tmp_path / 'store.sqlite'}", "--results": str(tmp_path / "results")}
    for i in range(0, len(args), 2):
        extra[args[i]] = args[i + 1]
    result = CliRunner().invoke(xrun, ["experiment-start", str(path), "-q", *sum(map(list, extra.items()), [])])
    _assert_one_line_error(result, case, path)
    assert _snapshot(tmp_path) == before, "something was written"


def test_a_load_of_a_run_the_store_lacks_names_the_runs_it_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store exists (it ran the document once): a ``load`` of another
    run is refused with did-you-mean, and the store is not written."""
    monkeypatch.chdir(tmp_path)
    base = base_run_document()
    first = tmp_path / "first.yaml"
    first.write_text(base)
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    done = CliRunner().invoke(xrun, ["experiment-start", str(first), "-q", "--store", url, "--no-laydown",
                                     "--results", str(tmp_path / "results")])
    assert done.exit_code == 0, done.output
    second = tmp_path / "second.yaml"
    second.write_text(_sub(_sub(base, "uid: dummy-study-0000", "uid: second"), LOAD,
                           "          load: {experiment_run: dummy-study-000}"))
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xrun, ["experiment-start", str(second), "-q", "--store", url,
                                       "--results", str(tmp_path / "results")])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: {second}:23: ") and "did you mean: dummy-study-0000" in line, line
    assert _snapshot(tmp_path) == before
    from xdoe.store import Store

    with Store(url) as store:
        assert [i.run_uid for i in store.runs.instances()] == ["dummy-study-0000"]
    # a load of a run the same campaign runs is fine (it runs in it; it fails itself if it cannot)
    third = tmp_path / "third.yaml"
    third.write_text(_sub(_sub(base, "uid: dummy-study-0000", "uid: third"), LOAD,
                          "          load: {experiment_run: fourth}"))
    fourth = tmp_path / "fourth.yaml"
    fourth.write_text(_sub(base, "uid: dummy-study-0000", "uid: fourth"))
    from xdoe.execution import load_plan
    from xdoe.execution._preflight import preflight

    plans = [load_plan(third), load_plan(fourth)]
    assert preflight(plans, store_url=url, results=tmp_path / "results") == []


def test_components_are_checked_once_per_document_structure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cost: 40 documents differing only in numbers construct their
    components once; a document of another structure once more."""
    import xdoe.execution._runner as runner

    calls: list[str] = []
    real = runner.check_plan

    def counting(plan, seed):
        calls.append(plan.uid)
        return real(plan, seed)

    monkeypatch.setattr(runner, "check_plan", counting)
    from xdoe.execution import load_plan
    from xdoe.execution._preflight import preflight

    base = base_run_document()
    plans = [load_plan(_write(tmp_path, i, _sub(_sub(base, "uid: dummy-study-0000", f"uid: r{i}"),
                                                "episodes: 3", f"episodes: {i + 1}"))) for i in range(40)]
    other = _sub(base, "uid: dummy-study-0000", "uid: other").replace(
        "xdoe.conditions:EnvironmentTerminationCondition", "xdoe.conditions:MaxEpisodesTerminationCondition", 1)
    plans.append(load_plan(_write(tmp_path, 99, other)))
    assert preflight(plans, store_url=f"sqlite:///{tmp_path / 's.sqlite'}", results=tmp_path / "results") == []
    assert calls == ["r0", "other"]
    assert not (tmp_path / "s.sqlite").exists()


def _write(folder: Path, i: int, text: str) -> Path:
    path = folder / f"run-{i}.yaml"
    path.write_text(text)
    return path


def test_with_jobs_the_check_runs_beside_the_parent_and_still_refuses(tmp_path: Path) -> None:
    """``--jobs 2`` with several files: the components are constructed in the
    first worker of the campaign's pool, forked from the warm forkserver while
    xrun read the documents (the parent imports none of them), with the same
    verdict: one located line, exit 2, nothing written."""
    import subprocess
    import sys

    base = base_run_document()
    good = tmp_path / "good.yaml"
    good.write_text(base)
    bad = tmp_path / "bad.yaml"
    bad.write_text(_sub(_sub(base, "uid: dummy-study-0000", "uid: bad"), "xdoe.agents:DummyBrain", "builtins:int"))
    before = _snapshot(tmp_path)
    script = ("import sys\nfrom xdoe.cli._xrun import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n"
              "    print('heavy' if 'gymnasium' in sys.modules or 'numpy' in sys.modules else 'light')\n"
              "    raise\n")
    done = subprocess.run([sys.executable, "-c", script, "experiment-start", "--jobs", "2", "-q", str(good), str(bad),
                           "--store", f"sqlite:///{tmp_path / 'x.sqlite'}", "--results", str(tmp_path / "results")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.splitlines() == [
        f"error: {bad}:20: schedule[0].training.agents[0].brain: 'builtins:int' is not a subclass of "
        "xdoe.agent.Brain"], done.stderr
    assert done.stdout.strip() == "light"
    assert _snapshot(tmp_path) == before
