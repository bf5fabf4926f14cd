"""Hostile documents (issue 10) through the real command-line applications.

Every case (``tests/hostile/cases.py``) must end with exit code 2, exactly
one line ``error: ...`` holding the expected fragment (and ``file:line``
where the case names a line), no traceback, and nothing written: the test's
folder holds afterwards exactly what it held before (no output, no staging
folder, no store, no results folder). Both ``xgen generate`` and ``xgen
check`` run every xgen case; ``xrun experiment-check`` and ``xrun
experiment-start`` every xrun case.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from xdoe.cli._xgen import main as xgen
from xdoe.cli._xrun import main as xrun

from hostile.cases import Case, alias_bomb, materialize, store_cases, xgen_cases, xrun_cases

XGEN = xgen_cases()
XRUN = xrun_cases()


def test_corpus_size() -> None:
    assert len(XGEN) + len(XRUN) + len(store_cases()) >= 60
    assert len({c.name for c in XGEN}) == len(XGEN)
    assert len({c.name for c in XRUN}) == len(XRUN)


def _snapshot(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _prepare(case: Case, tmp: Path) -> tuple[Path, list[str], set[str]]:
    path, args = materialize(case, tmp)
    return path, args, _snapshot(tmp)


def _assert_one_line_error(result: Result, case: Case, path: Path) -> None:
    assert result.exit_code == 2, f"exit {result.exit_code}: {result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    errors = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(errors) == 1, result.output
    message = errors[0]
    assert message.startswith("error: "), message
    assert "Traceback" not in result.output
    assert len(message) < 1000, message
    assert case.expect in message, f"expected {case.expect!r} in {message!r}"
    if case.line is not None:
        assert f"{path}:{case.line}:" in message, f"expected {path}:{case.line}: in {message!r}"


# an output option (-o) is generate's: those cases run under generate only
_XGEN_RUNS = [pytest.param(case, command, id=f"{command}-{case.name}")
              for case in XGEN for command in ("generate", "check")
              if not (command == "check" and case.args and case.args[0] == "-o")]


@pytest.mark.parametrize(("case", "command"), _XGEN_RUNS)
def test_xgen_refuses(case: Case, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the document's default output would land here
    path, args, before = _prepare(case, tmp_path)
    extra = ["-o", str(tmp_path / "out")] if command == "generate" and "-o" not in args else []
    result = CliRunner().invoke(xgen, [command, str(path), *extra, *args])
    _assert_one_line_error(result, case, path)
    assert _snapshot(tmp_path) == before, "something was written"


@pytest.mark.parametrize("command", ["experiment-check", "experiment-start"])
@pytest.mark.parametrize("case", XRUN, ids=[c.name for c in XRUN])
def test_xrun_refuses(case: Case, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default store and results folder would land here
    path, args, before = _prepare(case, tmp_path)
    extra = []
    if command == "experiment-start":
        extra = ["--store", f"sqlite:///{tmp_path / 'store.sqlite'}", "--results", str(tmp_path / "results"), "-q"]
    result = CliRunner().invoke(xrun, [command, str(path), *extra, *args])
    if command == "experiment-start" and case.start_exit == 1:
        # a component that cannot be imported fails its run (in the run's process), one line
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
        lines = result.output.splitlines()
        assert len(lines) == 1 and lines[0].startswith("run ") and " failed: " in lines[0], result.output
        assert case.expect in lines[0]
        return
    _assert_one_line_error(result, case, path)
    assert _snapshot(tmp_path) == before, "something was written"


@pytest.mark.parametrize("name,url,expect", store_cases(), ids=[c[0] for c in store_cases()])
def test_xrun_unusable_store(name: str, url: str, expect: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hostile.cases import base_run_document

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "run.yaml"
    path.write_text(base_run_document(), encoding="utf-8")
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(xrun, ["experiment-start", str(path), "--store", url,
                                       "--results", str(tmp_path / "results"), "-q"])
    case = Case(name, None, expect)
    _assert_one_line_error(result, case, path)
    assert "secret" not in result.output  # the password is masked
    assert _snapshot(tmp_path) == before


@pytest.mark.slow
def test_alias_bomb_in_a_real_process_ends_fast(tmp_path: Path) -> None:
    """The issue's command, as a process: one line, exit 2 (it used to grow
    past 3.5 GB). The timeout only guards the suite against a hang."""
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", "from xdoe.cli._xgen import main; main()", "generate", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "aliases expand to more than" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_limits_can_be_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A document just past a limit loads once the limit is raised: the limits
    are limits, not a parser that cannot read such documents."""
    from xdoe.documents import load_yaml

    deep = "a: " + "[" * 150 + "]" * 150 + "\n"
    with pytest.raises(Exception, match="nested more than 100"):
        load_yaml("x.yaml", text=deep)
    monkeypatch.setenv("XDOE_MAX_YAML_DEPTH", "200")
    assert load_yaml("x.yaml", text=deep).data["a"] is not None
    wide = "a: &a [" + ",".join(["x"] * 400) + "]\nb: &b [" + ",".join(["*a"] * 400) + "]\n"
    monkeypatch.setenv("XDOE_MAX_ALIAS_NODES", "200000")
    assert len(load_yaml("x.yaml", text=wide).data["b"]) == 400
