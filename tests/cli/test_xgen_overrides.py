"""``xgen generate/check exp.yaml KEY=VALUE``: overrides of the experiment
document (the grammar and implementation of ``xrun branch --set``), recorded
in the manifest so that a study regenerates byte-identically (issue 36)."""

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from xdoe.cli._xgen import main
from xdoe.documents import override_specs, overrides_from_record
from xdoe.design.runfiles import prepare

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "experiments" / "dummy.yaml"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_generate_with_overrides_regenerates_identically_from_the_manifest(tmp_path: Path) -> None:
    first = tmp_path / "first"
    result = run("generate", str(DUMMY), "repetitions=3", "factors.length.levels=[5, 7]", "-q", "-o", str(first))
    assert result.exit_code == 0, result.output
    manifest = json.loads((first / "manifest.json").read_text("utf-8"))
    assert manifest["overrides"] == {"repetitions": 3, "factors.length.levels": [5, 7]}
    assert list(manifest["overrides"]) == ["repetitions", "factors.length.levels"]  # the order given
    assert manifest["input_sha256"] == hashlib.sha256(DUMMY.read_bytes()).hexdigest()  # the file as written
    assert manifest["design"]["repetitions"] == 3 and manifest["design"]["runs"] == 24
    second = tmp_path / "second"
    result = run("generate", str(DUMMY), *override_specs(manifest["overrides"]), "-q", "-o", str(second))
    assert result.exit_code == 0, result.output
    assert _files(first) == _files(second)
    # the Python API reads the record back too
    _exp, _design, runs = prepare(DUMMY, overrides=overrides_from_record(manifest["overrides"]))
    assert len(runs) == 24


def test_no_overrides_no_record(tmp_path: Path) -> None:
    assert run("generate", str(DUMMY), "-q", "-o", str(tmp_path / "o")).exit_code == 0
    assert "overrides" not in json.loads((tmp_path / "o" / "manifest.json").read_text("utf-8"))


def test_unknown_key_is_one_line_with_close_matches_and_writes_nothing(tmp_path: Path) -> None:
    for command in ("generate", "check"):
        args = [command, str(DUMMY), "repetitons=3"] + (["-o", str(tmp_path / "o")] if command == "generate" else [])
        result = run(*args)
        assert result.exit_code == 2
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: unknown key 'repetitons'")
        assert "did you mean: repetitions" in lines[0]
    assert not (tmp_path / "o").exists()


def test_check_with_overrides_and_errors_keep_the_file_lines(tmp_path: Path) -> None:
    result = run("check", str(DUMMY), "repetitions=5", "factors.length.levels=[5, 7, 9]")
    assert result.exit_code == 0 and "ok: 12 design points x 5 repetitions" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(DUMMY.read_text("utf-8").replace("episodes: 3}", "episodes: -3}"), "utf-8")
    plain = run("check", str(bad)).output
    overridden = run("check", str(bad), "repetitions=3", "seed=7").output
    assert plain == overridden and ":44: definitions.phase_config.train.episodes" in plain
    # an overridden key's error names its line in the file
    result = run("check", str(DUMMY), "repetitions=0")
    assert result.exit_code == 2 and "dummy.yaml:11: repetitions" in result.output


def test_a_value_that_is_not_yaml_and_an_argument_without_equals_are_refused() -> None:
    result = run("check", str(DUMMY), "seed=[1")
    assert result.exit_code == 2 and result.output.startswith("error: cannot parse")
    result = run("check", str(DUMMY), "other.yaml")
    assert result.exit_code == 2 and "expected KEY=VALUE" in result.output
