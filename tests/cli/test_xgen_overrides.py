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
    assert manifest["overrides"] == ["repetitions=3", "factors.length.levels=[5, 7]"]  # as given, in order
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
    assert result.exit_code == 2 and result.output.startswith("error: override seed=[1: cannot parse")
    result = run("check", str(DUMMY), "other.yaml")
    assert result.exit_code == 2 and "expected KEY=VALUE" in result.output


def test_a_key_given_twice_regenerates_the_same_study(tmp_path: Path) -> None:
    """Overrides apply in order and the last wins, as in Hydra; the manifest
    records every one of them, so that a key given twice (two moves, or a key
    set around another override of the same place) comes back as it was: a
    record of one value per key regenerated ``episodes=x2 episodes=x2`` as one x2."""
    given = [("train.episodes=x2", "train.episodes=x2"),
             ("factors.length.levels=[3]", "length.levels=[5, 7]", "factors.length.levels=[9, 11]"),
             ("repetitions=3", "repetitions=4")]
    for k, overrides in enumerate(given):
        first, second = tmp_path / f"first{k}", tmp_path / f"second{k}"
        result = run("generate", str(DUMMY), *overrides, "-q", "-o", str(first))
        assert result.exit_code == 0, result.output
        manifest = json.loads((first / "manifest.json").read_text("utf-8"))
        assert manifest["overrides"] == list(overrides)  # each as given, in order
        result = run("generate", str(DUMMY), *override_specs(manifest["overrides"]), "-q", "-o", str(second))
        assert result.exit_code == 0, result.output
        assert _files(first) == _files(second)
        _exp, _design, runs = prepare(DUMMY, overrides=overrides_from_record(manifest["overrides"]))
        assert len(runs) == manifest["design"]["runs"]
    # the two moves both apply: the run documents hold four times the file's number
    text = (tmp_path / "first0" / "run-dummy-study-0000.yaml").read_text("utf-8")
    assert "episodes: 12" in text


def test_an_invalid_overridden_value_names_the_override(tmp_path: Path) -> None:
    """The file's line shows the value as written; the error says the value
    came from the command line, which override it was, and writes nothing."""
    for args in (["repetitions=yes"], ["seed=7", "repetitions=0"], ["factors.length.levels=[5, 5]"]):
        for command in ("generate", "check"):
            extra = ["-o", str(tmp_path / "o")] if command == "generate" else []
            result = run(command, str(DUMMY), *args, *extra)
            assert result.exit_code == 2, result.output
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: ")
            assert f"the value from the command line: {args[-1]}" in lines[0], lines[0]
    assert not (tmp_path / "o").exists()
    # an error elsewhere in the file does not name an override
    bad = tmp_path / "bad.yaml"
    bad.write_text(DUMMY.read_text("utf-8").replace("episodes: 3}", "episodes: -3}"), "utf-8")
    assert "command line" not in run("check", str(bad), "repetitions=3").output


def test_a_value_that_cannot_be_parsed_names_its_override() -> None:
    result = run("check", str(DUMMY), "seed=[1")
    assert result.exit_code == 2 and "override seed=[1: cannot parse" in result.output


def test_a_key_below_a_scalar_says_that_its_parent_holds_no_keys() -> None:
    for args, expected in ((["seed.x=3"], "seed is 42, a number: it holds no key 'x'"),
                           (["factors.length.levels.0.a=1"], "factors.length.levels.0 is 5, a number: it holds no key 'a'"),
                           (["uid.part=1"], "uid is 'dummy-study', a text: it holds no key 'part'")):
        result = run("check", str(DUMMY), *args)
        assert result.exit_code == 2, result.output
        assert expected in result.output and len(result.output.strip().splitlines()) == 1, result.output


def test_augment_keeps_the_overrides_the_study_was_generated_with(tmp_path: Path) -> None:
    """``xgen generate exp.yaml KEY=VALUE`` then ``xgen augment exp.yaml``:
    the augmentation is of the study as generated (the manifest's overrides),
    not of the file as written, which previewed a fold-over at the file's
    levels and refused to write (every existing run "would change"; with
    --force it would have replaced the study)."""
    doc = ROOT / "experiments" / "taxi-screen.yaml"
    out = tmp_path / "o"
    given = ["factors.alpha.levels=[0.2, 0.7]", "seed=11"]
    assert run("generate", str(doc), *given, "-q", "-o", str(out)).exit_code == 0
    before = _files(out)
    result = run("augment", str(doc), "-o", str(out), "--foldover")
    assert result.exit_code == 0, result.output
    assert "alpha = +1 (0.7)" in result.output and "(0.5)" not in result.output.split("alpha")[1][:12]
    after = _files(out)
    assert all(after[name] == content for name, content in before.items() if name.startswith("run-"))
    assert len([n for n in after if n.startswith("run-")]) == 32
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["overrides"] == given
    new = (out / "run-taxi-screen-0016.yaml").read_text("utf-8")
    assert "alpha: 0.2" in new or "alpha: 0.7" in new


def test_the_report_names_the_overrides_with_or_without_the_document(tmp_path: Path, monkeypatch) -> None:
    """The study is the file with the overrides: the report says so, quoted
    for a shell, also when it cannot find the file (it named them only beside
    the file, so a report made elsewhere hid that the study is not the file)."""
    from xdoe.cli._xrun import main as xrun

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "o"
    given = ["repetitions=1", "factors.length.levels=[5, 9]"]
    assert run("generate", str(DUMMY), *given, "-q", "-o", str(out)).exit_code == 0
    store = f"sqlite:///{out / 'xrun.sqlite'}"
    runner = CliRunner()
    assert runner.invoke(xrun, ["experiment-start", str(out), "-q", "--store", store, "--no-laydown"]).exit_code == 0
    line = "generated with the overrides <code>repetitions=1 &#x27;factors.length.levels=[5, 9]&#x27;</code>"
    for extra in ([], ["--document", str(DUMMY)]):
        report = tmp_path / "r.html"
        result = runner.invoke(xrun, ["report", str(out), "-o", str(report), "--overwrite", *extra])
        assert result.exit_code == 0, result.output
        assert line in report.read_text("utf-8"), extra


def test_a_key_that_ends_at_several_places_says_where_it_set_them(tmp_path: Path) -> None:
    """``episodes=5`` ends at every phase's episodes: the study changes in two
    places, and xgen says which (before: only 'wrote 6 runs')."""
    taxi = ROOT / "experiments" / "taxi.yaml"
    result = run("generate", str(taxi), "episodes=5", "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert ("episodes=5 sets 2 places: definitions.phase_config.train.episodes, "
            "definitions.phase_config.test.episodes") in result.output
    exact = run("check", str(taxi), "definitions.phase_config.train.episodes=5")
    assert exact.exit_code == 0 and "places" not in exact.output  # one place: nothing to say
