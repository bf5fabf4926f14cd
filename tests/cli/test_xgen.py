"""The xgen command line (click's CliRunner, plus real subprocesses)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from xdoe.cli._xgen import main

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"
ARSENAI = ROOT / "experiments" / "arsenai-style.yaml"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_help_texts() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("generate", "check", "schema"):
        assert command in result.output
        sub = run(command, "--help")
        assert sub.exit_code == 0 and "Usage:" in sub.output
    assert "--dry-run" in run("generate", "--help").output
    assert "--strict" in run("check", "--help").output


def test_check() -> None:
    result = run("check", str(DUMMY))
    assert result.exit_code == 0
    assert result.output == "ok: 8 design points x 2 repetitions\n"
    result = run("check", str(ARSENAI))
    assert result.exit_code == 0
    assert f"warning: {ARSENAI}:115:" in result.output and "closing parenthesis" in result.output
    assert "ok: 8 design points x 1 repetitions" in result.output


def test_dry_run_prints_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("generate", str(DUMMY), "--dry-run")
    assert result.exit_code == 0, result.output
    for text in ("0.environments", "0.sensors.random", "length", "categorical (2)", "5, 10",
                 "method: full_factorial (auto: all factors categorical",
                 "8 x 2 = 16", "min distance: 1,", "centred L2 discrepancy: 0.37"):
        assert text in result.output, text
    assert list(tmp_path.iterdir()) == []


def test_dry_run_continuous(tmp_path: Path) -> None:
    doc = tmp_path / "c.yaml"
    doc.write_text(DUMMY.read_text().replace("length: {levels: [5, 10]}", "length: {range: [2, 50], scale: log, integer: true}")
                   .replace("design: auto", "design: lhs\nmax_runs: 6"))
    result = run("generate", str(doc), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "continuous" in result.output and "[2, 50], log, integer" in result.output
    assert "method: lhs" in result.output and "6 x 2 = 12" in result.output


def test_generate_default_output_and_up_to_date(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("generate", str(DUMMY))
    assert result.exit_code == 0, result.output
    out = Path("_outputs/dummy")  # the document's output key, relative to the working directory
    assert result.output == f"wrote 16 runs to {out} (full_factorial: 8 design points x 2 repetitions)\n"
    assert len(list(out.glob("run-dummy-study-*.yaml"))) == 16
    again = run("generate", str(DUMMY))
    assert again.exit_code == 0 and again.output == f"up to date: {out} (16 runs)\n"
    changed = tmp_path / "changed.yaml"
    changed.write_text(DUMMY.read_text().replace("seed: 42", "seed: 1"))
    refused = run("generate", str(changed))
    assert refused.exit_code == 2 and "use --force" in refused.output
    forced = run("generate", str(changed), "--force", "--quiet")
    assert forced.exit_code == 0 and forced.output == ""


def test_output_option_and_missing_file(tmp_path: Path) -> None:
    result = run("generate", str(DUMMY), "-o", str(tmp_path / "x"), "-q")
    assert result.exit_code == 0 and (tmp_path / "x" / "manifest.json").is_file()
    missing = run("check", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "nope.yaml: file not found" in missing.output


def test_schema() -> None:
    result = run("schema")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "schedule" in schema["properties"]


WRAPPER = """
import sys
from xdoe.cli._xgen import main
try:
    main(["generate", sys.argv[1], "--output", sys.argv[2], "--quiet"])
except SystemExit as exc:
    assert not exc.code, exc.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("gymnasium", "sqlalchemy", "matplotlib", "pandas")
                or m.startswith(("xdoe.execution", "xdoe.store", "xdoe.environments", "xdoe.agents")))
print(",".join(loaded) or "clean")
"""


def test_generator_imports_no_executor_store_or_gymnasium(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", WRAPPER, str(DUMMY), str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "clean"
    assert (tmp_path / "o" / "manifest.json").is_file()


def test_console_script_subprocess(tmp_path: Path) -> None:
    xgen = Path(sys.executable).with_name("xgen")
    command = [str(xgen)] if xgen.exists() else [sys.executable, "-m", "xdoe.cli._xgen"]
    ok = subprocess.run([*command, "generate", str(DUMMY), "--output", str(tmp_path / "o")],
                        capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert ok.returncode == 0, ok.stderr
    assert "wrote 16 runs" in ok.stdout
    bad = subprocess.run([*command, "check", str(ROOT / "tests/documents/broken/undefined_agent.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and "undefined agent 'agent_b'" in bad.stderr
