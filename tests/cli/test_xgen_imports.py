"""``xgen check --import`` and ``xgen generate --import`` (issue 9; one
name since issue 22, ``--check-imports`` a deprecated alias):
components are imported and constructed before hours are burnt, errors name
the experiment document's file:line; plain xgen still imports no user code."""

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from xdoe.cli._xgen import main

DUMMY = Path(__file__).resolve().parents[2] / "experiments" / "dummy.yaml"


def xgen(*args: str):
    return CliRunner().invoke(main, list(args))


def _broken(tmp_path: Path) -> Path:
    text = DUMMY.read_text()
    text = text.replace("muscle: {name: xdoe.agents:DummyMuscle, params: {}}",
                        "muscle: {name: xdoe.agents:DummyMusle, params: {}}")
    text = text.replace("params: {length: \"${length}\", sensors: 6, actuators: 4}",
                        "params: {length: \"${length}\", sensors: 6, actuators: 4, colour: red}")
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    return path


def _line(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_check_import_reports_against_the_experiment_document(tmp_path: Path) -> None:
    broken = _broken(tmp_path)
    plain = xgen("check", str(broken))
    assert plain.exit_code == 0, plain.output  # without --import nothing is imported
    result = xgen("check", "--import", str(broken))
    assert result.exit_code == 2
    assert (f"error: {broken}:{_line(broken, 'DummyMusle')}: definitions.agents.random.muscle.name: "
            "module 'xdoe.agents' has no attribute 'DummyMusle'") in result.output
    assert f"{broken}:{_line(broken, 'colour')}: definitions.environments.large.environment.params.colour:" \
        in result.output
    assert "Traceback" not in result.output


def test_check_import_ok() -> None:
    result = xgen("check", "--import", str(DUMMY))
    assert result.exit_code == 0, result.output
    assert result.output == "ok: 8 design points x 2 repetitions, every component imported and constructed\n"


def test_generate_import_writes_nothing_on_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = xgen("generate", "--import", str(_broken(tmp_path)), "-o", str(out))
    assert result.exit_code == 2 and "DummyMusle" in result.output
    assert not out.exists()
    ok = xgen("generate", "--import", str(DUMMY), "-o", str(out))
    assert ok.exit_code == 0 and "imports ok" in ok.output and (out / "manifest.json").is_file()


def test_generate_check_imports_is_a_deprecated_alias(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = xgen("generate", "--check-imports", str(_broken(tmp_path)), "-o", str(out))
    assert result.exit_code == 2 and "DummyMusle" in result.output and not out.exists()
    assert "warning: --check-imports is deprecated; use --import" in result.output
    assert "--check-imports" not in xgen("generate", "--help").output
    assert "--import" in xgen("generate", "--help").output


def test_check_import_reports_every_bad_import(tmp_path: Path) -> None:
    """Issue 22: three bad names in one agent and one condition, all in every
    run document: each is reported at its own line, not only the first."""
    text = DUMMY.read_text()
    for good, bad in (("xdoe.agents:DummyBrain", "xdoe.agents:DummyBrian"),
                      ("xdoe.agents:DummyMuscle", "xdoe.agents:DummyMusle"),
                      ("xdoe.agents:RewardObjective", "no_such_module_xdoe:Objective"),
                      ("xdoe.conditions:EnvironmentTerminationCondition", "xdoe.conditions:Nothing")):
        assert good in text
        text = text.replace(good, bad)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = xgen("check", "--import", str(path))
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    for needle in ("DummyBrian", "DummyMusle", "no_such_module_xdoe", "Nothing"):
        line = _line(path, needle)
        assert any(e.startswith(f"error: {path}:{line}: ") and needle in e for e in errors), (needle, errors)
    assert len(errors) == 4, errors  # each once, though every design point names them


CHECK = """
import sys
from xdoe.cli._xgen import main
try:
    main(["check", sys.argv[1]])
except SystemExit as exc:
    assert not exc.code, exc.code
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] == "gymnasium"
                      or m.startswith(("xdoe.execution", "xdoe.store", "xdoe.agents", "xdoe.components")))) or "clean")
"""


def test_check_without_import_imports_no_executor() -> None:
    proc = subprocess.run([sys.executable, "-c", CHECK, str(DUMMY)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "clean"
